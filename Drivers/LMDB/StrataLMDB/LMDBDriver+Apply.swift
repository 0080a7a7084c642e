import CLMDB
import Foundation
import Strata

extension LMDBDriver {
    /// Applies a change set in one write transaction (D6): versions are checked first, then deletes,
    /// inserts and updates are written with their reverse entries, links and index entries, then
    /// unique constraints are checked. Any failure aborts the transaction; the store is unchanged.
    public func apply(_ batch: ChangeBatch) throws -> CommitResult {
        try ensureOpen()
        return try log.logged(
            "write transaction: \(batch.inserts.count) inserts, \(batch.updates.count) updates, \(batch.deletes.count) deletes"
        ) { try commit(batch) }
    }

    /// Applies each change set `next` hands out in one write transaction, holding one at a time;
    /// any failure aborts the transaction and the store is unchanged. A full map aborts it, grows
    /// the map and starts over from the first change set (`next(true)`).
    public func apply(inParts next: (_ first: Bool) throws -> ChangeBatch?) throws -> CommitResult {
        try ensureOpen()
        return try log.logged("write transaction in parts") {
            try environment.write(durable: true) { txn in
                try ChangeBatch.forEachPart(of: next) { part in try write(part, txn) }
            }
        }
    }

    private func commit(_ batch: ChangeBatch) throws -> CommitResult {
        // A deferred change set is committed without its meta page's sync (E7 in LMDBEnvironment).
        try environment.write(durable: batch.durability == .immediate) { txn in try write(batch, txn) }
    }

    /// Writes one change set inside the write transaction `txn`.
    private func write(_ batch: ChangeBatch, _ txn: LMDBTransaction) throws -> CommitResult {
        try checkVersions(batch, txn)
        var touched: [RowSnapshot] = []
        var maxKeys: [Int32: Int64] = [:]
        for delete in batch.deletes {
            // checkVersions found the row; a change set that names it twice, or a damaged file,
            // can make it gone by now.
            let rows = try rowsDatabase(delete.id.entity)
            if isPlain(delete.id.entity) {
                // No relationship or index entries to remove (unlink would do nothing), so the
                // stored values are not read.
                guard try txn.get(rows, row: delete.id) != nil else { throw Self.vanished(delete.id, storeName) }
            } else {
                guard let old = try row(delete.id, txn) else { throw Self.vanished(delete.id, storeName) }
                try unlink(old, txn)
            }
            try txn.delete(rows, Keys.row(delete.id))
        }
        var writer = ByteWriter(capacity: 256)
        var key = ByteWriter(capacity: Keys.rowIDSize)
        var scratch = [UInt8](repeating: 0, count: 256)
        var last:
            (
                entity: Int32, root: Int32, dbi: MDB_dbi, slots: [DatabaseLayout.Slot], plan: RowCodec.Plan,
                unique: Bool, linked: Bool
            )?
        var runMax: Int64 = 0
        func flushMax() {
            if let root = last?.root, runMax > maxKeys[root] ?? 0 { maxKeys[root] = runMax }
            runMax = 0
        }
        for insert in batch.inserts {
            let entity = insert.id.entity
            if last?.entity != entity {
                flushMax()
                guard let slots = layout.slots[entity], let root = layout.rootOf[entity] else {
                    throw StoreError(.corrupt, "inserted row \(insert.id) does not fit the model", store: storeName)
                }
                let unique = layout.indexesByEntity[entity]?.contains(where: \.isUnique) ?? false
                let linked = layout.linked.contains(entity) || layout.indexesByEntity[entity] != nil
                // layout.plans has an entry for every entity layout.slots has.
                last = (entity, root, try rowsDatabase(entity), slots, layout.plans[entity]!, unique, linked)
            }
            // Set just above for this entity.
            let current = last!
            guard insert.values.count == current.slots.count, insert.id.primaryKey > 0 else {
                throw StoreError(.corrupt, "inserted row \(insert.id) does not fit the model", store: storeName)
            }
            key.bytes.removeAll(keepingCapacity: true)
            Keys.appendRowID(insert.id, to: &key)
            // Keys handed out by the allocator rise, so new rows usually go at the end.
            let rising = insert.id.primaryKey > runMax
            let stored: Bool
            if let size = RowCodec.encode(version: 1, values: insert.values, plan: current.plan, into: &scratch) {
                stored = try scratch.withUnsafeBytes {
                    try txn.insert(
                        current.dbi, key.bytes, UnsafeRawBufferPointer(rebasing: $0[0..<size]), append: rising)
                }
            } else {
                try encode(insert.values, version: 1, id: insert.id, current.slots, into: &writer)
                stored = try txn.insert(current.dbi, key.bytes, writer.bytes, append: rising)
            }
            guard stored else {
                throw StoreError(.constraint, "a row with ID \(insert.id) already exists", store: storeName)
            }
            if current.linked {
                let row = RowSnapshot(id: insert.id, version: 1, values: insert.values)
                try link(row, slots: 0..<current.slots.count, old: nil, txn)
                if current.unique { touched.append(row) }
            }
            runMax = max(runMax, insert.id.primaryKey)
        }
        flushMax()
        var shape: (entity: Int32, dbi: MDB_dbi, plan: RowCodec.Plan, slots: [DatabaseLayout.Slot], plain: Bool)?
        for update in batch.updates {
            let entity = update.id.entity
            if shape?.entity != entity {
                // checkVersions found the row, so layout.slots and layout.plans know its entity.
                shape = (
                    entity, try rowsDatabase(entity), layout.plans[entity]!, layout.slots[entity]!, isPlain(entity)
                )
            }
            // Set just above for this entity.
            let current = shape!
            guard update.values.count == current.slots.count,
                update.changedSlots.allSatisfy({ $0 >= 0 && $0 < current.slots.count })
            else {
                throw StoreError(
                    .corrupt, "the update of row \(update.id) does not fit the model", store: storeName)
            }
            key.bytes.removeAll(keepingCapacity: true)
            Keys.appendRowID(update.id, to: &key)
            // A row with no relationship entries, index entries or unique constraints to keep is
            // written from the update alone (RowUpdate: the complete new row), without reading the
            // stored values back. A to-many slot, the only kind that may be unfetched, is not part
            // of the row's bytes.
            if current.plain {
                // checkVersions found the row at the expected version; a change set that deletes
                // it too can make it gone by now.
                guard let stored = try txn.get(current.dbi, key.bytes) else {
                    throw Self.vanished(update.id, storeName)
                }
                let version = try nextVersion(update.expectedVersion, of: update.id)
                // A change of fixed-width fields patches the stored bytes (read before the put
                // below replaces them); any other is encoded whole.
                if let size = RowCodec.patch(
                    stored, version: version, values: update.values, changed: update.changedSlots,
                    plan: current.plan, into: &scratch)
                    ?? RowCodec.encode(version: version, values: update.values, plan: current.plan, into: &scratch)
                {
                    try scratch.withUnsafeBytes {
                        try txn.put(current.dbi, key.bytes, UnsafeRawBufferPointer(rebasing: $0[0..<size]))
                    }
                } else {
                    try encode(update.values, version: version, id: update.id, current.slots, into: &writer)
                    try txn.put(current.dbi, key.bytes, writer.bytes)
                }
                continue
            }
            // checkVersions found the row; a change set that deletes it too, or a damaged file,
            // can make it gone by now.
            guard let old = try row(update.id, txn) else { throw Self.vanished(update.id, storeName) }
            let slots = current.slots
            var new = old
            for slot in update.changedSlots { new.values[slot] = update.values[slot] }
            new.version = try nextVersion(old.version, of: old.id)
            try txn.put(try rowsDatabase(update.id.entity), Keys.row(new.id), try encode(new, slots))
            try link(new, slots: update.changedSlots, old: old, txn)
            // The new version is the expected one plus one (checkVersions): the result leaves it out.
            touched.append(new)
        }
        for (root, key) in maxKeys where key > (try maximumKey(root, txn)) { try setMaximumKey(root, key, txn) }
        try checkUniqueness(touched, txn)
        if let metadata = batch.metadata { try Self.writeMetadata(metadata, txn, databases.meta) }
        return CommitResult(versions: [:])
    }

    /// Whether rows of `entity` have no relationship entries, order lists, index entries or unique
    /// constraints beside them: their changes touch the row alone (``unlink(_:_:)`` and
    /// ``link(_:slots:old:_:)`` have nothing to do).
    func isPlain(_ entity: Int32) -> Bool {
        !layout.linked.contains(entity) && layout.indexesByEntity[entity] == nil
    }

    func encode(
        _ values: [StoreValue], version: RowVersion, id: RowID, _ slots: [DatabaseLayout.Slot],
        into writer: inout ByteWriter
    ) throws {
        do { try RowCodec.encode(version: version, values: values, layout: slots, into: &writer) } catch let error
            as FormatError
        {
            let entity = model.entity(number: id.entity)?.name ?? "\(id.entity)"
            throw StoreError(.invalidRequest, "row \(id) of \(entity) cannot be stored: \(error)", store: storeName)
        }
    }

    func encode(_ row: RowSnapshot, _ slots: [DatabaseLayout.Slot]) throws -> [UInt8] {
        do { return try RowCodec.encode(version: row.version, values: row.values, layout: slots) } catch let error
            as FormatError
        {
            let entity = model.entity(number: row.id.entity)?.name ?? "\(row.id.entity)"
            throw StoreError(.invalidRequest, "row \(row.id) of \(entity) cannot be stored: \(error)", store: storeName)
        }
    }

    /// A row the change set changes that was there when the save began and is gone within it.
    private static func vanished(_ id: RowID, _ store: String) -> StoreError {
        StoreError(
            .corrupt,
            "row \(id) disappeared during the save (the change set changes it twice, or the file is damaged); nothing was written",
            store: store)
    }

    private func checkVersions(_ batch: ChangeBatch, _ txn: LMDBTransaction) throws {
        var stale: [RowID] = []
        for (id, expected) in batch.updates.map({ ($0.id, $0.expectedVersion) })
            + batch.deletes.map({ ($0.id, $0.expectedVersion) })
        {
            guard layout.slots[id.entity] != nil, let raw = try txn.get(try rowsDatabase(id.entity), Keys.row(id))
            else {
                stale.append(id)
                continue
            }
            let version: RowVersion
            do { version = try RowCodec.version(of: raw) } catch {
                throw StoreError(
                    .corrupt, "row \(id) is malformed (\(error)); restore the store from a backup", store: storeName)
            }
            if version != expected { stale.append(id) }
        }
        guard stale.isEmpty else {
            throw StoreError(
                .conflict,
                "\(stale.count) row\(stale.count == 1 ? " was" : "s were") changed or deleted by another save: \(stale.prefix(10).map(\.description).joined(separator: ", ")); refresh the objects and save again",
                store: storeName,
                objectIDs: stale.compactMap { id in
                    model.entity(number: id.entity).map { ManagedObjectID(entity: $0, rowID: id, store: nil) }
                })
        }
    }

    // MARK: Relationship entries and indexes

    /// Writes the reverse entries, links, order lists and index entries of `row` for `slots`
    /// (all slots for an insert), removing those of `old` where they changed.
    func link<Slots: Collection<Int>>(
        _ row: RowSnapshot, slots changed: Slots, old: RowSnapshot?, _ txn: LMDBTransaction
    ) throws {
        // Callers pass rows of entities in the layout.
        let slots = layout.slots[row.id.entity]!
        let source = Keys.row(row.id)
        for slot in changed {
            let value = row.values[slot]
            switch slots[slot] {
            case .transient, .attribute:
                continue
            case .toOne(let rel):
                let before = old?.values[slot] ?? .null
                if before == value { continue }
                if case .reference(let target) = before {
                    try txn.delete(databases.refs, Keys.relationship(rel, target), source)
                }
                if case .reference(let target) = value {
                    try txn.put(databases.refs, Keys.relationship(rel, target), source)
                }
            case .reverse(_, let order):
                guard let order, case .references(let members) = value else { continue }
                try writeOrder(order, row.id, members, txn)
            case .links(let rel, let inverse, let order):
                guard case .references(let members) = value else { continue }
                let key = Keys.relationship(rel, row.id)
                let current = old == nil ? [] : Set(try duplicates(databases.links, key, txn))
                let wanted = Set(members)
                for gone in current.subtracting(wanted) {
                    try txn.delete(databases.links, key, Keys.row(gone))
                    if let inverse { try txn.delete(databases.links, Keys.relationship(inverse, gone), source) }
                }
                for added in wanted.subtracting(current) {
                    try txn.put(databases.links, key, Keys.row(added), flags: UInt32(MDB_NODUPDATA))
                    if let inverse {
                        try txn.put(
                            databases.links, Keys.relationship(inverse, added), source, flags: UInt32(MDB_NODUPDATA))
                    }
                }
                if let order { try writeOrder(order, row.id, members, txn) }
            }
        }
        for index in layout.indexesByEntity[row.id.entity] ?? []
        where old == nil || index.slots.contains(where: changed.contains) {
            if let old {
                try txn.delete(databases.index, Keys.index(index.id, index.slots.map { old.values[$0] }), source)
            }
            try txn.put(
                databases.index, Keys.index(index.id, index.slots.map { row.values[$0] }), source,
                flags: UInt32(MDB_NODUPDATA))
        }
    }

    /// Removes every entry that names `row` as a source (for a delete), and its mirrors.
    func unlink(_ row: RowSnapshot, _ txn: LMDBTransaction) throws {
        // Callers pass rows of entities in the layout.
        let slots = layout.slots[row.id.entity]!
        let source = Keys.row(row.id)
        for (slot, kind) in slots.enumerated() {
            switch kind {
            case .transient, .attribute: continue
            case .toOne(let rel):
                if case .reference(let target) = row.values[slot] {
                    try txn.delete(databases.refs, Keys.relationship(rel, target), source)
                }
            case .reverse(_, let order):
                if let order { try txn.delete(databases.orders, Keys.relationship(order, row.id)) }
            case .links(let rel, let inverse, let order):
                let key = Keys.relationship(rel, row.id)
                if let inverse {
                    for member in try duplicates(databases.links, key, txn) {
                        try txn.delete(databases.links, Keys.relationship(inverse, member), source)
                    }
                }
                try txn.delete(databases.links, key)
                if let order { try txn.delete(databases.orders, Keys.relationship(order, row.id)) }
            }
        }
        for index in layout.indexesByEntity[row.id.entity] ?? [] {
            try txn.delete(databases.index, Keys.index(index.id, index.slots.map { row.values[$0] }), source)
        }
    }

    private func writeOrder(_ order: UInt32, _ id: RowID, _ members: [RowID], _ txn: LMDBTransaction) throws {
        let key = Keys.relationship(order, id)
        if members.isEmpty { return try txn.delete(databases.orders, key) }
        var writer = ByteWriter(capacity: 4 + members.count * Keys.rowIDSize)
        writer.appendLittleEndian(UInt32(members.count))
        for member in members { Keys.appendRowID(member, to: &writer) }
        try txn.put(databases.orders, key, writer.bytes)
    }

    /// The duplicates (row IDs) stored under `key` in a DUPSORT database, in key order.
    func duplicates(_ dbi: MDB_dbi, _ key: [UInt8], _ txn: LMDBTransaction) throws -> [RowID] {
        try txn.withCursor(dbi) { cursor in
            var result: [RowID] = []
            guard var entry = try cursor.move(MDB_SET_KEY, to: key) else { return result }
            while true {
                let id: RowID
                do { id = try Keys.rowID(entry.value) } catch {
                    throw StoreError(
                        .corrupt, "a relationship entry is malformed (\(error)); restore the store from a backup",
                        store: storeName)
                }
                result.append(try checkKey(id))
                guard let next = try cursor.move(MDB_NEXT_DUP) else { break }
                entry = next
            }
            return result
        }
    }

    /// Unique constraints (D4 plus uniqueness): every touched row's constrained values must not be
    /// held by another row of the constraint's hierarchy. Rows with a `nil` in the constraint are
    /// exempt, as in the context's validation.
    func checkUniqueness(_ rows: [RowSnapshot], _ txn: LMDBTransaction) throws {
        for row in rows {
            for index in layout.indexesByEntity[row.id.entity] ?? [] where index.isUnique {
                let values = index.slots.map { row.values[$0] }
                if values.contains(where: \.isNull) { continue }
                for other in try duplicates(databases.index, Keys.index(index.id, values), txn) where other != row.id {
                    guard let stored = try self.row(other, txn) else { continue }
                    let same = zip(index.slots, values).allSatisfy { slot, value in
                        (try? StoreValue.predicateEqual(stored.values[slot], value)) ?? (stored.values[slot] == value)
                    }
                    if same {
                        let entity = model.entity(number: index.owner)
                        let names = index.slots.map { entity?.properties[$0].name ?? "\($0)" }
                        throw StoreError(
                            .constraint,
                            "unique constraint (\(names.joined(separator: ", "))) of \(entity?.name ?? "?") violated: rows \(row.id) and \(other) hold the same values; change one of them",
                            store: storeName,
                            objectIDs: [row.id, other].compactMap { id in
                                model.entity(number: id.entity).map {
                                    ManagedObjectID(entity: $0, rowID: id, store: nil)
                                }
                            })
                    }
                }
            }
        }
    }
}
