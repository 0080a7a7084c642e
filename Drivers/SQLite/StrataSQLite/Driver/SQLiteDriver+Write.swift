import CSQLite
import Foundation
import Strata

extension SQLiteDriver {
    public func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64> {
        guard let description = model.entity(number: entity),
            let root = model.entity(named: description.rootEntityName),
            let rootNumber = layout.storeNumber(root.entityNumber)
        else {
            throw StoreError(.invalidRequest, "no entity numbered \(entity) is stored here", store: path)
        }
        let amount = Int64(max(count, 1))
        return try write("allocating primary keys for \(description.name)") { connection in
            // Only an integer Z_MAX from 0 to Int64.max - amount advances: keys stay in 1...Int64.max
            // and SQLite never turns the sum into a REAL.
            let statement = try connection.cached(
                "UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ? WHERE Z_ENT = ? AND typeof(Z_MAX) = 'integer' AND Z_MAX BETWEEN 0 AND ? RETURNING Z_MAX"
            )
            try statement.bind([.integer(amount), .integer(Int64(rootNumber)), .integer(Int64.max - amount)])
            guard try statement.step() else {
                try statement.reset()
                guard
                    let stored = try connection.rows(
                        "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(rootNumber))]
                    ).first?.first
                else {
                    throw SQLiteError(.corrupt, "Z_PRIMARYKEY has no row for entity \(root.name)", file: path)
                }
                throw StoreError(
                    .corrupt,
                    "Z_PRIMARYKEY.Z_MAX of entity '\(root.name)' is \(Self.describe(stored)), from which \(amount) more keys cannot be allocated (keys run from 1 to \(Int64.max)); the file is damaged. Restore it from a backup, or copy its objects into a new store with `strata convert`",
                    store: path)
            }
            let last = statement.int64(at: 0)
            try statement.reset()
            return (last - amount + 1)...last
        }
    }

    /// A stored value as an error message shows it.
    static func describe(_ value: SQLiteValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let number): "\(number)"
        case .real(let number): "\(number) (a REAL)"
        case .text(let text): "the text '\(text.prefix(40))'"
        case .blob(let bytes): "a \(bytes.count)-byte BLOB"
        }
    }

    public func apply(_ batch: ChangeBatch) throws -> CommitResult {
        if batch.isEmpty { return CommitResult(versions: [:]) }
        return try write("saving") { connection in try write(batch, connection) }
    }

    /// Applies each change set `next` hands out in one write transaction (`BEGIN IMMEDIATE` …
    /// `COMMIT`), holding one at a time; any failure rolls all of them back.
    public func apply(inParts next: (_ first: Bool) throws -> ChangeBatch?) throws -> CommitResult {
        try write("saving in parts") { connection in
            try ChangeBatch.forEachPart(of: next) { part in try write(part, connection) }
        }
    }

    /// Writes one change set inside the open write transaction of `connection`.
    private func write(_ batch: ChangeBatch, _ connection: SQLiteConnection) throws -> CommitResult {
        var stale: [RowID] = []
        for delete in batch.deletes {
            let plan = try entityPlan(delete.id)
            let statement = try connection.cached(plan.delete.sql, slot: plan.delete.slot)
            try statement.bind(delete.id.primaryKey, at: 1)
            try statement.bind(delete.expectedVersion, at: 2)
            try statement.step()
            if connection.changes != 1 {
                stale.append(delete.id)
                continue
            }
            for sql in layout.unlinkStatements[plan.layout.table] ?? [] {
                let unlink = try connection.cached(sql)
                try unlink.bind(delete.id.primaryKey, at: 1)
                try unlink.step()
            }
        }
        var maxKeys: [String: Int64] = [:]
        // Inserts come in runs of one entity: the run's plan is found once, its rows bound where
        // the batch holds them, and its largest key noted.
        var insertsToMany = false
        try batch.inserts.withUnsafeBufferPointer { inserts in
            var start = 0
            while start < inserts.count {
                let entity = inserts[start].id.entity
                var end = start + 1
                while end < inserts.count, inserts[end].id.entity == entity { end += 1 }
                let plan = try entityPlan(inserts[start].id)
                if !plan.toManySlots.isEmpty { insertsToMany = true }
                var inserter = RunInserter(driver: self, plan: plan, connection: connection)
                let largest = try inserter.insert(run: UnsafeBufferPointer(rebasing: inserts[start..<end]))
                maxKeys[plan.layout.table] = max(maxKeys[plan.layout.table] ?? 0, largest)
                start = end
            }
        }
        for update in batch.updates {
            let plan = try entityPlan(update.id)
            // The version the row was read at comes from the file: `Z_OPT + 1` must stay an Int64.
            guard update.expectedVersion < Int64.max else { throw versionAtMaximum(update.id) }
            // An applied update's row has its expected version plus one, which the result
            // leaves out (CommitResult).
            if try !updateRow(update, plan, connection) { stale.append(update.id) }
        }
        if !stale.isEmpty { throw conflict(stale) }
        var pending = PendingToManyWrites()
        for insert in batch.inserts where insertsToMany {
            let plan = try entityPlan(insert.id)
            for slot in plan.toManySlots {
                if case .references(let members) = insert.values[slot] {
                    try writeToMany(
                        plan.layout.slots[slot], owner: insert.id, members: members, isNew: true, &pending,
                        connection)
                }
            }
        }
        for update in batch.updates {
            let plan = try entityPlan(update.id)
            guard !plan.toManySlots.isEmpty else { continue }
            for slot in update.changedSlots where plan.layout.slots[slot].isToMany {
                if case .references(let members) = update.values[slot] {
                    try writeToMany(
                        plan.layout.slots[slot], owner: update.id, members: members, isNew: false, &pending,
                        connection)
                }
            }
        }
        try finish(pending, connection)
        for (table, key) in maxKeys {
            guard let root = layout.tables.values.first(where: { $0.name == table }),
                let number = model.entity(named: root.root).flatMap({ layout.storeNumber($0.entityNumber) })
            else { continue }
            let statement = try connection.cached("UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?")
            try statement.bind([.integer(key), .integer(Int64(number))])
            try statement.step()
        }
        if let metadata = batch.metadata {
            try MetadataCoding.write(metadata, naming: layout.naming, to: connection)
        }
        return CommitResult(versions: [:])
    }

    /// The statements and layout of the row's entity.
    func entityPlan(_ id: RowID) throws -> SQLiteStatementPlans.Entity {
        guard let plan = plans.entity(id.entity) else {
            throw StoreError(.invalidRequest, "row \(id) belongs to an entity this store does not hold", store: path)
        }
        return plan
    }

    func entityLayout(_ id: RowID) throws -> EntityLayout {
        guard let entity = layout.entity(id.entity) else {
            throw StoreError(.invalidRequest, "row \(id) belongs to an entity this store does not hold", store: path)
        }
        return entity
    }

    /// The error for a row whose stored version (`Z_OPT`) is Int64.max and cannot grow.
    func versionAtMaximum(_ id: RowID) -> StoreError {
        let name = model.entity(number: id.entity)?.name ?? "number \(id.entity)"
        return StoreError(
            .corrupt,
            "row \(id.primaryKey) of entity '\(name)' has version (Z_OPT) \(Int64.max), which cannot grow; the file is damaged. Restore it from a backup, or copy its objects into a new store with `strata convert`",
            store: path)
    }

    private func conflict(_ stale: [RowID]) -> StoreError {
        let ids = stale.compactMap { id in
            model.entity(number: id.entity).map { ManagedObjectID(entity: $0, rowID: id, store: nil) }
        }
        let names = stale.prefix(10).map { id in "\(model.entity(number: id.entity)?.name ?? "?")/p\(id.primaryKey)" }
        return StoreError(
            .conflict,
            "\(stale.count) row\(stale.count == 1 ? " was" : "s were") changed or deleted by another save (\(names.joined(separator: ", "))); refresh the objects and save again",
            store: path, objectIDs: ids)
    }

    /// Inserts the row of key `key` with `values` with the entity's prepared one-row `INSERT`
    /// (runs of rows go through ``RunInserter``, which calls this for rows that do not fill a
    /// statement of several).
    ///
    /// - Parameter bindingConstants: Whether to bind `Z_ENT` and `Z_OPT` (the entity's number and
    ///   version 1, the same for every insert of the entity): for the first row of a run of one
    ///   entity; later rows of the run leave them bound (the statement's slot keeps its bindings
    ///   and only this function runs it).
    func insertRow(
        key: Int64, _ values: [StoreValue], _ plan: SQLiteStatementPlans.Entity, _ connection: SQLiteConnection,
        bindingConstants: Bool
    ) throws {
        let statement = try connection.cached(plan.insert.sql, slot: plan.insert.slot)
        try statement.bindDirect(key, at: 1)
        if bindingConstants {
            try statement.bindDirect(Int64(plan.storeNumber), at: 2)
            try statement.bindDirect(Int64(1), at: 3)
        }
        try withUnsafePointer(to: values) { row in
            try bindRowsAndStep(UnsafeBufferPointer(start: row, count: 1), row: 0, slot: 0, at: 4, plan, statement)
        }
    }

    /// Writes the changed columns and bumps `Z_OPT`; `false` when the stored version differs.
    private func updateRow(_ update: RowUpdate, _ plan: SQLiteStatementPlans.Entity, _ connection: SQLiteConnection)
        throws -> Bool
    {
        let sql = plans.update(plan, changedSlots: update.changedSlots)
        let statement = try connection.cached(sql.sql, slot: sql.slot)
        var index: Int32 = 1
        for slot in update.changedSlots where slot < plan.bind.count {
            try bindColumns(of: update.values[slot], plan.bind[slot], to: statement, at: &index)
        }
        try statement.bindDirect(update.id.primaryKey, at: index)
        try statement.bindDirect(update.expectedVersion, at: index + 1)
        try statement.step()
        return connection.changes == 1
    }

    /// Binds the columns a slot is stored in (none for to-many slots), from `index` on.
    func bindColumns(
        of value: StoreValue, _ slot: SQLiteStatementPlans.Bind, to statement: SQLiteStatement, at index: inout Int32
    ) throws {
        switch slot {
        case .value:
            try ValueCoding.bind(value, to: statement, at: index)
            index += 1
        case .reference:
            try ValueCoding.bind(value, to: statement, at: index)
            try statement.bind(referenceEntity(value), at: index + 1)
            index += 2
        case .none: break
        }
    }

    private func referenceEntity(_ value: StoreValue) -> SQLiteValue {
        guard case .reference(let id) = value, let number = layout.storeNumber(id.entity) else { return .null }
        return .integer(Int64(number))
    }

    /// Stores the members of a to-many relationship: order keys for foreign-key relationships,
    /// the owner's rows of a join table otherwise (diffed, so the inverse side's order keys stay).
    private func writeToMany(
        _ slot: SlotLayout, owner: RowID, members: [RowID], isNew: Bool, _ pending: inout PendingToManyWrites,
        _ connection: SQLiteConnection
    ) throws {
        switch slot {
        case .toManyForeignKey(let fk) where fk.ownsColumn:
            try writeOwnedForeignKey(fk, owner: owner, members: members, isNew: isNew, &pending, connection)
        case .toManyForeignKey(let fk):
            guard let order = fk.orderColumn else { return }
            let statement = try connection.cached(
                "UPDATE \(fk.table.sqlName) SET \(order.sqlName) = ? WHERE Z_PK = ? AND \(fk.column.sqlName) = ?")
            for (position, member) in members.enumerated() {
                try statement.reset()
                try statement.bind([
                    .integer(Int64(position + 1)), .integer(member.primaryKey), .integer(owner.primaryKey),
                ])
                try statement.step()
            }
        case .toManyJoin(let join):
            var existing: Set<Int64> = []
            if !isNew {
                let current = try connection.cached(
                    "SELECT \(join.memberColumn.sqlName) FROM \(join.table.sqlName) WHERE \(join.sourceColumn.sqlName) = ?"
                )
                try current.bind(owner.primaryKey, at: 1)
                while try current.step() { existing.insert(current.int64(at: 0)) }
            }
            let wanted = Set(members.map(\.primaryKey))
            let remove = try connection.cached(
                "DELETE FROM \(join.table.sqlName) WHERE \(join.sourceColumn.sqlName) = ? AND \(join.memberColumn.sqlName) = ?"
            )
            for key in existing.subtracting(wanted) {
                try remove.reset()
                try remove.bind([.integer(owner.primaryKey), .integer(key)])
                try remove.step()
            }
            let add = try connection.cached(
                "INSERT OR IGNORE INTO \(join.table.sqlName) (\(join.sourceColumn.sqlName), \(join.memberColumn.sqlName)) VALUES (?, ?)"
            )
            for key in wanted.subtracting(existing) {
                try add.reset()
                try add.bind([.integer(owner.primaryKey), .integer(key)])
                try add.step()
            }
            if let order = join.orderColumn {
                let statement = try connection.cached(
                    "UPDATE \(join.table.sqlName) SET \(order.sqlName) = ? WHERE \(join.sourceColumn.sqlName) = ? AND \(join.memberColumn.sqlName) = ?"
                )
                for (position, member) in members.enumerated() {
                    try statement.reset()
                    try statement.bind([
                        .integer(Int64(position + 1)), .integer(owner.primaryKey), .integer(member.primaryKey),
                    ])
                    try statement.step()
                }
                if join.mirrorOrderColumn != nil {
                    pending.mirrors.append((join, owner.primaryKey, members.map(\.primaryKey)))
                }
            }
        default:
            return
        }
    }
}
