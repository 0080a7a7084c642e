// The prefetch hints are inline functions in the header; this file holds what needs the C
// library's GNU extensions.
#define _GNU_SOURCE
#include <pthread.h>
#include "CStrataPrefetch.h"

int strata_stack_bounds(unsigned long *low, unsigned long *size) {
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return -1;
    void *base = 0;
    size_t length = 0;
    int status = pthread_attr_getstack(&attributes, &base, &length);
    pthread_attr_destroy(&attributes);
    if (status != 0) return -1;
    *low = (unsigned long)base;
    *size = (unsigned long)length;
    return 0;
}
