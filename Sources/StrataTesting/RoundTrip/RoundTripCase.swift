import Foundation
import Strata

/// One case of the generative round-trip suite: a model and an object graph over it, both made
/// from ``seed`` by ``RoundTripCase/generate(seed:)`` (or shrunk from such a case).
///
/// The model is kept as a ``RoundTripModelSpec`` (entities with their declared properties) so a
/// failing case can shrink by dropping entities, properties, objects and values; ``makeModel()``
/// builds the ``ManagedObjectModel``.
public struct RoundTripCase: Sendable, Hashable, CustomStringConvertible {
    /// The seed the case was generated from (shrunk cases keep it).
    public var seed: UInt64
    /// The model.
    public var model: RoundTripModelSpec
    /// The objects, and the changes a second save makes.
    public var graph: RoundTripGraph

    /// Creates a case.
    public init(seed: UInt64, model: RoundTripModelSpec, graph: RoundTripGraph) {
        self.seed = seed
        self.model = model
        self.graph = graph
    }

    /// A short summary: the seed, and the size of the model and the graph.
    public var summary: String {
        let properties = model.entities.reduce(0) { $0 + $1.properties.count }
        return
            "seed \(seed): \(model.entities.count) entities, \(properties) properties, \(model.configurations.count) configurations, \(graph.objects.count) objects, \(graph.edits.count) edits"
    }

    /// The whole case, readable: every entity with its properties, then every object.
    public var description: String {
        var lines = [summary]
        for entity in model.entities {
            var head = "entity \(RoundTripText.name(entity.name))"
            if let parent = entity.parent { head += " : \(RoundTripText.name(parent))" }
            if entity.isAbstract { head += " (abstract)" }
            lines.append(head)
            for property in entity.properties { lines.append("  " + RoundTripText.property(property)) }
            for constraint in entity.uniquenessConstraints {
                lines.append("  unique (\(constraint.map(RoundTripText.name).joined(separator: ", ")))")
            }
            for index in entity.indexes {
                let elements = index.elements.map { RoundTripText.name($0.property) + ($0.ascending ? "" : " desc") }
                lines.append("  index \(RoundTripText.name(index.name)) (\(elements.joined(separator: ", ")))")
            }
        }
        for configuration in model.configurations {
            lines.append(
                "configuration \(RoundTripText.name(configuration.name)): \(configuration.entities.map(RoundTripText.name).joined(separator: ", "))"
            )
        }
        for (index, object) in graph.objects.enumerated() {
            lines.append("object \(index): \(RoundTripText.name(object.entity))")
            for (key, value) in object.values.sorted(by: { $0.key < $1.key }) {
                lines.append("  \(RoundTripText.name(key)) = \(value)")
            }
            for (key, targets) in object.links.sorted(by: { $0.key < $1.key }) {
                lines.append("  \(RoundTripText.name(key)) -> \(targets)")
            }
        }
        for edit in graph.edits { lines.append("edit: \(edit)") }
        return lines.joined(separator: "\n")
    }
}

/// A model as the generator made it: entities with their declared properties, and configurations.
public struct RoundTripModelSpec: Sendable, Hashable {
    /// The entities, parents before children.
    public var entities: [RoundTripEntitySpec]
    /// Configurations that split the entities into groups, each closed under inheritance and
    /// relationships, so each can live in a store of its own. Empty: one store holds everything.
    public var configurations: [RoundTripConfiguration]

    /// Creates a model spec.
    public init(entities: [RoundTripEntitySpec], configurations: [RoundTripConfiguration]) {
        self.entities = entities
        self.configurations = configurations
    }

    /// Builds the model.
    ///
    /// - Throws: ``ModelError`` when the spec is not a valid model (a generator bug).
    public func makeModel() throws -> ManagedObjectModel {
        let built = entities.map { spec in
            EntityDescription(
                spec.name, parent: spec.parent, isAbstract: spec.isAbstract, properties: spec.properties,
                uniquenessConstraints: spec.uniquenessConstraints, indexes: spec.indexes)
        }
        var configurations: [String: [String]] = [:]
        for configuration in self.configurations { configurations[configuration.name] = configuration.entities }
        return try ManagedObjectModel(entities: built, configurations: configurations)
    }

    /// The entity named `name`.
    func entity(_ name: String) -> RoundTripEntitySpec? { entities.first { $0.name == name } }
}

/// One entity of a ``RoundTripModelSpec``.
public struct RoundTripEntitySpec: Sendable, Hashable {
    /// The entity's name.
    public var name: String
    /// The parent's name.
    public var parent: String?
    /// Whether the entity is abstract.
    public var isAbstract: Bool
    /// The properties the entity declares.
    public var properties: [PropertyDescription]
    /// Unique constraints over its attributes.
    public var uniquenessConstraints: [[String]]
    /// Fetch indexes.
    public var indexes: [FetchIndexDescription]

    /// Creates an entity spec.
    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false, properties: [PropertyDescription] = [],
        uniquenessConstraints: [[String]] = [], indexes: [FetchIndexDescription] = []
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.properties = properties
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
    }
}

/// A configuration: a name and the entities it holds.
public struct RoundTripConfiguration: Sendable, Hashable {
    /// The configuration's name.
    public var name: String
    /// Its entities.
    public var entities: [String]

    /// Creates a configuration.
    public init(name: String, entities: [String]) {
        self.name = name
        self.entities = entities
    }
}

/// An object graph: objects inserted by a first save, then edits made by a second save.
public struct RoundTripGraph: Sendable, Hashable {
    /// The objects, in insertion order; an object is named by its index here.
    public var objects: [RoundTripObject]
    /// Changes of the second save (none: no second save).
    public var edits: [RoundTripEdit]

    /// Creates a graph.
    public init(objects: [RoundTripObject] = [], edits: [RoundTripEdit] = []) {
        self.objects = objects
        self.edits = edits
    }
}

/// One object of a ``RoundTripGraph``.
public struct RoundTripObject: Sendable, Hashable {
    /// The entity (never abstract).
    public var entity: String
    /// Attribute values by slot name (composite elements by key path). A stored attribute left
    /// out keeps its default.
    public var values: [String: RoundTripValue]
    /// Relationship targets by name, as object indexes: one or none for a to-one, members in
    /// order for a to-many (added one by one).
    public var links: [String: [Int]]

    /// Creates an object.
    public init(entity: String, values: [String: RoundTripValue] = [:], links: [String: [Int]] = [:]) {
        self.entity = entity
        self.values = values
        self.links = links
    }
}

/// An attribute value as the graph sets it.
public enum RoundTripValue: Sendable, Hashable, CustomStringConvertible {
    /// Set in stored form (``ManagedObject/setStoreValue(_:forKey:)``).
    case store(StoreValue)
    /// Set through the attribute's value transformer (``JSONStringArrayTransformer``).
    case strings([String])

    public var description: String {
        switch self {
        case .store(let value): RoundTripText.value(value)
        case .strings(let strings): "[" + strings.map { RoundTripText.value(.string($0)) }.joined(separator: ", ") + "]"
        }
    }
}

/// A change the second save makes.
public enum RoundTripEdit: Sendable, Hashable, CustomStringConvertible {
    /// Sets an attribute of an object.
    case set(object: Int, key: String, value: RoundTripValue)
    /// Sets a to-one relationship (no target: `nil`) or adds members to a to-many one.
    case link(object: Int, key: String, targets: [Int])
    /// Deletes an object (skipped when a delete rule or a required relationship would refuse it,
    /// or a relationship without inverse points at what it would delete).
    case delete(object: Int)

    public var description: String {
        switch self {
        case .set(let object, let key, let value): "set \(object).\(RoundTripText.name(key)) = \(value)"
        case .link(let object, let key, let targets): "link \(object).\(RoundTripText.name(key)) -> \(targets)"
        case .delete(let object): "delete \(object)"
        }
    }

    /// The object the edit changes.
    public var object: Int {
        switch self {
        case .set(let object, _, _), .link(let object, _, _), .delete(let object): object
        }
    }
}
