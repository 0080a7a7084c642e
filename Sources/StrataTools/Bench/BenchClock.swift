import Foundation

/// Timing with the monotonic clock (`ContinuousClock`, `CLOCK_MONOTONIC` on Linux).
public enum BenchClock {
    /// Runs `body` and returns its result and the time it took, in milliseconds, including the
    /// allocator's deferred work for the memory `body` freed (``settleAllocator(_:)``).
    public static func measure<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let value = try body()
        settleAllocator(clock)
        let elapsed = start.duration(to: clock.now)
        let ms = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
        return (value, ms)
    }

    /// Does now the work glibc's `malloc` left for later when blocks were freed, so that the
    /// workload that freed them pays for it and not the next one.
    ///
    /// glibc keeps freed small blocks in lists and tidies them (merging neighbours, sorting them
    /// into size bins) only when a later allocation finds no block of its size ready, at most
    /// 10,000 blocks per allocation (`MAX_ITERS` in malloc.c). A workload that frees 100,000
    /// objects leaves hundreds of thousands of blocks there, and the next workload's allocations
    /// tidied them: a save of 10 objects right after a fetch of 1,000,000 took 1 ms instead of
    /// 0.015 ms (the scaling run's W8, after W3, after W2). Allocating and freeing one 4 KiB block
    /// (a size served from the large bins, which tidies first) takes up to 10,000 of them; this
    /// repeats until one such allocation takes under 2 µs, which only a tidy heap allows (10,000
    /// blocks take far longer). With nothing pending it costs one allocation and two clock
    /// readings, under 0.1 µs (17 ns and 22 ns each, measured in C on this machine).
    ///
    /// - Returns: How many allocations it made (1 when nothing was pending).
    @discardableResult
    public static func settleAllocator(_ clock: ContinuousClock = ContinuousClock()) -> Int {
        // At most 100,000 rounds (10^9 blocks), should every allocation be slow for another reason
        // (a machine so loaded that each one waits for a core).
        for round in 1...100_000 {
            let before = clock.now
            allocateAndFree()
            if before.duration(to: clock.now) < .microseconds(2) { return round }
        }
        return 100_000
    }

    /// One allocation of a 4 KiB block (a size glibc serves from its large bins, so it sorts the
    /// list of freed blocks first), freed at once. Not optimized, so that the pair is not removed.
    @inline(never) @_optimize(none)
    static func allocateAndFree() {
        let block = malloc(4_096)
        free(block)
    }

    /// Runs `body` and returns its result, the time it took and the calling thread's CPU time
    /// over it (`CLOCK_THREAD_CPUTIME_ID`), both in milliseconds: wall time above CPU time is
    /// time the thread waited (for the disk, a lock, or a core).
    public static func measureWithCPU<T>(_ body: () throws -> T) rethrows -> (T, wall: Double, cpu: Double) {
        let cpuStart = threadCPUMs()
        let (value, wall) = try measure(body)
        return (value, wall, threadCPUMs() - cpuStart)
    }

    /// The calling thread's CPU time, in milliseconds.
    public static func threadCPUMs() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1_000 + Double(time.tv_nsec) / 1e6
    }
}
