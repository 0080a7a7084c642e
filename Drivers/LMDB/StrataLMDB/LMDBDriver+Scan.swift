import CLMDB
import Foundation
import Strata

extension LMDBDriver {
    /// Reads an entity's own rows in key order, one batch per read transaction: the cursor starts
    /// past the last key of the batch before, so only one batch is ever in memory (the default
    /// reads every row of the entity to list its IDs first). To-many slots are filled per batch.
    ///
    /// A scan reads each row once, so the map pages its rows lay on are dropped from the resident
    /// set as each batch is decoded (``MappedPages``): a scan of a large store, such as a copying
    /// migration, then stays bounded in memory instead of keeping the whole file mapped in.
    public func scanRows(_ request: RowScan, _ body: ([RowSnapshot]) throws -> Void) throws {
        try ensureOpen()
        let entity = request.entity.entityNumber
        guard let (plan, dbi) = access(entity) else { return }
        let prefix = Keys.entityPrefix(entity)
        var start = Keys.entityStart(entity)
        var touched = MappedPages()
        while true {
            var rows: [RowSnapshot] = try environment.read { txn in
                var rows: [RowSnapshot] = []
                rows.reserveCapacity(request.batchSize)
                touched.begin(generation: environment.mapGeneration)
                try txn.withCursor(dbi) { cursor in
                    var entry = try cursor.move(MDB_SET_RANGE, to: start)
                    while let current = entry, current.key.hasPrefix(prefix), rows.count < request.batchSize {
                        rows.append(try decode(current.value, id: try rowID(current.key), plan: plan))
                        touched.note(value: current.value)
                        entry = try cursor.move(MDB_NEXT)
                    }
                }
                // The rows are decoded (copied out of the map); the transaction is still open.
                txn.release(touched)
                return rows
            }
            guard let last = rows.last else { return }
            let complete = rows.count < request.batchSize || last.id.primaryKey == .max
            start = Keys.row(RowID(entity: entity, primaryKey: last.id.primaryKey &+ 1))
            try fillToMany(&rows, of: request.entity)
            try body(rows)
            if complete { return }
        }
    }
}
