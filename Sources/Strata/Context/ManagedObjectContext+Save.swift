import Foundation

extension ManagedObjectContext {
    /// Saves every change: applies delete rules, validates (all failures reported together in a
    /// ``ObjectValidationError``), resolves conflicts with the ``mergePolicy``, and writes the changes:
    /// for a context on the coordinator, one change set per store, after giving inserted objects
    /// permanent IDs; for a child context, into its parent, touching no store.
    ///
    /// Nothing is reported saved unless it reached the store (or the parent). A failed save
    /// changes nothing in any store and leaves the context's changes in place (fix them and save
    /// again, or ``rollback()``); objects that received permanent IDs keep them and are saved by
    /// the retry. When several stores are involved and a later one fails after an earlier one
    /// committed, the error is ``StoreError/Code/partialCommit``: the committed changes count as
    /// saved, the rest stay pending for a retry.
    ///
    /// Optimistic-locking conflicts (a row changed in the store, or an object changed in the
    /// parent, since this context read it) and uniqueness-constraint conflicts go to the merge
    /// policy: under ``MergePolicy/error`` the save throws ``StoreError/Code/conflict`` carrying
    /// ``StoreError/mergeConflicts`` (or a ``ObjectValidationError`` carrying
    /// ``ObjectValidationError/constraintConflicts``); under the others the conflicts are resolved and
    /// the save goes on.
    ///
    /// - Throws: The first store error met by an earlier property access that could not report
    ///   it (see ``accessFailure``), before anything is written; ``ObjectValidationError``;
    ///   ``StoreError`` from the stores.
    public func save() throws {
        checkConfinement("save()")
        drainMerges()
        // Stores can change again while conflicts are resolved; a few rounds settle any real race.
        var rounds = 0
        while true {
            do {
                try saveOnce()
                return
            } catch let error as StoreError
                where error.code == .conflict && error.mergeConflicts.isEmpty && parent == nil
            {
                rounds += 1
                try resolveStoreConflicts(error, giveUp: rounds > 4)
            }
        }
    }

    private func saveOnce() throws {
        defaultStores = [:]
        try throwAccessFailure()
        try applyDeleteRules()
        postObjectsDidChange()
        guard hasChanges else { return }
        postWillSave()
        // Only subclasses can override the hooks (ManagedObject's own do nothing). The lists are
        // taken as they are now, since hooks may change them (a copy of each list, not of its objects).
        if registered.hasSubclassObjects {
            let (inserted, updated, deleted) = (insertedList.values, updatedList.values, deletedList.values)
            for object in inserted { object.willSave() }
            for object in updated where object.isUpdated { object.willSave() }
            for object in deleted { object.willSave() }
        }
        try applyDeleteRules()
        try throwAccessFailure()
        try computeDerivedAttributes()
        try throwAccessFailure()  // a relationship or fault the derivations read could not be loaded
        try validateChanges()

        // Usually every listed insert is saved as it is: then the list itself serves.
        let listed = insertedList.values
        let isSaved = { (object: ManagedObject) in object.inserted && !object.deleted && object.isIn(self) }
        let inserts = listed.allSatisfy(isSaved) ? listed : listed.filter(isSaved)
        if parent != nil {
            let updates = updatedList.values.filter { $0.isUpdated || $0.deleted }
            let deletes = deletedList.values.filter { !$0.inserted }
            try saveIntoParent(inserts: inserts, updates: updates, deletes: deletes)
            return
        }
        if registered.hasObjectsWithRelationships || !crossStoreLinks.isEmpty {
            try checkCrossStore(inserts + updatedList.values.filter { $0.isUpdated && !$0.deleted })
        }
        // Inserted rows are collected while their objects get keys (one pass over them instead of
        // two), unless references must be rewritten to the new keys first. Inserts that already
        // have their keys (from obtainPermanentIDs, or from an earlier save that failed) get none
        // now, so their rows are added with the updates and deletes below.
        let collects = !registered.hasObjectsWithRelationships
        let keyed = collects ? inserts.filter { !$0.objectID.isTemporaryID } : []
        var rows: InsertRows? = collects ? InsertRows(expecting: inserts.count - keyed.count) : nil
        let storeOrder = try obtainPermanentIDs(for: inserts, checked: true, collecting: &rows)
        // Batches in the order the inserts first use their stores, as when built from the list.
        var batches = rows?.batches ?? []
        batches.sort { a, b in
            (storeOrder.firstIndex { $0 === a.store } ?? 0) < (storeOrder.firstIndex { $0 === b.store } ?? 0)
        }
        // Drivers write rows in key order fastest (B-tree locality), so updates and deletes go sorted.
        let updates = Self.inRowOrder(updatedList.values.filter { $0.isUpdated })
        let deletes = Self.inRowOrder(deletedList.values.filter { !$0.inserted })
        batches = try makeBatches(
            inserts: collects ? keyed : inserts, updates: updates, deletes: deletes, startingWith: batches)
        let outcome = try coordinator.commit(batches.map { ($0.store, $0.batch) }, pinInserts: true)
        finishSave(inserts: inserts, updates: updates, deletes: deletes, outcome: outcome)
        if let unsynced = outcome.notDurable, outcome.partialFailure == nil { throw unsynced }
        if let failure = outcome.partialFailure {
            // A conflict in a later store is resolved like one in the first: the rest is retried.
            if let conflict = failure.underlying as? StoreError, conflict.code == .conflict,
                mergePolicy.kind != .error || type(of: mergePolicy) != MergePolicy.self
            {
                throw conflict
            }
            throw failure
        }
    }

    /// Builds the merge conflicts behind a store's `.conflict` error (every changed or deleted
    /// object whose row's version moved or whose row is gone), has the merge policy resolve them,
    /// and makes the objects ready to be saved against the rows as they are now.
    private func resolveStoreConflicts(_ error: StoreError, giveUp: Bool) throws {
        let candidates =
            (updatedList.values.filter { $0.isUpdated } + deletedList.values.filter { !$0.inserted })
            .filter { $0.isAccessible && $0.objectID.persistentStore != nil && !$0.objectID.isTemporaryID }
        var current: [ObjectIdentifier: RowSnapshot] = [:]
        var pending = candidates
        while let store = pending.first?.objectID.persistentStore {
            let here = pending.filter { $0.objectID.persistentStore === store }
            pending.removeAll { $0.objectID.persistentStore === store }
            let rows = try coordinator.freshRows(for: here.map(\.objectID.rowID), in: store)
            for object in here { if let row = rows[object.objectID.rowID] { current[ObjectIdentifier(object)] = row } }
        }
        var conflicts: [MergeConflict] = []
        for object in candidates {
            let now = current[ObjectIdentifier(object)]
            if let now, now.version == object.snapshotVersionIfSaved { continue }
            let base = object.snapshot?.values ?? []
            conflicts.append(
                MergeConflict(
                    sourceObject: object, objectID: object.objectID,
                    changedKeys: object.changedSlots.ascending.map { object.entity.properties[$0].name },
                    cachedSnapshot: object.namedValues(base),
                    persistedSnapshot: now.map { object.namedValues($0.values) },
                    objectSnapshot: object.namedValues(object.values),
                    oldVersionNumber: object.snapshotVersionIfSaved ?? 0,
                    newVersionNumber: now?.version ?? 0))
        }
        guard !conflicts.isEmpty, !giveUp else { throw error }
        do {
            try mergePolicy.resolve(mergeConflicts: conflicts)
        } catch let refused as StoreError where refused.code == .conflict && !refused.mergeConflicts.isEmpty {
            // The policy's error, with the store's own detail kept.
            var combined = refused
            combined.underlying = error
            throw combined
        }
        for conflict in conflicts {
            let object = conflict.sourceObject
            let now = current[ObjectIdentifier(object)]
            if object.deleted {
                guard let now else {
                    // Deleted here and gone there: nothing left to do for it.
                    deletedList.remove(object)
                    markInaccessible(object)
                    continue
                }
                if mergePolicy.kind == .rollback {
                    object.deleted = false
                    deletedList.remove(object)
                    object.values = now.values
                    object.clearChangedSlots()
                    updatedList.remove(object)
                }
                object.snapshot = now
                continue
            }
            settle(object, against: now)
            noteRefreshed(object)
        }
    }

    /// Applies delete rules (cascade, nullify) to objects deleted since the last call; Core Data
    /// does this at the end of each event, Strata at save and when asked.
    ///
    /// An object whose related objects cannot be loaded (a store error) is left unprocessed, so
    /// the next call or save tries it again; the error is kept in ``accessFailure`` and thrown by
    /// the next ``save()``.
    public func processPendingChanges() {
        checkConfinement("processPendingChanges()")
        drainMerges()
        do {
            try applyDeleteRules()
        } catch {
            noteAccessFailure(error)
        }
        postObjectsDidChange()
    }

    /// Applies delete rules to deleted objects not yet processed. An object is marked processed
    /// only once every rule of it ran; when loading its relationships fails, the error is thrown
    /// and the object stays unprocessed (rules already run for it are idempotent: a cascaded
    /// object is deleted once, a nullified inverse removed once).
    func applyDeleteRules() throws {
        // Rules live on relationships: when no registered object has any (deleted objects stay
        // registered until the save), there is nothing to apply and no fault to fire for it.
        guard registered.hasObjectsWithRelationships else { return }
        var queue = deletedList.values.filter { !$0.deleteRulesApplied }
        while let object = queue.popLast() {
            guard !object.deleteRulesApplied else { continue }
            // A deleted object whose row is gone elsewhere has nothing left to relate.
            try fulfillFaultThrowing(object)
            if !object.isAccessible {
                object.deleteRulesApplied = true
                continue
            }
            for slot in object.entity.relationshipSlots {
                // Relationship slots have relationship descriptions.
                let relationship = object.entity.properties[slot].relationship!
                try loadToMany(object, slot: slot)
                let targets = relatedObjects(object, slot)
                switch relationship.deleteRule {
                case .cascade:
                    for target in targets where !target.deleted {
                        delete(target)
                        queue.append(target)
                    }
                case .nullify:
                    guard let inverse = relationship.inverseName else { continue }
                    for target in targets where !target.deleted {
                        if let inverseSlot = target.entity.index(ofProperty: inverse) {
                            try removeInverse(target, inverseSlot, object.objectID.rowID)
                        }
                    }
                case .deny, .noAction:
                    continue
                }
            }
            object.deleteRulesApplied = true
        }
    }

    // MARK: Internals

    func relatedObjects(_ object: ManagedObject, _ slot: Int) -> [ManagedObject] {
        switch object.values.isEmpty ? .null : object.values[slot] {
        case .reference(let id): return self.object(for: id, relatedTo: object).map { [$0] } ?? []
        case .references(let ids): return objects(for: ids, relatedTo: object)
        default: return []
        }
    }

    private func removeInverse(_ target: ManagedObject, _ slot: Int, _ row: RowID) throws {
        try fulfillFaultThrowing(target)
        guard target.isAccessible else { return }
        try loadToMany(target, slot: slot)
        switch target.values[slot] {
        case .reference(let id) where id == row:
            target.values[slot] = .null
            target.markChanged(slot)
        case .references(var ids):
            if let index = ids.firstIndex(of: row) {
                ids.remove(at: index)
                target.values[slot] = .references(ids)
                target.markChanged(slot)
            }
        default:
            break
        }
    }

    func targetStore(for object: ManagedObject) throws -> PersistentStore {
        if let store = object.objectID.persistentStore { return store }
        if !assignedStores.isEmpty, let store = assignedStores[ObjectIdentifier(object)] { return store }
        if let store = defaultStores[object.entity.entityNumber] { return store }
        let candidates = coordinator.stores(holding: object.entity)
        guard let store = candidates.first(where: { !$0.isReadOnly }) ?? candidates.first else {
            throw StoreError(
                .invalidRequest,
                "no attached store holds entity '\(object.entity.name)'; add a store whose configuration includes it")
        }
        defaultStores[object.entity.entityNumber] = store
        return store
    }

    func storedValues(_ object: ManagedObject) -> [StoreValue] {
        Self.storedValues(object.values, object.entity.transientSlots)
    }

    /// `values` with the transient slots `transientSlots` cleared (shared, not copied, when
    /// there are none).
    static func storedValues(_ values: [StoreValue], _ transientSlots: [Int]) -> [StoreValue] {
        var values = values
        for slot in transientSlots { values[slot] = .null }
        return values
    }

    /// `objects` in row-ID order. Objects changed in the order a fetch returned them (the usual
    /// large save) are in that order already: one pass checks it instead of sorting.
    private static func inRowOrder(_ objects: [ManagedObject]) -> [ManagedObject] {
        var previous: RowID?
        for object in objects {
            let row = object.objectID.rowID
            if let previous, row < previous { return objects.sorted { $0.objectID.rowID < $1.objectID.rowID } }
            previous = row
        }
        return objects
    }

    private func makeBatches(
        inserts: [ManagedObject], updates: [ManagedObject], deletes: [ManagedObject],
        startingWith batches: [(store: PersistentStore, batch: ChangeBatch)]
    ) throws -> [(store: PersistentStore, batch: ChangeBatch)] {
        // Batches in first-use order; consecutive objects of one store (the usual case) reuse the
        // last batch without a lookup.
        var batches = batches
        var last = -1
        func add(_ object: ManagedObject, _ body: (inout ChangeBatch) -> Void) throws {
            let store = try targetStore(for: object)
            if last < 0 || batches[last].store !== store {
                last =
                    batches.firstIndex { $0.store === store }
                    ?? {
                        batches.append((store, ChangeBatch()))
                        return batches.count - 1
                    }()
            }
            body(&batches[last].batch)
        }
        for object in inserts {
            // Version 1, the version every inserted row starts at, so the coordinator caches these rows as they are.
            try add(object) {
                $0.inserts.append(RowSnapshot(id: object.objectID.rowID, version: 1, values: storedValues(object)))
            }
        }
        // Updates usually change the same slots of one entity: such runs share one slot list.
        // A batch takes its first update or delete with room for every one left (large saves go
        // to one store), so the lists grow without copying.
        var shared: (entity: ObjectIdentifier, changed: SlotSet, slots: [Int])?
        for (index, object) in updates.enumerated() {
            let slots: [Int]
            if let known = shared, known.entity == ObjectIdentifier(object.entity), known.changed == object.changedSlots
            {
                slots = known.slots
            } else {
                let transient = object.entity.transientSlots
                slots =
                    transient.isEmpty
                    ? object.changedSlots.ascending : object.changedSlots.ascending.filter { !transient.contains($0) }
                shared = (ObjectIdentifier(object.entity), object.changedSlots, slots)
            }
            guard !slots.isEmpty else { continue }
            guard let version = object.snapshotVersionIfSaved else {
                // Setters refuse objects without a saved row (a fault that did not load, a row
                // gone from the store), so this is never reached; never report such a change saved.
                throw StoreError(
                    .notFound,
                    "\(object.entity.name) \(object.objectID) has changes but no saved row to apply them to; refresh it and make the changes again",
                    store: object.objectID.persistentStore?.displayName, objectIDs: [object.objectID])
            }
            try add(object) {
                if $0.updates.isEmpty { $0.updates.reserveCapacity(updates.count - index) }
                $0.updates.append(
                    RowUpdate(
                        id: object.objectID.rowID, expectedVersion: version, values: storedValues(object),
                        changedSlots: slots))
            }
        }
        for (index, object) in deletes.enumerated() {
            // A row already gone from the store has nothing left to delete.
            guard object.isAccessible else { continue }
            guard let version = object.snapshotVersionIfSaved else {
                throw StoreError(
                    .io,
                    "deleted \(object.entity.name) \(object.objectID) was never loaded, so its row version is unknown; save again",
                    store: object.objectID.persistentStore?.displayName, objectIDs: [object.objectID])
            }
            try add(object) {
                if $0.deletes.isEmpty { $0.deletes.reserveCapacity(deletes.count - index) }
                $0.deletes.append(RowDelete(id: object.objectID.rowID, expectedVersion: version))
            }
        }
        return batches
    }

    /// Refuses relationships between objects of different stores (Core Data's
    /// `NSManagedObjectExternalRelationshipError`). Runs before temporary IDs become permanent, while
    /// every reference still resolves to the object it was made with.
    private func checkCrossStore(_ objects: [ManagedObject]) throws {
        var pairs = crossStoreLinks.filter { !$0.0.deleted && !$0.2.deleted }.map { ($0.0, $0.1, $0.2) }
        for object in objects {
            for slot in object.entity.relationshipSlots where object.isSlotChanged(slot) {
                for target in relatedObjects(object, slot) where !target.deleted {
                    pairs.append((object, slot, target))
                }
            }
        }
        for (object, slot, target) in pairs {
            guard !object.values.isEmpty, let property = object.entity.properties[slot].relationship,
                Self.slot(object.values[slot], holds: target.objectID.rowID)
            else { continue }
            let store = try targetStore(for: object)
            let targetStore = try self.targetStore(for: target)
            if targetStore !== store {
                throw StoreError(
                    .crossStore,
                    "\(object.entity.name).\(property.name) relates an object in \(store.displayName) to one in \(targetStore.displayName); relationships between stores are not supported",
                    store: store.displayName, objectIDs: [object.objectID, target.objectID])
            }
        }
    }

    private static func slot(_ value: StoreValue, holds row: RowID) -> Bool {
        switch value {
        case .reference(let id): id == row
        case .references(let ids): ids.contains(row)
        default: false
        }
    }

    /// Marks what the commit wrote as saved: every change when every store committed; after a
    /// partial commit, only the changes of the stores that committed (the rest stay pending).
    private func finishSave(
        inserts: [ManagedObject], updates: [ManagedObject], deletes: [ManagedObject],
        outcome: PersistentStoreCoordinator.CommitOutcome
    ) {
        let whole = outcome.partialFailure == nil
        let results = outcome.results
        func done(_ object: ManagedObject) -> Bool {
            whole || (object.objectID.persistentStore.map(outcome.committed) ?? false)
        }
        let (inserts, updates, deletes) =
            whole ? (inserts, updates, deletes) : (inserts.filter(done), updates.filter(done), deletes.filter(done))
        // Drivers leave out versions that are the expected one plus one (CommitResult): then no
        // object looks its version up.
        let reported = results.values.contains { !$0.versions.isEmpty }
        // A whole save empties every list: their bits are cleared here, on the visit each object
        // gets anyway, and the lists are dropped without another pass when these visits covered
        // all their members.
        let listBits = ObjectList.Kind.inserted.bit | ObjectList.Kind.updated.bit
        for object in [inserts, updates].joined() {
            if whole { object.listMembership &= ~listBits }
            guard let store = object.objectID.persistentStore else { continue }
            let version: RowVersion
            if object.inserted {
                version = 1
            } else {
                let stored = reported ? results[ObjectIdentifier(store)]?.versions[object.objectID.rowID] : nil
                version = stored ?? (object.snapshotVersionIfSaved ?? 0) + 1
            }
            object.snapshot = RowSnapshot(id: object.objectID.rowID, version: version, values: storedValues(object))
            object.clearChangedSlots()
            if object.inserted {
                // The coordinator pinned the inserted rows as it cached them.
                object.pinnedKey = RowCache.Key(store: ObjectIdentifier(store), row: object.objectID.rowID)
                object.inserted = false
            } else {
                notePin(object)
            }
        }
        // Inserted objects deleted before this save never reached a store: they leave with it.
        let dropped = whole ? insertedList.values.filter({ $0.deleted }) : []
        var unpinned: [RowCache.Key] = []
        for object in [deletes, dropped].joined() {
            if whole { object.listMembership = 0 }
            unregister(object)
            if let key = object.pinnedKey { unpinned.append(key) }
            object.pinnedKey = nil
            object.deleted = false
            object.inserted = false
            object.managedObjectContext = nil
        }
        flushPins()
        coordinator.rowCache.unpin(unpinned)
        // Only observers and merging contexts read the IDs: without them, a large save builds no
        // lists of them.
        let saved =
            wantsDidSave
            ? ContextDidSave(
                insertedObjectIDs: inserts.map { $0.objectID }, updatedObjectIDs: updates.map { $0.objectID },
                deletedObjectIDs: deletes.map { $0.objectID })
            : nil
        if whole {
            insertedList.removeAll(bitsCleared: inserts.count + dropped.count == insertedList.count)
            updatedList.removeAll(bitsCleared: updates.count == updatedList.count)
            deletedList.removeAll(bitsCleared: deletes.count + dropped.count == deletedList.count)
            assignedStores = [:]
            crossStoreLinks = []
        } else {
            for object in inserts { insertedList.remove(object) }
            for object in updates { updatedList.remove(object) }
            for object in deletes {
                deletedList.remove(object)
            }
        }
        if registered.hasSubclassObjects { for object in [inserts, updates].joined() { object.didSave() } }
        if let saved {
            postDidSave(saved)
            coordinator.broadcast(saved, from: self)
            for child in children.contexts where child.automaticallyMergesChangesFromParent { child.receive(saved) }
        }
    }
}

/// A save's inserted rows, one change batch per store, collected while the objects get their keys.
struct InsertRows {
    private(set) var batches: [(store: PersistentStore, batch: ChangeBatch)] = []
    private var current = -1
    /// Rows still to come, by the caller's count: a store's batch makes room for all of them
    /// when it starts (one allocation instead of growing by doubling, which left a save of
    /// 100,000 inserts with room for 131,072 rows, 1 MB more at the save's peak).
    private var expected: Int

    /// Collects rows for `expected` inserts.
    init(expecting expected: Int) { self.expected = expected }

    /// Adds `object`'s row, of version 1 (the version every inserted row starts at, so the
    /// coordinator caches the rows as they are), to the batch of `store`.
    mutating func add(_ object: ManagedObject, values: [StoreValue], to store: PersistentStore) {
        if current < 0 || batches[current].store !== store {
            current =
                batches.firstIndex { $0.store === store }
                ?? {
                    var batch = ChangeBatch()
                    batch.inserts.reserveCapacity(max(expected, 1))
                    batches.append((store, batch))
                    return batches.count - 1
                }()
        }
        expected -= 1
        batches[current].batch.inserts.append(RowSnapshot(id: object.objectID.rowID, version: 1, values: values))
    }
}
