import Foundation

/// Checks a set of entity descriptions and produces resolved copies: numbered, with inherited
/// properties, subentities and version hashes filled in (``EntityDescription/Resolved``).
struct ModelResolver {
    let entities: [EntityDescription]

    /// The model's entities: fresh objects, ordered by number, each created with its resolved
    /// state complete (``EntityDescription/Resolved``), then checked together.
    ///
    /// The caller's entities are only read. Every resolved value is computed before the entity
    /// that holds it is created, so no entity is ever seen half-resolved, and a throw leaves
    /// nothing behind.
    func resolve() throws -> [EntityDescription] {
        var byName: [String: EntityDescription] = [:]
        for entity in entities {
            guard !entity.name.isEmpty else { throw ModelError(.malformed, "an entity has an empty name") }
            try checkNames(entity)
            guard byName[entity.name] == nil else {
                throw ModelError(
                    .duplicateName, "two entities are named '\(entity.name)'", element: "entity \(entity.name)")
            }
            byName[entity.name] = entity
        }
        var children: [String: [String]] = [:]
        for entity in byName.values {
            guard let parent = entity.superentityName else { continue }
            guard byName[parent] != nil else {
                throw ModelError(
                    .unknownEntity, "entity '\(entity.name)' has parent '\(parent)', which does not exist",
                    element: "entity \(entity.name)")
            }
            children[parent, default: []].append(entity.name)
        }
        for entity in byName.values { try checkNoCycle(entity, byName) }
        for (parent, names) in children { children[parent] = names.sorted(by: Self.precedes) }

        // Core Data's numbering: roots alphabetically, each followed by its descendants breadth-first.
        var ordered: [EntityDescription] = []
        for root in byName.values.filter({ $0.superentityName == nil }).sorted(by: { Self.precedes($0.name, $1.name) })
        {
            var queue = [root.name]
            while !queue.isEmpty {
                let name = queue.removeFirst()
                ordered.append(byName[name]!)  // names in the queue come from byName
                queue.append(contentsOf: children[name] ?? [])
            }
        }
        var numbers: [String: Int32] = [:]
        for (offset, entity) in ordered.enumerated() { numbers[entity.name] = Int32(offset + 1) }
        var hierarchies: [String: Set<Int32>] = [:]
        for entity in ordered.reversed() {
            var hierarchy: Set<Int32> = [numbers[entity.name]!]  // every ordered entity is numbered
            // Children are numbered after their parent, so this reversed walk has already visited them.
            for child in children[entity.name] ?? [] { hierarchy.formUnion(hierarchies[child]!) }
            hierarchies[entity.name] = hierarchy
        }

        var resolved: [EntityDescription] = []
        var hashes: [String: Data] = [:]
        for entity in ordered {
            let chain = ancestry(entity, byName)
            let root = chain.first!  // ancestry always contains the entity itself
            let place = EntityDescription.Place(
                entityNumber: numbers[entity.name]!, subentityNames: children[entity.name] ?? [],
                rootEntityName: root.name, rootEntityNumber: numbers[root.name]!)  // every ordered entity is numbered
            // `ordered` lists parents before children, so a parent's hash is ready when a child needs it.
            let hash = VersionHasher.hash(of: entity, parentHash: entity.superentityName.flatMap { hashes[$0] })
            hashes[entity.name] = hash
            let state = EntityDescription.Resolved(
                place: place, hierarchyNumbers: hierarchies[entity.name]!, versionHash: hash,
                slots: try EntityDescription.Slots(chain: chain))
            resolved.append(EntityDescription(entity, managedObjectClass: entity.managedObjectClass, resolved: state))
        }
        let resolvedByName = Dictionary(uniqueKeysWithValues: resolved.map { ($0.name, $0) })
        for entity in resolved {
            try checkRelationships(entity, resolvedByName)
            try checkAttributes(entity)
            try checkConstraints(entity)
            try checkFetchedProperties(entity, resolvedByName)
        }
        return resolved
    }

    /// Checks the names of an entity and of the properties it declares (``ManagedObjectModel/isValidName(_:)``).
    private func checkNames(_ entity: EntityDescription) throws {
        try ModelNameRule.check(entity.name, kind: "entity")
        for property in entity.ownProperties where !property.name.isEmpty {
            try ModelNameRule.check(
                property.name, kind: property.relationship == nil ? "attribute" : "relationship", owner: entity.name)
            if case .attribute(let attribute) = property {
                try CompositeExpansion.check(attribute, path: "\(entity.name).\(attribute.name)")
            }
        }
        for fetched in entity.fetchedProperties where !fetched.name.isEmpty {
            try ModelNameRule.check(fetched.name, kind: "fetched property", owner: entity.name)
        }
    }

    private func checkNoCycle(_ entity: EntityDescription, _ byName: [String: EntityDescription]) throws {
        var seen: Set<String> = [entity.name]
        var current = entity.superentityName
        while let name = current {
            guard seen.insert(name).inserted else {
                throw ModelError(
                    .malformed, "entity '\(entity.name)' inherits from itself", element: "entity \(entity.name)")
            }
            current = byName[name]?.superentityName
        }
    }

    private func ancestry(_ entity: EntityDescription, _ byName: [String: EntityDescription]) -> [EntityDescription] {
        var chain = [entity]
        var current = entity.superentityName
        while let name = current, let parent = byName[name] {
            chain.insert(parent, at: 0)
            current = parent.superentityName
        }
        return chain
    }

    private func checkRelationships(_ entity: EntityDescription, _ byName: [String: EntityDescription]) throws {
        for relationship in entity.relationships {
            let element = "relationship \(entity.name).\(relationship.name)"
            guard let destination = byName[relationship.destinationEntityName] else {
                throw ModelError(
                    .unknownEntity,
                    "relationship '\(entity.name).\(relationship.name)' has destination '\(relationship.destinationEntityName)', which does not exist",
                    element: element)
            }
            guard let inverseName = relationship.inverseName else { continue }
            guard let inverse = destination.property(named: inverseName)?.relationship else {
                throw ModelError(
                    .invalidInverse,
                    "relationship '\(entity.name).\(relationship.name)' names inverse '\(inverseName)', which '\(destination.name)' does not have",
                    element: element)
            }
            guard let back = byName[inverse.destinationEntityName], entity.isKind(of: back) || back.isKind(of: entity)
            else {
                throw ModelError(
                    .invalidInverse,
                    "inverse '\(destination.name).\(inverseName)' of '\(entity.name).\(relationship.name)' points at '\(inverse.destinationEntityName)', not at '\(entity.name)'",
                    element: element)
            }
            if let backName = inverse.inverseName, backName != relationship.name {
                throw ModelError(
                    .invalidInverse,
                    "'\(entity.name).\(relationship.name)' and '\(destination.name).\(inverseName)' do not name each other as inverses",
                    element: element)
            }
            if relationship.minCount < 0 || (relationship.maxCount > 0 && relationship.maxCount < relationship.minCount)
            {
                throw ModelError(
                    .invalidValue,
                    "relationship '\(entity.name).\(relationship.name)' has min count \(relationship.minCount) above max count \(relationship.maxCount)",
                    element: element)
            }
        }
    }

    private func checkAttributes(_ entity: EntityDescription) throws {
        for attribute in entity.attributes {
            let element = "attribute \(entity.name).\(attribute.name)"
            if attribute.type == .undefined && !attribute.isTransient {
                throw ModelError(
                    .invalidValue,
                    "attribute '\(entity.name).\(attribute.name)' has type Undefined but is not transient",
                    element: element)
            }
            // The failure itself is what is reported here (safe: the error is replaced by a ModelError below).
            if let pattern = attribute.validation.regularExpression, (try? NSRegularExpression(pattern: pattern)) == nil
            {
                throw ModelError(
                    .invalidValue,
                    "attribute '\(entity.name).\(attribute.name)' has regular expression '\(pattern)', which does not compile",
                    element: element)
            }
        }
    }

    private func compositeNamed(_ name: String, in entity: EntityDescription, by user: String) -> ModelError {
        let example =
            entity.compositesByKeyPath[name]?.leafSlots.first.map { entity.properties[$0].name } ?? "\(name).element"
        return ModelError(
            .unknownProperty,
            "\(user) on '\(entity.name)' names '\(name)', a composite attribute; name its elements instead (such as '\(example)')",
            element: "entity \(entity.name)")
    }

    private func checkFetchedProperties(_ entity: EntityDescription, _ byName: [String: EntityDescription]) throws {
        var seen: Set<String> = []
        for fetched in entity.fetchedProperties {
            let element = "fetchedProperty \(entity.name).\(fetched.name)"
            guard !fetched.name.isEmpty else {
                throw ModelError(.malformed, "entity '\(entity.name)' has a fetched property with an empty name")
            }
            guard seen.insert(fetched.name).inserted, entity.property(named: fetched.name) == nil else {
                throw ModelError(
                    .duplicateName,
                    "entity '\(entity.name)' has a fetched property named '\(fetched.name)', a name already in use",
                    element: element)
            }
            guard byName[fetched.entityName] != nil else {
                throw ModelError(
                    .unknownEntity,
                    "fetched property '\(entity.name).\(fetched.name)' fetches entity '\(fetched.entityName)', which does not exist",
                    element: element)
            }
        }
    }

    private func checkConstraints(_ entity: EntityDescription) throws {
        for constraint in entity.uniquenessConstraints {
            for name in constraint where entity.property(named: name) == nil {
                if entity.isComposite(name) { throw compositeNamed(name, in: entity, by: "a unique constraint") }
                throw ModelError(
                    .unknownProperty,
                    "unique constraint on '\(entity.name)' names '\(name)', which is not a property of it",
                    element: "uniquenessConstraint \(entity.name)")
            }
        }
        for index in entity.indexes {
            for element in index.elements where entity.property(named: element.property) == nil {
                if entity.isComposite(element.property) {
                    throw compositeNamed(element.property, in: entity, by: "fetch index '\(index.name)'")
                }
                throw ModelError(
                    .unknownProperty,
                    "fetch index '\(index.name)' on '\(entity.name)' names '\(element.property)', which is not a property of it",
                    element: "fetchIndex \(index.name)")
            }
        }
    }

    /// The order entities are numbered in: by the names' canonical composed form (NFC) as UTF-16
    /// code units, then (for names equal there but spelled differently) by their own code units.
    ///
    /// Not Swift's `<` on strings: it leaves some pairs unordered (neither `"Cafe\u{301}" <
    /// "Caf\u{E9}2"` nor the reverse), so sorting by it followed hash order, and a model's numbers
    /// changed between processes and between a model and its decoded copy.
    static func precedes(_ a: String, _ b: String) -> Bool {
        let x = Array(a.precomposedStringWithCanonicalMapping.utf16)
        let y = Array(b.precomposedStringWithCanonicalMapping.utf16)
        if x != y { return x.lexicographicallyPrecedes(y) }
        return a.utf16.lexicographicallyPrecedes(b.utf16)
    }
}
