import Foundation
import Testing

@testable import StrataTools

@Suite("strata bench clock")
struct BenchClockTests {
    /// Whether `malloc` is glibc's: a sanitizer build (AddressSanitizer, ThreadSanitizer) replaces
    /// it with an allocator of its own, which keeps no such lists, and the test has nothing to check.
    static let glibcMalloc = dlsym(nil, "__tsan_init") == nil && dlsym(nil, "__asan_init") == nil

    /// Frees 300,000 blocks that cannot merge with their neighbours (each sits between two blocks
    /// still held), so glibc leaves them for a later allocation to tidy: settling takes many
    /// allocations the first time (at most 10,000 blocks each) and one the second.
    @Test(
        "the allocator's deferred work for freed blocks is done by the settle, not left for later",
        .enabled(if: glibcMalloc, "a sanitizer's allocator replaces glibc's"))
    func settlesFreedBlocks() {
        let count = 300_000
        var kept: [UnsafeMutableRawPointer?] = []
        var freed: [UnsafeMutableRawPointer?] = []
        kept.reserveCapacity(count + 1)
        freed.reserveCapacity(count)
        for _ in 0..<count {
            kept.append(malloc(96))
            freed.append(malloc(200))
        }
        kept.append(malloc(96))
        BenchClock.settleAllocator()
        for block in freed { free(block) }
        let first = BenchClock.settleAllocator()
        let second = BenchClock.settleAllocator()
        for block in kept { free(block) }
        BenchClock.settleAllocator()
        // 300,000 blocks at most 10,000 per allocation: 30 rounds or more when each round's
        // sorting shows (a round of 10,000 blocks takes far over the 2 µs that ends the loop).
        #expect(first >= 10, "settling 300,000 freed blocks took \(first) allocations")
        // Nothing pending: the first allocation is quick (a second one only if a core was taken away).
        #expect(second <= 2, "settling a tidy heap took \(second) allocations")
    }
}
