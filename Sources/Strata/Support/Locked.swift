import Synchronization

#if STRATA_TSAN
import Foundation

/// A value behind a lock, for the package's shared state: `Synchronization.Mutex` in every build
/// but ThreadSanitizer builds (`-DSTRATA_TSAN`, set by `scripts/sanitize.sh thread`), where it is
/// this pthread mutex (`NSLock`) with the same `withLock`.
///
/// On Linux `Mutex` waits with futex system calls, which ThreadSanitizer cannot see, so it would
/// report every access made under a `Mutex` as a race; a pthread mutex it understands.
///
/// Thread safety: `Sendable`; `withLock` gives one thread at a time the value.
package struct Locked<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    // @unchecked Sendable: the value is reached only inside withLock, under the lock, as with Mutex.
    private final class Box: @unchecked Sendable {
        // @unchecked Sendable: `value` is touched only while `lock` is held.
        nonisolated(unsafe) var value: Value
        let lock = NSLock()
        init(_ value: consuming Value) { self.value = value }
    }
    private let box: Box

    /// Puts `value` behind the lock.
    package init(_ value: consuming Value) { box = Box(value) }

    /// Runs `body` with the value while holding the lock. (Mutex's `body` takes and returns
    /// `sending` values; callers written for Mutex compile against this looser form too.)
    package borrowing func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        box.lock.lock()
        defer { box.lock.unlock() }
        return try body(&box.value)
    }
}
#else
/// A value behind a lock, for the package's shared state: `Synchronization.Mutex`, except in
/// ThreadSanitizer builds (`-DSTRATA_TSAN`), where it is a pthread mutex the sanitizer understands
/// (on Linux `Mutex` waits with futex system calls, which ThreadSanitizer cannot see).
package typealias Locked<Value: ~Copyable> = Mutex<Value>
#endif
