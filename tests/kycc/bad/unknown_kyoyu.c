/* kycc must fail: an unknown kyoyu directive (line 3). */
double a[100];
#pragma kyoyu distribute(a)
int main(void) { return 0; }
