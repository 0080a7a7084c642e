import Foundation

/// What a ``MigrationManager`` does with the instances of one entity mapping (Core Data's
/// `NSEntityMigrationPolicy`), in Core Data's three phases: create the destination instances
/// (``createDestinationInstances(forSource:in:manager:)``), relate them
/// (``createRelationships(forDestination:in:manager:)``), then validate
/// (``performCustomValidation(forMapping:manager:)``). One policy instance serves one entity
/// mapping through all phases.
///
/// Subclass it and register the subclass under the class name the mapping model names
/// (``register(_:forClassName:)``): Swift on Linux cannot find a class by its name. The default
/// implementations do what Core Data's do: make one destination instance per source instance,
/// set its attributes from the attribute mappings' value expressions, and later its relationships
/// from the relationship mappings'.
///
/// Thread safety: not `Sendable`; a migration runs on one thread.
open class EntityMigrationPolicy {
    /// Creates a policy.
    public required init() {}

    /// Called before the mapping's first instance is created.
    open func begin(_ mapping: EntityMapping, with manager: MigrationManager) throws {}

    /// Makes the destination instances of one source instance and associates them with it. The
    /// default inserts one instance of the mapping's destination entity, sets each attribute that
    /// has a value expression, and calls ``MigrationManager/associate(sourceInstance:withDestinationInstance:for:)``.
    open func createDestinationInstances(
        forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    )
        throws
    {
        guard let name = mapping.destinationEntityName else { return }
        let destination = try manager.requireDestinationContext().insertNewObject(forEntityName: name)
        for property in mapping.attributeMappings {
            guard let expression = property.valueExpression else { continue }
            let value = try manager.evaluate(
                expression, source: source, destination: destination, mapping: mapping, property: property, policy: self
            )
            try manager.set(value, forKey: property.name, of: destination)
        }
        manager.associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
    }

    /// Called after the mapping's last instance is created.
    open func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Sets the relationships of one destination instance. The default evaluates each
    /// relationship mapping's value expression with `$source` bound to the instance's source.
    open func createRelationships(
        forDestination destination: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    )
        throws
    {
        guard
            let source = manager.sourceInstances(
                forEntityMappingName: mapping.name, destinationInstances: [destination]
            ).first
        else { return }
        for property in mapping.relationshipMappings {
            guard let expression = property.valueExpression else { continue }
            let value = try manager.evaluate(
                expression, source: source, destination: destination, mapping: mapping, property: property, policy: self
            )
            try manager.set(value, forKey: property.name, of: destination)
        }
    }

    /// Called after the mapping's last instance is related.
    open func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Checks the mapping's destination instances before they are saved.
    open func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Called when the mapping is done.
    open func end(_ mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Answers `FUNCTION($entityPolicy, "selector", arguments…)` in a value expression: the
    /// arguments are Swift values (`nil`, numbers, strings, dates, data, ``ManagedObject``s,
    /// arrays); return the same kinds. The default knows Core Data's
    /// `_nonNilValueOrDefaultValueForAttribute:source:destination:` and refuses anything else.
    ///
    /// - Throws: ``MigrationError`` `.invalidMapping` for a selector the policy does not know.
    open func value(forFunction selector: String, arguments: [Any?], manager: MigrationManager) throws -> Any? {
        throw MigrationError(
            .invalidMapping,
            "the value expression calls \(selector) on $entityPolicy, which \(type(of: self)) does not answer; override value(forFunction:arguments:manager:) in the mapping's policy"
        )
    }

    private static let registry = Locked<[String: @Sendable () -> EntityMigrationPolicy]>([:])

    /// Makes `type` the policy of every entity mapping whose ``EntityMapping/entityMigrationPolicyClassName``
    /// is `name`, or ends with `.name` (Xcode writes `Module.Class`; a placeholder module such as
    /// `REPLACE_AT_RUNTIME.Class` then finds `Class`).
    public static func register(_ type: EntityMigrationPolicy.Type, forClassName name: String) {
        registry.withLock { $0[name] = { type.init() } }
    }

    /// Makes `make` produce the policy of the mappings naming `name` (a closure in place of a class).
    public static func register(className name: String, _ make: @escaping @Sendable () -> EntityMigrationPolicy) {
        registry.withLock { $0[name] = make }
    }

    /// Removes the policy registered under `name`.
    public static func unregister(className name: String) { _ = registry.withLock { $0.removeValue(forKey: name) } }

    /// A new policy for the class name `name`, or `nil` when none is registered.
    static func make(className name: String) -> EntityMigrationPolicy? {
        let make = registry.withLock { table -> (@Sendable () -> EntityMigrationPolicy)? in
            if let make = table[name] { return make }
            let bare = name.split(separator: ".").last.map(String.init) ?? name
            return table[bare] ?? table.first { $0.key.split(separator: ".").last.map(String.init) == bare }?.value
        }
        return make?()
    }
}

/// A policy made of closures, for mappings whose custom work fits in a few lines; each closure
/// that is `nil` does what ``EntityMigrationPolicy`` does.
public final class ClosureMigrationPolicy: EntityMigrationPolicy {
    /// Replaces ``EntityMigrationPolicy/createDestinationInstances(forSource:in:manager:)``.
    public var createDestinationInstances: ((ManagedObject, EntityMapping, MigrationManager) throws -> Void)?
    /// Replaces ``EntityMigrationPolicy/createRelationships(forDestination:in:manager:)``.
    public var createRelationships: ((ManagedObject, EntityMapping, MigrationManager) throws -> Void)?
    /// Replaces ``EntityMigrationPolicy/performCustomValidation(forMapping:manager:)``.
    public var validate: ((EntityMapping, MigrationManager) throws -> Void)?
    /// Answers ``EntityMigrationPolicy/value(forFunction:arguments:manager:)``.
    public var function: ((String, [Any?], MigrationManager) throws -> Any?)?

    public required init() {}

    public override func createDestinationInstances(
        forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        if let createDestinationInstances { return try createDestinationInstances(source, mapping, manager) }
        try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
    }

    public override func createRelationships(
        forDestination destination: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        if let createRelationships { return try createRelationships(destination, mapping, manager) }
        try super.createRelationships(forDestination: destination, in: mapping, manager: manager)
    }

    public override func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
        try validate?(mapping, manager)
    }

    public override func value(forFunction selector: String, arguments: [Any?], manager: MigrationManager) throws
        -> Any?
    {
        if let function { return try function(selector, arguments, manager) }
        return try super.value(forFunction: selector, arguments: arguments, manager: manager)
    }
}
