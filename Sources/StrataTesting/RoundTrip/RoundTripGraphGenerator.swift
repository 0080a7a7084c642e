import Foundation
import Strata

/// Makes a random object graph over a model: objects of every concrete entity with values of
/// ``RoundTripValues`` (required attributes always set, unique-constrained ones different for
/// every object, composites present or absent as their rules allow), relationships linked from
/// either side, and edits for a second save (new values, new links, deletions).
struct RoundTripGraphGenerator<G: RandomNumberGenerator> {
    var rng: G
    let model: ManagedObjectModel
    private var serial = 0

    init(rng: G, model: ManagedObjectModel) {
        self.rng = rng
        self.model = model
    }

    mutating func generate() -> RoundTripGraph {
        let concrete = model.entities.filter { !$0.isAbstract }
        guard !concrete.isEmpty else { return RoundTripGraph() }
        let count = weighted([
            (0, 5), (Int.random(in: 1...3, using: &rng), 25), (Int.random(in: 4...8, using: &rng), 45),
            (Int.random(in: 9...16, using: &rng), 20), (Int.random(in: 30...60, using: &rng), 5),
        ])
        var objects: [RoundTripObject] = (0..<count).map { _ in
            RoundTripObject(entity: concrete.randomElement(using: &rng)!.name)
        }  // non-empty
        // Every required to-one needs a destination object.
        var checked = 0
        while checked < objects.count {
            let entity = model.entity(named: objects[checked].entity)!  // objects are made from model entities
            for relationship in entity.relationships where !relationship.isOptional && !relationship.isToMany {
                let kinds = concreteKinds(of: relationship.destinationEntityName)
                if !objects.contains(where: { kinds.contains($0.entity) }), let kind = kinds.randomElement(using: &rng)
                {
                    objects.append(RoundTripObject(entity: kind))
                }
            }
            checked += 1
        }
        for index in objects.indices {
            objects[index].values = values(for: model.entity(named: objects[index].entity)!)  // as above
        }
        for index in objects.indices { objects[index].links = links(for: index, in: objects) }
        var graph = RoundTripGraph(objects: objects)
        if !objects.isEmpty, chance(50) { graph.edits = edits(for: objects) }
        return graph
    }

    // MARK: Values

    /// The constrained attribute names of `entity` (its own constraints and its ancestors').
    func constrained(_ entity: EntityDescription) -> Set<String> {
        var names: Set<String> = []
        var current: EntityDescription? = entity
        while let level = current {
            for constraint in level.uniquenessConstraints { names.formUnion(constraint) }
            current = level.superentityName.flatMap(model.entity(named:))
        }
        return names
    }

    private mutating func values(for entity: EntityDescription) -> [String: RoundTripValue] {
        var values: [String: RoundTripValue] = [:]
        let constrained = constrained(entity)
        var inComposite: Set<String> = []
        for composite in entity.compositeAttributes where !composite.isTransient {
            let leaves = composite.leafElements.map { (composite.name + "." + $0.keyPath, $0.attribute) }
            for (path, _) in leaves { inComposite.insert(path) }
            let hasDefault = leaves.contains { !$0.1.defaultValue.isNull }
            guard
                !composite.isOptional || hasDefault || leaves.contains(where: { constrained.contains($0.0) })
                    || chance(65)
            else { continue }
            var any = hasDefault
            for (path, attribute) in leaves {
                if constrained.contains(path) {
                    values[path] = .store(RoundTripValues.unique(for: attribute.type, serial: next(), &rng))
                    any = true
                } else if (!attribute.isOptional && attribute.defaultValue.isNull) || chance(50) {
                    values[path] = RoundTripValues.value(for: attribute, &rng)
                    any = true
                }
            }
            if !any, let (path, attribute) = leaves.first { values[path] = RoundTripValues.value(for: attribute, &rng) }
        }
        for attribute in entity.attributes where !attribute.isTransient && !inComposite.contains(attribute.name) {
            if constrained.contains(attribute.name) {
                values[attribute.name] = .store(RoundTripValues.unique(for: attribute.type, serial: next(), &rng))
            } else if !attribute.isOptional && attribute.defaultValue.isNull {
                values[attribute.name] = RoundTripValues.value(for: attribute, &rng)
            } else if chance(55) {
                values[attribute.name] = RoundTripValues.value(for: attribute, &rng)
            } else if attribute.isOptional && chance(20) {
                values[attribute.name] = .store(.null)
            }
        }
        return values
    }

    private mutating func next() -> Int {
        serial += 1
        return serial
    }

    // MARK: Links

    /// The concrete entities that are `name` or below it, in model order (an array, never a set:
    /// a set's order changes between processes, and the case must not).
    func concreteKinds(of name: String) -> [String] {
        guard let destination = model.entity(named: name) else { return [] }
        return model.entities.filter { !$0.isAbstract && $0.isKind(of: destination) }.map(\.name)
    }

    private mutating func links(for index: Int, in objects: [RoundTripObject]) -> [String: [Int]] {
        let entity = model.entity(named: objects[index].entity)!  // objects are made from model entities
        var links: [String: [Int]] = [:]
        for relationship in entity.relationships where !relationship.isTransient {
            let kinds = concreteKinds(of: relationship.destinationEntityName)
            let candidates = objects.indices.filter { kinds.contains(objects[$0].entity) }
            guard !candidates.isEmpty else { continue }
            if relationship.isToMany {
                guard chance(60) else { continue }
                links[relationship.name] = Array(
                    candidates.shuffled(using: &rng).prefix(Int.random(in: 1...4, using: &rng)))
            } else if !relationship.isOptional || chance(55) {
                links[relationship.name] = [candidates.randomElement(using: &rng)!]  // not empty
            }
        }
        return links
    }

    // MARK: Edits

    private mutating func edits(for objects: [RoundTripObject]) -> [RoundTripEdit] {
        var edits: [RoundTripEdit] = []
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
            let index = Int.random(in: 0..<objects.count, using: &rng)
            let entity = model.entity(named: objects[index].entity)!  // objects are made from model entities
            let roll = Int.random(in: 0..<100, using: &rng)
            if roll < 45 {
                let constrained = constrained(entity)
                let settable = entity.attributes.filter { attribute in
                    guard !attribute.isTransient, !constrained.contains(attribute.name) else { return false }
                    guard let dot = attribute.name.firstIndex(of: ".") else { return true }
                    // Only direct elements of a composite that holds a value (set a value, never nil).
                    let composite = String(attribute.name[..<dot])
                    return !attribute.name[attribute.name.index(after: dot)...].contains(".")
                        && objects[index].values.contains {
                            $0.key.hasPrefix(composite + ".") && $0.value != .store(.null)
                        }
                }
                guard let attribute = settable.randomElement(using: &rng) else { continue }
                let clears = attribute.isOptional && !attribute.name.contains(".") && chance(15)
                edits.append(
                    .set(
                        object: index, key: attribute.name,
                        value: clears ? .store(.null) : RoundTripValues.value(for: attribute, &rng)))
            } else if roll < 80 {
                guard let relationship = entity.relationships.filter({ !$0.isTransient }).randomElement(using: &rng)
                else { continue }
                let kinds = concreteKinds(of: relationship.destinationEntityName)
                let candidates = objects.indices.filter { kinds.contains(objects[$0].entity) }
                if relationship.isToMany {
                    edits.append(
                        .link(
                            object: index, key: relationship.name,
                            targets: Array(candidates.shuffled(using: &rng).prefix(2))))
                } else if relationship.isOptional && chance(25) {
                    edits.append(.link(object: index, key: relationship.name, targets: []))
                } else if let target = candidates.randomElement(using: &rng) {
                    edits.append(.link(object: index, key: relationship.name, targets: [target]))
                }
            } else {
                edits.append(.delete(object: index))
            }
        }
        return edits
    }

    // MARK: Randomness

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }

    mutating func weighted(_ choices: [(Int, Int)]) -> Int {
        var roll = Int.random(in: 0..<choices.reduce(0) { $0 + $1.1 }, using: &rng)
        for (value, weight) in choices {
            if roll < weight { return value }
            roll -= weight
        }
        return choices[0].0
    }
}

extension RoundTripCase {
    /// Generates the case for `seed`: the same seed gives the same case on every run and machine
    /// (the generator is ``SeededGenerator``; no clock, no system randomness).
    ///
    /// - Throws: ``ModelError`` if the generated model does not build (a generator bug).
    public static func generate(seed: UInt64) throws -> RoundTripCase {
        var modelGenerator = RoundTripModelGenerator(rng: SeededGenerator(seed: seed))
        let spec = modelGenerator.generate()
        let model = try spec.makeModel()
        var graphGenerator = RoundTripGraphGenerator(rng: modelGenerator.rng, model: model)
        return RoundTripCase(seed: seed, model: spec, graph: graphGenerator.generate())
    }
}
