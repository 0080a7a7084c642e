import Foundation

/// Timing with the monotonic clock (`ContinuousClock`, `CLOCK_MONOTONIC` on Linux).
public enum BenchClock {
    /// Runs `body` and returns its result and the time it took, in milliseconds.
    public static func measure<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let value = try body()
        let elapsed = start.duration(to: clock.now)
        let ms = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
        return (value, ms)
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
