import Foundation
import Strata

/// Makes random valid models for the round-trip suite: one to four inheritance hierarchies up to
/// three levels deep (abstract entities among them), attributes of every type (optional and
/// required, with and without defaults, transient, transformable with and without a transformer,
/// binary with external storage, composites with nested composites), relationships of every shape
/// (to-one, to-many, ordered, many-to-many, reflexive: its own inverse and distinct pairs, between
/// an entity and its subentity, without an inverse, required to-ones), unique constraints, fetch
/// indexes, and configurations that split the model into stores. Names come from
/// ``RoundTripNames``: SQL keywords, names equal after upper-casing, names of Core Data's columns.
struct RoundTripModelGenerator<G: RandomNumberGenerator> {
    var rng: G
    var names = RoundTripNames()
    var entities: [RoundTripEntitySpec] = []

    init(rng: G) { self.rng = rng }

    mutating func generate() -> RoundTripModelSpec {
        let hierarchyCount = weighted([(1, 30), (2, 35), (3, 25), (4, 10)])
        var hierarchies: [[String]] = []
        for _ in 0..<hierarchyCount { hierarchies.append(makeHierarchy()) }
        if !entities.contains(where: { !$0.isAbstract }), let leaf = entities.indices.last {
            entities[leaf].isAbstract = false
        }
        // Groups of hierarchies: each group is a configuration (its own store) when there are several.
        var groups = [hierarchies.flatMap { $0 }]
        var configurations: [RoundTripConfiguration] = []
        if hierarchies.count > 1, chance(35) {
            let count = Int.random(in: 2...hierarchies.count, using: &rng)
            var assigned = Array(repeating: [String](), count: count)
            for (index, hierarchy) in hierarchies.enumerated() {
                let group = index < count ? index : Int.random(in: 0..<count, using: &rng)
                assigned[group] += hierarchy
            }
            groups = assigned
            var taken: Set<String> = []
            for group in groups {
                let name = names.configuration(&rng, taken: taken)
                taken.insert(name)
                configurations.append(RoundTripConfiguration(name: name, entities: group))
            }
        }
        for index in entities.indices { addAttributes(to: index) }
        for group in groups {
            for _ in 0..<weighted([(0, 15), (1, 20), (2, 25), (3, 20), (4, 10), (6, 10)]) { addRelationship(in: group) }
        }
        for index in entities.indices { addConstraintsAndIndexes(to: index) }
        return RoundTripModelSpec(entities: entities, configurations: configurations)
    }

    // MARK: Entities

    /// Adds a root and up to two levels of subentities; returns their names.
    private mutating func makeHierarchy() -> [String] {
        let root = addEntity(parent: nil)
        var made = [root]
        let depth = weighted([(1, 45), (2, 35), (3, 20)])
        var level = [root]
        for _ in 1..<depth {
            var next: [String] = []
            for parent in level where next.isEmpty || chance(40) {
                for _ in 0..<Int.random(in: 1...2, using: &rng) { next.append(addEntity(parent: parent)) }
            }
            made += next
            level = next
        }
        for name in made {
            let index = entities.firstIndex { $0.name == name }!  // added above
            let hasChildren = entities.contains { $0.parent == name }
            entities[index].isAbstract = chance(hasChildren ? 35 : 5)
        }
        return made
    }

    private mutating func addEntity(parent: String?) -> String {
        let name = names.entity(&rng)
        names.markUsed(name)
        entities.append(RoundTripEntitySpec(name: name, parent: parent))
        return name
    }

    /// The names of the entity at `index`, its ancestors and its descendants: what a new property
    /// of it must not be named.
    private func takenNames(_ index: Int) -> Set<String> {
        let name = entities[index].name
        var taken: Set<String> = []
        for entity in entities where isKind(entity.name, of: name) || isKind(name, of: entity.name) {
            for property in entity.properties { taken.insert(property.name) }
        }
        return taken
    }

    /// Whether `name` is `ancestor` or one of its descendants.
    func isKind(_ name: String, of ancestor: String) -> Bool {
        var current: String? = name
        while let entity = current {
            if entity == ancestor { return true }
            current = entities.first { $0.name == entity }?.parent
        }
        return false
    }

    /// Entities that are `name` or its descendants and not abstract.
    func concreteKinds(of name: String) -> [String] {
        entities.filter { !$0.isAbstract && isKind($0.name, of: name) }.map(\.name)
    }

    // MARK: Attributes

    static var plainTypes: [AttributeType] {
        [
            .integer16, .integer32, .integer64, .decimal, .double, .float, .string, .boolean, .date, .binaryData, .uuid,
            .uri,
            .transformable,
        ]
    }

    private mutating func addAttributes(to index: Int) {
        for _ in 0..<weighted([(0, 20), (1, 25), (2, 25), (3, 15), (5, 15)]) {
            let name = names.property(&rng, taken: takenNames(index))
            entities[index].properties.append(.attribute(makeAttribute(name, transientAllowed: true)))
        }
        if chance(15) {
            let name = names.property(&rng, taken: takenNames(index))
            entities[index].properties.append(.attribute(makeComposite(name, depth: 1)))
        }
    }

    private mutating func makeAttribute(_ name: String, transientAllowed: Bool) -> AttributeDescription {
        let type = Self.plainTypes.randomElement(using: &rng)!  // non-empty list
        var attribute = AttributeDescription(name, type, isOptional: chance(75))
        if type != .binaryData && type != .transformable && chance(25) {
            attribute.defaultValue = RoundTripValues.value(for: attribute, &rng).storeValue
        }
        if transientAllowed && chance(5) { attribute.isTransient = true }
        if type == .transformable && chance(50) { attribute.valueTransformerName = JSONStringArrayTransformer.name }
        if type == .binaryData || type == .transformable { attribute.allowsExternalBinaryDataStorage = chance(40) }
        attribute.isIndexed = chance(10)
        return attribute
    }

    private mutating func makeComposite(_ name: String, depth: Int) -> AttributeDescription {
        var elements: [AttributeDescription] = []
        var taken: Set<String> = []
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            let element = names.property(&rng, taken: taken)
            taken.insert(element)
            if depth < 2 && chance(15) {
                elements.append(makeComposite(element, depth: depth + 1))
            } else {
                elements.append(makeAttribute(element, transientAllowed: false))
            }
        }
        // Nested composites are optional: the graph sets their required elements whenever the
        // enclosing composite holds a value.
        return .composite(
            name, elements: elements, compositeName: chance(50) ? nil : name.capitalized,
            isOptional: depth > 1 || chance(70))
    }

    // MARK: Relationships

    private mutating func addRelationship(in group: [String]) {
        guard let source = group.randomElement(using: &rng), let destination = group.randomElement(using: &rng),
            let s = entities.firstIndex(where: { $0.name == source }),
            let d = entities.firstIndex(where: { $0.name == destination })
        else { return }
        let rule = DeleteRule.allCases.randomElement(using: &rng)!  // non-empty list
        let name = names.property(&rng, taken: takenNames(s))
        let shape = Int.random(in: 0..<10, using: &rng)
        if shape < 2 {
            // Without an inverse.
            let toMany = chance(55)
            let required = !toMany && !concreteKinds(of: destination).isEmpty && chance(20)
            entities[s].properties.append(
                .relationship(
                    RelationshipDescription(
                        name, destination: destination, toMany: toMany, ordered: toMany && chance(40),
                        isOptional: !required,
                        minCount: required ? 1 : 0, deleteRule: rule)))
        } else if shape < 3 {
            // Its own inverse: destination is the source itself.
            let toMany = chance(60)
            entities[s].properties.append(
                .relationship(
                    RelationshipDescription(
                        name, destination: source, inverse: name, toMany: toMany, ordered: toMany && chance(40),
                        deleteRule: rule)))
        } else {
            // A pair: `name` on the source, its inverse on the destination.
            var taken = takenNames(d)
            taken.insert(name)
            let inverse = names.property(&rng, taken: taken)
            let toMany = chance(50)
            let inverseToMany = chance(50)
            let required = !toMany && inverseToMany && !concreteKinds(of: destination).isEmpty && chance(20)
            entities[s].properties.append(
                .relationship(
                    RelationshipDescription(
                        name, destination: destination, inverse: inverse, toMany: toMany, ordered: toMany && chance(40),
                        isOptional: !required, minCount: required ? 1 : 0, deleteRule: rule)))
            let inverseRule = DeleteRule.allCases.randomElement(using: &rng)!  // non-empty list
            entities[d].properties.append(
                .relationship(
                    RelationshipDescription(
                        inverse, destination: source, inverse: name, toMany: inverseToMany,
                        ordered: inverseToMany && chance(40), deleteRule: inverseRule)))
        }
    }

    // MARK: Constraints and indexes

    /// Stored attribute slots of the entity at `index`, inherited ones included, by key path.
    private func storedAttributes(_ index: Int) -> [(name: String, type: AttributeType)] {
        var chain: [RoundTripEntitySpec] = []
        var current: String? = entities[index].name
        while let name = current, let entity = entities.first(where: { $0.name == name }) {
            chain.insert(entity, at: 0)
            current = entity.parent
        }
        var result: [(String, AttributeType)] = []
        for entity in chain {
            for case .attribute(let attribute) in entity.properties where !attribute.isTransient {
                if attribute.isComposite {
                    for leaf in attribute.leafElements {
                        result.append((attribute.name + "." + leaf.keyPath, leaf.attribute.type))
                    }
                } else {
                    result.append((attribute.name, attribute.type))
                }
            }
        }
        return result
    }

    private mutating func addConstraintsAndIndexes(to index: Int) {
        let attributes = storedAttributes(index)
        let constrainable = attributes.filter {
            [.string, .integer16, .integer32, .integer64, .uuid].contains($0.type)
        }
        if !constrainable.isEmpty, chance(15) {
            let count = min(constrainable.count, Int.random(in: 1...2, using: &rng))
            entities[index].uniquenessConstraints.append(
                Array(constrainable.shuffled(using: &rng).prefix(count).map(\.name)))
        }
        if !attributes.isEmpty, chance(20) {
            let count = min(attributes.count, Int.random(in: 1...2, using: &rng))
            let elements = attributes.shuffled(using: &rng).prefix(count).map {
                FetchIndexDescription.Element($0.name, ascending: chance(70))
            }
            let name = names.index(&rng, taken: Set(entities[index].indexes.map(\.name)))
            entities[index].indexes.append(FetchIndexDescription(name: name, elements: elements))
        }
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

extension RoundTripValue {
    /// The stored form, for values set in stored form (``RoundTripValue/store(_:)``); `.null` otherwise.
    var storeValue: StoreValue {
        if case .store(let value) = self { return value }
        return .null
    }
}
