#ifndef STRATA_PREFETCH_H
#define STRATA_PREFETCH_H

/// Asks the processor to bring the cache line at `address` in for writing, without waiting for
/// it: a hint, never a fault, whatever the address. Swift has no spelling for it.
static inline void strata_prefetch_for_write(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

/// Asks for every 64-byte cache line that the `size` bytes at `address` touch, as
/// `strata_prefetch_for_write` does for one.
static inline void strata_prefetch_range_for_write(const void *address, unsigned long size) {
    unsigned long line = (unsigned long)address & ~63UL;
    unsigned long last = ((unsigned long)address + (size ? size - 1 : 0)) & ~63UL;
    for (; line <= last; line += 64) __builtin_prefetch((const void *)line, 1, 3);
}

/// The address of the caller's stack frame (the real machine stack, also under AddressSanitizer,
/// whose fake stacks hold locals elsewhere): recursive parsers compare it with the thread's stack
/// bounds to stop before the stack runs out. Not inlined, so the frame is the caller's caller's.
__attribute__((noinline)) static void *strata_frame_address(void) {
    return __builtin_frame_address(0);
}

/// The current thread's stack: its lowest address and its size (`pthread_getattr_np`). Returns 0,
/// or -1 when the bounds cannot be read.
int strata_stack_bounds(unsigned long *low, unsigned long *size);

#endif
