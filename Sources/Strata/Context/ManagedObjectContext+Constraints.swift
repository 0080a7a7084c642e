import Foundation

// Uniqueness constraints at save: unsaved objects that share a constraint's values with each other
// or with a stored row are conflicts, resolved by the merge policy (Core Data's constraint
// conflicts). Under object-trump a new object whose values match a stored row takes that row over:
// the save updates the row instead of inserting a second one (an upsert).

extension ManagedObjectContext {
    /// The constraint conflicts among `objects` (inserted and changed, not deleted) and against
    /// each store's saved rows.
    func constraintConflicts(_ objects: [ManagedObject]) throws -> [ConstraintConflict] {
        var groups:
            [String: (constraint: [String], values: [StoreValue], objects: [ManagedObject], database: ManagedObjectID?)] =
                [:]
        var order: [String] = []
        // Objects come in runs of one entity: its constraints are looked up once per run.
        var last: (entity: EntityDescription, constraints: [[String]])?
        for object in objects where !object.deleted && object.isIn(self) {
            if last?.entity !== object.entity { last = (object.entity, constraints(of: object.entity)) }
            // Set just above.
            for constraint in last!.constraints {
                let values = constraint.map { name in
                    object.entity.index(ofProperty: name).map { object.values[$0] } ?? .null
                }
                if values.contains(where: \.isNull) { continue }
                let key = "\(constraintOwner(object.entity, constraint))|\(constraint)|\(values)"
                if groups[key] == nil {
                    groups[key] = (constraint, values, [], try savedObject(matching: constraint, values, like: object))
                    order.append(key)
                }
                if !(groups[key]?.objects.contains { $0 === object } ?? false) { groups[key]?.objects.append(object) }
            }
        }
        var conflicts: [ConstraintConflict] = []
        for key in order {
            // Every key in `order` has a group.
            let group = groups[key]!
            let clashes =
                group.objects.count > 1
                || group.database.map { id in !group.objects.contains { $0.objectID == id } } ?? false
            guard clashes else { continue }
            let database = group.database.map { registeredObject(for: $0) ?? fault(for: $0) }
            var named: [String: StoreValue] = [:]
            for (name, value) in zip(group.constraint, group.values) { named[name] = value }
            conflicts.append(
                ConstraintConflict(
                    constraint: group.constraint, constraintValues: named, conflictingObjects: group.objects,
                    databaseObject: database, databaseSnapshot: try database.map(databaseSnapshot)))
        }
        return conflicts
    }

    private func databaseSnapshot(_ object: ManagedObject) throws -> [String: StoreValue] {
        try object.fireFaultThrowing()
        return object.namedValues(object.snapshot?.values ?? object.values)
    }

    /// The uniqueness failures a list of conflicts stands for, for a ``ObjectValidationError``.
    func uniquenessFailures(_ conflicts: [ConstraintConflict]) -> [ObjectValidationError.Failure] {
        conflicts.flatMap { conflict in
            // Among unsaved objects only, the first one holds the values and the others clash with it.
            (conflict.databaseObject == nil
                ? Array(conflict.conflictingObjects.dropFirst()) : conflict.conflictingObjects).map { object in
                    ObjectValidationError.Failure(
                        objectID: object.objectID, entity: object.entity.name,
                        property: conflict.constraint.joined(separator: ","),
                        code: .uniqueConstraint,
                        message:
                            "unique constraint (\(conflict.constraint.joined(separator: ", "))) violated: \(conflict.constraint.map { conflict.constraintValues[$0]?.displayText ?? "nil" }.joined(separator: ", ")) is already used by \(conflict.databaseObject.map { "\($0.objectID)" } ?? "another unsaved object")"
                    )
                }
        }
    }

    /// Applies a built-in policy's resolution of one constraint conflict (see
    /// ``MergePolicy/resolve(constraintConflicts:)``).
    func resolveBuiltIn(_ conflict: ConstraintConflict, kind: MergePolicy.Kind) throws {
        let objects = conflict.conflictingObjects.filter { $0.isIn(self) && !$0.deleted }
        guard !objects.isEmpty else { return }
        let database = conflict.databaseObject
        switch kind {
        case .error:
            return
        case .mergeByPropertyObjectTrump, .overwrite:
            // The newest unsaved object wins.
            // `objects` is not empty.
            let winner = objects.last!
            for loser in objects.dropLast() { discard(loser) }
            if let database, database !== winner {
                if winner.inserted { try takeOver(database, by: winner, keeping: kind == .overwrite ? .all : .changed) }
            }
        case .mergeByPropertyStoreTrump, .rollback:
            if let database, database.isIn(self) {
                let first = objects.first { $0.inserted && $0 !== database }
                for object in objects where object !== first && object !== database { discard(object) }
                if let first { try takeOver(database, by: first, keeping: .none) }
            } else {
                for loser in objects.dropFirst() { discard(loser) }
            }
        }
    }

    /// Which of its own values an object keeps when it takes over a stored row.
    enum TakeOverValues { case all, changed, none }

    /// An unsaved object takes over the stored row `database` stands for: it gets the row's ID,
    /// the row becomes its saved state, and the values it keeps are saved as an update.
    private func takeOver(_ database: ManagedObject, by object: ManagedObject, keeping kept: TakeOverValues) throws {
        try database.fireFaultThrowing()
        guard let row = database.snapshot, database.isAccessible else { return }
        let newID = database.objectID
        let oldRow = object.objectID.rowID
        if database !== object {
            unregister(database)
            detach(database)
        }
        // Out of the unsaved tables before it leaves the inserted list (R1).
        unregister(object)
        insertedList.remove(object)
        object.inserted = false
        object.objectID = newID
        register(object, as: newID)
        var changed = SlotSet()
        for slot in object.entity.properties.indices where slot < row.values.count {
            if object.entity.properties[slot].isTransient { continue }
            let keepsOwn: Bool
            switch kept {
            case .all: keepsOwn = true
            case .changed: keepsOwn = object.isSlotChanged(slot)
            case .none: keepsOwn = false
            }
            if !keepsOwn { object.values[slot] = row.values[slot] }
            if case .unfetched = row.values[slot] { continue }
            if object.values[slot] != row.values[slot] { changed.insert(slot) }
        }
        object.snapshot = row
        object.changedSlots = changed
        if !changed.isEmpty { updatedList.insert(object) }
        rewriteReferences([oldRow: newID.rowID])
    }

    /// Drops an unsaved object's claim: an inserted object leaves the context unsaved, a changed
    /// one returns to its saved values.
    private func discard(_ object: ManagedObject) {
        if object.inserted {
            unregister(object)
            detach(object)
            object.inserted = false
        } else if let snapshot = object.snapshot {
            object.values = snapshot.values
            object.clearChangedSlots()
            updatedList.remove(object)
        }
    }
}
