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

#endif
