import Foundation

// Inverse maintenance. Every public relationship change goes through link/unlink, which change
// both sides; the primitive add/remove/set helpers below change one side only.
extension ManagedObjectContext {
    /// The ID of a row referenced from `owner`'s relationship slot.
    func objectID(for row: RowID, relatedTo owner: ManagedObject) -> ManagedObjectID {
        // Row IDs in slots come from this model.
        let entity = coordinator.managedObjectModel.entity(number: row.entity)!
        if row.isTemporary { return ManagedObjectID(entity: entity, rowID: row, store: nil) }
        if let store = owner.objectID.persistentStore {
            return ManagedObjectID(entity: entity, rowID: row, store: store)
        }
        // A new object points at a saved one: the target is registered here, find its store.
        for store in coordinator.stores(holding: entity) {
            let id = ManagedObjectID(entity: entity, rowID: row, store: store)
            if registered[id] != nil { return id }
        }
        return ManagedObjectID(entity: entity, rowID: row, store: coordinator.stores(holding: entity).first)
    }

    /// The object for a row referenced from `owner`, registered (as a fault if new).
    func object(for row: RowID, relatedTo owner: ManagedObject) -> ManagedObject? {
        let id = objectID(for: row, relatedTo: owner)
        if let existing = registered[id] { return existing }
        guard id.persistentStore != nil else { return nil }
        return object(with: id)
    }

    /// Fires a fault: from the object's stashed snapshot, the row cache, or the driver, loading the
    /// other faults of the same fetch in one call. A row that no longer exists leaves the object
    /// empty (Core Data's `shouldDeleteInaccessibleFaults`).
    func fulfillFault(_ object: ManagedObject) {
        if let row = object.snapshot {
            object.fulfill(from: row)
            return
        }
        guard let store = object.objectID.persistentStore else { return }
        var batch = [object.objectID]
        if let faults = faultBatches[ObjectIdentifier(object)], let position = faults.index[object.objectID] {
            let size = faults.size
            let start = (position / size) * size
            batch = Array(faults.ids[start..<min(start + size, faults.ids.count)])
        }
        let wanted = batch.filter { id in
            id.persistentStore === store && (registered[id]?.faulted ?? false) && !(registered[id]?.hasSnapshot ?? false)
        }
        let rows = (try? coordinator.rows(for: wanted.map(\.rowID), in: store)) ?? [:]
        for id in wanted {
            guard let target = registered[id] else { continue }
            faultBatches[ObjectIdentifier(target)] = nil
            if let row = rows[id.rowID] {
                target.fulfill(from: row)
                notePin(target)
            } else {
                target.values = target.entity.properties.map { $0.relationship?.isToMany == true ? .references([]) : .null }
                target.faulted = false
            }
        }
        flushPins()
    }

    /// Loads the members of an unfetched to-many slot (and records them in the snapshot too, so
    /// change tracking compares against them).
    func loadToMany(_ object: ManagedObject, slot: Int) throws {
        guard case .unfetched = object.values[slot] else { return }
        guard let store = object.objectID.persistentStore else {
            object.values[slot] = .references([])
            return
        }
        let request = RelatedRowsRequest(entity: object.entity, slot: slot, sources: [object.objectID.rowID])
        let members = try coordinator.relatedRows(request, in: store)[object.objectID.rowID] ?? []
        object.values[slot] = .references(members)
        object.snapshot?.values[slot] = .references(members)
    }

    private func prepare(_ object: ManagedObject, _ slot: Int) {
        object.fireFault()
        try? loadToMany(object, slot: slot)
    }

    private func inverseSlot(of object: ManagedObject, _ slot: Int, target: ManagedObject) -> Int? {
        guard let inverse = object.entity.properties[slot].relationship?.inverseName else { return nil }
        return target.entity.index(ofProperty: inverse)
    }

    // MARK: One-side primitives

    private func primitiveAdd(_ object: ManagedObject, _ slot: Int, _ row: RowID) {
        prepare(object, slot)
        guard case .references(var ids) = object.values[slot] else { return }
        guard !ids.contains(row) else { return }
        ids.append(row)
        object.values[slot] = .references(ids)
        object.markChanged(slot)
    }

    private func primitiveRemove(_ object: ManagedObject, _ slot: Int, _ row: RowID) {
        prepare(object, slot)
        switch object.values[slot] {
        case .references(var ids):
            guard let index = ids.firstIndex(of: row) else { return }
            ids.remove(at: index)
            object.values[slot] = .references(ids)
            object.markChanged(slot)
        case .reference(let current) where current == row:
            object.values[slot] = .null
            object.markChanged(slot)
        default:
            return
        }
    }

    private func primitiveSet(_ object: ManagedObject, _ slot: Int, _ row: RowID?) {
        prepare(object, slot)
        object.values[slot] = row.map(StoreValue.reference) ?? .null
        object.markChanged(slot)
    }

    private func checkSameContext(_ object: ManagedObject, _ target: ManagedObject) {
        if target.managedObjectContext !== self || object.managedObjectContext !== self {
            // Misuse no valid program commits: relating objects of different contexts.
            preconditionFailure("cannot relate \(object.entity.name) and \(target.entity.name) from different contexts")
        }
    }

    // MARK: Both sides

    /// Adds `target` to `object`'s relationship at `slot` (replacing a to-one), and `object` to
    /// the inverse, detaching `target` from a previous owner when the inverse is to-one.
    func link(_ object: ManagedObject, slot: Int, to target: ManagedObject) {
        checkSameContext(object, target)
        if let a = object.objectID.persistentStore ?? assignedStores[ObjectIdentifier(object)],
            let b = target.objectID.persistentStore ?? assignedStores[ObjectIdentifier(target)], a !== b
        {
            crossStoreLinks.append((object, slot, target))
        }
        // Only relationship slots reach here.
        let relationship = object.entity.properties[slot].relationship!
        if relationship.isToMany {
            primitiveAdd(object, slot, target.objectID.rowID)
        } else {
            prepare(object, slot)
            if case .reference(let old) = object.values[slot], old != target.objectID.rowID,
                let previous = self.object(for: old, relatedTo: object)
            {
                unlink(object, slot: slot, from: previous)
            }
            primitiveSet(object, slot, target.objectID.rowID)
        }
        guard let inverse = inverseSlot(of: object, slot, target: target) else { return }
        // inverseSlot returns relationship slots only.
        let inverseRelationship = target.entity.properties[inverse].relationship!
        if inverseRelationship.isToMany {
            primitiveAdd(target, inverse, object.objectID.rowID)
        } else {
            prepare(target, inverse)
            if case .reference(let oldOwner) = target.values[inverse], oldOwner != object.objectID.rowID,
                let previous = self.object(for: oldOwner, relatedTo: target)
            {
                if let previousSlot = previous.entity.index(ofProperty: relationship.name) {
                    primitiveRemove(previous, previousSlot, target.objectID.rowID)
                }
            }
            primitiveSet(target, inverse, object.objectID.rowID)
        }
    }

    /// Removes `target` from `object`'s relationship at `slot`, and `object` from the inverse.
    func unlink(_ object: ManagedObject, slot: Int, from target: ManagedObject) {
        primitiveRemove(object, slot, target.objectID.rowID)
        if let inverse = inverseSlot(of: object, slot, target: target) {
            primitiveRemove(target, inverse, object.objectID.rowID)
        }
    }

    /// Sets a to-one relationship (both sides).
    func setToOne(_ object: ManagedObject, slot: Int, to target: ManagedObject?) {
        prepare(object, slot)
        if let target {
            link(object, slot: slot, to: target)
        } else if case .reference(let old) = object.values[slot], let previous = self.object(for: old, relatedTo: object) {
            unlink(object, slot: slot, from: previous)
        }
    }

    /// Replaces a to-many relationship's members (both sides); ordered relationships take the
    /// order of `targets`.
    func replaceToMany(_ object: ManagedObject, slot: Int, with targets: [ManagedObject]) throws {
        prepare(object, slot)
        guard case .references(let current) = object.values[slot] else { return }
        let wanted = Set(targets.map(\.objectID.rowID))
        for old in current where !wanted.contains(old) {
            if let previous = self.object(for: old, relatedTo: object) { unlink(object, slot: slot, from: previous) }
        }
        for target in targets { link(object, slot: slot, to: target) }
        let ordered = targets.map(\.objectID.rowID)
        if object.values[slot] != .references(ordered) {
            object.values[slot] = .references(ordered)
            object.markChanged(slot)
        }
    }

    /// Rewrites relationship slots after temporary IDs became permanent.
    func rewriteReferences(_ mapping: [RowID: RowID]) {
        // Only objects of entities with relationships hold references.
        guard !mapping.isEmpty, registered.hasObjectsWithRelationships else { return }
        registered.forEachObject { object in
            guard !object.faulted, !object.entity.relationshipSlots.isEmpty else { return }
            for slot in object.entity.relationshipSlots {
                switch object.values[slot] {
                case .reference(let id):
                    if let new = mapping[id] { object.values[slot] = .reference(new) }
                case .references(let ids):
                    if ids.contains(where: { mapping[$0] != nil }) {
                        object.values[slot] = .references(ids.map { mapping[$0] ?? $0 })
                    }
                default:
                    break
                }
            }
        }
    }
}
