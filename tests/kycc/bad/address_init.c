/* kycc must fail: a global's initialiser takes the address of a global that moves (line 3). */
int x;
int *p = &x;
int main(void) { return *p; }
