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
}
