import Foundation
import Strata

extension RoundTripCase {
    /// Smaller cases to try when this one fails, biggest steps first: without the edits, with
    /// half the objects, without an entity, a configuration split, an object, an edit, a property,
    /// a constraint or index, a value or link, or with a value replaced by its type's simplest.
    /// Each candidate builds a valid model and a graph ``problem(in:)`` accepts, and is strictly
    /// smaller, so shrinking ends.
    public func shrinkCandidates() -> [RoundTripCase] {
        var candidates: [RoundTripCase] = []
        func add(_ candidate: RoundTripCase) {
            guard let normalized = candidate.normalized(), normalized != self else { return }
            candidates.append(normalized)
        }
        if !graph.edits.isEmpty { add(with { $0.graph.edits = [] }) }
        let count = graph.objects.count
        if count > 1 {
            add(with { $0.graph.removeObjects(Set(count / 2..<count)) })
            add(with { $0.graph.removeObjects(Set(0..<count / 2)) })
        }
        for entity in model.entities where !model.entities.contains(where: { $0.parent == entity.name }) {
            add(with { $0.removeEntity(entity.name) })
        }
        if !model.configurations.isEmpty { add(with { $0.model.configurations = [] }) }
        for index in graph.objects.indices { add(with { $0.graph.removeObjects([index]) }) }
        for index in graph.edits.indices { add(with { $0.graph.edits.remove(at: index) }) }
        for (e, entity) in model.entities.enumerated() {
            for property in entity.properties { add(with { $0.removeProperty(property.name, of: e) }) }
            for case .attribute(let attribute) in entity.properties
            where attribute.isComposite && attribute.elements.count > 1 {
                for element in attribute.elements {
                    add(with { $0.removeElement(element.name, of: attribute.name, in: e) })
                }
            }
            for index in entity.uniquenessConstraints.indices {
                add(with { $0.model.entities[e].uniquenessConstraints.remove(at: index) })
            }
            for index in entity.indexes.indices { add(with { $0.model.entities[e].indexes.remove(at: index) }) }
        }
        for (o, object) in graph.objects.enumerated() {
            for key in object.links.keys.sorted() { add(with { $0.graph.objects[o].links[key] = nil }) }
            for key in object.values.keys.sorted() { add(with { $0.graph.objects[o].values[key] = nil }) }
            for (key, value) in object.values.sorted(by: { $0.key < $1.key }) {
                guard let simple = simplest(for: key, of: object.entity), simple != value else { continue }
                add(with { $0.graph.objects[o].values[key] = simple })
            }
        }
        return candidates
    }

    private func with(_ change: (inout RoundTripCase) -> Void) -> RoundTripCase {
        var copy = self
        change(&copy)
        return copy
    }

    /// The simplest value of the attribute `key` of `entity`, in the form the graph sets it.
    private func simplest(for key: String, of entity: String) -> RoundTripValue? {
        guard let model = try? model.makeModel(),  // a candidate's model always builds (checked in normalized())
            let attribute = model.entity(named: entity)?.property(named: key)?.attribute
        else { return nil }
        if attribute.valueTransformerName != nil { return .strings([]) }
        return .store(RoundTripValues.simplest(for: attribute.type))
    }

    /// The case with everything that no longer fits the model dropped (objects of removed
    /// entities, values and links of removed properties), or `nil` when the model does not build
    /// or the graph cannot be saved.
    func normalized() -> RoundTripCase? {
        // A model that does not build is simply not a candidate (the error itself cannot matter).
        guard let model = try? model.makeModel() else { return nil }
        var copy = self
        let gone = Set(
            graph.objects.indices.filter { model.entity(named: graph.objects[$0].entity)?.isAbstract ?? true })
        copy.graph.removeObjects(gone)
        for index in copy.graph.objects.indices {
            let entity = model.entity(named: copy.graph.objects[index].entity)!  // kept objects have entities
            copy.graph.objects[index].values = copy.graph.objects[index].values.filter {
                entity.property(named: $0.key)?.attribute.map { !$0.isTransient } ?? false
            }
            copy.graph.objects[index].links = copy.graph.objects[index].links.filter {
                entity.property(named: $0.key)?.relationship != nil
            }
        }
        copy.graph.edits = copy.graph.edits.filter { edit in
            guard let entity = model.entity(named: copy.graph.objects[edit.object].entity) else { return false }
            switch edit {
            case .set(_, let key, _): return entity.property(named: key)?.attribute != nil
            case .link(_, let key, _): return entity.property(named: key)?.relationship != nil
            case .delete: return true
            }
        }
        return copy.problem(in: model) == nil ? copy : nil
    }

    // MARK: Model edits

    /// Removes a leaf entity: its objects, its configuration membership, and every relationship
    /// pointing at it (with its inverse).
    mutating func removeEntity(_ name: String) {
        model.entities.removeAll { $0.name == name }
        for index in model.configurations.indices { model.configurations[index].entities.removeAll { $0 == name } }
        model.configurations.removeAll { $0.entities.isEmpty }
        if model.configurations.count == 1 { model.configurations = [] }
        for (e, entity) in model.entities.enumerated() {
            for case .relationship(let relationship) in entity.properties
            where relationship.destinationEntityName == name {
                removeProperty(relationship.name, of: e)
            }
        }
        graph.removeObjects(Set(graph.objects.indices.filter { graph.objects[$0].entity == name }))
    }

    /// Removes a declared property (a relationship with its inverse), and constraints and indexes
    /// that name it.
    mutating func removeProperty(_ name: String, of e: Int) {
        guard model.entities.indices.contains(e),
            let property = model.entities[e].properties.first(where: { $0.name == name })
        else { return }
        model.entities[e].properties.removeAll { $0.name == name }
        if let relationship = property.relationship, let inverse = relationship.inverseName, inverse != name,
            let d = model.entities.firstIndex(where: { $0.name == relationship.destinationEntityName })
        {
            model.entities[d].properties.removeAll { $0.name == inverse && $0.relationship?.inverseName == name }
        }
        for index in model.entities.indices { dropNames(in: index, matching: name) }
    }

    /// Removes one element of a composite (it keeps at least one).
    mutating func removeElement(_ element: String, of composite: String, in e: Int) {
        guard let p = model.entities[e].properties.firstIndex(where: { $0.name == composite }),
            case .attribute(var attribute) = model.entities[e].properties[p]
        else { return }
        attribute.elements.removeAll { $0.name == element }
        model.entities[e].properties[p] = .attribute(attribute)
        for index in model.entities.indices { dropNames(in: index, matching: composite + "." + element) }
    }

    /// Drops constraints naming `name` (or a key path below it) and index elements naming it.
    private mutating func dropNames(in e: Int, matching name: String) {
        func matches(_ key: String) -> Bool { key == name || key.hasPrefix(name + ".") }
        model.entities[e].uniquenessConstraints.removeAll { $0.contains(where: matches) }
        for i in model.entities[e].indexes.indices {
            model.entities[e].indexes[i].elements.removeAll { matches($0.property) }
        }
        model.entities[e].indexes.removeAll { $0.elements.isEmpty }
    }
}

extension RoundTripGraph {
    /// Removes objects, renumbering the rest and dropping links and edits that name removed ones.
    mutating func removeObjects(_ removed: Set<Int>) {
        guard !removed.isEmpty else { return }
        var newIndex: [Int: Int] = [:]
        var kept: [RoundTripObject] = []
        for (index, object) in objects.enumerated() where !removed.contains(index) {
            newIndex[index] = kept.count
            kept.append(object)
        }
        for index in kept.indices {
            kept[index].links = kept[index].links.mapValues { $0.compactMap { newIndex[$0] } }.filter {
                !$0.value.isEmpty
            }
        }
        objects = kept
        edits = edits.compactMap { edit in
            switch edit {
            case .set(let object, let key, let value): newIndex[object].map { .set(object: $0, key: key, value: value) }
            case .link(let object, let key, let targets):
                newIndex[object].flatMap { object in
                    let mapped = targets.compactMap { newIndex[$0] }
                    return mapped.count == targets.count ? .link(object: object, key: key, targets: mapped) : nil
                }
            case .delete(let object): newIndex[object].map { .delete(object: $0) }
            }
        }
    }
}
