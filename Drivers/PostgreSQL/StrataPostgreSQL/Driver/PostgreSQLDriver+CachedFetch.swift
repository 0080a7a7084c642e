import Foundation
import Strata

// Fetches through the row cache. A row the coordinator's row cache holds at the version the server
// has is not read again (CachedRows): when most rows of recent fetches of an entity were cached,
// a fetch first reads only keys and versions (a third of the bytes of whole rows), then the rows
// the cache lacks by key, checking that those are at the versions the first statement saw (when
// one is not, or when many rows are missing, it reads whole rows in one statement). Which way a fetch goes follows the share of cached rows the last fetch of the
// entity found (a guess: either way gives the same rows).

extension PostgreSQLDriver {
    /// The rows of a fetch's keys and versions: cached rows in place, `nil` where a row is missing.
    struct KeyedRows {
        var slots: [RowSnapshot?] = []
        var missing: [(position: Int, id: RowID, version: Int64)] = []
    }

    /// The share of rows found in the row cache by the last fetch of `entity`'s hierarchy (1 when
    /// there was none yet).
    func cacheHitRate(_ entity: EntityDescription) -> Double {
        cacheHits.withLock { $0[entity.rootEntityNumber] } ?? 1
    }

    /// Records the share of cached rows a fetch found (when it was given the row cache's rows).
    func noteCacheHits(_ entity: EntityDescription, hits: Int, rows: Int, cached: Bool) {
        guard cached, rows > 0 else { return }
        let rate = Double(hits) / Double(rows)
        cacheHits.withLock { $0[entity.rootEntityNumber] = rate }
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
                noteCacheHits(entity, hits: fetched.count, rows: fetched.count, cached: true)
                return fetched
            }
            if missing.count * 2 <= slots.count {
                guard let table = layout.entity(entity.entityNumber).flatMap({ plans.tables[$0.table] }) else {
                    throw StoreError(.invalidRequest, "entity \(entity.name) is not stored here", store: name)
                }
                let result = try connection.executePrepared(
                    table.lookupMany, Self.keyArray(missing.map(\.id.primaryKey)))
                var byKey: [Int64: RowSnapshot] = [:]
                byKey.reserveCapacity(missing.count)
                for row in 0..<result.rowCount {
                    if let snapshot = try decode(result, row) { byKey[snapshot.id.primaryKey] = snapshot }
                }
                var consistent = true
                for (position, id, version) in missing {
                    guard let snapshot = byKey[id.primaryKey], snapshot.id == id, snapshot.version == version else {
                        consistent = false
                        break
                    }
                    slots[position] = snapshot
                }
                if consistent {
                    noteCacheHits(entity, hits: slots.count - missing.count, rows: slots.count, cached: true)
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
            noteCacheHits(entity, hits: hits, rows: rows.count, cached: true)
            return rows
        }
    }
}
