import CSQLite
import Foundation
import Strata

extension SQLiteDriver {
    /// Inserts the rows `fill` produces as they come, in one transaction, with keys read from and
    /// written back to `Z_PRIMARYKEY` in that transaction (so a failed insert uses up no key): a
    /// batch insert holds one row at a time instead of every row of the batch.
    public func insertRows(of entity: Int32, _ fill: (inout [StoreValue]) throws -> Bool) throws -> ClosedRange<Int64>?
    {
        guard let description = model.entity(number: entity),
            let root = model.entity(named: description.rootEntityName),
            let rootNumber = layout.storeNumber(root.entityNumber)
        else {
            throw StoreError(.invalidRequest, "no entity numbered \(entity) is stored here", store: path)
        }
        let plan = try entityPlan(RowID(entity: entity, primaryKey: 0))
        return try write("inserting rows of \(description.name)") { connection in
            // Only an integer Z_MAX from 0 to Int64.max - 1 gives keys: as allocatePrimaryKeys, keys
            // stay in 1...Int64.max - 1 and SQLite never turns the counter into a REAL.
            let counter = try connection.cached(
                "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ? AND typeof(Z_MAX) = 'integer' AND Z_MAX BETWEEN 0 AND ?"
            )
            try counter.bind([.integer(Int64(rootNumber)), .integer(Int64.max - 1)])
            guard try counter.step() else {
                try counter.reset()
                throw StoreError(
                    .corrupt,
                    "Z_PRIMARYKEY has no usable Z_MAX for entity '\(root.name)' (missing, not an integer, or out of range); the file is damaged. Restore it from a backup, or copy its objects into a new store with `strata convert`",
                    store: path)
            }
            let start = counter.int64(at: 0)
            try counter.reset()
            var key = start
            var inserter = RunInserter(driver: self, plan: plan, connection: connection)
            while try inserter.fillNext(
                key: key + 1,
                { values in
                    guard try fill(&values) else { return false }
                    guard key < Int64.max - 1 else {
                        throw StoreError(
                            .invalidRequest,
                            "entity '\(root.name)' has used every primary key up to \(key); no more rows can be inserted",
                            store: path)
                    }
                    for slot in plan.toManySlots {
                        // Batch inserts set no relationships: a to-many slot is empty.
                        if case .references(let members) = values[slot], !members.isEmpty {
                            throw StoreError(
                                .invalidRequest,
                                "a row inserted with insertRows(of:_:) sets the relationship '\(description.properties[slot].name)'; insert it with apply(_:)",
                                store: path)
                        }
                    }
                    return true
                })
            {
                key += 1
            }
            try inserter.finish()
            guard key > start else { return nil }
            let update = try connection.cached("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?")
            try update.bind([.integer(key), .integer(Int64(rootNumber))])
            _ = try update.step()
            return (start + 1)...key
        }
    }
}
