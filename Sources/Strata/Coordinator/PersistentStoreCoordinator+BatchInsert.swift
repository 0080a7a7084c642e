import Foundation

/// What ``PersistentStoreCoordinator/insert(_:of:constraints:policy:in:)`` stored.
struct BatchInsertOutcome {
    /// The rows inserted or upserted, in the order of the request's objects that were kept.
    var rows: [RowID] = []
    /// The stored rows an object updated (an upsert), among ``rows``.
    var updated: [RowID] = []
}

extension PersistentStoreCoordinator {
    /// Stores the rows `fill` produces, one at a time, as new rows of `entity` in `store`, in one
    /// transaction (``StoreDriver/insertRows(of:_:)``): a batch insert whose entity has no
    /// uniqueness constraints, so no row needs another to be checked. Inserted rows are not cached.
    ///
    /// - Returns: The keys of the rows, in order; `nil` for none.
    func insert(
        of entity: EntityDescription, in store: PersistentStore, _ fill: (inout [StoreValue]) throws -> Bool
    ) throws -> ClosedRange<Int64>? {
        if store.isReadOnly {
            throw StoreError(.readOnly, "cannot insert into a store opened read-only", store: store.displayName)
        }
        return try store.write { try store.driver.insertRows(of: entity.entityNumber, fill) }
    }

    /// Stores the rows of a batch insert in `store` in one change set, keeping uniqueness
    /// constraints by `policy` (see ``BatchInsertRequest``). Inserted rows are not cached (no
    /// context holds them); upserted rows leave the row cache.
    ///
    /// Complexity: O(n) for n rows, plus one read of the stored rows of each constraint's
    /// hierarchy when the entity has constraints.
    func insert(
        _ rows: consuming [RowSnapshot], of entity: EntityDescription, constraints: [(owner: String, names: [String])],
        policy: MergePolicy, in store: PersistentStore
    ) throws -> BatchInsertOutcome {
        if store.isReadOnly {
            throw StoreError(.readOnly, "cannot insert into a store opened read-only", store: store.displayName)
        }
        guard !rows.isEmpty else { return BatchInsertOutcome() }
        let model = managedObjectModel
        guard let root = model.entity(number: entity.rootEntityNumber) else {
            throw StoreError(.invalidRequest, "the model has no root entity for '\(entity.name)'")
        }
        var rows = rows
        return try store.write {
            // Reading the stored rows and writing under one lock: no other save of this
            // coordinator can slip a clashing row in between.
            var plan = BatchInsertResolution(entity: entity, count: rows.count, policy: policy)
            for (owner, names) in constraints {
                try plan.resolve(
                    names, of: rows, owner: model.entity(named: owner) ?? entity, store: store, model: model)
            }
            var batch = ChangeBatch()
            var outcome = BatchInsertOutcome()
            if plan.keepsEverything {
                // The common case: every row is new. The rows take their keys in place and go
                // to the driver as they are.
                let keys = try allocatePrimaryKeysHoldingWriteLock(for: root, count: rows.count, in: store)
                var key = keys.lowerBound
                outcome.rows.reserveCapacity(rows.count)
                for index in rows.indices {
                    let id = RowID(entity: entity.entityNumber, primaryKey: key)
                    rows[index].id = id
                    outcome.rows.append(id)
                    key += 1
                }
                batch.inserts = rows
                rows = []
            } else {
                let inserted = plan.kept.filter { plan.upserts[$0] == nil }
                if !inserted.isEmpty {
                    let keys = try allocatePrimaryKeysHoldingWriteLock(for: root, count: inserted.count, in: store)
                    batch.inserts.reserveCapacity(inserted.count)
                    var key = keys.lowerBound
                    for index in inserted {
                        var row = rows[index]
                        row.id = RowID(entity: entity.entityNumber, primaryKey: key)
                        batch.inserts.append(row)
                        key += 1
                    }
                }
                let attributeSlots = entity.properties.indices.filter {
                    entity.properties[$0].attribute.map { !$0.isTransient } ?? false
                }
                outcome.rows.reserveCapacity(plan.kept.count)
                var next = 0
                for index in plan.kept {
                    if let stored = plan.upserts[index] {
                        var values = stored.values
                        for slot in attributeSlots { values[slot] = rows[index].values[slot] }
                        batch.updates.append(
                            RowUpdate(
                                id: stored.id, expectedVersion: stored.version, values: values,
                                changedSlots: attributeSlots))
                        outcome.rows.append(stored.id)
                        outcome.updated.append(stored.id)
                    } else {
                        outcome.rows.append(batch.inserts[next].id)
                        next += 1
                    }
                }
            }
            do {
                _ = try store.driver.apply(batch)
            } catch let error as StoreError where error.code == .notDurable {
                // Applied: readers see it, so cached copies of upserted rows are stale.
                rowCache.remove(outcome.updated.map { RowCache.Key(store: ObjectIdentifier(store), row: $0) })
                throw error
            }
            if !outcome.updated.isEmpty {
                rowCache.remove(outcome.updated.map { RowCache.Key(store: ObjectIdentifier(store), row: $0) })
            }
            return outcome
        }
    }
}

/// Which objects of a batch insert are kept, and which of them update a stored row, after its
/// uniqueness constraints are applied by the merge policy.
private struct BatchInsertResolution {
    let entity: EntityDescription
    let policy: MergePolicy
    /// Indexes of the objects stored, ascending.
    private(set) var kept: [Int]
    /// Object index to the stored row it updates.
    private(set) var upserts: [Int: RowSnapshot] = [:]
    /// Whether every object is still kept and none updates a stored row.
    private(set) var keepsEverything = true

    init(entity: EntityDescription, count: Int, policy: MergePolicy) {
        self.entity = entity
        self.policy = policy
        kept = Array(0..<count)
    }

    private var objectWins: Bool { policy.kind == .mergeByPropertyObjectTrump || policy.kind == .overwrite }

    mutating func resolve(
        _ names: [String], of rows: [RowSnapshot], owner: EntityDescription, store: PersistentStore,
        model: ManagedObjectModel
    ) throws {
        defer { keepsEverything = upserts.isEmpty && kept.count == rows.count }
        let slots = names.compactMap { entity.index(ofProperty: $0) }
        guard slots.count == names.count else { return }
        let described = "(\(names.joined(separator: ", "))) of '\(owner.name)'"
        // Among the objects: the first (store-trump) or the last (object-trump) of each key stays.
        var seen: [[StoreValue]: Int] = [:]
        var dropped = Set<Int>()
        for index in kept {
            let key = slots.map { rows[index].values[$0] }
            if key.contains(where: \.isNull) { continue }
            if let earlier = seen[key] {
                guard policy.kind != .error else {
                    throw StoreError(
                        .constraint,
                        "objects \(earlier) and \(index) of the batch insert share \(values(key)) for the unique \(described); give them different values, or set the context's mergePolicy to .mergeByPropertyObjectTrump to keep the last",
                        store: store.displayName)
                }
                if objectWins {
                    dropped.insert(earlier)
                    seen[key] = index
                } else {
                    dropped.insert(index)
                }
            } else {
                seen[key] = index
            }
        }
        if !dropped.isEmpty { kept.removeAll { dropped.contains($0) } }
        // Against the stored rows of the constraint's hierarchy.
        var fetch = StoreFetch(entity: owner)
        fetch.includesSubentities = true
        var stored: [[StoreValue]: RowSnapshot] = [:]
        for row in try store.driver.fetch(fetch).rows {
            let key = names.map { name in
                model.entity(number: row.id.entity)?.index(ofProperty: name).map { row.values[$0] } ?? .null
            }
            if !key.contains(where: \.isNull) { stored[key] = row }
        }
        guard !stored.isEmpty else { return }
        dropped = []
        for index in kept {
            let key = slots.map { rows[index].values[$0] }
            guard let row = stored[key] else { continue }
            let objectID = model.entity(number: row.id.entity).map {
                ManagedObjectID(entity: $0, rowID: row.id, store: store)
            }
            guard objectWins else {
                if policy.kind == .error {
                    throw StoreError(
                        .constraint,
                        "object \(index) of the batch insert has \(values(key)) for the unique \(described), which stored row \(row.id) already has; leave it out, or set the context's mergePolicy to .mergeByPropertyObjectTrump to update that row",
                        store: store.displayName, objectIDs: objectID.map { [$0] } ?? [])
                }
                dropped.insert(index)
                continue
            }
            guard row.id.entity == entity.entityNumber else {
                throw StoreError(
                    .constraint,
                    "object \(index) of the batch insert has \(values(key)) for the unique \(described), which stored row \(row.id) of another entity already has; a batch insert updates rows of its own entity only",
                    store: store.displayName, objectIDs: objectID.map { [$0] } ?? [])
            }
            if let other = upserts[index], other.id != row.id {
                throw StoreError(
                    .constraint,
                    "object \(index) of the batch insert matches stored rows \(other.id) and \(row.id) by different unique constraints; it can update only one",
                    store: store.displayName)
            }
            upserts[index] = row
        }
        if !dropped.isEmpty { kept.removeAll { dropped.contains($0) } }
        // Two objects upserting one row through different constraints: the last stays.
        var target: [RowID: Int] = [:]
        dropped = []
        for index in kept {
            guard let row = upserts[index] else { continue }
            if let earlier = target[row.id] { dropped.insert(earlier) }
            target[row.id] = index
        }
        if !dropped.isEmpty { kept.removeAll { dropped.contains($0) } }
    }

    private func values(_ key: [StoreValue]) -> String { key.map(\.displayText).joined(separator: ", ") }
}
