import Foundation

// Derived attributes (Core Data's NSDerivedAttributeDescription), computed by every save before
// validation, in the core, so every driver stores the same values. Core Data's SQLite store computes
// them with triggers as rows change; here a save recomputes the derived attributes of
//   - every inserted or changed object of an entity with derived attributes, and
//   - every object that reaches a changed, inserted or deleted object through a key path of a
//     derivation (`department.name`, `employees.@sum.salary`), found by walking the relationships'
//     inverses back from the changed object (a relationship without an inverse is followed only
//     from the objects' own changes).
// A value set by hand on a derived attribute is overwritten by the save, as Core Data's triggers do.

extension ManagedObjectContext {
    /// Computes the derived attributes of the objects this save changes or whose sources it
    /// changes, marking the ones whose value moves as updated.
    ///
    /// - Complexity: O(c · d · r) for c changed objects, d derivations and r objects reached
    ///   through inverses; relationships read on the way are loaded as property reads load them.
    /// - Throws: ``StoreError/Code/invalidRequest`` naming the entity and attribute when a value
    ///   cannot be computed or does not fit the attribute; the store's error when a relationship
    ///   cannot be loaded.
    func computeDerivedAttributes() throws {
        let model = coordinator.managedObjectModel
        guard model.hasDerivedAttributes else { return }
        let derivations = try DerivationPlan(model)
        let changed =
            insertedList.values.filter { !$0.deleted }
            + updatedList.values.filter { $0.isUpdated && !$0.deleted }
        let deleted = deletedList.values
        var targets: [ObjectIdentifier: ManagedObject] = [:]
        var order: [ManagedObject] = []
        func add(_ object: ManagedObject) {
            guard object.isIn(self), !object.deleted, object.isAccessible, derivations.has(object.entity) else {
                return
            }
            if targets.updateValue(object, forKey: ObjectIdentifier(object)) == nil { order.append(object) }
        }
        for object in changed { add(object) }
        for object in changed + deleted {
            for back in derivations.inversePaths(from: object.entity) {
                for source in try reach(object, through: back) { add(source) }
            }
        }
        for object in order {
            for derivation in derivations.attributes(of: object.entity) {
                try derive(derivation, on: object)
            }
        }
    }

    /// The objects `path` (inverse relationship names, nearest first) leads to from `object`.
    private func reach(_ object: ManagedObject, through path: [String]) throws -> [ManagedObject] {
        var current = [object]
        for name in path {
            var next: [ManagedObject] = []
            for here in current where here.entity.index(ofProperty: name) != nil {
                switch try here.keyValue(forKey: name) {
                case .object(let other): if let other = other as? ManagedObject { next.append(other) }
                case .objects(let others): next += others.compactMap { $0 as? ManagedObject }
                case .value, .values: break
                }
            }
            current = next
        }
        return current
    }

    private func derive(_ derivation: DerivationPlan.Derivation, on object: ManagedObject) throws {
        let attribute = derivation.attribute
        let name = "\(object.entity.name).\(attribute.name)"
        // A store error loading the object or what it reads stops the save (reads that cannot
        // throw keep theirs in accessFailures, which the save throws after this pass).
        try object.fireFaultThrowing()
        let value: StoreValue
        do {
            value = try derivation.value(for: object)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(
                .invalidRequest,
                "cannot compute derived attribute '\(name)' from '\(derivation.text)' for \(object.objectID): \(error); "
                    + "fix the values it reads or its derivation expression",
                objectIDs: [object.objectID], underlying: error)
        }
        guard let slot = object.entity.index(ofProperty: attribute.name) else { return }
        guard !object.values.isEmpty, object.values[slot] != value else { return }
        object.values[slot] = value
        object.markChanged(slot)
    }
}

/// The derived attributes of a model, parsed, with the relationship paths that lead back to the
/// objects whose values they read.
struct DerivationPlan {
    struct Derivation {
        let attribute: AttributeDescription
        let text: String
        let expression: FetchExpression

        /// The attribute's value for `object`, converted to the attribute's type.
        func value(for object: ManagedObject) throws -> StoreValue {
            var computed = try expression.value(with: object)
            if case .date(let date) = computed, attribute.type.isNumeric {
                // Core Data keeps dates as seconds since 2001; a numeric now() gets that number.
                computed = .double(date.timeIntervalSinceReferenceDate)
            }
            return try StoreValueCoercion.coerce(computed, to: attribute, entity: object.entity.name)
        }
    }

    /// Derivations by entity name (inherited attributes included).
    private var byEntity: [String: [Derivation]] = [:]
    /// Entity name → inverse paths from an object of that entity (or a subentity) back to objects
    /// whose derivations read it.
    private var backPaths: [String: [[String]]] = [:]
    private let model: ManagedObjectModel

    init(_ model: ManagedObjectModel) throws {
        self.model = model
        for entity in model.entities {
            var list: [Derivation] = []
            for attribute in entity.attributes {
                guard let text = attribute.derivationExpression else { continue }
                // Checked when the model was built; parsing it again cannot fail.
                let expression = try ManagedObjectModel.derivation(text)
                list.append(Derivation(attribute: attribute, text: text, expression: expression))
                var reads = KeyPathCollector()
                reads.collect(expression)
                for path in reads.paths.sorted() { addBackPaths(path, from: entity) }
            }
            if !list.isEmpty { byEntity[entity.name] = list }
        }
    }

    /// For each relationship prefix of `path` on `entity`: the entity it ends at, and the inverses
    /// that lead back to `entity`.
    private mutating func addBackPaths(_ path: String, from entity: EntityDescription) {
        var current = entity
        var inverses: [String] = []
        for key in path.split(separator: ".").map(String.init) {
            guard let relationship = current.property(named: key)?.relationship,
                let destination = model.entity(named: relationship.destinationEntityName),
                let inverse = relationship.inverseName
            else { return }
            inverses.insert(inverse, at: 0)
            if backPaths[destination.name]?.contains(inverses) != true {
                backPaths[destination.name, default: []].append(inverses)
            }
            current = destination
        }
    }

    func has(_ entity: EntityDescription) -> Bool { byEntity[entity.name] != nil }

    func attributes(of entity: EntityDescription) -> [Derivation] { byEntity[entity.name] ?? [] }

    /// The inverse paths from an object of `entity` (or of one of its ancestors' derivations).
    func inversePaths(from entity: EntityDescription) -> [[String]] {
        var paths: [[String]] = []
        var current: EntityDescription? = entity
        var steps = 0
        while let here = current, steps <= model.entities.count {
            paths += backPaths[here.name] ?? []
            current = here.superentityName.flatMap(model.entity(named:))
            steps += 1
        }
        return paths
    }
}
