import Foundation

/// How the objects of one model version become objects of another (Core Data's `NSMappingModel`):
/// one ``EntityMapping`` per destination entity (and per source entity that goes away).
///
/// Three ways in: ``inferredMappingModel(forSourceModel:destinationModel:)`` (what Core Data's
/// lightweight migration infers), ``init(entityMappings:)`` with mappings built in Swift, and an
/// Xcode `.xcmappingmodel` read by `XcodeMappingModel.read(at:)` in StrataTools (reading one
/// takes the XML driver, which the core does not import).
///
/// Thread safety: immutable and `Sendable`.
public final class MappingModel: Sendable, Hashable, CustomStringConvertible {
    /// The entity mappings, in the order they run.
    public let entityMappings: [EntityMapping]
    /// Whether inference made the model (Core Data's mappings named `IEM_…`).
    public let isInferred: Bool

    /// Creates a mapping model.
    ///
    /// - Throws: ``MigrationError`` `.invalidMapping` when two mappings share a name.
    public init(entityMappings: [EntityMapping]) throws {
        var seen = Set<String>()
        for mapping in entityMappings where !seen.insert(mapping.name).inserted {
            throw MigrationError(
                .invalidMapping,
                "the mapping model has two entity mappings named '\(mapping.name)'; give each its own name")
        }
        self.entityMappings = entityMappings
        self.isInferred =
            !entityMappings.isEmpty && entityMappings.allSatisfy { $0.name.hasPrefix(Self.inferredPrefix) }
    }

    init(inferred mappings: [EntityMapping]) {
        self.entityMappings = mappings
        self.isInferred = true
    }

    /// Core Data's prefix of inferred mapping names (`IEM_Transform_Car`).
    public static let inferredPrefix = "IEM_"

    /// Entity mappings by name.
    public var entityMappingsByName: [String: EntityMapping] {
        Dictionary(entityMappings.map { ($0.name, $0) }) { first, _ in first }
    }

    /// The entity mapping named `name`, or `nil`.
    public func entityMapping(named name: String) -> EntityMapping? { entityMappings.first { $0.name == name } }

    /// Checks that every entity and property the mappings name exists in the models.
    ///
    /// - Throws: ``MigrationError`` `.invalidMapping`, listing every name that is missing.
    public func check(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) throws {
        var problems: [String] = []
        for mapping in entityMappings {
            if let name = mapping.sourceEntityName, sourceModel.entity(named: name) == nil {
                problems.append(
                    "mapping '\(mapping.name)' names source entity '\(name)', which the source model does not have")
            }
            guard let name = mapping.destinationEntityName else { continue }
            guard let entity = destinationModel.entity(named: name) else {
                problems.append(
                    "mapping '\(mapping.name)' names destination entity '\(name)', which the destination model does not have"
                )
                continue
            }
            for property in mapping.attributeMappings where entity.attributesByName[property.name] == nil {
                problems.append(
                    "mapping '\(mapping.name)' maps attribute '\(name).\(property.name)', which does not exist")
            }
            for property in mapping.relationshipMappings where entity.relationshipsByName[property.name] == nil {
                problems.append(
                    "mapping '\(mapping.name)' maps relationship '\(name).\(property.name)', which does not exist")
            }
            if mapping.sourceEntityName == nil, mapping.mappingType != .add, mapping.mappingType != .custom {
                problems.append("mapping '\(mapping.name)' of type \(mapping.mappingType) has no source entity")
            }
        }
        if !problems.isEmpty {
            throw MigrationError(
                .invalidMapping, "the mapping model does not fit the models; check that it was made for these versions",
                changes: problems)
        }
    }

    public static func == (lhs: MappingModel, rhs: MappingModel) -> Bool { lhs.entityMappings == rhs.entityMappings }
    public func hash(into hasher: inout Hasher) { hasher.combine(entityMappings) }

    public var description: String {
        "mapping model (\(entityMappings.count) entity mappings\(isInferred ? ", inferred" : ""))"
    }
}

/// The kind of an ``EntityMapping``, with Core Data's `NSEntityMappingType` numbers.
public enum EntityMappingType: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not specified (Xcode writes it for every mapping it saves; treated as ``transform`` when a
    /// source entity is named, ``add`` otherwise).
    case undefined = 0
    /// The policy makes destination instances itself.
    case custom = 1
    /// A new entity: nothing is read from the source.
    case add = 2
    /// A source entity whose instances are not carried over.
    case remove = 3
    /// Instances carried over as they are.
    case copy = 4
    /// Instances carried over through the property mappings.
    case transform = 5

    /// The name used in output (`transform`).
    public var description: String {
        switch self {
        case .undefined: "undefined"
        case .custom: "custom"
        case .add: "add"
        case .remove: "remove"
        case .copy: "copy"
        case .transform: "transform"
        }
    }
}

/// How instances of one source entity become instances of one destination entity (Core Data's
/// `NSEntityMapping`).
public struct EntityMapping: Sendable, Hashable {
    /// The mapping's name, unique in its model (Xcode names them `<Source>To<Destination>`;
    /// inference `IEM_<Type>_<Destination>`).
    public var name: String
    /// The kind of mapping.
    public var mappingType: EntityMappingType
    /// The source entity's name (`nil` for ``EntityMappingType/add``).
    public var sourceEntityName: String?
    /// The source entity's version hash, when known (Core Data's hash, ``ModelVersionHashes``).
    public var sourceEntityVersionHash: Data?
    /// The destination entity's name (`nil` for ``EntityMappingType/remove``).
    public var destinationEntityName: String?
    /// The destination entity's version hash, when known.
    public var destinationEntityVersionHash: Data?
    /// How each destination attribute gets its value.
    public var attributeMappings: [PropertyMapping]
    /// How each destination relationship gets its destinations.
    public var relationshipMappings: [PropertyMapping]
    /// Which source instances are migrated (Xcode's filter predicate); `nil` for all.
    public var filterPredicate: FetchPredicate?
    /// The name of the ``EntityMigrationPolicy`` that runs this mapping, as registered with
    /// ``EntityMigrationPolicy/register(_:forClassName:)``; `nil` for the default policy.
    public var entityMigrationPolicyClassName: String?
    /// Free-form key/value pairs.
    public var userInfo: [String: String]

    /// Creates an entity mapping.
    public init(
        name: String, mappingType: EntityMappingType, sourceEntityName: String? = nil,
        destinationEntityName: String? = nil, attributeMappings: [PropertyMapping] = [],
        relationshipMappings: [PropertyMapping] = [], filterPredicate: FetchPredicate? = nil,
        entityMigrationPolicyClassName: String? = nil, sourceEntityVersionHash: Data? = nil,
        destinationEntityVersionHash: Data? = nil, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.mappingType = mappingType
        self.sourceEntityName = sourceEntityName
        self.destinationEntityName = destinationEntityName
        self.attributeMappings = attributeMappings
        self.relationshipMappings = relationshipMappings
        self.filterPredicate = filterPredicate
        self.entityMigrationPolicyClassName = entityMigrationPolicyClassName
        self.sourceEntityVersionHash = sourceEntityVersionHash
        self.destinationEntityVersionHash = destinationEntityVersionHash
        self.userInfo = userInfo
    }

    /// The type the mapping runs as: ``EntityMappingType/undefined`` is a transform when there is
    /// a source and a destination, an add without a source, a remove without a destination.
    public var effectiveType: EntityMappingType {
        guard mappingType == .undefined else { return mappingType }
        if sourceEntityName == nil { return .add }
        if destinationEntityName == nil { return .remove }
        return .transform
    }
}

/// How one destination property gets its value (Core Data's `NSPropertyMapping`).
public struct PropertyMapping: Sendable, Hashable {
    /// The destination property's name.
    public var name: String
    /// The value: an expression evaluated with `$source`, `$destination`, `$manager`,
    /// `$entityPolicy`, `$entityMapping` and `$propertyMapping` bound; `nil` leaves the property
    /// as the new object has it (its default).
    public var valueExpression: FetchExpression?
    /// Free-form key/value pairs.
    public var userInfo: [String: String]

    /// Creates a property mapping.
    public init(name: String, valueExpression: FetchExpression? = nil, userInfo: [String: String] = [:]) {
        self.name = name
        self.valueExpression = valueExpression
        self.userInfo = userInfo
    }

    /// Creates a property mapping whose expression is parsed from `format`, in the language of
    /// predicates with `FUNCTION(target, "selector", arguments…)` allowed
    /// (`"$source.name"`, `"FUNCTION($source, \"valueForKey:\", \"name\")"`).
    ///
    /// - Throws: ``FetchPredicateError`` when the expression does not parse.
    public init(name: String, format: String, userInfo: [String: String] = [:]) throws {
        self.init(name: name, valueExpression: try FetchExpression(mappingFormat: format), userInfo: userInfo)
    }
}
