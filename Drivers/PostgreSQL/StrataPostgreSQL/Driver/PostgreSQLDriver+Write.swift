import CLibPQ
import Foundation
import Strata

extension PostgreSQLDriver {
    public func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64> {
        guard let description = model.entity(number: entity),
            let root = model.entity(named: description.rootEntityName),
            layout.entity(root.entityNumber) != nil
        else {
            throw StoreError(.invalidRequest, "no entity numbered \(entity) is stored here", store: name)
        }
        if isReadOnly {
            throw StoreError(.readOnly, "allocating primary keys failed: the store was opened read-only", store: name)
        }
        let amount = Int64(max(count, 1))
        var parameters = PGParameters()
        parameters.append(amount)
        parameters.append(int32: root.entityNumber)
        parameters.append(Int64.max - amount)
        // One statement, committed on its own: the row lock serializes allocations of every
        // process, and the keys stay used whatever happens to the save (invariant G4).
        let sql = """
            UPDATE \(layout.primaryKeyTable) SET \("Z_MAX".sqlName) = \("Z_MAX".sqlName) + $1 \
            WHERE \("Z_ENT".sqlName) = $2 AND \("Z_MAX".sqlName) BETWEEN 0 AND $3 RETURNING \("Z_MAX".sqlName)
            """
        return try read("allocating primary keys for \(description.name)") { connection in
            let result = try connection.executePrepared(sql, parameters)
            guard result.rowCount == 1 else {
                throw StoreError(
                    .corrupt,
                    "Z_PRIMARYKEY has no row for entity '\(root.name)', or its Z_MAX cannot advance by \(amount) (keys run from 1 to \(Int64.max)); fix the row with psql or copy the store with `strata convert`",
                    store: name)
            }
            let last = result.int64(0, 0)
            return (last - amount + 1)...last
        }
    }

    public func apply(_ batch: ChangeBatch) throws -> CommitResult {
        if batch.isEmpty { return CommitResult(versions: [:]) }
        for update in batch.updates where update.expectedVersion == Int64.max { throw versionAtMaximum(update.id) }
        return try write("saving") { connection in try write(batch, connection) }
    }

    /// Applies each change set `next` hands out in one transaction, holding one at a time; any
    /// failure rolls all of them back. A transaction the server asks to retry (a serialization
    /// failure or deadlock) starts over from the first change set (`next(true)`).
    public func apply(inParts next: (_ first: Bool) throws -> ChangeBatch?) throws -> CommitResult {
        try write("saving in parts") { connection in
            try ChangeBatch.forEachPart(of: next) { part in
                for update in part.updates where update.expectedVersion == Int64.max {
                    throw versionAtMaximum(update.id)
                }
                return try write(part, connection)
            }
        }
    }

    /// Writes one change set inside the open transaction of `connection`, announcing its rows to
    /// other processes when the transaction commits.
    private func write(_ batch: ChangeBatch, _ connection: PGConnection) throws -> CommitResult {
        var stale: [RowID] = []
        try deleteRows(batch.deletes, connection, stale: &stale)
        try insertRows(batch.inserts, connection)
        var versions: [RowID: RowVersion] = [:]
        versions.reserveCapacity(batch.updates.count)
        try updateRows(batch.updates, connection, stale: &stale, versions: &versions)
        if !stale.isEmpty { throw conflict(stale) }
        try writeRelationships(batch, connection)
        try raiseMaximumKeys(batch.inserts, connection)
        if let metadata = batch.metadata {
            try MetadataCoding.write(metadata, to: connection, table: layout.metadataTable, store: name)
        }
        try notify(
            RemoteChanges(
                inserted: batch.inserts.map(\.id), updated: batch.updates.map(\.id), deleted: batch.deletes.map(\.id)),
            connection)
        return CommitResult(versions: versions)
    }

    /// The statements and layout of the row's entity.
    func entityPlan(_ id: RowID) throws -> StatementPlans.Entity {
        guard let plan = plans.entity(id.entity) else {
            throw StoreError(.invalidRequest, "row \(id) belongs to an entity this store does not hold", store: name)
        }
        return plan
    }

    /// The error for a row whose stored version (`Z_OPT`) is Int64.max and cannot grow.
    func versionAtMaximum(_ id: RowID) -> StoreError {
        let entityName = model.entity(number: id.entity)?.name ?? "number \(id.entity)"
        return StoreError(
            .corrupt,
            "row \(id.primaryKey) of entity '\(entityName)' has version (Z_OPT) \(Int64.max), which cannot grow; fix the row with psql",
            store: name)
    }

    func conflict(_ stale: [RowID]) -> StoreError {
        let ids = stale.compactMap { id in
            model.entity(number: id.entity).map { ManagedObjectID(entity: $0, rowID: id, store: nil) }
        }
        let names = stale.prefix(10).map { id in "\(model.entity(number: id.entity)?.name ?? "?")/p\(id.primaryKey)" }
        return StoreError(
            .conflict,
            "\(stale.count) row\(stale.count == 1 ? " was" : "s were") changed or deleted by another save (\(names.joined(separator: ", "))); refresh the objects and save again",
            store: name, objectIDs: ids)
    }

    /// Inserted rows written by one statement at most: a save of more sends several statements in
    /// its transaction, so the parameters (every column of every row, and libpq's copy of them)
    /// stay bounded; one statement for 100,000 rows held about 20 MiB of both at once, and took
    /// longer. Updates and deletes are not split: each statement finds its rows by a scan, so
    /// pieces would scan the table once per piece (W5 and W6 took 15% and 45% longer), and their
    /// parameters are the keys and versions and the changed columns only.
    static let insertChunk = 4_096

    /// Groups `items` by the table (or entity) `key` gives, keeping first-seen order.
    private func grouped<T, Key: Hashable>(_ items: [T], by key: (T) throws -> Key) rethrows -> [(Key, [T])] {
        var order: [Key] = []
        var groups: [Key: [T]] = [:]
        for item in items {
            let k = try key(item)
            if groups[k] == nil { order.append(k) }
            groups[k, default: []].append(item)
        }
        return order.map { ($0, groups[$0]!) }  // every key in `order` has a group
    }

    private func deleteRows(_ deletes: [RowDelete], _ connection: PGConnection, stale: inout [RowID]) throws {
        guard !deletes.isEmpty else { return }
        for (table, group) in try grouped(deletes, by: { try entityPlan($0.id).layout.table }) {
            // Every table of an entity plan has a table plan.
            let plan = plans.tables[table]!
            var parameters = PGParameters()
            appendKeys(group.map(\.id.primaryKey), to: &parameters)
            appendKeys(group.map(\.expectedVersion), to: &parameters)
            let result = try connection.executePrepared(plan.delete, parameters)
            var deleted = Set<Int64>()
            for row in 0..<result.rowCount { deleted.insert(result.int64(row, 0)) }
            stale += group.filter { !deleted.contains($0.id.primaryKey) }.map(\.id)
        }
        // Join rows owned by deleted rows go with them.
        for (entity, group) in grouped(deletes, by: { $0.id.entity }) {
            let plan = try entityPlan(RowID(entity: entity, primaryKey: 0))
            for case .toManyJoin(let join) in plan.layout.slots {
                var parameters = PGParameters()
                appendKeys(group.map(\.id.primaryKey), to: &parameters)
                let reflexive = join.isReflexive ? " OR \(join.memberColumn.sqlName) = ANY($1::bigint[])" : ""
                try connection.executePrepared(
                    "DELETE FROM \(layout.qualified(join.table)) WHERE \(join.sourceColumn.sqlName) = ANY($1::bigint[])\(reflexive)",
                    parameters)
            }
        }
    }

    private func insertRows(_ inserts: [RowSnapshot], _ connection: PGConnection) throws {
        guard !inserts.isEmpty else { return }
        for (entity, rows) in grouped(inserts, by: { $0.id.entity }) {
            let plan = try entityPlan(RowID(entity: entity, primaryKey: 0))
            for start in stride(from: 0, to: rows.count, by: Self.insertChunk) {
                let group = rows[start..<min(start + Self.insertChunk, rows.count)]
                var parameters = PGParameters()
                appendKeys(group.map(\.id.primaryKey), to: &parameters)
                parameters.append(int32: entity)
                try appendColumns(plan.inserted, of: group.map(\.values), entity: plan.layout.entity, to: &parameters)
                try connection.executePrepared(plan.insert, parameters)
            }
        }
    }

    private func updateRows(
        _ updates: [RowUpdate], _ connection: PGConnection, stale: inout [RowID], versions: inout [RowID: RowVersion]
    ) throws {
        guard !updates.isEmpty else { return }
        struct Shape: Hashable {
            var entity: Int32
            var slots: [Int]
        }
        for (shape, group) in try grouped(
            updates,
            by: { update -> Shape in
                let plan = try entityPlan(update.id)
                // Only slots with columns change the statement; to-many slots are written afterwards.
                let columns = Set(plan.inserted.map(\.slot))
                return Shape(entity: update.id.entity, slots: update.changedSlots.filter { columns.contains($0) })
            })
        {
            let plan = try entityPlan(RowID(entity: shape.entity, primaryKey: 0))
            var parameters = PGParameters()
            appendKeys(group.map(\.id.primaryKey), to: &parameters)
            appendKeys(group.map(\.expectedVersion), to: &parameters)
            try appendColumns(
                plans.updatedColumns(plan, slots: shape.slots), of: group.map(\.values), entity: plan.layout.entity,
                to: &parameters)
            let result = try connection.executePrepared(plans.update(plan, slots: shape.slots), parameters)
            var updated = Set<Int64>()
            for row in 0..<result.rowCount { updated.insert(result.int64(row, 0)) }
            for update in group {
                if updated.contains(update.id.primaryKey) {
                    versions[update.id] = update.expectedVersion + 1
                } else {
                    stale.append(update.id)
                }
            }
        }
    }

    /// One `bigint[]` parameter.
    func appendKeys(_ keys: [Int64], to parameters: inout PGParameters) {
        parameters.appendArray(PGType.int8Array, elementType: PGType.int8, count: keys.count) { index, bytes in
            PGParameters.write(keys[index], into: &bytes)
            return true
        }
    }

    /// One array parameter per column, each holding that column's value of every row.
    private func appendColumns(
        _ columns: [StatementPlans.Write], of rows: [[StoreValue]], entity: EntityDescription,
        to parameters: inout PGParameters
    ) throws {
        for column in columns {
            let (arrayType, elementType, _) = ValueCoding.arrayType(of: column.kind)
            var failure: (any Error)?
            parameters.appendArray(arrayType, elementType: elementType, count: rows.count) { index, bytes in
                guard failure == nil else { return false }
                do {
                    return try ValueCoding.appendElement(rows[index][column.slot], kind: column.kind, to: &bytes) {
                        "attribute '\(entity.properties[column.slot].name)' of entity '\(entity.name)'"
                    }
                } catch {
                    failure = error
                    return false
                }
            }
            if let failure { throw failure }
        }
    }

    /// Stores the members of to-many relationships of inserted and updated rows: order keys for
    /// foreign-key relationships, join rows otherwise (diffed, so the other side's order keys stay).
    private func writeRelationships(_ batch: ChangeBatch, _ connection: PGConnection) throws {
        // (slot layout key) → owners and members, gathered over the batch.
        var foreignKeys: [ForeignKeyToMany: [(owner: Int64, members: [RowID])]] = [:]
        var joins: [JoinToMany: [(owner: Int64, members: [RowID], isNew: Bool)]] = [:]
        func gather(_ id: RowID, _ values: [StoreValue], slots: [Int], isNew: Bool) throws {
            let plan = try entityPlan(id)
            for slot in slots {
                guard case .references(let members) = values[slot] else { continue }
                switch plan.layout.slots[slot] {
                case .toManyForeignKey(let fk) where fk.orderColumn != nil:
                    foreignKeys[fk, default: []].append((id.primaryKey, members))
                case .toManyJoin(let join):
                    joins[join, default: []].append((id.primaryKey, members, isNew))
                default: continue
                }
            }
        }
        for insert in batch.inserts {
            let plan = try entityPlan(insert.id)
            if !plan.toManySlots.isEmpty { try gather(insert.id, insert.values, slots: plan.toManySlots, isNew: true) }
        }
        for update in batch.updates {
            let plan = try entityPlan(update.id)
            guard !plan.toManySlots.isEmpty else { continue }
            try gather(
                update.id, update.values, slots: update.changedSlots.filter { plan.layout.slots[$0].isToMany },
                isNew: false)
        }
        for (fk, owners) in foreignKeys.sorted(by: { $0.key.table + $0.key.column < $1.key.table + $1.key.column }) {
            // Checked when gathered.
            let order = fk.orderColumn!
            var members: [Int64] = []
            var positions: [Int64] = []
            var ownerKeys: [Int64] = []
            for (owner, list) in owners {
                for (position, member) in list.enumerated() {
                    members.append(member.primaryKey)
                    positions.append(Int64(position + 1))
                    ownerKeys.append(owner)
                }
            }
            guard !members.isEmpty else { continue }
            var parameters = PGParameters()
            appendKeys(members, to: &parameters)
            appendKeys(positions, to: &parameters)
            appendKeys(ownerKeys, to: &parameters)
            try connection.executePrepared(
                """
                UPDATE \(layout.qualified(fk.table)) t SET \(order.sqlName) = u.p FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS u(k, p, o) \
                WHERE t.\("Z_PK".sqlName) = u.k AND t.\(fk.column.sqlName) = u.o
                """, parameters)
        }
        for (join, owners) in joins.sorted(by: {
            $0.key.table + $0.key.sourceColumn < $1.key.table + $1.key.sourceColumn
        }) {
            try writeJoin(join, owners, connection)
        }
    }

    private func writeJoin(
        _ join: JoinToMany, _ owners: [(owner: Int64, members: [RowID], isNew: Bool)], _ connection: PGConnection
    ) throws {
        let table = layout.qualified(join.table)
        let source = join.sourceColumn.sqlName
        let member = join.memberColumn.sqlName
        var existing: [Int64: Set<Int64>] = [:]
        let old = owners.filter { !$0.isNew }.map(\.owner)
        if !old.isEmpty {
            var parameters = PGParameters()
            appendKeys(old, to: &parameters)
            let result = try connection.executePrepared(
                "SELECT \(source), \(member) FROM \(table) WHERE \(source) = ANY($1::bigint[])", parameters)
            for row in 0..<result.rowCount { existing[result.int64(row, 0), default: []].insert(result.int64(row, 1)) }
        }
        var removeOwners: [Int64] = []
        var removeMembers: [Int64] = []
        var addOwners: [Int64] = []
        var addMembers: [Int64] = []
        var orderOwners: [Int64] = []
        var orderMembers: [Int64] = []
        var orderPositions: [Int64] = []
        for (owner, members, _) in owners {
            let wanted = members.map(\.primaryKey)
            let have = existing[owner] ?? []
            let wantedSet = Set(wanted)
            for key in have.subtracting(wantedSet).sorted() {
                removeOwners.append(owner)
                removeMembers.append(key)
            }
            var added = Set<Int64>()
            for key in wanted where !have.contains(key) && added.insert(key).inserted {
                addOwners.append(owner)
                addMembers.append(key)
            }
            if join.orderColumn != nil {
                for (position, key) in wanted.enumerated() {
                    orderOwners.append(owner)
                    orderMembers.append(key)
                    orderPositions.append(Int64(position + 1))
                }
            }
        }
        if !removeOwners.isEmpty {
            var parameters = PGParameters()
            appendKeys(removeOwners, to: &parameters)
            appendKeys(removeMembers, to: &parameters)
            try connection.executePrepared(
                "DELETE FROM \(table) t USING unnest($1::bigint[], $2::bigint[]) AS u(o, m) WHERE t.\(source) = u.o AND t.\(member) = u.m",
                parameters)
        }
        if !addOwners.isEmpty {
            var parameters = PGParameters()
            appendKeys(addOwners, to: &parameters)
            appendKeys(addMembers, to: &parameters)
            try connection.executePrepared(
                "INSERT INTO \(table) (\(source), \(member)) SELECT o, m FROM unnest($1::bigint[], $2::bigint[]) AS u(o, m) ON CONFLICT DO NOTHING",
                parameters)
        }
        if let order = join.orderColumn, !orderOwners.isEmpty {
            var parameters = PGParameters()
            appendKeys(orderOwners, to: &parameters)
            appendKeys(orderMembers, to: &parameters)
            appendKeys(orderPositions, to: &parameters)
            try connection.executePrepared(
                """
                UPDATE \(table) t SET \(order.sqlName) = u.p FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS u(o, m, p) \
                WHERE t.\(source) = u.o AND t.\(member) = u.m
                """, parameters)
        }
    }

    /// Raises each inserting hierarchy's `Z_MAX` to its largest inserted key (keys copied from
    /// another store by `strata convert` were not handed out here). Keys from the allocator are
    /// at most `Z_MAX` already, so the statement changes, and locks, nothing then.
    private func raiseMaximumKeys(_ inserts: [RowSnapshot], _ connection: PGConnection) throws {
        guard !inserts.isEmpty else { return }
        var maxKeys: [Int32: Int64] = [:]
        for insert in inserts {
            guard let entity = model.entity(number: insert.id.entity) else { continue }
            maxKeys[entity.rootEntityNumber] = max(maxKeys[entity.rootEntityNumber] ?? 0, insert.id.primaryKey)
        }
        for (root, key) in maxKeys.sorted(by: { $0.key < $1.key }) {
            var parameters = PGParameters()
            parameters.append(key)
            parameters.append(int32: root)
            try connection.executePrepared(
                "UPDATE \(layout.primaryKeyTable) SET \("Z_MAX".sqlName) = $1 WHERE \("Z_ENT".sqlName) = $2 AND \("Z_MAX".sqlName) < $1",
                parameters)
        }
    }
}
