import CLMDB
import Foundation
import Strata
import Synchronization

// LMDB ENVIRONMENT INVARIANTS
// E1. One MDB_env per data file per process (LMDB forbids opening a file twice in one process):
//     the registry, keyed by the file's device and inode (not its path), hands out a shared
//     environment and closes it when the last driver releases it. LMDB gets the path with
//     symbolic links followed, so the lock file sits beside the real file.
// E2. Every transaction runs inside `gate` held shared; the map is resized only with `gate` held
//     exclusively, so no transaction of this process is live during mdb_env_set_mapsize.
// E3. At most one write transaction per process (`writer`); LMDB's own lock serializes writers
//     across processes.
// E4. A write that hits MDB_MAP_FULL is aborted (nothing of it is visible), the map grows (doubling,
//     at most `maximumMapSize`) and the whole transaction body runs again; beyond the maximum the
//     caller gets StoreError(.full) and the store is as before.
// E5. Buffers read from the map never leave the closure of the transaction that read them.
// E6. `idleReaders` holds reset read-only transactions (no snapshot, a reader slot kept, which
//     MDB_NOTLS ties to the transaction, not the thread); a read renews one instead of beginning
//     a new one, and resets it back afterwards. At most `maximumIdleReaders` are kept; all are
//     aborted before the environment closes.
// E7. A write committed with `durable: false` on an environment that syncs fully is committed
//     with MDB_NOMETASYNC set for that commit only (its data pages are synced, its meta page is
//     not: a system crash may undo it, never damage the file), and `metaSyncPending` records it;
//     the next durable write forces mdb_env_sync before returning. Flags change only under
//     `writer`.
// E8. With a residency limit (`residency`), read-only transactions note the map pages their values
//     lay on and report them inside the transaction; the span dropped lies in the current map.

/// A shared LMDB environment (one file) with its named databases, map growth and error mapping.
///
/// Thread safety: `@unchecked Sendable`. The `MDB_env` is thread-safe for transactions begun with
/// `MDB_NOTLS`; the map size and database handles are guarded by `gate` and `handles` (a `Mutex`);
/// writes are serialized by `writer`.
final class LMDBEnvironment: @unchecked Sendable {
    let handle: OpaquePointer
    /// The store's path, for messages.
    let path: String
    /// The largest map the environment may grow to, in bytes.
    let maximumMapSize: Int
    let isReadOnly: Bool
    private let gate = ReadWriteLock()
    private let writer = NSLock()
    /// Whether the environment syncs every commit fully (the store option `sync=full`).
    private let syncsFully: Bool
    /// A commit whose meta page is not synced yet (E7); read and written only under `writer`.
    private var metaSyncPending = false
    private let handles = Locked<[String: MDB_dbi]>([:])
    private let currentMapSize: Atomic<Int>
    private let currentMapGeneration = Atomic<Int>(0)
    /// Reset read transactions ready to renew (E6). `OpaquePointer`s owned by the environment.
    private let idleReaders = Locked<[UInt]>([])
    private static let maximumIdleReaders = 8
    /// Keeps the map's resident part under ``LMDBOptions/residentMapLimit`` (E8); `nil`: no limit.
    let residency: MapResidency?

    init(path: String, isDirectory: Bool, options: LMDBOptions, readOnly: Bool) throws {
        self.path = path
        self.maximumMapSize = options.maximumMapSize
        self.isReadOnly = readOnly
        self.syncsFully = options.sync == .full
        self.residency = options.residentMapLimit > 0 ? MapResidency(limit: options.residentMapLimit) : nil
        var env: OpaquePointer?
        try Self.check(mdb_env_create(&env), path: path, "creating the environment")
        // mdb_env_create succeeded, so env is set.
        let handle = env!
        do {
            try Self.check(mdb_env_set_maxdbs(handle, MDB_dbi(options.maximumDatabases)), path: path, "configuring")
            try Self.check(mdb_env_set_maxreaders(handle, UInt32(options.maximumReaders)), path: path, "configuring")
            try Self.check(mdb_env_set_mapsize(handle, options.mapSize), path: path, "configuring")
            var flags = UInt32(MDB_NOTLS) | options.syncFlags
            if !isDirectory { flags |= UInt32(MDB_NOSUBDIR) }
            if readOnly { flags |= UInt32(MDB_RDONLY) }
            // 0666 less the umask, for the data file and the lock file alike (docs/formats/lmdb.md).
            try Self.check(mdb_env_open(handle, path, flags, 0o666), path: path, "opening")
            var dead: Int32 = 0
            mdb_reader_check(handle, &dead)
        } catch {
            mdb_env_close(handle)
            throw error
        }
        self.handle = handle
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        currentMapSize = Atomic(info.me_mapsize)
    }

    deinit {
        for txn in idleReaders.withLock({ $0 }) { mdb_txn_abort(OpaquePointer(bitPattern: txn)) }
        mdb_env_close(handle)
    }

    /// The current map size in bytes.
    var mapSize: Int { currentMapSize.load(ordering: .relaxed) }

    /// How many times the map was set anew (grown or adopted), when LMDB may have moved it. Read
    /// inside a transaction it cannot change until the transaction ends (E2): buffers read under
    /// one generation all lie in one map.
    var mapGeneration: Int { currentMapGeneration.load(ordering: .relaxed) }

    // MARK: Transactions

    /// Runs `body` in a read-only transaction (an MVCC snapshot of the last commit). With `commit`
    /// the transaction commits instead of aborting (database handles opened in it then persist).
    func read<T>(commit: Bool = false, _ body: (LMDBTransaction) throws -> T) throws -> T {
        while true {
            let outcome: Result<T, any Error>? = try gate.withShared {
                if !commit, let txn = renewIdleReader() {
                    let result = run(txn, body)
                    retire(txn)
                    return result
                }
                var txn: OpaquePointer?
                let rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
                if rc == MDB_MAP_RESIZED { return nil }
                if rc == MDB_READERS_FULL {
                    var dead: Int32 = 0
                    mdb_reader_check(handle, &dead)
                    if dead > 0 { return nil }
                }
                try check(rc, "starting a read")
                // mdb_txn_begin succeeded, so txn is set.
                let result = run(txn!, body)
                if commit, case .success = result {
                    try check(mdb_txn_commit(txn!), "finishing a read")
                } else if !commit {
                    retire(txn!)
                } else {
                    mdb_txn_abort(txn!)
                }
                return result
            }
            if let outcome { return try outcome.get() }
            try adoptMapSize()
        }
    }

    /// Runs `body` in the read-only transaction `txn`; with a residency limit, the pages it read
    /// are noted and reported before it ends (E8). The caller holds `gate` shared.
    private func run<T>(_ txn: OpaquePointer, _ body: (LMDBTransaction) throws -> T) -> Result<T, any Error> {
        guard let residency else {
            return Result { try body(LMDBTransaction(handle: txn, environment: self, isReadOnly: true)) }
        }
        var reads = MapReads(generation: mapGeneration)
        return withUnsafeMutablePointer(to: &reads) { pointer in
            let transaction = LMDBTransaction(handle: txn, environment: self, isReadOnly: true, reads: pointer)
            let result = Result { try body(transaction) }
            residency.report(&pointer.pointee)
            return result
        }
    }

    /// An idle read transaction renewed on the current snapshot, or `nil` (none idle, or renewing
    /// failed, e.g. after another process grew the map: the caller then begins one, which reports
    /// the condition).
    private func renewIdleReader() -> OpaquePointer? {
        guard let raw = idleReaders.withLock({ $0.popLast() }) else { return nil }
        let txn = OpaquePointer(bitPattern: raw)
        if mdb_txn_renew(txn) == MDB_SUCCESS { return txn }
        mdb_txn_abort(txn)
        return nil
    }

    /// Resets a finished read transaction and keeps it for the next read (E6), or aborts it when
    /// enough are kept.
    private func retire(_ txn: OpaquePointer) {
        mdb_txn_reset(txn)
        let kept = idleReaders.withLock { idle in
            guard idle.count < Self.maximumIdleReaders else { return false }
            idle.append(UInt(bitPattern: txn))
            return true
        }
        if !kept { mdb_txn_abort(txn) }
    }

    /// Runs `body` in a write transaction and commits it; on `MDB_MAP_FULL` grows the map and runs
    /// `body` again (E4). When `body` throws, the transaction is aborted and nothing changes.
    ///
    /// - Parameter durable: `false` commits without syncing the meta page (E7), for deferred
    ///   change sets; a durable write syncs what earlier ones left unsynced.
    func write<T>(durable: Bool = true, _ body: (LMDBTransaction) throws -> T) throws -> T {
        if isReadOnly { throw StoreError(.readOnly, "the store was opened read-only", store: path) }
        return try writer.withLock {
            let value = try writeOnce(durable: durable, body)
            if durable, metaSyncPending {
                try check(mdb_env_sync(handle, 1), "syncing deferred commits")
                metaSyncPending = false
            }
            return value
        }
    }

    /// One write transaction, retried on a map resize or a full map; the caller holds `writer`.
    private func writeOnce<T>(durable: Bool, _ body: (LMDBTransaction) throws -> T) throws -> T {
        while true {
            let outcome: Result<T, any Error>? = try gate.withShared {
                var txn: OpaquePointer?
                let rc = mdb_txn_begin(handle, nil, 0, &txn)
                if rc == MDB_MAP_RESIZED { return nil }
                try check(rc, "starting a write")
                // mdb_txn_begin succeeded.
                let transaction = LMDBTransaction(handle: txn!, environment: self)
                do {
                    let value = try body(transaction)
                    let deferMeta = !durable && syncsFully
                    if deferMeta {
                        // Only this commit skips the meta page's sync (E7); the flag is back
                        // before `writer` is released, and readers never look at it.
                        try check(mdb_env_set_flags(handle, UInt32(MDB_NOMETASYNC), 1), "deferring a sync")
                    }
                    let commit = mdb_txn_commit(txn!)
                    if deferMeta {
                        let restored = mdb_env_set_flags(handle, UInt32(MDB_NOMETASYNC), 0)
                        // It fails only for a flag it cannot change, and it changed this one
                        // just above; nothing may throw here: the transaction is gone.
                        precondition(restored == MDB_SUCCESS, "mdb_env_set_flags refused MDB_NOMETASYNC")
                        if commit == MDB_SUCCESS { metaSyncPending = true }
                    }
                    if commit == MDB_MAP_FULL { return .failure(MapFull()) }
                    try check(commit, "committing")
                    return .success(value)
                } catch {
                    mdb_txn_abort(txn!)
                    if isMapFull(error) { return .failure(MapFull()) }
                    return .failure(error)
                }
            }
            switch outcome {
            case nil:
                try adoptMapSize()
            case .failure(let error) where error is MapFull:
                try grow()
            case .some(let result):
                return try result.get()
            }
        }
    }

    private struct MapFull: Error {}

    private func isMapFull(_ error: any Error) -> Bool {
        if error is MapFull { return true }
        if let store = error as? StoreError, let engine = store.underlying as? LMDBEngineError {
            return engine.code == MDB_MAP_FULL
        }
        return false
    }

    /// Doubles the map (at most to the maximum); throws `.full` when it is already there.
    private func grow() throws {
        try gate.withExclusive {
            let current = currentMapSize.load(ordering: .relaxed)
            guard current < maximumMapSize else {
                throw StoreError(
                    .full,
                    "the LMDB map is full at its maximum size of \(current) bytes; the save was not applied. Raise the store option maxMapSize, or delete data",
                    store: path, underlying: LMDBEngineError(code: MDB_MAP_FULL))
            }
            let next = min(max(current * 2, current + 1 << 20), maximumMapSize)
            currentMapGeneration.add(1, ordering: .relaxed)
            try check(mdb_env_set_mapsize(handle, next), "growing the map")
            var info = MDB_envinfo()
            mdb_env_info(handle, &info)
            currentMapSize.store(info.me_mapsize, ordering: .relaxed)
        }
    }

    /// Adopts a map size another process set (after `MDB_MAP_RESIZED`).
    private func adoptMapSize() throws {
        try gate.withExclusive {
            currentMapGeneration.add(1, ordering: .relaxed)
            try check(mdb_env_set_mapsize(handle, 0), "adopting the map size")
            var info = MDB_envinfo()
            mdb_env_info(handle, &info)
            currentMapSize.store(info.me_mapsize, ordering: .relaxed)
        }
    }

    // MARK: Named databases

    /// The handle of the named database `name`, opened (and with `create`, created) in `txn`.
    /// Returns `nil` when it does not exist and `create` is false.
    func database(_ name: String, flags: Int32 = 0, create: Bool, in txn: LMDBTransaction) throws -> MDB_dbi? {
        if let known = handles.withLock({ $0[name] }) { return known }
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn.handle, name, UInt32(flags | (create ? MDB_CREATE : 0)), &dbi)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "opening database '\(name)'")
        return dbi
    }

    /// Records handles opened in a transaction that committed.
    func remember(_ opened: [String: MDB_dbi]) { handles.withLock { $0.merge(opened) { a, _ in a } } }

    // MARK: Errors

    /// Throws the ``StoreError`` for an LMDB return code other than success. Inlined so that the
    /// success path of every cursor step and lookup reads nothing else: passing `path` along
    /// retained and released the string on each one (a third of a cursor step's own time).
    @inline(__always)
    func check(_ rc: Int32, _ what: @autoclosure () -> String) throws {
        if rc != MDB_SUCCESS { try Self.check(rc, path: path, what()) }
    }

    /// Maps an LMDB or system return code to a ``StoreError`` naming the store and the next step.
    static func check(_ rc: Int32, path: String, _ what: String) throws {
        guard rc != MDB_SUCCESS else { return }
        let engine = LMDBEngineError(code: rc)
        let (code, advice): (StoreError.Code, String) =
            switch rc {
            case MDB_INVALID, MDB_VERSION_MISMATCH:
                (
                    .corrupt,
                    "the file is not an LMDB environment (or one of another LMDB version); check the path, or restore the store from a backup"
                )
            case MDB_CORRUPTED, MDB_PAGE_NOTFOUND:
                (.corrupt, "the LMDB file is damaged; restore the store from a backup")
            case MDB_MAP_FULL:
                (.full, "the LMDB map is full; raise the store option maxMapSize")
            case MDB_READERS_FULL:
                (
                    .locked,
                    "every LMDB reader slot is taken, possibly by crashed processes (stale reader slots); close other readers, or run `mdb_stat -rr` on the store to clear stale slots"
                )
            case MDB_MAP_RESIZED:
                (.io, "another process grew the map; retry")
            case EACCES, EPERM:
                (
                    .io,
                    "permission denied; check the owner and mode of the store file, its -lock file and their directory, or open the store read-only"
                )
            case EROFS:
                (.readOnly, "the file system is read-only; open the store read-only")
            case ENOENT:
                (.notFound, "the store file does not exist; create it by opening without createIfMissing = false")
            case ENOSPC:
                (.full, "the disk is full; free space and retry")
            case EAGAIN, EWOULDBLOCK:
                (.locked, "the store is locked by another process; retry later")
            default:
                (.io, "LMDB failed; retry, or check the store file")
            }
        throw StoreError(code, "\(what) failed: \(advice)", store: path, underlying: engine)
    }
}

/// An LMDB return code with its message (`mdb_strerror`).
struct LMDBEngineError: Error, Sendable, CustomStringConvertible {
    var code: Int32
    var description: String { "LMDB error \(code): \(String(cString: mdb_strerror(code)))" }
}

/// A POSIX read-write lock: shared for transactions, exclusive for map resizes.
///
/// Thread safety: `@unchecked Sendable`; pthread_rwlock_t is made for concurrent use and lives in
/// a stable heap allocation.
final class ReadWriteLock: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    init() { pthread_rwlock_init(lock, nil) }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func withShared<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    func withExclusive<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}

// LMDB's error macros as plain constants for callers outside the shim (tests).
let mdbReadersFullCode = MDB_READERS_FULL
let mdbMapFullCode = MDB_MAP_FULL
let mdbInvalidCode = MDB_INVALID
