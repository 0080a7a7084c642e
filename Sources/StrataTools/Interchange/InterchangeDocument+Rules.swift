import Strata

// The model's rules, as a save checks them, for the objects of an interchange document.

extension InterchangeDocument {
    /// Whether `object`, read again, keeps the model's attribute rules and the constrained values
    /// it was checked with.
    func stillChecks(_ object: Object, position: Int) -> Bool {
        let entity = object.entity
        let values = { (slot: Int) in
            object.attributes[slot] ?? entity.properties[slot].attribute?.defaultValue ?? .null
        }
        if !entity.attributeViolations(values).isEmpty { return false }
        for constraint in entity.uniquenessConstraints {
            let constrained = constraint.compactMap { entity.index(ofProperty: $0) }.map(values)
            if constrained.contains(where: \.isNull) { continue }
            let key = UniqueKey(root: entity.rootEntityName, constraint: constraint)
            if uniqueValues[key]?[constrained] != position { return false }
        }
        return true
    }

    /// Required values, validation rules and unique constraints among the file's objects, checked
    /// as each object is read (its values may be dropped after).
    mutating func checkAttributes(_ object: Object, position: Int) {
        let entity = object.entity
        let values = { (slot: Int) in
            object.attributes[slot] ?? entity.properties[slot].attribute?.defaultValue ?? .null
        }
        for (property, violation) in entity.attributeViolations(values) {
            problems.append(.init("\(object.path).attributes.\(property)", violation.message))
        }
        for constraint in entity.uniquenessConstraints {
            let slots = constraint.compactMap { entity.index(ofProperty: $0) }
            let constrained = slots.map(values)
            if constrained.contains(where: \.isNull) { continue }
            let key = UniqueKey(root: entity.rootEntityName, constraint: constraint)
            if let other = uniqueValues[key]?[constrained] {
                problems.append(
                    .init(
                        object.path,
                        "unique constraint (\(constraint.joined(separator: ", "))) violated: \(constrained.map(\.displayText).joined(separator: ", ")) is also used by '\(ids[other])'"
                    ))
            } else {
                uniqueValues[key, default: [:]][constrained] = position
            }
        }
    }

    /// Relationship counts, once every relationship and inverse is known.
    mutating func checkRelationshipCounts() {
        for object in objects {
            for (slot, property) in object.entity.properties.enumerated() where !property.isTransient {
                switch property {
                case .attribute: continue  // checked above
                case .relationship(let relationship):
                    let count = object.relationships[slot]?.count ?? 0
                    for message in RelationshipRules.violations(relationship, count: count) {
                        problems.append(.init("\(object.path).relationships.\(relationship.name)", message))
                    }
                }
            }
        }
    }
}

/// Relationship count rules, as a save checks them.
enum RelationshipRules {
    static func violations(_ relationship: RelationshipDescription, count: Int) -> [String] {
        if relationship.isTransient { return [] }
        if !relationship.isToMany {
            return count == 0 && !relationship.isOptional ? ["relationship '\(relationship.name)' is required"] : []
        }
        guard count > 0 || !relationship.isOptional else { return [] }
        var found: [String] = []
        if count < relationship.minCount {
            found.append("relationship '\(relationship.name)' holds \(count), needs at least \(relationship.minCount)")
        }
        if relationship.maxCount > 0 && count > relationship.maxCount {
            found.append("relationship '\(relationship.name)' holds \(count), allows at most \(relationship.maxCount)")
        }
        return found
    }
}
