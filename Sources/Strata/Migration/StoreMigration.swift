import Foundation

/// One store's migration from the model that wrote it to another version: the models, the
/// mapping, how it will run and how many rows it moves. Planned by
/// ``plan(storeAt:type:to:options:sourceModel:mappingModel:infersMappingModel:countsRows:)`` without writing
/// anything (a dry run stops there), run by ``run(progress:)``.
///
/// How it runs:
/// - **in place**, when the mapping compiles to rows (``StoreMigrationPlan``) and the driver can
///   (``StoreDriver/migrateInPlace(_:)``; SQLite in one transaction);
/// - **by copying rows** into a new store beside the old one, then swapping it in
///   (``StoreDriverFactory/replaceStore(at:withStoreFrom:options:)``), when the mapping compiles to
///   rows but the driver cannot migrate in place;
/// - **through objects** (``MigrationManager``) into a new store, then swapping it in, when the
///   mapping needs custom policies or expressions.
///
/// A migration that throws leaves the store as it was; a kill leaves the old store or the new one.
///
/// Thread safety: a value; run it from one thread, with nothing else using the store.
public struct StoreMigration: Sendable {
    /// The store.
    public let url: URL
    /// The store's type.
    public let type: StoreType
    /// The store's options (driver options are used to open it).
    public let options: StoreOptions
    /// The model the store was written with.
    public let sourceModel: ManagedObjectModel
    /// Where ``sourceModel`` came from.
    public let sourceModelOrigin: SourceModelOrigin
    /// The model the store is migrated to.
    public let destinationModel: ManagedObjectModel
    /// The mapping, given or inferred.
    public let mappingModel: MappingModel
    /// The row plan, when the mapping runs on rows; `nil` when it needs objects.
    public let plan: StoreMigrationPlan?
    /// Rows of each source entity (its own rows, not its subentities'), by name; empty unless the
    /// plan was asked to count them (`countsRows`, which reads every table).
    public let rowCounts: [String: Int]
    /// Where a copy of the store is kept before it is migrated (``MigrationOptions/backupURL``).
    public var backupURL: URL?

    /// Where the model a store was written with was found.
    public enum SourceModelOrigin: String, Sendable, Hashable {
        /// Given by the caller (`--from-model`).
        case given
        /// The store's own embedded model (every store Strata wrote).
        case embedded
        /// One of ``MigrationOptions/modelVersions``, matched by version hashes.
        case modelVersion
        /// Apple's model cache in the store (`Z_MODELCACHE`), matched by version hashes.
        case modelCache
    }

    /// Whether the mapping runs on rows, without objects (a lightweight migration).
    public var isLightweight: Bool { plan != nil }

    /// The metadata key listing the Strata model hashes (hex) a store was migrated from, so a
    /// store is never opened with an older model than its own.
    public static let historyKey = "StrataModelHistory"

    /// The tag of temporary stores a migration writes beside the store.
    static let temporaryTag = "migrating"

    /// Plans the migration of the store at `url` to `destinationModel`, writing nothing.
    ///
    /// - Parameters:
    ///   - sourceModel: The model the store was written with; found when `nil` (the store's
    ///     embedded model, then ``MigrationOptions/modelVersions``, then Apple's model cache).
    ///   - mappingModel: The mapping; when `nil`, the first fitting one of
    ///     ``MigrationOptions/mappingModels``, else an inferred one if `infersMappingModel`.
    ///   - countsRows: Count each entity's rows (``rowCounts``) for a dry run or progress.
    /// - Returns: The migration, or `nil` when there is no store or it already matches.
    /// - Throws: ``MigrationError``: `.sourceModelNotFound`, `.olderModel`, `.inferenceFailed`,
    ///   `.invalidMapping`, `.mappingModelNotFound`; ``StoreError`` when the store does not open.
    public static func plan(
        storeAt url: URL, type: StoreType, to destinationModel: ManagedObjectModel,
        options: StoreOptions = StoreOptions(),
        sourceModel: ManagedObjectModel? = nil, mappingModel: MappingModel? = nil, infersMappingModel: Bool = true,
        countsRows: Bool = false
    ) throws -> StoreMigration? {
        let name = url.isFileURL ? url.path : url.absoluteString
        var reading = options
        reading.isReadOnly = true
        reading.createIfMissing = false
        guard let metadata = try type.factory.metadata(at: url, options: reading) else { return nil }
        if metadata.entityVersionHashes.isEmpty && metadata.coreDataEntityVersionHashes == nil { return nil }
        if sourceModel == nil, destinationModel.isConfiguration(nil, compatibleWithStoreMetadata: metadata) {
            return nil
        }
        do {
            try checkNotOlder(destinationModel, metadata: metadata, versions: options.migration.modelVersions)
            let (source, origin) = try resolveSourceModel(
                given: sourceModel, metadata: metadata, url: url, type: type, options: reading)
            if source.versionHash == destinationModel.versionHash { return nil }
            let mapping = try chooseMapping(
                given: mappingModel, candidates: options.migration.mappingModels, source: source,
                destination: destinationModel, infer: infersMappingModel)
            var plan = try StoreMigrationPlan.compile(mapping, sourceModel: source, destinationModel: destinationModel)
            plan?.metadata = migratedMetadata(metadata, from: source, to: destinationModel)
            let counts = countsRows ? try rowCounts(of: source, at: url, type: type, options: reading) : [:]
            return StoreMigration(
                url: url, type: type, options: options, sourceModel: source, sourceModelOrigin: origin,
                destinationModel: destinationModel, mappingModel: mapping, plan: plan, rowCounts: counts,
                backupURL: options.migration.backupURL, sourceMetadata: metadata)
        } catch let error as MigrationError {
            throw error.naming(store: name)
        }
    }

    /// The store's metadata before the migration.
    let sourceMetadata: StoreMetadata

    init(
        url: URL, type: StoreType, options: StoreOptions, sourceModel: ManagedObjectModel,
        sourceModelOrigin: SourceModelOrigin,
        destinationModel: ManagedObjectModel, mappingModel: MappingModel, plan: StoreMigrationPlan?,
        rowCounts: [String: Int],
        backupURL: URL?, sourceMetadata: StoreMetadata
    ) {
        self.url = url
        self.type = type
        self.options = options
        self.sourceModel = sourceModel
        self.sourceModelOrigin = sourceModelOrigin
        self.destinationModel = destinationModel
        self.mappingModel = mappingModel
        self.plan = plan
        self.rowCounts = rowCounts
        self.backupURL = backupURL
        self.sourceMetadata = sourceMetadata
    }

    /// Refuses a destination model the store has already been migrated past.
    static func checkNotOlder(
        _ destination: ManagedObjectModel, metadata: StoreMetadata, versions: [ManagedObjectModel]
    ) throws {
        let previous =
            (metadata.values[historyKey].flatMap { value -> [String]? in
                guard case .array(let items) = value else { return nil }
                return items.compactMap(\.stringValue)
            }) ?? []
        var older = previous.contains(destination.versionHash.hexString)
        if !older,
            let current = versions.firstIndex(where: { $0.isConfiguration(nil, compatibleWithStoreMetadata: metadata) }
            ),
            let wanted = versions.firstIndex(where: { $0.versionHash == destination.versionHash }), wanted < current
        {
            older = true
        }
        if older {
            throw MigrationError(
                .olderModel,
                "the store was written with a newer version of the model than the one opening it; open it with the newer model (or restore a backup taken before the migration)"
            )
        }
    }

    /// Finds the model the store was written with.
    static func resolveSourceModel(
        given: ManagedObjectModel?, metadata: StoreMetadata, url: URL, type: StoreType, options: StoreOptions
    ) throws -> (ManagedObjectModel, SourceModelOrigin) {
        if let given {
            guard given.isConfiguration(nil, compatibleWithStoreMetadata: metadata) else {
                throw MigrationError(
                    .sourceModelNotFound,
                    "the model given as the store's own does not match the version hashes the store records; give the model version that wrote the store"
                )
            }
            return (given, .given)
        }
        if let data = metadata.values[StoreMetadata.modelKey]?.dataValue {
            do {
                return (try ManagedObjectModel(encodedRepresentation: data), .embedded)
            } catch {
                throw MigrationError(
                    .sourceModelNotFound,
                    "the store's embedded model does not decode; give the model that wrote the store",
                    underlying: error)
            }
        }
        if let match = ManagedObjectModel.model(matching: metadata, among: options.migration.modelVersions) {
            return (match, .modelVersion)
        }
        if let recovered = try type.factory.recoverModel(at: url, options: options), recovered.source == .modelCache,
            recovered.model.isConfiguration(nil, compatibleWithStoreMetadata: metadata)
        {
            return (recovered.model, .modelCache)
        }
        throw MigrationError(
            .sourceModelNotFound,
            "the model that wrote the store is not known: the store does not embed it and none of the model versions given matches its version hashes; give the model version that wrote it (--from-model, MigrationOptions.modelVersions)"
        )
    }

    /// The mapping to use: given, a fitting candidate, or inferred.
    static func chooseMapping(
        given: MappingModel?, candidates: [MappingModel], source: ManagedObjectModel, destination: ManagedObjectModel,
        infer: Bool
    ) throws -> MappingModel {
        if let given {
            try given.check(sourceModel: source, destinationModel: destination)
            return given
        }
        let sourceHashes = source.coreDataVersionHashes.entities
        let destinationHashes = destination.coreDataVersionHashes.entities
        for candidate in candidates {
            // not this one
            guard (try? candidate.check(sourceModel: source, destinationModel: destination)) != nil else { continue }
            let fits = candidate.entityMappings.allSatisfy { mapping in
                (mapping.sourceEntityVersionHash == nil
                    || mapping.sourceEntityName.flatMap { sourceHashes[$0] } == mapping.sourceEntityVersionHash)
                    && (mapping.destinationEntityVersionHash == nil
                        || mapping.destinationEntityName.flatMap { destinationHashes[$0] }
                            == mapping.destinationEntityVersionHash)
            }
            if fits { return candidate }
        }
        guard infer else {
            throw MigrationError(
                .mappingModelNotFound,
                "the store's model differs from the new one, no mapping model fits the two, and inferring one is not allowed; give a mapping model or allow inference (shouldInferMappingModelAutomatically)"
            )
        }
        return try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
    }

    /// Rows per source entity.
    static func rowCounts(of model: ManagedObjectModel, at url: URL, type: StoreType, options: StoreOptions) throws
        -> [String: Int]
    {
        let driver = try type.factory.makeDriver(
            StoreOpenRequest(url: url, model: model, configuration: nil, options: options))
        defer { try? driver.close() }  // read-only: closing cannot lose anything
        var counts: [String: Int] = [:]
        for entity in model.entities {
            var fetch = StoreFetch(entity: entity)
            fetch.includesSubentities = false
            fetch.resultKind = .count
            let result = try driver.fetch(fetch)
            counts[entity.name] =
                result.appliedPredicate
                ? (result.count ?? result.rows.count)
                : result.rows.filter { $0.id.entity == entity.entityNumber }.count
        }
        return counts
    }

    /// The metadata of the migrated store: the store's identity and other keys kept, the new
    /// model's hashes (Strata's, and Core Data's where the store had Apple's), embedded model and
    /// history.
    static func migratedMetadata(
        _ metadata: StoreMetadata, from source: ManagedObjectModel, to destination: ManagedObjectModel
    )
        -> StoreMetadata
    {
        var result = metadata
        result.entityVersionHashes = destination.entityVersionHashesByName
        result.values[StoreMetadata.modelVersionHashKey] = .data(destination.versionHash)
        // The encoding of a model built from descriptions never fails (ModelArchive's fields are plain values).
        if let encoded = try? destination.encodedRepresentation() {
            result.values[StoreMetadata.modelKey] = .data(encoded)
        }
        var history: [MetadataValue] = []
        if case .array(let items)? = metadata.values[historyKey] { history = items }
        let sourceHash = MetadataValue.string(source.versionHash.hexString)
        if !history.contains(sourceHash) { history.append(sourceHash) }
        result.values[historyKey] = .array(history)
        let apple = destination.coreDataVersionHashes
        if metadata.values[ModelVersionHashes.entityHashesKey] != nil {
            result.values[ModelVersionHashes.entityHashesKey] = .dictionary(apple.entities.mapValues { .data($0) })
        }
        if metadata.values[ModelVersionHashes.digestKey] != nil {
            result.values[ModelVersionHashes.digestKey] = .string(apple.digest)
        }
        if metadata.values[ModelVersionHashes.checksumKey] != nil {
            result.values[ModelVersionHashes.checksumKey] = .string(apple.checksum)
        }
        if metadata.values[ModelVersionHashes.identifiersKey] != nil {
            result.values[ModelVersionHashes.identifiersKey] = .array(
                destination.versionIdentifiers.map { .string($0) })
        }
        return result
    }
}
