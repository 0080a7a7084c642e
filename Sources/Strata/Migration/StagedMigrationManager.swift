import Foundation

/// A model version named for staged migration (Core Data's `NSManagedObjectModelReference`): the
/// model and its ``ManagedObjectModel/versionChecksum``.
///
/// Thread safety: immutable and `Sendable`.
public final class ManagedObjectModelReference: Sendable {
    /// The model.
    public let resolvedModel: ManagedObjectModel
    /// Its Core Data checksum.
    public let versionChecksum: String

    /// Refers to `model`; when `versionChecksum` is given it must be the model's.
    ///
    /// - Throws: ``MigrationError`` `.invalidMapping` when the checksum is another model's.
    public init(model: ManagedObjectModel, versionChecksum: String? = nil) throws {
        let actual = model.versionChecksum
        if let versionChecksum, versionChecksum != actual {
            throw MigrationError(
                .invalidMapping,
                "the model's version checksum is \(actual), not \(versionChecksum) as the stage says; check which model version the stage names"
            )
        }
        self.resolvedModel = model
        self.versionChecksum = actual
    }

    /// Refers to the model in the file at `url` (``ManagedObjectModel/init(contentsOf:)``).
    public convenience init(fileURL url: URL, versionChecksum: String? = nil) throws {
        try self.init(model: try ManagedObjectModel(contentsOf: url), versionChecksum: versionChecksum)
    }

    /// Refers to the version `name` of the model bundle at `bundleURL` (an `.xcdatamodeld`).
    public convenience init(name: String, in bundleURL: URL, versionChecksum: String? = nil) throws {
        try self.init(
            model: try ManagedObjectModel.load(contentsOf: bundleURL, versionName: name),
            versionChecksum: versionChecksum)
    }
}

/// One stage of a staged migration (Core Data's `NSMigrationStage`): a
/// ``LightweightMigrationStage`` or a ``CustomMigrationStage``.
///
/// Thread safety: `Sendable`; handlers are `@Sendable`.
public class MigrationStage: @unchecked Sendable {
    // @unchecked Sendable: `label` is the only stored property here and sits behind `state`'s lock;
    // the subclasses keep their mutable handlers behind locks too.
    private let state = Locked<String?>(nil)

    init() {}

    /// A name for messages and logs.
    public var label: String? {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }

    /// The models the stage steps through, in order.
    var models: [ManagedObjectModelReference] { [] }
}

/// A stage of model versions each lightweight-migrated to the next (Core Data's
/// `NSLightweightMigrationStage`): one version per model, in order.
public final class LightweightMigrationStage: MigrationStage, @unchecked Sendable {
    // @unchecked Sendable: the stored properties are immutable.
    /// The versions, oldest first.
    public let modelReferences: [ManagedObjectModelReference]

    /// A stage over `models`, oldest first.
    public init(_ models: [ManagedObjectModelReference]) {
        self.modelReferences = models
    }

    /// The checksums of the stage's versions (Core Data's `versionChecksums`).
    public var versionChecksums: [String] { modelReferences.map(\.versionChecksum) }

    override var models: [ManagedObjectModelReference] { modelReferences }
}

/// A stage from one version to the next with code before and after (Core Data's
/// `NSCustomMigrationStage`): ``willMigrateHandler`` runs with the store at ``currentModel``, the
/// store is migrated to ``nextModel`` (with ``mappingModel``, else inferred), then
/// ``didMigrateHandler`` runs with the store at ``nextModel``. The handlers reach the store
/// through ``StagedMigrationManager/container``.
public final class CustomMigrationStage: MigrationStage, @unchecked Sendable {
    // @unchecked Sendable: the models are immutable; the handlers and mapping sit behind `handlers`' lock.
    /// The version before the stage.
    public let currentModel: ManagedObjectModelReference
    /// The version after the stage.
    public let nextModel: ManagedObjectModelReference
    private let handlers = Locked<Handlers>(Handlers())

    /// A stage's code: `(manager, stage) throws -> Void`.
    public typealias Handler = @Sendable (StagedMigrationManager, CustomMigrationStage) throws -> Void

    private struct Handlers {
        var will: Handler?
        var did: Handler?
        var mapping: MappingModel?
    }

    /// A stage from `currentModel` to `nextModel`.
    public init(migratingFrom currentModel: ManagedObjectModelReference, to nextModel: ManagedObjectModelReference) {
        self.currentModel = currentModel
        self.nextModel = nextModel
    }

    /// Runs before the migration, with the store at ``currentModel`` (for example to fill in
    /// values an attribute that becomes required lacks).
    public var willMigrateHandler: Handler? {
        get { handlers.withLock { $0.will } }
        set { handlers.withLock { $0.will = newValue } }
    }

    /// Runs after the migration, with the store at ``nextModel``.
    public var didMigrateHandler: Handler? {
        get { handlers.withLock { $0.did } }
        set { handlers.withLock { $0.did = newValue } }
    }

    /// The mapping from ``currentModel`` to ``nextModel``; `nil` to infer it (Core Data always infers).
    public var mappingModel: MappingModel? {
        get { handlers.withLock { $0.mapping } }
        set { handlers.withLock { $0.mapping = newValue } }
    }

    override var models: [ManagedObjectModelReference] { [currentModel, nextModel] }
}

/// Migrates a store through a chain of model versions, stage by stage (Core Data's
/// `NSStagedMigrationManager`).
///
/// The store's version is found among the stages' models by version hashes; each remaining step
/// then runs in order, each one a complete migration of its own (a kill between two steps leaves a
/// store at the version reached, and running again continues from there). Install a manager with
/// ``MigrationOptions/stagedMigrationManager`` for ``PersistentStoreCoordinator/addPersistentStore(type:configuration:at:options:)``,
/// or call ``migrateStore(at:type:options:)`` yourself.
///
/// Thread safety: `Sendable`; run one migration at a time.
public final class StagedMigrationManager: Sendable {
    /// The stages, in order.
    public let stages: [MigrationStage]
    private let current = Locked<PersistentContainer?>(nil)

    /// A manager running `stages` in order.
    public init(_ stages: [MigrationStage]) {
        self.stages = stages
    }

    /// While a custom stage's handler runs: a container whose store is the migrating store, at the
    /// handler's model version.
    public var container: PersistentContainer? { current.withLock { $0 } }

    /// The versions the stages step through, in order, consecutive repeats removed.
    public var modelReferences: [ManagedObjectModelReference] {
        var chain: [ManagedObjectModelReference] = []
        for reference in stages.flatMap(\.models) where chain.last?.versionChecksum != reference.versionChecksum {
            chain.append(reference)
        }
        return chain
    }

    /// Migrates the store at `url` from its version to the last version of the stages.
    ///
    /// - Throws: ``MigrationError`` `.sourceModelNotFound` when the store's version is not one of
    ///   the stages' models; whatever a stage's migration or handler throws (the store is then at
    ///   the last version reached).
    public func migrateStore(at url: URL, type: StoreType, options: StoreOptions = StoreOptions()) throws {
        let chain = modelReferences
        var reading = options
        reading.isReadOnly = true
        reading.createIfMissing = false
        guard let metadata = try type.factory.metadata(at: url, options: reading) else { return }
        guard
            let start = chain.firstIndex(where: {
                $0.resolvedModel.isConfiguration(nil, compatibleWithStoreMetadata: metadata)
            })
        else {
            throw MigrationError(
                .sourceModelNotFound,
                "the store's model is none of the staged migration's model versions; add the version that wrote the store to the first stage",
                store: url.isFileURL ? url.path : url.absoluteString)
        }
        var step = start
        while step + 1 < chain.count {
            let from = chain[step]
            let to = chain[step + 1]
            let custom = stages.compactMap { $0 as? CustomMigrationStage }.first {
                $0.currentModel.versionChecksum == from.versionChecksum
                    && $0.nextModel.versionChecksum == to.versionChecksum
            }
            if let custom, let handler = custom.willMigrateHandler {
                try withContainer(url: url, type: type, options: options, model: from.resolvedModel) {
                    try handler(self, custom)
                }
            }
            let migration = try StoreMigration.plan(
                storeAt: url, type: type, to: to.resolvedModel, options: plainOptions(options),
                sourceModel: from.resolvedModel, mappingModel: custom?.mappingModel, infersMappingModel: true)
            try migration?.run()
            if let custom, let handler = custom.didMigrateHandler {
                try withContainer(url: url, type: type, options: options, model: to.resolvedModel) {
                    try handler(self, custom)
                }
            }
            step += 1
        }
    }

    /// `options` without automatic migration or backup, for the stages' own opens.
    private func plainOptions(_ options: StoreOptions) -> StoreOptions {
        var plain = options
        plain.shouldMigrateStoreAutomatically = false
        plain.migration = MigrationOptions()
        return plain
    }

    private func withContainer(
        url: URL, type: StoreType, options: StoreOptions, model: ManagedObjectModel, _ body: () throws -> Void
    )
        throws
    {
        let container = PersistentContainer(name: "StagedMigration", managedObjectModel: model)
        var description = PersistentStoreDescription(type: type, url: url)
        description.options = plainOptions(options)
        description.shouldMigrateStoreAutomatically = false
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        current.withLock { $0 = container }
        defer {
            current.withLock { $0 = nil }
            for store in container.persistentStoreCoordinator.persistentStores {
                // Closing after the handler's saves; a close error leaves nothing unsaved behind.
                try? container.persistentStoreCoordinator.remove(store)
            }
        }
        try body()
    }
}
