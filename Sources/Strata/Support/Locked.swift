import Synchronization

#if STRATA_TSAN
    import Foundation

    /// The value of a ``Locked`` in ThreadSanitizer builds.
    final class LockedStorage<Value: ~Copyable>: @unchecked Sendable {
        // @unchecked Sendable: `value` is touched only while the owning Locked's mutex is held.
        var value: Value
        init(_ value: consuming Value) { self.value = value }
    }

    /// A value behind a lock, for the package's shared state: `Synchronization.Mutex` in every build
    /// but ThreadSanitizer builds (`-DSTRATA_TSAN`, set by `scripts/sanitize.sh thread`), where it is
    /// this pthread mutex with the same `withLock`.
    ///
    /// On Linux `Mutex` waits with futex system calls, which ThreadSanitizer cannot see, so it would
    /// report every access made under a `Mutex` as a race; a pthread mutex it understands. (The mutex
    /// lives in the struct and the value in a class of its own: with both in one generic class, the
    /// sanitizer reported reading the mutex as racing with changing the value.)
    ///
    /// Thread safety: `Sendable`; `withLock` gives one thread at a time the value.
    package struct Locked<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
        // @unchecked Sendable: the value is reached only inside withLock, under the mutex, as with Mutex.
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        private let storage: LockedStorage<Value>

        /// Puts `value` behind the lock.
        package init(_ value: consuming Value) {
            mutex = .allocate(capacity: 1)
            pthread_mutex_init(mutex, nil)
            storage = LockedStorage(value)
        }

        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }

        /// Runs `body` with the value while holding the lock. (Mutex's `body` takes and returns
        /// `sending` values; callers written for Mutex compile against this looser form too.)
        package borrowing func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result)
            throws(E) -> Result
        {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&storage.value)
        }
    }
#else
    /// A value behind a lock, for the package's shared state: `Synchronization.Mutex`, except in
    /// ThreadSanitizer builds (`-DSTRATA_TSAN`), where it is a pthread mutex the sanitizer understands
    /// (on Linux `Mutex` waits with futex system calls, which ThreadSanitizer cannot see).
    package typealias Locked<Value: ~Copyable> = Mutex<Value>
#endif
