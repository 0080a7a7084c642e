import CSQLite
import Foundation
import Strata
import Synchronization

// SQLITE DRIVER INVARIANTS
// S1. Each connection is used by one thread at a time: the writer only inside `writer.withLock`,
//     a reader only inside `readers.withConnection`, which hands it to one read at a time.
//     Statements never leave the read or write that made them.
// S2. Every change set runs in one `BEGIN IMMEDIATE … COMMIT` transaction on the writer; any
//     failure rolls it back before the error leaves `apply`, so the file holds what it held before.
// S3. `Z_OPT` only grows: inserts store 1, updates add 1 under `WHERE Z_PK = ? AND Z_OPT = ?`.
// S4. `Z_PRIMARYKEY.Z_MAX` of a hierarchy's root is at least every key stored or handed out in it;
//     allocation advances it in its own committed statement, so keys are never reused.
// S5. The layout is immutable once the driver exists; rows of `Z_ENT` values the model does not
//     know are skipped, never guessed.
// States: open (writer + readers, or readers only when read-only) -> closed [close()]; closed is final.

/// The SQLite store: Core Data's own file layout over the system libsqlite3.
///
/// Opens stores written by Strata or by Apple's Core Data (with their model; see
/// docs/formats/sqlite.md), pushes predicates, sorts, pages and counts down to SQL where the SQL
/// answers exactly as the core's evaluator, and applies each change set in one transaction with
/// optimistic locking on `Z_OPT`.
///
/// Options (``StoreOptions/values``): `journal_mode` (default `WAL`), `synchronous` (default
/// `NORMAL`), `cache_size`, `mmap_size`, `max_page_count`, `temp_store`, `locking_mode` — each set
/// as the SQLite pragma of that name on the write connection, and `cache_size` (default `-512`,
/// 512 KiB), `mmap_size` and `temp_store` on every read connection too; ``StoreOptions/timeout``
/// is the busy timeout.
///
/// Thread safety: `Sendable`. Writes go through one write connection under a lock; fetches use
/// read connections of their own (``ReaderPool``, up to ``readerLimit`` at once), so they never
/// wait on a writer in WAL mode, nor on each other.
public final class SQLiteDriver: StoreDriver {
    /// The store file's path.
    public let path: String
    /// Whether the store refuses writes (opened read-only, or with a model inferred from its tables).
    public let isReadOnly: Bool
    let layout: StoreLayout
    let model: ManagedObjectModel
    let timeout: Double
    let writer: GuardedConnection
    let readers: ReaderPool
    /// The statements run for every row, built once (``SQLiteStatementPlans``).
    let plans: SQLiteStatementPlans
    /// The most values a translated predicate may bind (the engine's parameter limit).
    let parameterLimit: Int

    /// Pragmas the driver accepts from ``StoreOptions/values``, with their defaults.
    static let pragmaDefaults: [String: String?] = [
        "journal_mode": "WAL", "synchronous": "NORMAL", "cache_size": nil, "mmap_size": nil,
        "max_page_count": nil, "temp_store": nil, "locking_mode": nil,
    ]

    /// Pragmas set on every read connection, from the store options of those names, with their
    /// defaults. A reader's page cache defaults to 512 KiB, not SQLite's 2 MiB: a fetch that scans
    /// a table cycles its pages through the cache, and the operating system caches the file as
    /// well, so the larger cache held 2 MiB per reader for lookups no faster (docs/benchmarks.md,
    /// "Memory at rest").
    static let readerPragmas: [String: String?] = ["cache_size": "-512", "mmap_size": nil, "temp_store": nil]

    /// Read connections open at most at once: reads beyond it wait for one to finish.
    static let readerLimit = 4

    init(
        path: String, layout: StoreLayout, readOnly: Bool, timeout: Double, writer: SQLiteConnection?,
        reader: SQLiteConnection, openReader: @escaping @Sendable () throws -> SQLiteConnection
    ) {
        self.path = path
        self.layout = layout
        self.model = layout.model
        self.isReadOnly = readOnly
        self.timeout = timeout
        self.writer = GuardedConnection(writer)
        self.readers = ReaderPool(first: reader, limit: Self.readerLimit, open: openReader)
        self.plans = SQLiteStatementPlans(layout: layout)
        self.parameterLimit = reader.parameterLimit
    }

    public var capabilities: DriverCapabilities {
        [.predicatePushdown, .sortPushdown, .countPushdown, .concurrentReads]
    }

    /// Runs `body` with a read connection of its own; `action` names the read in an error.
    func read<T: Sendable>(_ action: @autoclosure () -> String, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try mappingErrors(store: path, action: action(), timeout: timeout) {
            try readers.withConnection { connection in
                guard let connection else { throw closedError() }
                return try body(connection)
            }
        }
    }

    /// Runs `body` in one immediate transaction on the write connection; rolls back on failure.
    func write<T: Sendable>(_ action: String, _ body: (SQLiteConnection) throws -> T) throws -> T {
        if isReadOnly {
            throw StoreError(.readOnly, "\(action) failed: the store was opened read-only", store: path)
        }
        return try writer.withLock { connection in
            guard let connection else { throw closedError() }
            return try mappingErrors(store: path, action: action, timeout: timeout) {
                try connection.cached("BEGIN IMMEDIATE").step()
                do {
                    let result = try body(connection)
                    try connection.cached("COMMIT").step()
                    return result
                } catch {
                    try? connection.execute("ROLLBACK")
                    throw error
                }
            }
        }
    }

    func closedError() -> StoreError {
        StoreError(.closed, "the store was closed; attach it again to use it", store: path)
    }

    public func loadMetadata() throws -> StoreMetadata {
        try read("reading metadata") { connection in
            try MetadataCoding.read(from: connection) ?? StoreMetadata(storeType: StoreType.sqliteName)
        }
    }

    public func saveMetadata(_ metadata: StoreMetadata) throws {
        try write("saving metadata") { connection in
            try MetadataCoding.write(metadata, naming: layout.naming, to: connection)
        }
    }

    public func close() throws {
        // The readers first: the last connection to close checkpoints the WAL into the file and
        // removes it, which only the writer can do.
        readers.close()
        writer.close()
    }
}

/// A connection and the lock that serializes every use of it (invariant S1).
///
/// `@unchecked Sendable`: `connection` is read and written only inside `lock.withLock`, so no two
/// threads ever touch the connection or its statements at once.
final class GuardedConnection: @unchecked Sendable {
    private let lock = Locked<Void>(())
    private var connection: SQLiteConnection?

    init(_ connection: SQLiteConnection?) { self.connection = connection }

    /// Runs `body` with the connection under the lock; `nil` after ``close()``.
    func withLock<T>(_ body: (SQLiteConnection?) throws -> T) rethrows -> T {
        try lock.withLock { _ in try body(connection) }
    }

    /// Closes the connection; later calls do nothing.
    func close() {
        lock.withLock { _ in
            connection?.close()
            connection = nil
        }
    }
}
