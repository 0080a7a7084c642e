#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a reader–writer lock: any number of threads read it at once
/// (``withReadLock(_:)``), one at a time changes it (``withLock(_:)``). For state that many threads
/// look up at a high rate and change less often: the row cache, which every fetch asks once per row
/// whether it holds that row, from as many threads as there are contexts fetching.
///
/// A writer waiting for the lock keeps new readers out (glibc's writer-preferring kind), so a
/// steady stream of lookups cannot hold a change off; a thread must not take the read lock again
/// while it holds it.
///
/// Thread safety: `Sendable`.
package final class ReadWriteLocked<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked Sendable: the value is reached only inside withLock, under the write lock (no
    // other thread holds either lock), or inside withReadLock, under the read lock (no writer at
    // the same time, and readers get the value borrowed, so they cannot change it). The value
    // lives behind a pointer rather than in a stored property: a class's stored property costs a
    // run-time exclusivity check on every access, and the lock already gives exclusivity.
    // ThreadSanitizer understands pthread reader–writer locks (scripts/sanitize.sh thread).
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    private let storage: UnsafeMutablePointer<Value>

    /// Puts `value` behind the lock.
    package init(_ value: consuming Value) {
        lock = .allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if canImport(Glibc)
            pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` with the value to change, holding the lock alone.
    package func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&storage.pointee)
    }

    /// Runs `body` with the value to read, while other readers may too.
    package func withReadLock<Result: ~Copyable, E: Error>(_ body: (borrowing Value) throws(E) -> Result) throws(E)
        -> Result
    {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(storage.pointee)
    }
}
