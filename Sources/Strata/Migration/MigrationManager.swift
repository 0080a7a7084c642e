import Foundation

/// Migrates a store into a new one with a mapping model (Core Data's `NSMigrationManager`).
///
/// ``migrateStore(from:type:options:mapping:to:type:options:)`` writes a *new* store at the
/// destination URL; replace the old store with it afterwards
/// (``PersistentStoreCoordinator/replacePersistentStore(at:withPersistentStoreFrom:type:options:)``),
/// or let ``StoreMigration`` do both. A mapping whose property mappings are all of the shapes
/// inference makes, with no policy or filter, is run on rows (``StoreMigrationPlan``: no objects,
/// bounded memory). Any other runs Core Data's three phases on objects, in a source context on the
/// old store (opened read-only) and a destination context on the new one: every entity mapping's
/// policy creates destination instances, then relates them, then validates, and the destination
/// context is saved once. Memory then grows with the store, as in Core Data.
///
/// Thread safety: not `Sendable`; use a manager from one thread, for one migration at a time.
public final class MigrationManager {
    /// The model of the store migrated from.
    public let sourceModel: ManagedObjectModel
    /// The model of the store migrated to.
    public let destinationModel: ManagedObjectModel
    /// The mapping of the running or last migration.
    public private(set) var mappingModel: MappingModel?
    /// The context on the source store while objects are migrated.
    public private(set) var sourceContext: ManagedObjectContext?
    /// The context on the new store while objects are migrated.
    public private(set) var destinationContext: ManagedObjectContext?
    /// The entity mapping being run.
    public private(set) var currentEntityMapping: EntityMapping?
    /// From 0 to 1.
    public private(set) var migrationProgress: Double = 0
    /// Free-form values for policies to share.
    public var userInfo: [String: Any] = [:]
    /// Called as the migration advances, on the migrating thread.
    public var progressHandler: ((MigrationProgress) -> Void)?
    /// Objects (or rows) written per destination entity by the last migration.
    public private(set) var destinationCounts: [String: Int] = [:]

    private var forward: [String: [ManagedObjectID: [ManagedObject]]] = [:]
    private var backward: [String: [ObjectIdentifier: [ManagedObject]]] = [:]
    private var destinationsByMapping: [String: [ManagedObject]] = [:]
    private var cancellation: (any Error)?
    private var done = 0
    private var total = 0

    /// Creates a manager for a migration from `sourceModel` to `destinationModel`.
    public init(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
    }

    /// Writes a new store at `destinationURL` holding the store at `sourceURL` migrated with
    /// `mapping`. The source store is only read. The new store keeps the old one's identifier
    /// (so object URIs stay meaningful), records the destination model and the migration, and
    /// must not exist yet.
    ///
    /// - Throws: ``MigrationError`` (a mapping that does not fit, a policy that is missing or
    ///   fails, rows the new model refuses, ``cancelMigration(_:)``), ``ObjectValidationError`` when the
    ///   migrated objects do not validate, ``StoreError`` for the stores. The new store is then
    ///   removed; the old one is unchanged.
    public func migrateStore(
        from sourceURL: URL, type sourceType: StoreType, options sourceOptions: StoreOptions = StoreOptions(),
        mapping: MappingModel, to destinationURL: URL, type destinationType: StoreType,
        options destinationOptions: StoreOptions = StoreOptions()
    ) throws {
        var reading = sourceOptions
        reading.isReadOnly = true
        reading.createIfMissing = false
        guard let metadata = try sourceType.factory.metadata(at: sourceURL, options: reading) else {
            throw StoreError(.notFound, "there is no store to migrate here; check the path", store: sourceURL.path)
        }
        try migrateStore(
            from: sourceURL, type: sourceType, options: reading, mapping: mapping, to: destinationURL,
            type: destinationType,
            options: destinationOptions,
            metadata: StoreMigration.migratedMetadata(metadata, from: sourceModel, to: destinationModel))
    }

    func migrateStore(
        from sourceURL: URL, type sourceType: StoreType, options sourceOptions: StoreOptions, mapping: MappingModel,
        to destinationURL: URL, type destinationType: StoreType, options destinationOptions: StoreOptions,
        metadata: StoreMetadata
    ) throws {
        if destinationURL.isFileURL, FileManager.default.fileExists(atPath: destinationURL.path) {
            throw StoreError(
                .invalidRequest, "the migration's destination already exists; choose a new location or remove it first",
                store: destinationURL.path)
        }
        reset()
        mappingModel = mapping
        var created = false
        do {
            var writable = destinationOptions
            writable.isReadOnly = false
            writable.createIfMissing = true
            writable.shouldMigrateStoreAutomatically = false
            if var plan = try StoreMigrationPlan.compile(
                mapping, sourceModel: sourceModel, destinationModel: destinationModel)
            {
                plan.metadata = metadata
                created = true
                try copyRows(
                    plan, from: sourceURL, type: sourceType, options: sourceOptions, to: destinationURL,
                    type: destinationType, options: writable)
            } else {
                created = true
                try migrateObjects(
                    mapping, from: sourceURL, type: sourceType, options: sourceOptions, to: destinationURL,
                    type: destinationType,
                    options: writable, metadata: metadata)
            }
            migrationProgress = 1
        } catch {
            sourceContext = nil
            destinationContext = nil
            // The new store is incomplete: remove it (its removal failing leaves a store no one uses).
            if created { try? destinationType.factory.destroyStore(at: destinationURL, options: destinationOptions) }
            throw error
        }
    }

    /// Forgets the associations, contexts and progress of the last migration.
    public func reset() {
        forward = [:]
        backward = [:]
        destinationsByMapping = [:]
        sourceContext = nil
        destinationContext = nil
        currentEntityMapping = nil
        cancellation = nil
        migrationProgress = 0
        destinationCounts = [:]
        done = 0
        total = 0
    }

    /// Stops the running migration at the next instance: it throws ``MigrationError`` `.cancelled`
    /// with `error` underneath.
    public func cancelMigration(_ error: any Error) { cancellation = error }

    /// Records that `source` became `destination` under `mapping` (what the relationship phase and
    /// the `destinationInstances…` lookups use).
    public func associate(
        sourceInstance source: ManagedObject, withDestinationInstance destination: ManagedObject,
        for mapping: EntityMapping
    ) {
        forward[mapping.name, default: [:]][source.objectID, default: []].append(destination)
        backward[mapping.name, default: [:]][ObjectIdentifier(destination), default: []].append(source)
        destinationsByMapping[mapping.name, default: []].append(destination)
    }

    /// The destination instances `sources` became under the mapping named `name`.
    public func destinationInstances(forEntityMappingName name: String, sourceInstances sources: [ManagedObject])
        -> [ManagedObject]
    {
        let table = forward[name] ?? [:]
        return sources.flatMap { table[$0.objectID] ?? [] }
    }

    /// The source instances `destinations` were made from under the mapping named `name`.
    public func sourceInstances(forEntityMappingName name: String, destinationInstances destinations: [ManagedObject])
        -> [ManagedObject]
    {
        let table = backward[name] ?? [:]
        return destinations.flatMap { table[ObjectIdentifier($0)] ?? [] }
    }

    /// The destination instances `sources` became under whichever mappings made them (Core
    /// Data's `destinationInstancesForSourceRelationshipNamed:sourceInstances:`).
    public func destinationInstances(forSourceRelationshipNamed name: String, sourceInstances sources: [ManagedObject])
        -> [ManagedObject]
    {
        let names = mappingModel?.entityMappings.map(\.name) ?? forward.keys.sorted()
        return sources.flatMap { source in names.flatMap { forward[$0]?[source.objectID] ?? [] } }
    }

    /// The source entity of `mapping`.
    public func sourceEntity(for mapping: EntityMapping) -> EntityDescription? {
        mapping.sourceEntityName.flatMap { sourceModel.entity(named: $0) }
    }

    /// The destination entity of `mapping`.
    public func destinationEntity(for mapping: EntityMapping) -> EntityDescription? {
        mapping.destinationEntityName.flatMap { destinationModel.entity(named: $0) }
    }

    /// The destination context, or an error when no migration is running.
    func requireDestinationContext() throws -> ManagedObjectContext {
        guard let destinationContext else {
            throw MigrationError(.unsupported, "destination instances can only be made while a migration runs")
        }
        return destinationContext
    }

    // MARK: Running

    private func copyRows(
        _ plan: StoreMigrationPlan, from sourceURL: URL, type sourceType: StoreType,
        options sourceOptions: StoreOptions,
        to destinationURL: URL, type destinationType: StoreType, options: StoreOptions
    ) throws {
        let source = try sourceType.factory.makeDriver(
            StoreOpenRequest(url: sourceURL, model: sourceModel, configuration: nil, options: sourceOptions))
        defer { try? source.close() }  // read-only: closing cannot lose anything
        let destination = try destinationType.factory.makeDriver(
            StoreOpenRequest(url: destinationURL, model: destinationModel, configuration: nil, options: options))
        do {
            var copier = RowCopier(plan: plan, source: source, destination: destination)
            copier.totals = try StoreMigration.rowCounts(
                of: sourceModel, at: sourceURL, type: sourceType, options: sourceOptions)
            copier.progress = progressHandler
            destinationCounts = try copier.run()
            try destination.close()
        } catch {
            try? destination.close()  // the copy's error is the one to report
            throw error
        }
    }

    private func migrateObjects(
        _ mapping: MappingModel, from sourceURL: URL, type sourceType: StoreType, options sourceOptions: StoreOptions,
        to destinationURL: URL, type destinationType: StoreType, options: StoreOptions, metadata: StoreMetadata
    ) throws {
        try mapping.check(sourceModel: sourceModel, destinationModel: destinationModel)
        let sourceCoordinator = PersistentStoreCoordinator(managedObjectModel: sourceModel)
        let sourceStore = try sourceCoordinator.addPersistentStore(
            type: sourceType, at: sourceURL, options: sourceOptions)
        defer { try? sourceCoordinator.remove(sourceStore) }  // read-only: closing cannot lose anything
        let destinationCoordinator = PersistentStoreCoordinator(managedObjectModel: destinationModel)
        let destinationStore = try destinationCoordinator.addPersistentStore(
            type: destinationType, at: destinationURL, options: options)
        // after the save below, or after a failure that removes the store
        defer { try? destinationCoordinator.remove(destinationStore) }
        try destinationStore.setMetadata(metadata)
        let source = ManagedObjectContext(coordinator: sourceCoordinator)
        let destination = ManagedObjectContext(coordinator: destinationCoordinator)
        source.name = "migration.source"
        destination.name = "migration.destination"
        sourceContext = source
        destinationContext = destination
        defer {
            sourceContext = nil
            destinationContext = nil
            currentEntityMapping = nil
        }
        let mappings = mapping.entityMappings.filter { $0.effectiveType != .remove }
        var policies: [String: EntityMigrationPolicy] = [:]
        var sources: [String: [ManagedObject]] = [:]
        for entityMapping in mappings {
            policies[entityMapping.name] = try policy(for: entityMapping)
            if let name = entityMapping.sourceEntityName, entityMapping.effectiveType != .add {
                var request = FetchRequest(entityName: name, predicate: entityMapping.filterPredicate)
                request.includesSubentities = false
                sources[entityMapping.name] = try source.fetch(request)
            }
        }
        total = sources.values.reduce(0) { $0 + $1.count } * 2
        // Phase 1: create.
        for entityMapping in mappings {
            currentEntityMapping = entityMapping
            let policy = policies[entityMapping.name] ?? EntityMigrationPolicy()
            try run(entityMapping) { try policy.begin(entityMapping, with: self) }
            for object in sources[entityMapping.name] ?? [] {
                try checkCancelled()
                try run(entityMapping) {
                    try policy.createDestinationInstances(forSource: object, in: entityMapping, manager: self)
                }
                advance(entityMapping)
            }
            try run(entityMapping) { try policy.endInstanceCreation(forMapping: entityMapping, manager: self) }
        }
        // Phase 2: relate.
        for entityMapping in mappings {
            currentEntityMapping = entityMapping
            let policy = policies[entityMapping.name] ?? EntityMigrationPolicy()
            for object in destinationsByMapping[entityMapping.name] ?? [] {
                try checkCancelled()
                try run(entityMapping) {
                    try policy.createRelationships(forDestination: object, in: entityMapping, manager: self)
                }
                advance(entityMapping)
            }
            try run(entityMapping) { try policy.endRelationshipCreation(forMapping: entityMapping, manager: self) }
        }
        // Phase 3: validate, then save.
        for entityMapping in mappings {
            currentEntityMapping = entityMapping
            let policy = policies[entityMapping.name] ?? EntityMigrationPolicy()
            try run(entityMapping) { try policy.performCustomValidation(forMapping: entityMapping, manager: self) }
            try run(entityMapping) { try policy.end(entityMapping, manager: self) }
        }
        try checkCancelled()
        try destination.save()
        var counts: [String: Int] = [:]
        for entity in destinationModel.entities {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            counts[entity.name] = try destination.count(for: request)
        }
        destinationCounts = counts
    }

    private func policy(for mapping: EntityMapping) throws -> EntityMigrationPolicy {
        guard let name = mapping.entityMigrationPolicyClassName, !name.isEmpty else { return EntityMigrationPolicy() }
        guard let policy = EntityMigrationPolicy.make(className: name) else {
            throw MigrationError(
                .policy,
                "entity mapping '\(mapping.name)' names the migration policy class '\(name)', which is not registered; register it with EntityMigrationPolicy.register(_:forClassName:) before migrating"
            )
        }
        return policy
    }

    /// Runs a policy step, naming the mapping in errors that are not already migration errors.
    private func run(_ mapping: EntityMapping, _ step: () throws -> Void) throws {
        do {
            try step()
        } catch let error as MigrationError {
            throw error
        } catch let error as ObjectValidationError {
            throw error
        } catch {
            throw MigrationError(
                .policy, "the policy of entity mapping '\(mapping.name)' failed: \(error)",
                underlying: error)
        }
    }

    private func checkCancelled() throws {
        if let cancellation {
            throw MigrationError(.cancelled, "the migration was cancelled", underlying: cancellation)
        }
    }

    private func advance(_ mapping: EntityMapping) {
        done += 1
        migrationProgress = total > 0 ? min(1, Double(done) / Double(total)) : 1
        progressHandler?(
            MigrationProgress(
                phase: .objects, entity: mapping.destinationEntityName ?? mapping.sourceEntityName, completed: done,
                total: total))
    }
}
