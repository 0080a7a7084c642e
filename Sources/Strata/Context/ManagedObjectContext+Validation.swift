import Foundation

extension ManagedObjectContext {
    /// Validates every pending change; throws one ``ObjectValidationError`` listing every failure.
    func validateChanges() throws {
        var failures: [ObjectValidationError.Failure] = []
        // Uniqueness needs the live objects as one list; it is built only when some entity has a constraint.
        let collectsLive = coordinator.managedObjectModel.entities.contains { !$0.uniquenessConstraints.isEmpty }
        var live: [ManagedObject] = []
        // Only subclasses can override the validation hooks (ManagedObject's own do nothing).
        let hooks = registered.hasSubclassObjects
        func validate(_ object: ManagedObject) {
            let found = PropertyValidator.failures(of: object, context: self)
            if !found.isEmpty { failures += found }
            if hooks {
                runCustom(object, &failures) {
                    object.inserted ? try $0.validateForInsert() : try $0.validateForUpdate()
                }
            }
            if collectsLive { live.append(object) }
        }
        for object in insertedList.values where !object.deleted { validate(object) }
        for object in updatedList.values where object.isUpdated && !object.deleted { validate(object) }
        // Deletes are checked for deny rules (on relationships) and by the subclasses' hook.
        if hooks || registered.hasObjectsWithRelationships {
            for object in deletedList.values where !object.inserted {
                failures += denyFailures(object)
                if hooks { runCustom(object, &failures) { try $0.validateForDelete() } }
            }
        }
        // Uniqueness is the stores' concern: a child checks it when its changes reach a root save.
        guard parent == nil, collectsLive else {
            if !failures.isEmpty { throw ObjectValidationError(failures: failures) }
            return
        }
        let conflicts = try constraintConflicts(live)
        if !failures.isEmpty {
            throw ObjectValidationError(
                failures: failures + uniquenessFailures(conflicts), constraintConflicts: conflicts)
        }
        guard !conflicts.isEmpty else { return }
        try mergePolicy.resolve(constraintConflicts: conflicts)
        // What the policy left (a changed object clashing with a stored row cannot be merged).
        let remaining = try constraintConflicts(
            insertedList.values.filter { !$0.deleted }
                + updatedList.values.filter { $0.isUpdated && !$0.deleted })
        if !remaining.isEmpty {
            throw ObjectValidationError(failures: uniquenessFailures(remaining), constraintConflicts: remaining)
        }
    }

    private func runCustom(
        _ object: ManagedObject, _ failures: inout [ObjectValidationError.Failure],
        _ body: (ManagedObject) throws -> Void
    ) {
        do {
            try body(object)
        } catch let error as ObjectValidationError {
            failures += error.failures
        } catch {
            failures.append(
                .init(
                    objectID: object.objectID, entity: object.entity.name, property: nil, code: .custom,
                    message: "\(error)"))
        }
    }

    private func denyFailures(_ object: ManagedObject) -> [ObjectValidationError.Failure] {
        var failures: [ObjectValidationError.Failure] = []
        for slot in object.entity.relationshipSlots {
            // Relationship slots have relationship descriptions.
            guard let relationship = object.entity.properties[slot].relationship, relationship.deleteRule == .deny
            else { continue }
            let remaining = relatedObjects(object, slot).filter { !$0.deleted }
            if !remaining.isEmpty {
                failures.append(
                    .init(
                        objectID: object.objectID, entity: object.entity.name, property: relationship.name,
                        code: .relationshipDeniedDelete,
                        message:
                            "cannot delete: relationship '\(relationship.name)' has the deny rule and still holds \(remaining.count) object\(remaining.count == 1 ? "" : "s")"
                    ))
            }
        }
        return failures
    }

    func constraints(of entity: EntityDescription) -> [[String]] {
        var result: [[String]] = []
        var current: EntityDescription? = entity
        while let e = current {
            result += e.uniquenessConstraints
            current = e.superentityName.flatMap { coordinator.managedObjectModel.entity(named: $0) }
        }
        return result
    }

    func constraintOwner(_ entity: EntityDescription, _ constraint: [String]) -> String {
        var current: EntityDescription? = entity
        var owner = entity.name
        while let e = current {
            if e.uniquenessConstraints.contains(constraint) { owner = e.name }
            current = e.superentityName.flatMap { coordinator.managedObjectModel.entity(named: $0) }
        }
        return owner
    }

    func savedObject(matching constraint: [String], _ values: [StoreValue], like object: ManagedObject) throws
        -> ManagedObjectID?
    {
        let model = coordinator.managedObjectModel
        let owner = model.entity(named: constraintOwner(object.entity, constraint)) ?? object.entity
        let predicate = FetchPredicate.and(
            zip(constraint, values).map { FetchPredicate.keyPath($0.0, equals: $0.1) })
        let store = try targetStore(for: object)
        var fetch = StoreFetch(entity: owner)
        fetch.predicate = predicate
        fetch.resultKind = .rows
        let result = try coordinator.fetch(fetch, in: store)
        var rows = result.rows
        if !result.appliedPredicate {
            rows = try rows.filter { try predicate.evaluate(with: RowView($0, model: model, lookup: { _ in nil })) }
        }
        for row in rows {
            // rows come from this model
            let id = anchors.id(model.entity(number: row.id.entity)!, row.id, store)
            if id == object.objectID { continue }
            if let registeredObject = registered[id] {
                // The context's own version of that row wins: deleted or changed away means no clash.
                if registeredObject.deleted { continue }
                if !registeredObject.faulted {
                    let current = constraint.map {
                        registeredObject.entity.index(ofProperty: $0).map { registeredObject.values[$0] } ?? .null
                    }
                    if current != values { continue }
                }
            }
            return id
        }
        return nil
    }
}

extension StoreValue {
    /// A short human-readable rendering for messages.
    public var displayText: String {
        switch self {
        case .null: "nil"
        case .integer(let i): "\(i)"
        case .double(let d): "\(d)"
        case .decimal(let d): "\(d)"
        case .string(let s): "\"\(s)\""
        case .bool(let b): b ? "YES" : "NO"
        case .date(let d): d.formatted(.iso8601)
        case .binary(let d): "<\(d.count) bytes>"
        case .uuid(let u): u.uuidString
        case .uri(let u): u.absoluteString
        case .reference(let r): "\(r)"
        case .references(let r): "[\(r.count) objects]"
        case .unfetched: "<unfetched>"
        }
    }
}
