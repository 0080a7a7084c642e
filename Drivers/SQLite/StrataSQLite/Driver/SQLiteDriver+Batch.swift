import CSQLite
import Foundation
import Strata

extension SQLiteDriver {
    /// Runs a batch update or delete in one immediate transaction.
    ///
    /// Deletes are one `DELETE … WHERE <predicate> RETURNING Z_PK, Z_ENT`. Updates read the
    /// matching rows' keys and the columns the expressions need in one `SELECT`, compute the new
    /// values with the core's evaluator (``BatchUpdatePlan``) and write them with one prepared
    /// `UPDATE … SET Z_OPT = Z_OPT + 1, … WHERE Z_PK = ?` per row. Predicates that do not translate
    /// exactly, or expressions that read other rows, go through the portable path
    /// (``StoreDriver/executeThroughRows(_:)``). Unique constraints are the store's unique indexes.
    public func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult {
        try request.check()
        guard let entityLayout = layout.entity(request.entity.entityNumber),
            let table = layout.tables[request.entity.rootEntityName]
        else { return StoreBatchResult(ids: []) }
        var translator = QueryTranslator(layout: layout, maximumBindings: parameterLimit)
        let numbers = layout.storeNumbers(request.entityNumbers)
        var clauses = ["t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"]
        if let predicate = request.predicate {
            let (sql, exact) = translator.whereClause(predicate, entityLayout.entity, "t0")
            guard exact, translator.joins.isEmpty else { return try executeThroughRows(request) }
            if let sql { clauses.append(sql) }
        }
        let whereSQL = " WHERE " + clauses.joined(separator: " AND ")
        let bindings = translator.bindings
        guard case .update = request.action else {
            return try write("deleting \(request.entity.name) rows") { connection in
                let statement = try connection.cached(
                    "DELETE FROM \(table.name.sqlName) AS t0\(whereSQL) RETURNING Z_PK, Z_ENT")
                try statement.bind(bindings)
                return StoreBatchResult(ids: try collectIDs(statement).sorted())
            }
        }
        let plan = try BatchUpdatePlan(request)
        guard plan.isCompiled else { return try executeThroughRows(request) }
        var readColumns: [(slot: Int, type: AttributeType, column: String)] = []
        for slot in plan.readSlots {
            guard case .attribute(let column, _, let type) = entityLayout.slots[slot] else {
                return try executeThroughRows(request)
            }
            readColumns.append((slot, type, column))
        }
        var setColumns: [String] = []
        for slot in plan.changedSlots {
            guard case .attribute(let column, _, _) = entityLayout.slots[slot] else {
                return try executeThroughRows(request)
            }
            setColumns.append(column)
        }
        let select =
            "SELECT t0.Z_PK, t0.Z_ENT, t0.Z_OPT" + readColumns.map { ", t0.\($0.column.sqlName)" }.joined()
            + " FROM \(table.name.sqlName) t0\(whereSQL)"
        let update =
            "UPDATE \(table.name.sqlName) SET Z_OPT = Z_OPT + 1" + setColumns.map { ", \($0.sqlName) = ?" }.joined()
            + " WHERE Z_PK = ?"
        let slotCount = request.entity.properties.count
        return try write("updating \(request.entity.name) rows") { connection in
            let reader = try connection.cached(select)
            try reader.bind(bindings)
            var values = [StoreValue](repeating: .unfetched, count: slotCount)
            var changes: [(id: RowID, values: [StoreValue])] = []
            try stepping(reader) {
                guard let number = plans.modelNumber(storeNumber: reader.int64(at: 1)) else { return }
                let id = RowID(entity: number, primaryKey: try checkedKey(reader.int64(at: 0), of: number))
                // `Z_OPT = Z_OPT + 1` must not leave Int64 (SQLite would store a REAL).
                guard reader.int64(at: 2) < Int64.max else { throw versionAtMaximum(id) }
                for (offset, column) in readColumns.enumerated() {
                    values[column.slot] = ValueCoding.attribute(reader, Int32(offset + 3), column.type)
                }
                changes.append((id, try plan.newValues(for: values) { nil }))
            }
            let writer = try connection.cached(update)
            for change in changes {
                for (offset, value) in change.values.enumerated() {
                    try writer.bind(ValueCoding.sqliteValue(value), at: Int32(offset + 1))
                }
                try writer.bind(change.id.primaryKey, at: Int32(change.values.count + 1))
                try writer.step()
                try writer.reset()
            }
            return StoreBatchResult(ids: changes.map(\.id).sorted())
        }
    }

    private func collectIDs(_ statement: SQLiteStatement) throws -> [RowID] {
        var ids: [RowID] = []
        try stepping(statement) {
            guard let number = plans.modelNumber(storeNumber: statement.int64(at: 1)) else { return }
            ids.append(RowID(entity: number, primaryKey: try checkedKey(statement.int64(at: 0), of: number)))
        }
        return ids
    }
}
