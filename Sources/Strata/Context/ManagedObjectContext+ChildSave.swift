import Foundation

// A child's save pushes its changes into its parent; the parent keeps them as its own unsaved
// changes until it saves. Permanent IDs travel the other way: when a context obtains permanent IDs
// (obtainPermanentIDs, or a save to the stores), every context of the tree that holds objects with
// those temporary IDs takes the permanent ones.

extension ManagedObjectContext {
    /// Saves a child context into its parent: conflicts with changes the parent made since the
    /// child read its objects are resolved by the child's merge policy; then the parent takes the
    /// child's inserts, changes and deletions as its own unsaved changes.
    func saveIntoParent(inserts: [ManagedObject], updates: [ManagedObject], deletes: [ManagedObject]) throws {
        // Parent is set: only children call this.
        let parent = parent!
        try resolveParentConflicts(updates.filter { $0.isUpdated })
        var save = ChildSave()
        save.inserted = inserts
        let changed = updates.filter { $0.isUpdated && !$0.deleted }
        for object in changed {
            save.updates.append(
                .init(id: object.objectID, values: object.values, changedSlots: object.changedSlots.ascending))
        }
        for object in deletes { save.deletes.append(object.objectID) }
        let childSave = save
        try parent.performAndWait { try parent.accept(childSave, from: self) }
        // The parent holds them now: this context's objects match their parent's again. One pass
        // over them: lent to the borrowed table, saved, off the inserted list.
        let insertedBits = ObjectList.Kind.inserted.bit
        let clearsList = inserts.count == insertedList.count
        registered.lend(all: inserts) { object in
            object.inserted = false
            object.takeValuesAsSnapshot(version: 0)
            object.clearChangedSlots()
            if clearsList { object.listMembership &= ~insertedBits }
        }
        for object in changed {
            object.snapshot = RowSnapshot(
                id: object.objectID.rowID, version: object.snapshotVersionIfSaved ?? 0, values: object.values)
            object.clearChangedSlots()
        }
        // Inserted objects deleted before the save never reach the parent; every deleted object is
        // on the deleted list, and these are the ones still marked inserted.
        let dropped = deletedList.values.filter { $0.inserted }
        for object in deletes + dropped {
            unregister(object)
            object.deleted = false
            object.inserted = false
            object.managedObjectContext = nil
        }
        let saved =
            wantsDidSave
            ? ContextDidSave(
                insertedObjectIDs: inserts.map { $0.objectID }, updatedObjectIDs: changed.map { $0.objectID },
                deletedObjectIDs: deletes.map { $0.objectID })
            : nil
        insertedList.removeAll(bitsCleared: clearsList)
        updatedList.removeAll()
        deletedList.removeAll()
        assignedStores = [:]
        crossStoreLinks = []
        if registered.hasSubclassObjects { for object in [inserts, changed].joined() { object.didSave() } }
        if let saved { postDidSave(saved) }
    }

    /// Finds changes the parent made to `objects` since this child read them and resolves them
    /// with the merge policy (as a save to the stores does with rows changed in a store).
    private func resolveParentConflicts(_ objects: [ManagedObject]) throws {
        guard !objects.isEmpty else { return }
        let current = try currentValues(for: objects)
        var conflicts: [MergeConflict] = []
        for object in objects {
            let base = object.snapshot?.values ?? []
            let now = current[ObjectIdentifier(object)]
            if let now, now.row.values == base { continue }
            conflicts.append(
                MergeConflict(
                    sourceObject: object, objectID: object.objectID,
                    changedKeys: object.changedSlots.ascending.map { object.entity.properties[$0].name },
                    cachedSnapshot: object.namedValues(base),
                    persistedSnapshot: now.map { object.namedValues($0.row.values) },
                    objectSnapshot: object.namedValues(object.values),
                    oldVersionNumber: object.snapshotVersionIfSaved ?? 0,
                    newVersionNumber: now?.row.version ?? 0))
        }
        guard !conflicts.isEmpty else { return }
        try mergePolicy.resolve(mergeConflicts: conflicts)
        for conflict in conflicts {
            settle(conflict.sourceObject, against: current[ObjectIdentifier(conflict.sourceObject)]?.row)
        }
    }

    /// After a policy resolved a conflict: the object's base becomes the state it conflicted with,
    /// and what differs from it is what will be saved. A state that is gone (deleted there) wins.
    func settle(_ object: ManagedObject, against current: RowSnapshot?) {
        guard let current else {
            dropDeleted(object)
            return
        }
        var changed = SlotSet()
        for slot in object.entity.properties.indices where slot < current.values.count {
            if object.entity.properties[slot].isTransient {
                if object.isSlotChanged(slot) { changed.insert(slot) }
                continue
            }
            if case .unfetched = current.values[slot] {
                if object.isSlotChanged(slot) { changed.insert(slot) }
                continue
            }
            if object.values[slot] != current.values[slot] { changed.insert(slot) }
        }
        object.snapshot = current
        object.changedSlots = changed
        if changed.isEmpty, !object.deleted {
            updatedList.remove(object)
        } else if !object.inserted {
            updatedList.insert(object)
        }
    }

    /// Takes a child's save as this context's own unsaved changes. Runs on this context's executor.
    func accept(_ save: ChildSave, from child: ManagedObjectContext) throws {
        drainMerges()
        // Load everything first, so that a store error leaves this context as it was.
        var targets: [ManagedObject] = []
        for update in save.updates {
            guard let object = try objectForChild(update.id) else {
                throw StoreError(
                    .notFound,
                    "\(update.id) no longer exists in the parent context; refresh it in the child and save again",
                    objectIDs: [update.id])
            }
            try object.fireFaultThrowing()
            guard object.isAccessible else {
                throw StoreError(
                    .notFound, "\(update.id) was deleted elsewhere; refresh it in the child and save again",
                    objectIDs: [update.id])
            }
            targets.append(object)
        }
        var gone: [ManagedObject] = []
        for id in save.deletes {
            if let object = try objectForChild(id) {
                try object.fireFaultThrowing()
                gone.append(object)
            }
        }
        // Made, collected and registered in one pass over the child's objects, which are out of
        // the processor's caches after the child's inserts: each is read once.
        var made = RegistrationTable.NewObjects(capacity: save.inserted.count)
        // Every object in the child's order, kept from the first with a permanent ID on (the
        // child obtained permanent IDs): they are not registered as new.
        var ordered: [ManagedObject]?
        // Read once: neither changes in the loop but through it (orphans are only removed).
        var hasOrphans = !orphans.isEmpty
        let tracks = tracksObjectChanges
        let insertedBit = ObjectList.Kind.inserted.bit
        // The child's objects are read here while the child waits (ChildSave).
        for index in save.inserted.indices {
            ObjectPrefetch.ahead(save.inserted, index)
            let source = save.inserted[index]
            let id = source.objectID
            if hasOrphans, let orphan = orphans.removeValue(forKey: id) {
                detach(orphan)
                hasOrphans = !orphans.isEmpty
            }
            let entity = id.entity
            // The class's own initializer runs, as for every object a context makes (a second
            // designated initializer would cost subclasses `init(context:)`).
            let object: ManagedObject
            if entity.managedObjectClass == ManagedObject.self {
                // The base class runs no user code: made with the child's ID at once, without a
                // placeholder ID (an anchor allocated and freed per object) or default values.
                registeringID = id
                object = ManagedObject(entity: entity, insertInto: self)
            } else {
                object = entity.managedObjectClass.init(entity: entity, insertInto: nil)
                object.objectID = id
            }
            let isTemporary = id.isTemporaryID
            if isTemporary { made.append(object, of: entity, primaryKey: id.primaryKey) }
            object.values = source.values
            object.context = self
            object.inserted = true
            object.listMembership = insertedBit
            // What the child changed since inserting it, as if the changes were made here.
            object.changedSlots = source.changedSlots
            if !isTemporary, ordered == nil { ordered = made.objects }
            ordered?.append(object)
            if !isTemporary { register(object, as: object.objectID) }
            if tracks { noteInserted(object) }
        }
        // Registered without being retained: `made` holds them until the inserted list takes them
        // over (R1), whole when nothing else is listed.
        registered.registerNew(made)
        insertedList.insertNew(ordered ?? made.objects, bitsSet: true)
        for (update, object) in zip(save.updates, targets) {
            for slot in update.changedSlots where slot < object.values.count {
                object.values[slot] = update.values[slot]
                object.markChanged(slot)
            }
        }
        for object in gone where !object.deleted {
            object.deleted = true
            deletedList.insert(object)
            noteDeleted(object)
        }
        postObjectsDidChange()
        let siblings = children.contexts.filter { $0 !== child && $0.automaticallyMergesChangesFromParent }
        guard !siblings.isEmpty else { return }
        let saved = ContextDidSave(
            insertedObjectIDs: save.inserted.map { $0.objectID }, updatedObjectIDs: save.updates.map(\.id),
            deletedObjectIDs: save.deletes)
        for sibling in siblings { sibling.receive(saved) }
    }

    /// This context's object for an ID a child saved: registered, borrowed from an ancestor, or a
    /// fault for a saved row.
    private func objectForChild(_ id: ManagedObjectID) throws -> ManagedObject? {
        if let object = registered[id], object.entity === id.entity { return object }
        if id.isTemporaryID { return try borrowedObject(for: id) }
        guard id.persistentStore != nil else { return nil }
        return fault(for: id)
    }

    // MARK: Permanent IDs across the tree

    /// Gives this context's objects with temporary IDs in `mapping` their permanent IDs, and
    /// rewrites references to them. Runs on this context's executor.
    func adoptPermanentIDs(_ mapping: [RowID: ManagedObjectID]) {
        guard !mapping.isEmpty else { return }
        var rows: [RowID: RowID] = [:]
        for (old, new) in mapping {
            rows[old] = new.rowID
            let temporary = anchors.id(new.entity, old, nil)
            guard let object = registered[temporary], object.entity === new.entity else { continue }
            registered.removeTemporary(old.primaryKey)
            register(object, as: new)
            object.objectID = new
            if var snapshot = object.snapshot {
                snapshot.id = new.rowID
                object.snapshot = snapshot
            }
        }
        rewriteReferences(rows, inSnapshots: true)
    }

    /// Hands permanent IDs this context obtained to the rest of its tree: ancestors at once (they
    /// may hold the objects as their unsaved ones), descendants on their own executors.
    func propagatePermanentIDs(_ mapping: [RowID: ManagedObjectID]) {
        guard !mapping.isEmpty else { return }
        var ancestor = parent
        while let current = ancestor {
            current.performAndWait { current.adoptPermanentIDs(mapping) }
            ancestor = current.parent
        }
        var root: ManagedObjectContext = self
        while let up = root.parent { root = up }
        root.sendPermanentIDsDown(mapping, skipping: self)
    }

    /// Sends permanent IDs to every descendant except `skipped`'s own (it has them): directly when
    /// the current thread may use the descendant, else through its inbox.
    private func sendPermanentIDsDown(_ mapping: [RowID: ManagedObjectID], skipping skipped: ManagedObjectContext) {
        for child in children.contexts where child !== skipped {
            if child.isOnExecutor {
                child.adoptPermanentIDs(mapping)
                child.sendPermanentIDsDown(mapping, skipping: skipped)
            } else {
                child.mergeInbox.post(ids: mapping)
                if child.concurrencyType == .mainQueue {
                    DispatchQueue.main.async { [weak child] in child?.drainMerges() }
                }
            }
        }
    }
}
