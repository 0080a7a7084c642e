import Foundation

/// What an automatic migration (``StoreOptions/shouldMigrateStoreAutomatically``) may use.
///
/// Compared by identity for the models and managers it holds, so ``StoreOptions`` stays `Hashable`.
public struct MigrationOptions: Sendable, Hashable {
    /// Mapping models to choose from: the first whose entity mappings fit the store's model and
    /// the new one (by entity names and, where the mapping records them, Core Data's version
    /// hashes) is used; otherwise the mapping is inferred when
    /// ``StoreOptions/shouldInferMappingModelAutomatically`` is on.
    public var mappingModels: [MappingModel] = []
    /// Versions of the model, oldest first (for example every version of an `.xcdatamodeld`,
    /// ``ManagedObjectModel/versions(inBundle:)``): where the store's own model is looked for when
    /// the store does not embed it (stores Apple's Core Data wrote), and how a store written by a
    /// newer version than the coordinator's is recognized (``MigrationError/Code/olderModel``).
    public var modelVersions: [ManagedObjectModel] = []
    /// Runs a chain of stages instead of one migration (Core Data's
    /// `NSPersistentStoreStagedMigrationManagerOptionKey`).
    public var stagedMigrationManager: StagedMigrationManager?
    /// Where a copy of the store is kept before it is migrated; `nil` for none.
    ///
    /// A backup of this store already there (left by a migration that was killed, or by the
    /// migration to an earlier version) is never overwritten or removed: it is moved aside,
    /// renamed `NAME.taken-DATE.EXT` beside it, a warning names it on the `strata.migration`
    /// logger, and ``StoreMigration/Outcome/previousBackupURL`` says where it went. Anything else
    /// there is refused (``MigrationError/Code/backupLocationTaken``). See docs/migration.md.
    public var backupURL: URL?

    /// Creates options.
    public init(
        mappingModels: [MappingModel] = [], modelVersions: [ManagedObjectModel] = [],
        stagedMigrationManager: StagedMigrationManager? = nil, backupURL: URL? = nil
    ) {
        self.mappingModels = mappingModels
        self.modelVersions = modelVersions
        self.stagedMigrationManager = stagedMigrationManager
        self.backupURL = backupURL
    }

    public static func == (lhs: MigrationOptions, rhs: MigrationOptions) -> Bool {
        lhs.mappingModels.map(ObjectIdentifier.init) == rhs.mappingModels.map(ObjectIdentifier.init)
            && lhs.modelVersions.map(ObjectIdentifier.init) == rhs.modelVersions.map(ObjectIdentifier.init)
            && lhs.stagedMigrationManager.map(ObjectIdentifier.init)
                == rhs.stagedMigrationManager.map(ObjectIdentifier.init)
            && lhs.backupURL == rhs.backupURL
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(mappingModels.map(ObjectIdentifier.init))
        hasher.combine(modelVersions.map(ObjectIdentifier.init))
        hasher.combine(stagedMigrationManager.map(ObjectIdentifier.init))
        hasher.combine(backupURL)
    }
}
