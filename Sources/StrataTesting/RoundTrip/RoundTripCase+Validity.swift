import Foundation
import Strata

extension RoundTripCase {
    /// Why the case's graph cannot be saved as it stands (a required value missing, a composite
    /// without its required elements, a unique constraint broken, a link to a missing object), or
    /// `nil` when it can. Generated cases are valid by construction; the shrinker keeps only
    /// candidates that stay valid, so every shrunk case still tests a round trip.
    public func problem(in model: ManagedObjectModel) -> String? {
        let objects = graph.objects
        var finals = objects.map(\.values)
        for edit in graph.edits {
            guard objects.indices.contains(edit.object) else { return "edit \(edit) names no object" }
            if case .set(let object, let key, let value) = edit { finals[object][key] = value }
        }
        for (index, object) in objects.enumerated() {
            guard let entity = model.entity(named: object.entity), !entity.isAbstract else {
                return "object \(index) has entity \(object.entity), which is missing or abstract"
            }
            if let problem = valueProblem(entity, finals[index]) { return "object \(index): \(problem)" }
            for (key, targets) in object.links {
                guard let relationship = entity.property(named: key)?.relationship else {
                    return "object \(index) links \(key)"
                }
                if !relationship.isToMany && targets.count > 1 { return "object \(index): \(key) has several targets" }
                if let problem = targetProblem(relationship, targets, model) {
                    return "object \(index).\(key): \(problem)"
                }
            }
            for relationship in entity.relationships where !relationship.isOptional && !relationship.isToMany {
                if object.links[relationship.name]?.isEmpty ?? true {
                    return "object \(index): required \(relationship.name) unset"
                }
            }
        }
        for edit in graph.edits {
            guard let entity = model.entity(named: objects[edit.object].entity) else { return "edit \(edit)" }
            switch edit {
            case .set(_, let key, _):
                guard let attribute = entity.property(named: key)?.attribute, !attribute.isTransient else {
                    return "edit \(edit)"
                }
            case .link(_, let key, let targets):
                guard let relationship = entity.property(named: key)?.relationship else { return "edit \(edit)" }
                if targets.isEmpty && !relationship.isOptional && !relationship.isToMany {
                    return "edit \(edit) clears a required to-one"
                }
                if let problem = targetProblem(relationship, targets, model) { return "edit \(edit): \(problem)" }
            case .delete: break
            }
        }
        return uniquenessProblem(model)
    }

    private func targetProblem(_ relationship: RelationshipDescription, _ targets: [Int], _ model: ManagedObjectModel)
        -> String?
    {
        guard let destination = model.entity(named: relationship.destinationEntityName) else { return "no destination" }
        guard Set(targets).count == targets.count else { return "a target repeats" }
        for target in targets {
            guard graph.objects.indices.contains(target),
                let entity = model.entity(named: graph.objects[target].entity),
                entity.isKind(of: destination)
            else { return "target \(target) is not a \(destination.name)" }
        }
        return nil
    }

    /// Required attributes and composites, after the edits.
    private func valueProblem(_ entity: EntityDescription, _ values: [String: RoundTripValue]) -> String? {
        func final(_ attribute: AttributeDescription) -> Bool {
            if let value = values[attribute.name] { return value != .store(.null) }
            return !attribute.defaultValue.isNull
        }
        var inComposite: Set<String> = []
        for composite in entity.compositeAttributes where !composite.isTransient {
            let prefix = composite.name + "."
            let leaves = entity.attributes.filter { $0.name.hasPrefix(prefix) }
            for leaf in leaves { inComposite.insert(leaf.name) }
            if let problem = compositeProblem(composite, prefix: prefix, entity: entity, isSet: final) {
                return problem
            }
        }
        for attribute in entity.attributes where !attribute.isTransient && !inComposite.contains(attribute.name) {
            if !attribute.isOptional && !final(attribute) { return "required \(attribute.name) is nil" }
        }
        for key in values.keys {
            guard let attribute = entity.property(named: key)?.attribute, !attribute.isTransient else {
                return "no attribute \(key)"
            }
        }
        return nil
    }

    private func compositeProblem(
        _ composite: AttributeDescription, prefix: String, entity: EntityDescription,
        isSet: (AttributeDescription) -> Bool
    ) -> String? {
        let leaves = entity.attributes.filter { $0.name.hasPrefix(prefix) }
        let present = leaves.contains(where: isSet)
        if !composite.isOptional && !present { return "required composite \(prefix.dropLast()) is nil" }
        guard present else { return nil }
        for element in composite.elements {
            let path = prefix + element.name
            if element.isComposite {
                if let problem = compositeProblem(element, prefix: path + ".", entity: entity, isSet: isSet) {
                    return problem
                }
            } else if !element.isOptional, let leaf = entity.property(named: path)?.attribute, !isSet(leaf) {
                return "required element \(path) is nil"
            }
        }
        return nil
    }

    /// Unique constraints: no two objects of an entity with the constraint share its values.
    private func uniquenessProblem(_ model: ManagedObjectModel) -> String? {
        var seen: [String: Int] = [:]
        for (index, object) in graph.objects.enumerated() {
            guard var level = model.entity(named: object.entity) else { continue }
            while true {
                for constraint in level.uniquenessConstraints {
                    let values = constraint.map { object.values[$0] ?? .store(.null) }
                    if values.contains(.store(.null)) { continue }
                    let key = "\(constraint)|\(values)"
                    if let other = seen[key], other != index {
                        return "objects \(other) and \(index) share \(constraint)"
                    }
                    seen[key] = index
                }
                guard let parent = level.superentityName.flatMap(model.entity(named:)) else { break }
                level = parent
            }
        }
        return nil
    }
}
