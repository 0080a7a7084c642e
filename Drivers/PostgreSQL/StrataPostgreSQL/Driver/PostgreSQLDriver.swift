import CLibPQ
import Foundation
import Strata

// POSTGRESQL DRIVER INVARIANTS
// G1. A connection is used by one thread at a time (ConnectionPool, P1); the listener's connection
//     belongs to its thread alone.
// G2. Every change set runs in one transaction (`BEGIN … COMMIT`); any failure rolls it back
//     before the error leaves `apply`, so the store holds what it held before. A connection lost
//     before `COMMIT` was sent means the server rolled back: the transaction runs again on a new
//     connection. A connection lost during `COMMIT` is reported (`io`), never retried.
// G3. `Z_OPT` only grows: inserts store 1, updates add 1 under `WHERE Z_PK = k AND Z_OPT = v`;
//     the row lock the update takes makes a concurrent save of the same row wait, re-check the
//     version and find it stale (`conflict`), in any process.
// G4. `Z_PRIMARYKEY.Z_MAX` of a hierarchy's root is at least every key stored or handed out in it;
//     allocation advances it in its own committed statement under the row's lock, so no two
//     processes ever get the same key.
// G5. Every committed change set that changed rows sent one or more `NOTIFY`s on the store's
//     channel, in the same transaction (delivered on commit, never for a rollback).
// States: open -> closed [close()]; closed is final.

/// The PostgreSQL store: Core Data's layout in a schema of a PostgreSQL server, shared by many
/// processes and machines.
///
/// Stores are named by URL (`postgres://user@host:5432/db?schema=name`, see
/// ``PostgreSQLLocation``). Predicates, sorts, pages and counts go down to SQL where SQL answers
/// exactly as the core's evaluator; the rest of a predicate the driver finishes itself with the
/// evaluator, so fetches come back complete. Each change set is one transaction with optimistic
/// locking on `Z_OPT`, sent as a few array statements; each commit notifies the other processes
/// (`NOTIFY` on the store's channel), whose coordinators drop the changed rows from their row
/// caches and let their contexts merge them (``StoreDriver/observeRemoteChanges(_:)``).
///
/// Thread safety: `Sendable`. Calls take a connection of the pool (`pool_size`, default 4), so
/// reads run alongside each other and alongside a save.
public final class PostgreSQLDriver: StoreDriver {
    /// Where the store lives (without its password).
    public let location: PostgreSQLLocation
    /// Whether the store refuses writes.
    public let isReadOnly: Bool
    /// The store's name in messages (its URL without password).
    public let name: String
    let layout: StoreLayout
    let model: ManagedObjectModel
    let pool: ConnectionPool
    let plans: StatementPlans
    /// Signs this driver's notifications, so its own saves are not reported back to it.
    let token: String
    /// Whether the server can run the string comparisons SQL pushdown uses (`normalize`, UTF-8).
    let pushesDownStrings: Bool
    let listener = Locked<NotificationListener?>(nil)
    /// By statement and by inheritance root: the share of rows the last fetch found in the row
    /// cache (PostgreSQLDriver+CachedFetch.swift).
    let cacheHits = Locked(CacheHistories())
    /// The statements reading to-many relationships, built on first use
    /// (PostgreSQLDriver+RelatedRows.swift).
    let memberStatements = Locked<[MembersStatement.Key: MembersStatement]>([:])

    /// Deadlocks and serialization failures are retried this many times before they are reported.
    static let transactionRetries = 5

    init(
        location: PostgreSQLLocation, layout: StoreLayout, readOnly: Bool, pool: ConnectionPool, pushesDownStrings: Bool
    ) {
        self.location = location
        self.name = location.displayName
        self.layout = layout
        self.model = layout.model
        self.isReadOnly = readOnly
        self.pool = pool
        self.plans = StatementPlans(layout: layout)
        self.pushesDownStrings = pushesDownStrings
        self.token = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    }

    public var capabilities: DriverCapabilities {
        [.predicatePushdown, .sortPushdown, .countPushdown, .concurrentReads]
    }

    /// Runs `body` with a connection of the pool, outside any explicit transaction; retried once on
    /// a new connection when the server dropped the old one.
    func read<T>(_ action: String, _ body: (PGConnection) throws -> T) throws -> T {
        try mappingErrors(action) { try pool.withConnection(retryingLostConnection: true, body) }
    }

    /// Runs `body` in one transaction and commits it; rolls back on failure (invariant G2).
    /// Deadlocks and serialization failures run the whole transaction again.
    func write<T>(_ action: String, _ body: (PGConnection) throws -> T) throws -> T {
        if isReadOnly {
            throw StoreError(.readOnly, "\(action) failed: the store was opened read-only", store: name)
        }
        var attempt = 0
        while true {
            do {
                return try mappingErrors(action) {
                    try pool.withConnection(retryingLostConnection: true) { connection in
                        try connection.executeScript("BEGIN")
                        let result: T
                        do {
                            result = try body(connection)
                        } catch {
                            // A rollback that fails leaves a broken or non-idle connection, which the pool
                            // closes; the error that counts is the one thrown.
                            if !connection.isBroken { try? connection.executeScript("ROLLBACK") }
                            throw error
                        }
                        do {
                            try connection.executeScript("COMMIT")
                        } catch let error as PostgreSQLError where error.connectionLost {
                            throw StoreError(
                                .io,
                                "the connection to the server was lost while committing; the change may or may not have been saved. Fetch the objects again to see",
                                store: name, underlying: error)
                        }
                        return result
                    }
                }
            } catch let error as StoreError
                where (error.underlying as? PostgreSQLError)?.isRetryableTransactionFailure == true
            {
                attempt += 1
                if attempt > Self.transactionRetries { throw error }
                // Back off a little, longer each time, so the transactions that collided come apart.
                usleep(UInt32.random(in: 1_000...5_000) * UInt32(attempt))
            }
        }
    }

    /// Turns engine errors into ``StoreError``s naming the store and the action.
    func mappingErrors<T>(_ action: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgreSQLError {
            throw Self.storeError(error, action: action, store: name)
        }
    }

    /// The ``StoreError`` for an engine error (docs/formats/postgresql.md, "Errors").
    static func storeError(_ error: PostgreSQLError, action: String, store: String) -> StoreError {
        let code: StoreError.Code
        let advice: String
        switch (error.sqlState, error.sqlStateClass) {
        case _ where error.connectionLost:
            code = .io
            advice =
                "the server cannot be reached or closed the connection; check that it runs and accepts this user (the next call reconnects)"
        case ("57014", _):
            code = .timedOut
            advice =
                "the statement ran past statement_timeout; nothing was changed. Raise statement_timeout or narrow the request"
        case ("55P03", _):
            code = .locked
            advice =
                "another transaction held a lock past lock_timeout; nothing was changed. Try again, or raise the store's timeout"
        case ("40P01", _), ("40001", _):
            code = .conflict
            advice = "the save collided with concurrent saves and was rolled back; try again"
        case ("23505", _):
            code = .constraint
            advice = "a unique constraint was violated; nothing was changed"
        case (_, "23"):
            code = .constraint
            advice = "an integrity constraint was violated; nothing was changed"
        case ("25006", _), ("42501", _):
            code = .readOnly
            advice =
                "the server refused the write (read-only transaction or missing privilege); grant the user write access"
        case ("3D000", _):
            code = .notFound
            advice = "the database does not exist; create it (createdb) or fix the URL"
        case (_, "28"):
            code = .io
            advice = "the server refused the login; check the user and the password (URL, PGPASSWORD or ~/.pgpass)"
        case (_, "53"):
            code = .full
            advice = "the server is out of disk, memory or connections"
        case ("XX001", _), ("XX002", _):
            code = .corrupt
            advice = "the server reports damaged data; restore from a backup"
        default:
            code = .io
            advice = "the server refused the statement"
        }
        return StoreError(code, "\(action) failed: \(advice)", store: store, underlying: error)
    }

    public func loadMetadata() throws -> StoreMetadata {
        try read("reading metadata") { connection in
            try MetadataCoding.read(from: connection, table: layout.metadataTable, store: name)
                ?? StoreMetadata(storeType: StoreType.postgreSQLName)
        }
    }

    public func saveMetadata(_ metadata: StoreMetadata) throws {
        try write("saving metadata") { connection in
            try MetadataCoding.write(metadata, to: connection, table: layout.metadataTable, store: name)
        }
    }

    public func close() throws {
        let listening = listener.withLock { current -> NotificationListener? in
            defer { current = nil }
            return current
        }
        listening?.stop()
        pool.close()
    }

    func closedError() -> StoreError { pool.closedError() }
}
