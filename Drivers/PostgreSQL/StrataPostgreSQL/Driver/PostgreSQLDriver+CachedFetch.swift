import Foundation
import Strata

// Fetches through the row cache. A row the coordinator's row cache holds at the version the server
// has is not read again (CachedRows): when most rows of recent fetches of an entity were cached,
// a fetch first reads only keys and versions (a third of the bytes of whole rows), then the rows
// the cache lacks by key, both in one REPEATABLE READ transaction, so they see one snapshot of the
// store. When many rows turn out to be missing it reads whole rows after all, in the same
// transaction. Which way a fetch goes follows the share of cached rows the last fetch of the
// entity found (a guess: either way gives the same rows).

extension PostgreSQLDriver {
    /// Where a fetch's rows come from: a result to decode, or rows already assembled.
    enum RowSource {
        case result(PGResult)
        /// Rows assembled from the row cache and the server, in fetch order.
        case rows([RowSnapshot])

        var count: Int {
            switch self {
            case .result(let result): result.rowCount
            case .rows(let rows): rows.count
            }
        }
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
    func fetchThroughCache(
        _ entity: EntityDescription, keysSQL: String, rowsSQL: String, _ parameters: PGParameters, _ cached: CachedRows,
        action: String
    ) throws -> [RowSnapshot] {
        try read(action) { connection in
            try connection.executeScript("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            do {
                let keys = try connection.execute(keysSQL, parameters)
                var slots: [RowSnapshot?] = []
                slots.reserveCapacity(keys.rowCount)
                var missing: [(position: Int, key: Int64)] = []
                for row in 0..<keys.rowCount {
                    guard let number = Int32(exactly: keys.int64(row, 1)), plans.entity(number) != nil else { continue }
                    let id = RowID(entity: number, primaryKey: try checkedKey(keys.int64(row, 0), of: number))
                    let version = keys.int64(row, 2)
                    if let values = cached.values(of: id, version: version) {
                        slots.append(RowSnapshot(id: id, version: version, values: values))
                    } else {
                        missing.append((slots.count, id.primaryKey))
                        slots.append(nil)
                    }
                }
                let fetched: [RowSnapshot]
                if missing.isEmpty {
                    // Every row came from the cache (the optional is filled at every position).
                    fetched = slots.compactMap { $0 }
                    noteCacheHits(entity, hits: fetched.count, rows: fetched.count, cached: true)
                } else if missing.count * 2 > slots.count {
                    // Mostly missing: whole rows, in the same snapshot.
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
                    fetched = rows
                    noteCacheHits(entity, hits: hits, rows: rows.count, cached: true)
                } else {
                    var byKey: [Int64: RowSnapshot] = [:]
                    byKey.reserveCapacity(missing.count)
                    guard let table = layout.entity(entity.entityNumber).flatMap({ plans.tables[$0.table] }) else {
                        throw StoreError(.invalidRequest, "entity \(entity.name) is not stored here", store: name)
                    }
                    let result = try connection.executePrepared(table.lookupMany, Self.keyArray(missing.map(\.key)))
                    for row in 0..<result.rowCount {
                        if let snapshot = try decode(result, row) { byKey[snapshot.id.primaryKey] = snapshot }
                    }
                    for (position, key) in missing { slots[position] = byKey[key] }
                    // A row gone between the two reads cannot be: both see one snapshot. Those left
                    // nil (none) are dropped.
                    fetched = slots.compactMap { $0 }
                    noteCacheHits(entity, hits: slots.count - missing.count, rows: slots.count, cached: true)
                }
                try connection.executeScript("COMMIT")
                return fetched
            } catch {
                // The connection is given back in a transaction only if this fails too; the pool
                // then closes it. The error that counts is the one thrown.
                if !connection.isBroken { try? connection.executeScript("ROLLBACK") }
                throw error
            }
        }
    }
}
