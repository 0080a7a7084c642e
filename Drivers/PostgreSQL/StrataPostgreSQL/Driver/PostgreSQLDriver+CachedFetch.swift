import Foundation
import Strata

// Fetches through the row cache. A row the coordinator's row cache holds at the version the server
// has is not read again (CachedRows): when most rows of recent fetches of an entity were cached,
// a fetch first reads only keys and versions (a third of the bytes of whole rows), then the rows
// the cache lacks by key. Which way a fetch goes follows the share of cached rows the last fetch with
// the same statement found; a statement not seen yet follows the entity's last fetch when it reads
// every row, and reads whole rows when a predicate selects them (a guess: either way gives the same
// rows).
//
// Two ways to read keys, both giving the rows of one snapshot:
// - a large fetch without bound values (``streamThroughCache``): keys arrive as a COPY stream in a
//   read-only REPEATABLE READ transaction (its BEGIN sent with the COPY), and cached rows are handed
//   over in parts while the server is still sending, up to the first row the cache lacks; the rows
//   from there wait for the missing ones, read in the same snapshot by key, or in one scan of
//   whole rows when more than half of the fetch's rows are missing. A `ROLLBACK` ends it:
//   one round trip more than a lone statement, paid only where the last fetch with the statement
//   (or of the entity) returned more than one part's rows;
// - otherwise (``fetchThroughCache``) no transaction: keys, then the missing rows by key, each
//   statement in a snapshot of its own, so the rows read by key count only when each is at the
//   version the keys' statement saw; when one is not, or when many rows are missing, whole rows
//   are read in one statement.

extension PostgreSQLDriver {
    /// The rows of a fetch's keys and versions: cached rows in place, `nil` where a row is missing.
    struct KeyedRows {
        var slots: [RowSnapshot?] = []
        var missing: [(position: Int, id: RowID, version: Int64)] = []
    }

    /// What the last fetch given the row cache's rows found.
    struct CacheHistory {
        /// The share of its rows the row cache held.
        var rate: Double
        /// How many rows it read.
        var rows: Int
    }

    /// What earlier fetches given the row cache's rows found: per statement (the SQL text, without
    /// its bound values), and per inheritance root for a statement not seen yet. Fetches of one
    /// entity differ in how many of their rows are cached (every row, read just after a fetch of
    /// every row, against a tenth of the table matching a predicate, mostly uncached): a guess
    /// from another statement sent the second to keys first and then, most rows missing, to a
    /// statement for the whole rows, two scans and sorts on the server where one would do.
    struct CacheHistories {
        /// The most statements remembered; past it the table starts again empty.
        static let statementLimit = 256
        var byStatement: [String: CacheHistory] = [:]
        var byRoot: [Int32: CacheHistory] = [:]

        /// The history of `statement`; for one not seen yet, that of `root`'s last fetch when the
        /// statement reads every row (`filtered` false), else none.
        func history(_ statement: String, root: Int32, filtered: Bool) -> CacheHistory? {
            if let known = byStatement[statement] { return known }
            return filtered ? nil : byRoot[root]
        }

        mutating func record(_ history: CacheHistory, statement: String, root: Int32) {
            if byStatement[statement] == nil, byStatement.count >= Self.statementLimit { byStatement.removeAll() }
            byStatement[statement] = history
            byRoot[root] = history
        }
    }

    /// The share of rows found in the row cache by the last fetch with `statement`. A statement
    /// not seen yet takes the share of the last fetch of `entity`'s hierarchy (1 when there was
    /// none) when it reads every row, and 0 when a predicate selects its rows (`filtered`): which
    /// rows of a selection are cached is unknown, and reading whole rows at once costs one
    /// statement whatever the answer.
    func cacheHitRate(_ entity: EntityDescription, statement: String, filtered: Bool) -> Double {
        if let history = cacheHits.withLock({ $0.history(statement, root: entity.rootEntityNumber, filtered: filtered) }
        ) {
            return history.rate
        }
        return filtered ? 0 : 1
    }

    /// Whether the last fetch with `statement` (else of `entity`'s hierarchy) read more than one
    /// part's rows (true when there was none yet): then handing rows over while the keys arrive is
    /// worth a transaction.
    func expectsManyRows(_ entity: EntityDescription, statement: String) -> Bool {
        let history = cacheHits.withLock { $0.history(statement, root: entity.rootEntityNumber, filtered: false) }
        return (history?.rows ?? .max) > Self.fetchPart
    }

    /// Records the share of cached rows a fetch with `statement` found (when it was given the row
    /// cache's rows).
    func noteCacheHits(_ entity: EntityDescription, statement: String, hits: Int, rows: Int, cached: Bool) {
        guard cached, rows > 0 else { return }
        let history = CacheHistory(rate: Double(hits) / Double(rows), rows: rows)
        cacheHits.withLock { $0.record(history, statement: statement, root: entity.rootEntityNumber) }
    }

    /// Reads keys and versions with `keysSQL`, takes the rows `cached` holds at those versions, and
    /// reads the others by key (or all with `rowsSQL` when more than half are missing).
    ///
    /// No transaction: a fetch whose rows are all cached is one statement, one round trip. Each
    /// statement sees a snapshot of its own, so rows read by key belong to the keys' snapshot only
    /// when each is at the version the keys' statement saw (versions grow with every update); a row
    /// changed or deleted in between sends the fetch to `rowsSQL`, one statement, one snapshot.
    func fetchThroughCache(
        _ entity: EntityDescription, keysSQL: String, rowsSQL: String, _ parameters: PGParameters, _ cached: CachedRows,
        action: String
    ) throws -> [RowSnapshot] {
        try read(action) { connection in
            // Each row of keys and versions: the cached values, or a place for the row to read.
            var keyed = KeyedRows()
            func note<Row: PGRow>(_ row: Row, _ rows: inout KeyedRows) throws {
                guard let number = Int32(exactly: row.int64(1)), plans.entity(number) != nil else { return }
                let id = RowID(entity: number, primaryKey: try checkedKey(row.int64(0), of: number))
                let version = row.int64(2)
                if let values = cached.values(of: id, version: version) {
                    rows.slots.append(RowSnapshot(id: id, version: version, values: values))
                } else {
                    rows.missing.append((rows.slots.count, id, version))
                    rows.slots.append(nil)
                }
            }
            if parameters.count == 0 {
                // Without values to bind, as a stream (PGConnection+Copy.swift): less work per value.
                try connection.copyRows(keysSQL, columns: 3, state: &keyed) { row, rows in
                    try note(row, &rows)
                    return true
                }
            } else {
                let keys = try connection.execute(keysSQL, parameters)
                keyed.slots.reserveCapacity(keys.rowCount)
                for row in 0..<keys.rowCount { try note(PGResult.Row(result: keys, row: row), &keyed) }
            }
            var slots = keyed.slots
            let missing = keyed.missing
            if missing.isEmpty {
                // Every row came from the cache (the optional is filled at every position).
                let fetched = slots.compactMap { $0 }
                noteCacheHits(entity, statement: rowsSQL, hits: fetched.count, rows: fetched.count, cached: true)
                return fetched
            }
            if missing.count * 2 <= slots.count {
                let byKey = try rowsByKey(missing, of: entity, on: connection)
                var consistent = true
                for (position, id, version) in missing {
                    guard let snapshot = byKey[id.primaryKey], snapshot.id == id, snapshot.version == version else {
                        consistent = false
                        break
                    }
                    slots[position] = snapshot
                }
                if consistent {
                    noteCacheHits(
                        entity, statement: rowsSQL, hits: slots.count - missing.count, rows: slots.count, cached: true)
                    return slots.compactMap { $0 }
                }
            }
            // Mostly missing, or changed since the keys were read: whole rows, one statement.
            let result = try connection.execute(rowsSQL, parameters)
            var rows: [RowSnapshot] = []
            rows.reserveCapacity(result.rowCount)
            var hits = 0
            for row in 0..<result.rowCount {
                var hit = false
                if let snapshot = try decode(result, row, cached: cached, hit: &hit) {
                    rows.append(snapshot)
                    if hit { hits += 1 }
                }
            }
            noteCacheHits(entity, statement: rowsSQL, hits: hits, rows: rows.count, cached: true)
            return rows
        }
    }

    /// The rows of `missing`, read by key in one statement, by primary key.
    func rowsByKey(
        _ missing: [(position: Int, id: RowID, version: Int64)], of entity: EntityDescription,
        on connection: PGConnection
    ) throws -> [Int64: RowSnapshot] {
        guard let table = layout.entity(entity.entityNumber).flatMap({ plans.tables[$0.table] }) else {
            throw StoreError(.invalidRequest, "entity \(entity.name) is not stored here", store: name)
        }
        let result = try connection.executePrepared(table.lookupMany, Self.keyArray(missing.map(\.id.primaryKey)))
        var byKey: [Int64: RowSnapshot] = [:]
        byKey.reserveCapacity(missing.count)
        for row in 0..<result.rowCount {
            if let snapshot = try decode(result, row) { byKey[snapshot.id.primaryKey] = snapshot }
        }
        return byKey
    }

    /// The rows of `missing` among those `sql` (a fetch's statement for whole rows, of `columns`
    /// columns, without bound values) reads, by primary key: one stream of every row the fetch
    /// selects, decoding only the missing ones. Where most rows are missing, one sequential scan
    /// costs the server less than probing its key index once per row (a fetch of 1,000,000 rows of
    /// which the row cache held a tenth: 1.9 s, against 2.7–2.9 s by key).
    func rowsInScan(
        _ sql: String, columns: Int, keeping missing: [(position: Int, id: RowID, version: Int64)],
        on connection: PGConnection
    ) throws -> [Int64: RowSnapshot] {
        struct Scan {
            var wanted = Set<Int64>()
            var byKey: [Int64: RowSnapshot] = [:]
        }
        var scan = Scan()
        scan.wanted.reserveCapacity(missing.count)
        for row in missing { scan.wanted.insert(row.id.primaryKey) }
        scan.byKey.reserveCapacity(missing.count)
        try connection.copyRows(sql, columns: columns, state: &scan) { row, scan in
            guard scan.wanted.contains(row.int64(0)) else { return true }
            var hit = false
            if let snapshot = try decode(row, cached: nil, hit: &hit) { scan.byKey[snapshot.id.primaryKey] = snapshot }
            return true
        }
        return scan.byKey
    }

    /// ``fetchThroughCache`` for a large fetch without bound values, handing rows to `intake` (and
    /// its parts to `body`) as the keys arrive (`statement`, the fetch's statement for whole rows of
    /// `columns` columns, names its history): cached rows at once until the first row the cache
    /// lacks, the rest once the missing rows are read, by key, or in one scan of whole rows when
    /// more than half of all are missing (``rowsInScan(_:columns:keeping:on:)``). Keys and missing
    /// rows are read in one read-only REPEATABLE READ transaction, so they are of one snapshot.
    ///
    /// - Throws: ``StoreError`` for the server's errors; `.io` without a retry when the connection
    ///   is lost after rows were handed over (reading them again would hand them twice).
    func streamThroughCache(
        _ entity: EntityDescription, keysSQL: String, statement: String, columns: Int, _ cached: CachedRows,
        action: String, intake: inout RowIntake, _ body: (inout StoreFetchResult) throws -> Void
    ) throws {
        struct Streamed {
            var intake: RowIntake
            /// Rows from the first one the cache lacks: cached ones in place, `nil` where missing.
            var keyed = KeyedRows()
            var rows = 0
            var hits = 0
            /// Whether `intake` wants more rows.
            var wanted = true
        }
        var state = Streamed(intake: intake)
        defer {
            intake = state.intake
            noteCacheHits(entity, statement: statement, hits: state.hits, rows: state.rows, cached: true)
        }
        try read(action) { connection in
            state = Streamed(intake: intake)
            do {
                try connection.copyRows(
                    keysSQL, columns: 3, beginning: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", state: &state
                ) { row, state in
                    guard let number = Int32(exactly: row.int64(1)), plans.entity(number) != nil else { return true }
                    let id = RowID(entity: number, primaryKey: try checkedKey(row.int64(0), of: number))
                    let version = row.int64(2)
                    let values = cached.values(of: id, version: version)
                    state.rows += 1
                    if values != nil { state.hits += 1 }
                    if state.keyed.missing.isEmpty, let values {
                        state.wanted = try state.intake.take(
                            RowSnapshot(id: id, version: version, values: values), body)
                        return state.wanted
                    }
                    if let values {
                        state.keyed.slots.append(RowSnapshot(id: id, version: version, values: values))
                    } else {
                        state.keyed.missing.append((state.keyed.slots.count, id, version))
                        state.keyed.slots.append(nil)
                    }
                    return true
                }
                if state.wanted, !state.keyed.missing.isEmpty {
                    var slots = state.keyed.slots
                    let missing = state.keyed.missing
                    // More than half the rows missing: one scan of whole rows, in the same snapshot,
                    // instead of an index probe on the server per missing key.
                    let byKey =
                        missing.count * 2 > state.rows
                        ? try rowsInScan(statement, columns: columns, keeping: missing, on: connection)
                        : try rowsByKey(missing, of: entity, on: connection)
                    for (position, id, version) in missing {
                        // One snapshot: a row its keys listed is there, at the version they gave.
                        guard let snapshot = byKey[id.primaryKey], snapshot.id == id, snapshot.version == version else {
                            throw StoreError(
                                .corrupt,
                                "row \(id.primaryKey) of entity '\(entity.name)' read by key differs from its key and version read in the same transaction; check the table with psql",
                                store: name)
                        }
                        slots[position] = snapshot
                    }
                    for slot in slots {
                        // Every missing position was filled above.
                        guard let snapshot = slot, try state.intake.take(snapshot, body) else { break }
                    }
                }
                // Read-only: nothing to keep. A COPY stopped early left the transaction failed,
                // which ROLLBACK ends as well. Every row is read by now: a connection lost here
                // loses nothing (the server ends a dead session's transaction, the pool drops it).
                do {
                    try connection.executeScript("ROLLBACK")
                } catch let error as PostgreSQLError where error.connectionLost {}
            } catch let error as PostgreSQLError where error.connectionLost && state.intake.delivered {
                // Rows were handed over already: reading them again would hand them twice.
                throw Self.storeError(error, action: action, store: name)
            } catch {
                // `try?` is safe here: the transaction is read-only, so its ROLLBACK cannot change
                // what is stored, and `error` is thrown whatever it does. A ROLLBACK that fails leaves
                // the connection not idle, and the pool closes it instead of lending it again (P3).
                if !connection.isBroken, !connection.isIdle { try? connection.executeScript("ROLLBACK") }
                throw error
            }
        }
    }
}
