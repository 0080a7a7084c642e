import Foundation

// Child contexts (Core Data's `parent`). A child reads through its parent: a fault fires from the
// parent's object when the parent holds it loaded (unsaved changes included), else from the stores;
// a fetch sees the unsaved inserts, changes and deletions of every ancestor. The child's `save()`
// pushes its changes into the parent (validated, delete rules applied) and touches no store; the
// parent saves them later. Each level has its own objects; what crosses between levels is IDs and
// values, always on the executor of the context that owns them (a child calls into its parent with
// `performAndWait`; a parent never waits on a child, so no two contexts wait on each other).

/// An object's state at a context's source (its parent, or the stores).
struct SourceState: Sendable {
    /// The values, with the store row version of the state they came from (0 for unsaved objects).
    var row: RowSnapshot
}

/// A parent's unsaved changes, as a child needs them for a fetch: the closest ancestor's state wins.
struct AncestorChanges: Sendable {
    /// Inserted or changed objects (ID, current values, row version).
    var changed: [(id: ManagedObjectID, row: RowSnapshot, inserted: Bool)] = []
    /// Deleted objects.
    var deleted: Set<ManagedObjectID> = []

    var isEmpty: Bool { changed.isEmpty && deleted.isEmpty }
}

/// A child's save, as the parent takes it.
///
/// `@unchecked Sendable`: `inserted` holds the child's own objects, which are not `Sendable`. The
/// parent reads their IDs, values and changed slots (and changes nothing of them) inside
/// `accept(_:from:)`, which the child runs through the parent's `performAndWait` and waits for: the
/// child's thread touches no object until the parent is done, and the parent keeps no reference to
/// them afterwards (its objects copy the IDs and changed slots and share the value arrays, which
/// are values). Copying each insert's
/// ID and values into a record of its own cost the save a retain and a release of each, and an
/// array built and destroyed, per object. The thread sanitizer run covers a child on another queue
/// saving into its parent (ContainerStressTests).
struct ChildSave: @unchecked Sendable {
    struct Update: Sendable {
        var id: ManagedObjectID
        var values: [StoreValue]
        var changedSlots: [Int]
    }
    /// The child's inserted objects to push, in the child's order.
    var inserted: [ManagedObject] = []
    var updates: [Update] = []
    var deletes: [ManagedObjectID] = []
}

extension ManagedObjectContext {
    // MARK: Reading through the source

    /// The current state of `objects` (saved objects of this context) at its source: the parent's
    /// objects (unsaved changes included) for a child, else the stores' rows. An object its source
    /// does not have is left out.
    func currentValues(for objects: [ManagedObject]) throws -> [ObjectIdentifier: SourceState] {
        var result: [ObjectIdentifier: SourceState] = [:]
        guard !objects.isEmpty else { return result }
        if let parent {
            let ids = objects.map { $0.objectID }
            let states = try parent.performAndWait { try parent.statesForChild(ids) }
            for object in objects {
                if let row = states[object.objectID] { result[ObjectIdentifier(object)] = SourceState(row: row) }
            }
            return result
        }
        var pending = objects.filter { $0.objectID.persistentStore != nil && !$0.objectID.isTemporaryID }
        while let store = pending.first?.objectID.persistentStore {
            let here = pending.filter { $0.objectID.persistentStore === store }
            pending.removeAll { $0.objectID.persistentStore === store }
            let rows = try coordinator.rows(for: here.map(\.objectID.rowID), in: store)
            for object in here {
                if let row = rows[object.objectID.rowID] { result[ObjectIdentifier(object)] = SourceState(row: row) }
            }
        }
        return result
    }

    /// The states of `ids` for a child: this context's loaded objects (with their unsaved
    /// values), else this context's own source. Runs on this context's executor.
    func statesForChild(_ ids: [ManagedObjectID]) throws -> [ManagedObjectID: RowSnapshot] {
        drainMerges()
        var result: [ManagedObjectID: RowSnapshot] = [:]
        var missing: [ManagedObjectID] = []
        for id in ids {
            if let object = registered[id], object.entity === id.entity, !object.faulted {
                guard object.isAccessible else { continue }
                result[id] = RowSnapshot(
                    id: id.rowID, version: object.snapshotVersionIfSaved ?? 0, values: object.values)
            } else if !id.isTemporaryID {
                missing.append(id)
            }
        }
        if missing.isEmpty { return result }
        if let parent {
            let above = try parent.performAndWait { try parent.statesForChild(missing) }
            result.merge(above) { mine, _ in mine }
        } else {
            var pending = missing.filter { $0.persistentStore != nil }
            while let store = pending.first?.persistentStore {
                let here = pending.filter { $0.persistentStore === store }
                pending.removeAll { $0.persistentStore === store }
                let rows = try coordinator.rows(for: here.map(\.rowID), in: store)
                for id in here { if let row = rows[id.rowID] { result[id] = row } }
            }
        }
        return result
    }

    /// The members of a to-many relationship of the object `id` for a child: from this context's
    /// object when it holds it loaded, else from its source. Runs on this context's executor.
    func membersForChild(_ id: ManagedObjectID, slot: Int) throws -> [RowID]? {
        if let object = registered[id], object.entity === id.entity, !object.faulted {
            guard object.isAccessible else { return [] }
            try loadToMany(object, slot: slot)
            if case .references(let members) = object.values[slot] { return members }
            return []
        }
        if id.isTemporaryID { return nil }
        if let parent { return try parent.performAndWait { try parent.membersForChild(id, slot: slot) } }
        guard let store = id.persistentStore else { return nil }
        let request = RelatedRowsRequest(entity: id.entity, slot: slot, sources: [id.rowID])
        return try coordinator.relatedRows(request, in: store)[id.rowID] ?? []
    }

    /// The unsaved changes of this context and its ancestors to objects of `entities` (numbers),
    /// for a child's fetch. Runs on this context's executor.
    func changesForChild(_ entities: Set<Int32>) throws -> AncestorChanges {
        drainMerges()
        var changes =
            try parent.map { parent in try parent.performAndWait { try parent.changesForChild(entities) } }
            ?? AncestorChanges()
        var mine: [ManagedObjectID: Int] = [:]
        func note(_ object: ManagedObject, inserted: Bool) {
            let id = object.objectID
            let row = RowSnapshot(id: id.rowID, version: object.snapshotVersionIfSaved ?? 0, values: object.values)
            changes.deleted.remove(id)
            if let index = mine[id] ?? changes.changed.firstIndex(where: { $0.id == id }) {
                changes.changed[index] = (id, row, inserted || changes.changed[index].inserted)
            } else {
                mine[id] = changes.changed.count
                changes.changed.append((id, row, inserted))
            }
        }
        for object in insertedList.values where !object.deleted && entities.contains(object.entity.entityNumber) {
            note(object, inserted: true)
        }
        for object in updatedList.values
        where object.isUpdated && !object.deleted && entities.contains(object.entity.entityNumber) {
            note(object, inserted: false)
        }
        for object in deletedList.values where entities.contains(object.entity.entityNumber) {
            changes.deleted.insert(object.objectID)
            changes.changed.removeAll { $0.id == object.objectID }
        }
        return changes
    }

    /// This context's copy of an unsaved object of an ancestor (a temporary ID it did not insert),
    /// registered; `nil` when no ancestor holds it.
    func borrowedObject(for id: ManagedObjectID) throws -> ManagedObject? {
        if let existing = registered[id], existing.entity === id.entity { return existing }
        guard let parent else { return nil }
        guard let row = try parent.performAndWait({ try parent.statesForChild([id]) })[id] else { return nil }
        return adopt(id, row: row)
    }

    /// Registers (or refreshes) this child's object for an ancestor's state of `id`.
    @discardableResult
    func adopt(_ id: ManagedObjectID, row: RowSnapshot) -> ManagedObject {
        if let existing = registered[id], existing.entity === id.entity {
            // Unsaved changes of this context win over the ancestor's.
            if existing.faulted || !existing.hasChanges {
                existing.values = row.values
                existing.snapshot = RowSnapshot(id: id.rowID, version: row.version, values: row.values)
                existing.faulted = false
            }
            return existing
        }
        let object = id.entity.managedObjectClass.init(entity: id.entity, insertInto: nil)
        object.objectID = id
        object.managedObjectContext = self
        object.values = row.values
        object.snapshot = RowSnapshot(id: id.rowID, version: row.version, values: row.values)
        if id.isTemporaryID {
            registered.registerBorrowed(object)
        } else {
            register(object, as: id)
        }
        return object
    }

    /// For a child's fetch: its ancestors' unsaved changes to the fetched entities, as this
    /// context's objects (inserted or changed, and the IDs deleted).
    func ancestorChanges(for entities: Set<Int32>) throws -> (changed: [ManagedObject], deleted: Set<ManagedObjectID>) {
        guard let parent else { return ([], []) }
        let changes = try parent.performAndWait { try parent.changesForChild(entities) }
        guard !changes.isEmpty else { return ([], []) }
        var objects: [ManagedObject] = []
        objects.reserveCapacity(changes.changed.count)
        for entry in changes.changed { objects.append(adopt(entry.id, row: entry.row)) }
        return (objects, changes.deleted)
    }
}
