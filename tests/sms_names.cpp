/* sms_names in C++: the same program as sms_names.c (see there), compiled by the C++ compiler. */
#include "sms_names.c"
