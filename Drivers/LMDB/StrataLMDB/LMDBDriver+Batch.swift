import CLMDB
import Foundation
import Strata

extension LMDBDriver {
    /// Runs a batch update or delete in one write transaction with one cursor pass over the
    /// entity's rows, reading only the fields the predicate and expressions need.
    ///
    /// Updates whose changed slots are fixed-width, present before and after, and in no index are
    /// patched where they lie (the version and those bytes change, nothing else is re-encoded);
    /// others are decoded, changed, re-encoded and re-indexed. Unique constraints are checked
    /// before the transaction commits. Predicates or expressions that read other rows go through
    /// the portable path (``StoreDriver/executeThroughRows(_:)``).
    public func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult {
        try ensureOpen()
        try request.check()
        let predicate = request.predicate.flatMap { CompiledRowPredicate($0, entity: request.entity) }
        if request.predicate != nil && predicate == nil { return try executeThroughRows(request) }
        var plan: BatchUpdatePlan?
        if case .update = request.action {
            let prepared = try BatchUpdatePlan(request)
            guard prepared.isCompiled else { return try executeThroughRows(request) }
            plan = prepared
        }
        let entities = request.entityNumbers.filter { layout.slots[$0] != nil }.sorted()
        return try environment.write { txn in
            var ids: [RowID] = []
            var touched: [RowSnapshot] = []
            for entity in entities {
                // entities holds numbers of the layout only.
                let slots = layout.slots[entity]!
                let indexes = layout.indexesByEntity[entity] ?? []
                var wanted = predicate?.readSlots ?? []
                wanted += plan?.readSlots ?? []
                for index in indexes { wanted += index.slots }
                let wantedSlots = wanted
                var fields = RowCodec.Fields(layout: slots, wanted: wanted)
                var scratch = Scratch()
                let pass = BatchPass(driver: self, entity: entity, slots: slots, indexes: indexes, plan: plan, txn: txn)
                try txn.withCursor(try rowsDatabase(entity)) { cursor in
                    let start = Keys.entityStart(entity)
                    let prefix = Keys.entityPrefix(entity)
                    var entry = try cursor.move(MDB_SET_RANGE, to: start)
                    while let current = entry, current.key.hasPrefix(prefix) {
                        let id = try rowID(current.key)
                        // A delete of every row of an entity without indexes needs nothing from the row.
                        if plan != nil || !wantedSlots.isEmpty {
                            do { try RowCodec.read(current.value, layout: slots, into: &fields) } catch let error
                                as FormatError
                            {
                                throw StoreError(
                                    .corrupt, "row \(id) is malformed (\(error)); restore the store from a backup",
                                    store: storeName)
                            }
                        }
                        if let predicate, !(try predicate.matches(fields.values)) {
                            entry = try cursor.move(MDB_NEXT)
                            continue
                        }
                        ids.append(id)
                        if plan == nil {
                            try pass.delete(id, fields: fields, cursor: &cursor)
                        } else if let row = try pass.update(
                            id, key: current.key, raw: current.value, fields: fields, cursor: &cursor, scratch: &scratch
                        ) {
                            touched.append(row)
                        }
                        entry = try cursor.move(MDB_NEXT)
                    }
                }
            }
            try checkUniqueness(touched, txn)
            return StoreBatchResult(ids: ids)
        }
    }
}

/// Buffers reused from row to row of a batch pass.
private struct Scratch {
    var key: [UInt8] = []
    var row: [UInt8] = []
}

/// One entity's part of a batch request inside its write transaction.
private struct BatchPass {
    let driver: LMDBDriver
    let entity: Int32
    let slots: [DatabaseLayout.Slot]
    let indexes: [DatabaseLayout.Index]
    let plan: BatchUpdatePlan?
    let txn: LMDBTransaction
    /// Whether the changed slots can be patched in place: fixed-width attributes in no index.
    let patchable: Bool

    init(
        driver: LMDBDriver, entity: Int32, slots: [DatabaseLayout.Slot], indexes: [DatabaseLayout.Index],
        plan: BatchUpdatePlan?, txn: LMDBTransaction
    ) {
        self.driver = driver
        self.entity = entity
        self.slots = slots
        self.indexes = indexes
        self.plan = plan
        self.txn = txn
        let indexed = Set(indexes.flatMap(\.slots))
        patchable =
            plan?.changedSlots.allSatisfy { slot in
                guard case .attribute = slots[slot], RowCodec.fixedWidth(slots[slot]) != nil else { return false }
                return !indexed.contains(slot)
            } ?? false
    }

    /// Removes the row under the cursor and its index entries (the request touches no
    /// relationships, so there are no reverse entries or links).
    func delete(_ id: RowID, fields: RowCodec.Fields, cursor: inout LMDBCursor) throws {
        let source = Keys.row(id)
        for index in indexes {
            try txn.delete(driver.databases.index, Keys.index(index.id, index.slots.map { fields.values[$0] }), source)
        }
        try cursor.deleteCurrent()
    }

    /// Writes the new values of the row under the cursor. Returns the new row when it went through
    /// the full path (for the unique-constraint check), `nil` when it was patched in place.
    func update(
        _ id: RowID, key current: UnsafeRawBufferPointer, raw: UnsafeRawBufferPointer, fields: RowCodec.Fields,
        cursor: inout LMDBCursor, scratch: inout Scratch
    ) throws -> RowSnapshot? {
        // update is called only with a plan.
        let plan = plan!
        let values = try plan.newValues(for: fields.values) { nil }
        // The key and value point into the map; writing may move them, so both are copied first.
        scratch.key.removeAll(keepingCapacity: true)
        scratch.key.append(contentsOf: current)
        let key = scratch.key
        if patchable, !values.contains(where: \.isNull), plan.changedSlots.allSatisfy({ fields.offsets[$0] >= 0 }) {
            let version = try driver.nextVersion(fields.version, of: id)
            scratch.row.removeAll(keepingCapacity: true)
            scratch.row.append(contentsOf: raw)
            let patched = scratch.row.withUnsafeMutableBytes { buffer in
                RowCodec.patchVersion(buffer, version)
                for (slot, value) in zip(plan.changedSlots, values)
                where !RowCodec.patch(buffer, slot: slots[slot], at: fields.offsets[slot], with: value) {
                    return false
                }
                return true
            }
            if patched {
                try key.withUnsafeBytes { k in
                    try scratch.row.withUnsafeBytes { try cursor.replaceCurrent(key: k, value: $0) }
                }
                return nil
            }
        }
        let old: RowSnapshot
        do { old = try RowCodec.decode(raw, id: id, layout: slots) } catch let error as FormatError {
            throw StoreError(
                .corrupt, "row \(id) is malformed (\(error)); restore the store from a backup", store: driver.storeName)
        }
        var new = old
        for (slot, value) in zip(plan.changedSlots, values) { new.values[slot] = value }
        new.version = try driver.nextVersion(old.version, of: id)
        let encoded = try driver.encode(new, slots)
        try key.withUnsafeBytes { k in try encoded.withUnsafeBytes { try cursor.replaceCurrent(key: k, value: $0) } }
        try driver.link(new, slots: plan.changedSlots, old: old, txn)
        return new
    }
}
