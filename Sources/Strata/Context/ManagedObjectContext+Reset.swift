import Foundation

extension ManagedObjectContext {
    /// Discards every unsaved change: inserted objects leave the context, deleted ones come back,
    /// changed ones return to their saved values. Forgets store errors kept from property access
    /// (``accessFailure``).
    public func rollback() {
        checkConfinement("rollback()")
        for object in insertedList.values {
            fetchedPropertyResults[ObjectIdentifier(object)] = nil
            unregister(object)
            object.inserted = false
            object.deleted = false
            object.managedObjectContext = nil
            noteInvalidated(object)
        }
        for object in Array(updatedList.values) + Array(deletedList.values) where object.isIn(self) {
            object.deleted = false
            object.clearChangedSlots()
            if let snapshot = object.snapshot {
                object.values = snapshot.values
            }
            noteRefreshed(object)
        }
        // Objects touched through inverse maintenance are in updatedList, so every changed
        // object is reverted above.
        insertedList.removeAll()
        updatedList.removeAll()
        deletedList.removeAll()
        assignedStores = [:]
        crossStoreLinks = []
        accessFailures = nil
    }

    /// Forgets every registered object (they must not be used afterwards) and releases their rows
    /// in the row cache; forgets store errors kept from property access.
    public func reset() {
        checkConfinement("reset()")
        let pins = registeredPins()
        for object in registered.values {
            object.managedObjectContext = nil
            object.pinnedKey = nil
        }
        for object in orphans.values { object.managedObjectContext = nil }
        orphans = [:]
        registered.removeAll()
        countAfterSweep = 0
        noteInvalidatedAll()
        insertedList.removeAll()
        updatedList.removeAll()
        deletedList.removeAll()
        assignedStores = [:]
        crossStoreLinks = []
        faultBatches = [:]
        fetchedPropertyResults = [:]
        accessFailures = nil
        coordinator.rowCache.unpin(pins)
        pendingPins = []
    }

    /// Brings an object up to date with its store (Core Data's `refresh(_:mergeChanges:)`).
    ///
    /// The object's row is read from the store past the row cache, and the cache takes it. A row
    /// the store no longer has leaves the cache, and the object becomes inaccessible
    /// (``ManagedObject/isAccessible``; its unsaved changes are dropped). When the row cannot be
    /// read, the object becomes a fault without a saved row (its next access reads the store) and
    /// the error is kept in ``accessFailure``.
    ///
    /// Fetched properties of the object are fetched again when next read.
    ///
    /// - Parameter mergeChanges: When `false`, unsaved changes are dropped and the object becomes a
    ///   fault that reloads on next access. When `true`, the latest saved values are loaded and the
    ///   object's own unsaved changes are applied on top.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        checkConfinement("refresh(_:mergeChanges:)", of: object)
        fetchedPropertyResults[ObjectIdentifier(object)] = nil  // fetched properties are evaluated again on next read
        drainMerges()
        guard object.isIn(self), !object.inserted, object.isAccessible,
            parent != nil || object.objectID.persistentStore != nil
        else { return }
        let fresh: RowSnapshot?
        do {
            if parent != nil {
                // A child refreshes from its parent's object.
                fresh = try currentValues(for: [object])[ObjectIdentifier(object)]?.row
            } else {
                // Checked above: a root context's object here has a store.
                let store = object.objectID.persistentStore!
                fresh = try coordinator.freshRows(for: [object.objectID.rowID], in: store)[object.objectID.rowID]
            }
        } catch {
            noteAccessFailure(error)
            if !mergeChanges || object.faulted {
                turnIntoFault(object, snapshot: nil)
            }
            return
        }
        guard let fresh else {
            // Deleted elsewhere: nothing of it is left to merge with.
            updatedList.remove(object)
            object.clearChangedSlots()
            faultBatches[ObjectIdentifier(object)] = nil
            markInaccessible(object)
            noteDeleted(object)
            return
        }
        if mergeChanges, !object.faulted {
            object.rebase(onto: fresh)
            noteRefreshed(object)
            return
        }
        turnIntoFault(object, snapshot: fresh)
        noteInvalidated(object)
    }

    private func turnIntoFault(_ object: ManagedObject, snapshot: RowSnapshot?) {
        object.clearChangedSlots()
        updatedList.remove(object)
        object.snapshot = snapshot
        object.values = []
        object.faulted = true
    }

    /// Refreshes every registered object without merging (drops unsaved changes of saved objects).
    public func refreshAllObjects() {
        checkConfinement("refreshAllObjects()")
        for object in registered.values where !object.inserted { refresh(object, mergeChanges: false) }
    }
}

extension ManagedObjectContext {
    /// The row-cache keys registered objects hold pins on.
    func registeredPins() -> [RowCache.Key] { registered.values.compactMap(\.pinnedKey) }
}
