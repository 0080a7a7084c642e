import Foundation

/// A model: the entities a coordinator's stores hold, with configurations, fetch request templates
/// and version hashes.
///
/// Three ways in: the Swift builder (``init(entities:configurations:fetchRequestTemplates:versionIdentifiers:userInfo:)``),
/// an Xcode model file (``init(contentsOf:)``), and a store's embedded model. Creating a model
/// checks it: every parent, destination and inverse must exist and agree, names must be unique.
///
/// Thread safety: immutable and `Sendable`; share one model between coordinators and threads.
public final class ManagedObjectModel: Sendable, CustomStringConvertible {
    /// The name of the configuration holding every entity (Core Data's default configuration).
    public static let defaultConfigurationName = "Default"

    /// Every entity, ordered by ``EntityDescription/entityNumber``.
    public let entities: [EntityDescription]
    /// Entities by name.
    public let entitiesByName: [String: EntityDescription]
    /// Named configurations: subsets of entities used to route entities to stores.
    public let configurations: [String: [String]]
    /// Named fetch request templates, whose predicates may hold `$VARIABLES`.
    public let fetchRequestTemplates: [String: FetchRequestTemplate]
    /// Free-form version identifiers (informational).
    public let versionIdentifiers: [String]
    /// Free-form key/value pairs.
    public let userInfo: [String: String]
    /// The model's version hash: SHA-256 over its entities' names and version hashes
    /// (see docs/architecture.md, "Version hashes").
    public let versionHash: Data
    /// What loading the model's file noticed but did not refuse (unknown XML attributes and
    /// elements, defaults that do not read as their type, …), in file order; empty for a model
    /// built in Swift. See ``ModelWarning``.
    public let loadWarnings: [ModelWarning]
    private let entitiesByLowercasedName: [String: EntityDescription]
    /// Whether some entity has a derived attribute (saves compute them only then).
    let hasDerivedAttributes: Bool

    /// Builds and checks a model.
    ///
    /// - Parameters:
    ///   - entities: The entities, in any order; parents are named by ``EntityDescription/superentityName``.
    ///   - configurations: Configuration name → entity names.
    ///   - fetchRequestTemplates: Template name → template.
    /// - Throws: ``ModelError`` naming the entity and property at fault; `.invalidName` for a name
    ///   that is not an identifier (``isValidName(_:)``).
    public convenience init(
        entities: [EntityDescription], configurations: [String: [String]] = [:],
        fetchRequestTemplates: [String: FetchRequestTemplate] = [:], versionIdentifiers: [String] = [],
        userInfo: [String: String] = [:]
    ) throws {
        try self.init(
            entities: entities, configurations: configurations, fetchRequestTemplates: fetchRequestTemplates,
            versionIdentifiers: versionIdentifiers, userInfo: userInfo, loadWarnings: [])
    }

    /// Builds and checks a model, keeping the warnings its file's loader gathered.
    init(
        entities: [EntityDescription], configurations: [String: [String]],
        fetchRequestTemplates: [String: FetchRequestTemplate],
        versionIdentifiers: [String], userInfo: [String: String], loadWarnings: [ModelWarning]
    ) throws {
        let resolved = try ModelResolver(entities: entities).resolve()
        self.entities = resolved
        self.entitiesByName = Dictionary(uniqueKeysWithValues: resolved.map { ($0.name, $0) })
        self.entitiesByLowercasedName = Dictionary(resolved.map { ($0.name.lowercased(), $0) }) { a, _ in a }
        for name in configurations.keys.sorted() { try ModelNameRule.check(name, kind: "configuration") }
        for name in fetchRequestTemplates.keys.sorted() {
            try ModelNameRule.check(name, kind: "fetch request template")
        }
        for (configuration, members) in configurations {
            for member in members where entitiesByName[member] == nil {
                throw ModelError(
                    .unknownEntity, "configuration '\(configuration)' names entity '\(member)', which does not exist",
                    element: "configuration \(configuration)")
            }
        }
        for (name, template) in fetchRequestTemplates where entitiesByName[template.entityName] == nil {
            throw ModelError(
                .unknownEntity,
                "fetch request template '\(name)' names entity '\(template.entityName)', which does not exist",
                element: "fetchRequest \(name)")
        }
        self.configurations = configurations
        self.fetchRequestTemplates = fetchRequestTemplates
        self.versionIdentifiers = versionIdentifiers
        self.userInfo = userInfo
        self.loadWarnings = loadWarnings
        self.versionHash = VersionHasher.modelHash(resolved)
        self.hasDerivedAttributes = resolved.contains { $0.attributes.contains(where: \.isDerived) }
        try checkDerivations()
    }

    /// The entity named `name`, or `nil`.
    public func entity(named name: String) -> EntityDescription? { entitiesByName[name] }

    /// The entity whose name matches `name` ignoring case (XML stores write names upper-cased).
    public func entity(namedIgnoringCase name: String) -> EntityDescription? {
        entitiesByName[name] ?? entitiesByLowercasedName[name.lowercased()]
    }

    /// The entity numbered `number`, or `nil`.
    ///
    /// - Complexity: O(1).
    @inlinable public func entity(number: Int32) -> EntityDescription? {
        let index = Int(number) - 1
        return entities.indices.contains(index) ? entities[index] : nil
    }

    /// The entities of a configuration; `nil` or ``defaultConfigurationName`` means every entity.
    ///
    /// - Throws: ``ModelError`` when the configuration does not exist.
    public func entities(forConfiguration name: String?) throws -> [EntityDescription] {
        guard let name, name != Self.defaultConfigurationName else { return entities }
        guard let members = configurations[name] else {
            throw ModelError(.unknownEntity, "the model has no configuration named '\(name)'")
        }
        let set = Set(members)
        return entities.filter { set.contains($0.name) }
    }

    /// Version hashes by entity name, as stores record them in their metadata.
    public var entityVersionHashesByName: [String: Data] {
        Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.versionHash) })
    }

    /// A model with the same entities whose objects are instances of the given subclasses.
    ///
    /// - Parameter classes: Entity name → ``ManagedObject`` subclass.
    /// - Throws: ``ModelError`` when an entity name is unknown.
    public func registering(_ classes: [String: ManagedObject.Type]) throws -> ManagedObjectModel {
        for name in classes.keys where entitiesByName[name] == nil {
            throw ModelError(.unknownEntity, "cannot register a class for entity '\(name)', which does not exist")
        }
        let copies = entities.map { entity in
            entity.copy(managedObjectClass: classes[entity.name] ?? entity.managedObjectClass)
        }
        return try ManagedObjectModel(
            entities: copies, configurations: configurations, fetchRequestTemplates: fetchRequestTemplates,
            versionIdentifiers: versionIdentifiers, userInfo: userInfo, loadWarnings: loadWarnings)
    }

    /// Whether a store whose metadata records `hashes` (entity name → version hash) can be opened
    /// with this model's configuration `configuration` without migration.
    public func isConfiguration(_ configuration: String?, compatibleWith hashes: [String: Data]) -> Bool {
        // An unknown configuration is simply not compatible (the error cannot matter to the answer).
        guard let members = try? entities(forConfiguration: configuration) else { return false }
        return differingEntities(configuration, from: hashes).isEmpty && members.count == hashes.count
    }

    /// The names of entities whose hashes differ from `hashes`, or that only one side has.
    public func differingEntities(_ configuration: String?, from hashes: [String: Data]) -> [String] {
        // An unknown configuration compares every entity (safe: a wider comparison only finds more differences).
        let members = (try? entities(forConfiguration: configuration)) ?? entities
        var differing = Set<String>()
        for entity in members where hashes[entity.name] != entity.versionHash { differing.insert(entity.name) }
        let names = Set(members.map(\.name))
        for name in hashes.keys where !names.contains(name) { differing.insert(name) }
        return differing.sorted()
    }

    public var description: String {
        "model (\(entities.count) entities, hash \(versionHash.hexString.prefix(12)))"
    }
}

/// A named fetch request stored in a model, whose predicate may hold `$VARIABLES`.
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The entity fetched.
    public var entityName: String
    /// The predicate, in NSPredicate format syntax (empty for none).
    public var predicateFormat: String
    /// Whether subentities are included.
    public var includesSubentities: Bool
    /// What the fetch returns.
    public var resultType: FetchResultType
    /// The most objects the fetch returns; 0 for no limit (Xcode's `fetchLimit`).
    public var fetchLimit: Int
    /// The batch size of the fetch; 0 for none (Xcode's `fetchBatchSize`).
    public var fetchBatchSize: Int

    /// Creates a template.
    public init(
        entityName: String, predicateFormat: String, includesSubentities: Bool = true,
        resultType: FetchResultType = .managedObject, fetchLimit: Int = 0, fetchBatchSize: Int = 0
    ) {
        self.entityName = entityName
        self.predicateFormat = predicateFormat
        self.includesSubentities = includesSubentities
        self.resultType = resultType
        self.fetchLimit = fetchLimit
        self.fetchBatchSize = fetchBatchSize
    }
}
