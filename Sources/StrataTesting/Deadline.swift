import Dispatch
import Foundation

/// What ``Deadline/run(seconds:_:_:)`` throws when the work did not finish in time.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    /// What was running.
    public let what: String
    /// The time it had, in seconds.
    public let seconds: Double

    public var description: String { "\(what) did not finish within \(seconds) s: it hangs" }
}

/// A time limit on work itself, for tests that check something does not hang.
///
/// Swift Testing's `.timeLimit` counts from the moment a test is reported started, and a test
/// then waits for a thread of Swift's cooperative pool, which has one thread per core: on a
/// 2-core machine two long tests blocked on child processes (the fuzzers) hold both, and a test
/// of a tenth of a second ran out of a minute without running at all. Work given to
/// ``run(seconds:_:_:)`` runs on a thread of its own, and only its own time counts.
public enum Deadline {
    /// Runs `body` on a new thread and returns its result, or throws ``DeadlineExceeded`` when it
    /// has not finished within `seconds` (the thread is then left running; the test fails).
    ///
    /// `body` should return what the test checks rather than call `#expect` itself: a thread of
    /// its own is outside the test's task, where Swift Testing cannot attribute an issue.
    public static func run<T: Sendable>(
        seconds: Double, _ what: String, _ body: @escaping @Sendable () throws -> T
    ) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome<T>()
        let thread = Thread {
            outcome.set(Result { try body() })
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        guard done.wait(timeout: .now() + seconds) == .success, let result = outcome.get() else {
            throw DeadlineExceeded(what: what, seconds: seconds)
        }
        return try result.get()
    }

    /// The result, handed from the worker thread to the waiting one.
    ///
    /// `@unchecked Sendable`: `value` is read and written only under `lock`.
    private final class Outcome<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Result<T, any Error>?

        func set(_ result: Result<T, any Error>) { lock.withLock { value = result } }
        func get() -> Result<T, any Error>? { lock.withLock { value } }
    }
}
