import Foundation

// Inverse maintenance. Every public relationship change goes through link/unlink, which change
// both sides; the primitive add/remove/set helpers below change one side only.
extension ManagedObjectContext {
    /// The ID of a row referenced from `owner`'s relationship slot.
    func objectID(for row: RowID, relatedTo owner: ManagedObject) -> ManagedObjectID {
        // Row IDs in slots come from this model: the coordinator checks every reference a store
        // returns, and the context makes the rest.
        let entity = coordinator.managedObjectModel.entity(number: row.entity)!
        if row.isTemporary { return anchors.id(entity, row, nil) }
        if let store = owner.objectID.persistentStore { return anchors.id(entity, row, store) }
        // A new object points at a saved one: the target is registered here, find its store.
        for store in coordinator.stores(holding: entity) {
            let id = anchors.id(entity, row, store)
            if registered[id] != nil { return id }
        }
        return anchors.id(entity, row, coordinator.stores(holding: entity).first)
    }

    /// The object for a row referenced from `owner`, registered (as a fault if new).
    func object(for row: RowID, relatedTo owner: ManagedObject) -> ManagedObject? {
        let id = objectID(for: row, relatedTo: owner)
        if let existing = registered[id] { return existing.entity === id.entity ? existing : nil }
        guard id.persistentStore != nil, !id.isTemporaryID else { return nil }
        return fault(for: id)
    }

    /// The objects for a to-many relationship's members of `owner`, registered; members new to
    /// this context become faults that fire together (one store read for all of them, not one
    /// per member), as the faults of one fetch do.
    func objects(for rows: [RowID], relatedTo owner: ManagedObject) -> [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(rows.count)
        var newFaults: [ManagedObject] = []
        // The members' IDs share an anchor while their entity stays the same (a member's ID
        // depends only on its entity and the owner's store when both are saved): the model and
        // the anchors are asked once per run of one entity, not once per member.
        let store = owner.objectID.persistentStore
        var anchor: ObjectIDAnchor?
        for row in rows {
            let id: ManagedObjectID
            if store != nil, !row.isTemporary, let last = anchor, last.rowEntity == row.entity {
                id = ManagedObjectID(anchor: last, primaryKey: row.primaryKey)
            } else {
                id = objectID(for: row, relatedTo: owner)
                anchor = store != nil && !row.isTemporary ? id.anchor : nil
            }
            if let existing = registered[id] {
                if existing.entity === id.entity { objects.append(existing) }
                continue
            }
            guard id.persistentStore != nil, !id.isTemporaryID else { continue }
            let object = fault(for: id)
            objects.append(object)
            newFaults.append(object)
        }
        if newFaults.count > 1 {
            let batch = FaultBatch(ids: newFaults.map { $0.objectID }, size: Self.memberFaultBatch)
            for object in newFaults { faultBatches[ObjectIdentifier(object)] = batch }
        }
        return objects
    }

    /// Members of one to-many relationship fulfilled together at most (a chunk of their faults).
    static let memberFaultBatch = 500

    /// Fires a fault: from the object's stashed snapshot, the row cache, or the driver, loading the
    /// other faults of the same fetch in one call. A row that no longer exists leaves the object
    /// inaccessible: its values read as `nil` and changes are refused (Core Data's
    /// `shouldDeleteInaccessibleFaults`).
    ///
    /// - Throws: The store's error; every object of the batch then stays a fault, and the next
    ///   access tries again.
    func fulfillFaultThrowing(_ object: ManagedObject) throws {
        guard object.faulted else { return }
        if let row = object.snapshot, stalenessInterval < 0 || parent != nil {
            object.fulfill(from: row)
            return
        }
        guard let store = object.objectID.persistentStore else {
            // A temporary ID this context never inserted: nothing can fill it.
            markInaccessible(object)
            return
        }
        var batch = [object.objectID]
        var prefetching: [String] = []
        var caching = true
        if let faults = faultBatches[ObjectIdentifier(object)], let position = faults.index[object.objectID] {
            let size = faults.size
            let start = (position / size) * size
            batch = Array(faults.ids[start..<min(start + size, faults.ids.count)])
            prefetching = faults.prefetching
            caching = faults.cachesRows
        }
        let wanted = batch.filter { id in
            id.persistentStore === store && (registered[id]?.faulted ?? false)
                && (stalenessInterval >= 0 || !(registered[id]?.hasSnapshot ?? false))
        }
        if parent != nil {
            // A child's faults fire from its parent's objects (unsaved changes included).
            let objects = wanted.compactMap { registered[$0] }
            let states = try currentValues(for: objects)
            for target in objects {
                faultBatches[ObjectIdentifier(target)] = nil
                if let state = states[ObjectIdentifier(target)] {
                    target.fulfill(from: state.row)
                } else {
                    markInaccessible(target)
                }
            }
            return
        }
        let rows = try coordinator.rows(
            for: wanted.map(\.rowID), in: store, maxAge: stalenessInterval, caching: caching)
        var loaded: [ManagedObject] = []
        for id in wanted {
            guard let target = registered[id] else { continue }
            faultBatches[ObjectIdentifier(target)] = nil
            if let row = rows[id.rowID] {
                target.fulfill(from: row)
                notePin(target)
                loaded.append(target)
            } else {
                markInaccessible(target)
            }
        }
        flushPins()
        // A batched fetch's prefetching happens chunk by chunk, as the chunks load.
        if !prefetching.isEmpty { try prefetch(prefetching, of: loaded) }
    }

    /// Marks an object whose row no store holds: loaded, every value `nil` (to-many empty).
    func markInaccessible(_ object: ManagedObject) {
        object.values = object.entity.properties.map { $0.relationship?.isToMany == true ? .references([]) : .null }
        object.snapshot = nil
        object.faulted = false
        object.inaccessible = true
    }

    /// Loads the members of an unfetched to-many slot (and records them in the snapshot too, so
    /// change tracking compares against them).
    ///
    /// - Throws: The store's error; the slot stays unfetched.
    func loadToMany(_ object: ManagedObject, slot: Int) throws {
        guard !object.values.isEmpty, case .unfetched = object.values[slot] else { return }
        let members: [RowID]
        if let parent {
            // A child reads the members its parent holds (unsaved changes included).
            let id = object.objectID
            members = try parent.performAndWait { try parent.membersForChild(id, slot: slot) } ?? []
        } else if let store = object.objectID.persistentStore {
            // As in Core Data, firing a to-many fault reads the members' rows too: walking them
            // then costs no fault (and no query) per member.
            let request = RelatedRowsRequest(entity: object.entity, slot: slot, sources: [object.objectID.rowID])
            let awakening: [ManagedObject]
            (members, awakening) = try coordinator.relatedRowsWithDestinations(request, in: store) { related, read in
                (related.members[object.objectID.rowID] ?? [], registerMembers(&related.rows, in: store, read: read))
            }
            for member in awakening { member.awakeFromFetch() }
        } else {
            members = []
        }
        object.values[slot] = .references(members)
        object.snapshot?.values[slot] = .references(members)
    }

    /// Registers the rows of a to-many relationship's members, read by `read`, as loaded objects
    /// (filling faults; loaded objects keep their values) and caches the rows, pinning those the
    /// objects hold, as a fetch's rows are (``materialize(_:_:asFault:refreshing:into:reserving:read:)``);
    /// returns the objects of subclasses whose values were loaded, for the caller to awake once the
    /// read is over.
    func registerMembers(_ rows: inout [RowSnapshot], in store: PersistentStore, read: RowCache.Read) -> [ManagedObject]
    {
        guard !rows.isEmpty else { return [] }
        var state = Materializing()
        state.objects.reserveCapacity(rows.count)
        // The tables are not reserved exactly: members arrive a relationship at a time, and
        // tables grown by exactly each one's rows would be copied for every to-many fault fired.
        materialize(&rows, store, asFault: false, refreshing: false, into: &state, reserving: false, read: read)
        return state.awakening
    }

    /// Makes the object whose relationship changes ready: loaded, accessible, the slot's members
    /// loaded. Throws before anything changed.
    private func prepare(_ object: ManagedObject, _ slot: Int) throws {
        try object.checkChangeable(object.entity.properties[slot].name)
        try loadToMany(object, slot: slot)
    }

    /// Makes an object on the other side of a change ready, as ``prepare(_:_:)``; one whose row is
    /// gone is left alone (there is nothing of it left to change).
    private func prepareOther(_ object: ManagedObject, _ slot: Int) throws {
        try fulfillFaultThrowing(object)
        guard object.isAccessible, !object.faulted else { return }
        try loadToMany(object, slot: slot)
    }

    private func inverseSlot(of object: ManagedObject, _ slot: Int, target: ManagedObject) -> Int? {
        guard let inverse = object.entity.properties[slot].relationship?.inverseName else { return nil }
        return target.entity.index(ofProperty: inverse)
    }

    // MARK: One-side primitives (on prepared objects; objects whose row is gone are skipped)

    private func primitiveAdd(_ object: ManagedObject, _ slot: Int, _ row: RowID) {
        guard object.isAccessible, !object.values.isEmpty, case .references(var ids) = object.values[slot] else {
            return
        }
        guard !ids.contains(row) else { return }
        ids.append(row)
        object.values[slot] = .references(ids)
        object.markChanged(slot)
    }

    private func primitiveRemove(_ object: ManagedObject, _ slot: Int, _ row: RowID) {
        guard object.isAccessible, !object.values.isEmpty else { return }
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
        guard object.isAccessible, !object.values.isEmpty else { return }
        object.values[slot] = row.map(StoreValue.reference) ?? .null
        object.markChanged(slot)
    }

    private func checkSameContext(_ object: ManagedObject, _ target: ManagedObject) {
        if !target.isIn(self) || !object.isIn(self) {
            // Misuse no valid program commits: relating objects of different contexts.
            preconditionFailure("cannot relate \(object.entity.name) and \(target.entity.name) from different contexts")
        }
    }

    // MARK: Both sides

    /// Loads everything ``link(_:slot:to:)`` changes, so that the link itself cannot fail half way.
    private func prepareLink(_ object: ManagedObject, slot: Int, to target: ManagedObject) throws {
        try prepare(object, slot)
        // Only relationship slots reach here.
        let relationship = object.entity.properties[slot].relationship!
        if !relationship.isToMany, case .reference(let old) = object.values[slot], old != target.objectID.rowID,
            let previous = self.object(for: old, relatedTo: object),
            let slotOfPrevious = inverseSlot(of: object, slot, target: previous)
        {
            try prepareOther(previous, slotOfPrevious)
        }
        guard let inverse = inverseSlot(of: object, slot, target: target) else { return }
        try prepareOther(target, inverse)
        if target.isAccessible, !target.values.isEmpty,
            !(target.entity.properties[inverse].relationship?.isToMany ?? true),
            case .reference(let oldOwner) = target.values[inverse], oldOwner != object.objectID.rowID,
            let previous = self.object(for: oldOwner, relatedTo: target),
            let previousSlot = previous.entity.index(ofProperty: relationship.name)
        {
            try prepareOther(previous, previousSlot)
        }
    }

    /// Adds `target` to `object`'s relationship at `slot` (replacing a to-one), and `object` to
    /// the inverse, detaching `target` from a previous owner when the inverse is to-one.
    ///
    /// - Throws: The store's error when an object involved cannot be loaded; nothing changed then.
    func link(_ object: ManagedObject, slot: Int, to target: ManagedObject) throws {
        checkSameContext(object, target)
        try prepareLink(object, slot: slot, to: target)
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
            if case .reference(let old) = object.values[slot], old != target.objectID.rowID,
                let previous = self.object(for: old, relatedTo: object)
            {
                unlinkPrepared(object, slot: slot, from: previous)
            }
            primitiveSet(object, slot, target.objectID.rowID)
        }
        guard let inverse = inverseSlot(of: object, slot, target: target) else { return }
        // inverseSlot returns relationship slots only.
        let inverseRelationship = target.entity.properties[inverse].relationship!
        if inverseRelationship.isToMany {
            primitiveAdd(target, inverse, object.objectID.rowID)
        } else {
            if target.isAccessible, !target.values.isEmpty, case .reference(let oldOwner) = target.values[inverse],
                oldOwner != object.objectID.rowID, let previous = self.object(for: oldOwner, relatedTo: target)
            {
                if let previousSlot = previous.entity.index(ofProperty: relationship.name) {
                    primitiveRemove(previous, previousSlot, target.objectID.rowID)
                }
            }
            primitiveSet(target, inverse, object.objectID.rowID)
        }
    }

    /// Removes `target` from `object`'s relationship at `slot`, and `object` from the inverse.
    ///
    /// - Throws: The store's error when an object involved cannot be loaded; nothing changed then.
    func unlink(_ object: ManagedObject, slot: Int, from target: ManagedObject) throws {
        try prepare(object, slot)
        if let inverse = inverseSlot(of: object, slot, target: target) { try prepareOther(target, inverse) }
        unlinkPrepared(object, slot: slot, from: target)
    }

    private func unlinkPrepared(_ object: ManagedObject, slot: Int, from target: ManagedObject) {
        primitiveRemove(object, slot, target.objectID.rowID)
        if let inverse = inverseSlot(of: object, slot, target: target) {
            primitiveRemove(target, inverse, object.objectID.rowID)
        }
    }

    /// Sets a to-one relationship (both sides).
    func setToOne(_ object: ManagedObject, slot: Int, to target: ManagedObject?) throws {
        try prepare(object, slot)
        if let target {
            try link(object, slot: slot, to: target)
        } else if case .reference(let old) = object.values[slot],
            let previous = self.object(for: old, relatedTo: object)
        {
            try unlink(object, slot: slot, from: previous)
        }
    }

    /// Replaces a to-many relationship's members (both sides); ordered relationships take the
    /// order of `targets`.
    ///
    /// - Throws: The store's error when an object involved cannot be loaded; nothing changed then.
    func replaceToMany(_ object: ManagedObject, slot: Int, with targets: [ManagedObject]) throws {
        try prepare(object, slot)
        guard case .references(let current) = object.values[slot] else { return }
        let wanted = Set(targets.map(\.objectID.rowID))
        let leaving = current.filter { !wanted.contains($0) }.compactMap { self.object(for: $0, relatedTo: object) }
        // Everything first, so the replacement cannot stop half way.
        for previous in leaving {
            if let inverse = inverseSlot(of: object, slot, target: previous) { try prepareOther(previous, inverse) }
        }
        for target in targets {
            checkSameContext(object, target)
            try prepareLink(object, slot: slot, to: target)
        }
        for previous in leaving { unlinkPrepared(object, slot: slot, from: previous) }
        for target in targets { try link(object, slot: slot, to: target) }
        let ordered = targets.map(\.objectID.rowID)
        if object.values[slot] != .references(ordered) {
            object.values[slot] = .references(ordered)
            object.markChanged(slot)
        }
    }

    /// Rewrites relationship slots after temporary IDs became permanent; with `inSnapshots`, the
    /// saved states too (a child's saved states may refer to its parent's unsaved objects).
    func rewriteReferences(_ mapping: [RowID: RowID], inSnapshots: Bool = false) {
        // Only objects of entities with relationships hold references.
        guard !mapping.isEmpty, registered.hasObjectsWithRelationships else { return }
        func rewrite(_ values: inout [StoreValue], _ slots: [Int]) {
            for slot in slots where slot < values.count {
                switch values[slot] {
                case .reference(let id):
                    if let new = mapping[id] { values[slot] = .reference(new) }
                case .references(let ids):
                    if ids.contains(where: { mapping[$0] != nil }) {
                        values[slot] = .references(ids.map { mapping[$0] ?? $0 })
                    }
                default:
                    break
                }
            }
        }
        registered.forEachObject { object in
            guard !object.faulted, !object.entity.relationshipSlots.isEmpty else { return }
            rewrite(&object.values, object.entity.relationshipSlots)
            if inSnapshots, var snapshot = object.snapshot {
                rewrite(&snapshot.values, object.entity.relationshipSlots)
                object.snapshot = snapshot
            }
        }
    }
}
