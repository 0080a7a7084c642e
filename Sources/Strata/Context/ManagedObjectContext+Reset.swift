import Foundation

extension ManagedObjectContext {
    /// Discards every unsaved change: inserted objects leave the context, deleted ones come back,
    /// changed ones return to their saved values.
    public func rollback() {
        for object in insertedObjects_.values {
            registered[object.objectID] = nil
            object.inserted = false
            object.deleted = false
            object.managedObjectContext = nil
        }
        for object in Array(updatedObjects_.values) + Array(deletedObjects_.values) where object.managedObjectContext === self {
            object.deleted = false
            object.changedSlots.removeAll()
            if let snapshot = object.snapshot {
                object.values = snapshot.values
            }
        }
        // Objects touched through inverse maintenance are in updatedObjects_, so every changed
        // object is reverted above.
        insertedObjects_.removeAll()
        updatedObjects_.removeAll()
        deletedObjects_.removeAll()
        deleteRulesApplied = []
        assignedStores = [:]
        crossStoreLinks = []
    }

    /// Forgets every registered object (they must not be used afterwards) and releases their rows
    /// in the row cache.
    public func reset() {
        let pins = registeredPins()
        for object in registered.values {
            object.managedObjectContext = nil
            object.pinnedKey = nil
        }
        registered.removeAll()
        insertedObjects_.removeAll()
        updatedObjects_.removeAll()
        deletedObjects_.removeAll()
        deleteRulesApplied = []
        assignedStores = [:]
        crossStoreLinks = []
        faultBatches = [:]
        coordinator.rowCache.unpin(pins)
        pendingPins = []
    }

    /// Brings an object up to date with its store (Core Data's `refresh(_:mergeChanges:)`).
    ///
    /// - Parameter mergeChanges: When `false`, unsaved changes are dropped and the object becomes a
    ///   fault that reloads on next access. When `true`, the latest saved values are loaded and the
    ///   object's own unsaved changes are applied on top.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard object.managedObjectContext === self, !object.inserted,
            let store = object.objectID.persistentStore
        else { return }
        let fresh = try? store.read { try store.driver.rows(for: [object.objectID.rowID]) }.first
        if let fresh { coordinator.rowCache.store([fresh], in: ObjectIdentifier(store)) }
        if mergeChanges, !object.faulted {
            let mine = object.changedSlots.map { ($0, object.values[$0]) }
            if let fresh {
                object.values = fresh.values
                object.snapshot = fresh
            }
            for (slot, value) in mine { object.values[slot] = value }
            return
        }
        object.changedSlots.removeAll()
        updatedObjects_.remove(object)
        object.snapshot = fresh
        object.values = []
        object.faulted = true
    }

    /// Refreshes every registered object without merging (drops unsaved changes of saved objects).
    public func refreshAllObjects() {
        for object in registered.values where !object.inserted { refresh(object, mergeChanges: false) }
    }
}

extension ManagedObjectContext {
    /// The row-cache keys registered objects hold pins on.
    func registeredPins() -> [RowCache.Key] { registered.values.compactMap(\.pinnedKey) }
}
