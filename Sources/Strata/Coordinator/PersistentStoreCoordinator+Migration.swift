import Foundation

extension PersistentStoreCoordinator {
    /// Puts the closed store at `sourceURL` in place of the store at `destinationURL`, so that a
    /// kill at any moment leaves the old store or the new one (Core Data's
    /// `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:type:)`).
    /// The source is consumed. The driver's factory knows its files
    /// (``StoreDriverFactory/replaceStore(at:withStoreFrom:options:)``).
    ///
    /// - Throws: ``StoreError``: `.invalidRequest` when either store is attached to this
    ///   coordinator, `.locked` when the destination is in use, `.io`.
    public func replacePersistentStore(
        at destinationURL: URL, withPersistentStoreFrom sourceURL: URL, type: StoreType,
        options: StoreOptions = StoreOptions()
    ) throws {
        for url in [destinationURL, sourceURL] where persistentStore(for: url) != nil {
            throw StoreError(
                .invalidRequest, "the store is attached to this coordinator; remove it first", store: url.path)
        }
        try type.factory.replaceStore(at: destinationURL, withStoreFrom: sourceURL, options: options)
    }

    /// Removes the closed store at `url` and its companion files (Core Data's
    /// `destroyPersistentStore(at:type:options:)`). A store that does not exist is not an error.
    ///
    /// - Throws: ``StoreError``: `.invalidRequest` when the store is attached to this
    ///   coordinator, `.io`.
    public func destroyPersistentStore(at url: URL, type: StoreType, options: StoreOptions = StoreOptions()) throws {
        if persistentStore(for: url) != nil {
            throw StoreError(
                .invalidRequest, "the store is attached to this coordinator; remove it first", store: url.path)
        }
        try type.factory.destroyStore(at: url, options: options)
    }

    /// Copies an attached store to a new location and store type, attaches the copy and removes
    /// the original from the coordinator (Core Data's `migratePersistentStore(_:to:options:type:)`).
    /// Rows keep their primary keys and the store its identifier, so object IDs keep their URIs
    /// (contexts should be reset: their objects belong to the removed store). The copy is written
    /// beside `url` and put in place in one step, so `url` never holds a partial store.
    ///
    /// - Returns: The new store.
    /// - Throws: ``StoreError``: `.invalidRequest` when something already exists at `url`; the
    ///   drivers' errors. The original store stays attached when the copy fails.
    @discardableResult
    public func migratePersistentStore(
        _ store: PersistentStore, to url: URL, options: StoreOptions = StoreOptions(), type: StoreType
    ) throws -> PersistentStore {
        let exists =
            url.isFileURL
            ? FileManager.default.fileExists(atPath: url.path)
            : try type.factory.metadata(at: url, options: options) != nil
        if persistentStore(for: url) != nil || exists {
            throw StoreError(
                .invalidRequest, "a store already exists at the destination; remove it or choose another location",
                store: url.path)
        }
        let model = managedObjectModel
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: model, destinationModel: model)
        guard var plan = try StoreMigrationPlan.compile(mapping, sourceModel: model, destinationModel: model) else {
            throw StoreError(.unsupported, "the store cannot be copied row by row", store: store.displayName)
        }
        var metadata = store.metadata
        metadata.storeType = type.name
        plan.metadata = metadata
        let temporary: URL
        if url.isFileURL {
            temporary = URL(fileURLWithPath: try StoreFileOperations.temporaryPath(beside: url.path, tag: "copying"))
        } else {
            temporary = URL(string: url.absoluteString + ".copying-\(UUID().uuidString)") ?? url
        }
        var writable = options
        writable.isReadOnly = false
        writable.createIfMissing = true
        writable.shouldMigrateStoreAutomatically = false
        do {
            let destination = try type.factory.makeDriver(
                StoreOpenRequest(
                    url: temporary, model: model, configuration: store.configurationName, options: writable))
            do {
                try store.read {
                    _ = try RowCopier(plan: plan, source: store.driver, destination: destination).run()
                }
                try destination.close()
            } catch {
                try? destination.close()  // the copy's error is the one to report
                throw error
            }
            try type.factory.replaceStore(at: url, withStoreFrom: temporary, options: options)
        } catch {
            try? type.factory.destroyStore(at: temporary, options: options)  // an incomplete copy no one uses
            throw error
        }
        var attaching = options
        attaching.shouldMigrateStoreAutomatically = false
        let copy = try addPersistentStore(
            type: type, configuration: store.configurationName, at: url, options: attaching)
        try remove(store)
        return copy
    }

    /// The ``MigrationError`` `.olderModel` for a store at `url` written with a newer model than
    /// this coordinator's, or `nil` (also when its metadata cannot be read: the open's own error
    /// is then the one to report).
    func olderModelError(at url: URL, type: StoreType, options: StoreOptions) -> MigrationError? {
        var reading = options
        reading.isReadOnly = true
        reading.createIfMissing = false
        guard let metadata = try? type.factory.metadata(at: url, options: reading) else { return nil }  // see above
        do {
            try StoreMigration.checkNotOlder(
                managedObjectModel, metadata: metadata, versions: options.migration.modelVersions)
            return nil
        } catch let error as MigrationError {
            return error.naming(store: url.isFileURL ? url.path : url.absoluteString)
        } catch {
            return nil  // checkNotOlder throws MigrationError only
        }
    }

    /// Migrates the store at `url` before it is attached, when the options ask for it
    /// (``StoreOptions/shouldMigrateStoreAutomatically``): through the staged migration manager
    /// when one is given, otherwise from the store's own model to this coordinator's with a
    /// fitting mapping model or, when allowed, an inferred one.
    func migrateIfNeeded(at url: URL, type: StoreType, configuration: String?, options: StoreOptions) throws {
        guard options.shouldMigrateStoreAutomatically, !options.isReadOnly else { return }
        if let staged = options.migration.stagedMigrationManager {
            try staged.migrateStore(at: url, type: type, options: options)
        }
        guard
            let migration = try StoreMigration.plan(
                storeAt: url, type: type, to: managedObjectModel, options: options,
                infersMappingModel: options.shouldInferMappingModelAutomatically)
        else {
            // A migration killed after it put the new store in place leaves its temporary's
            // companion files (a lock file) beside the store; no later migration would clear them.
            StoreMigration.removeStaleTemporaries(of: url, type: type, options: options)
            return
        }
        if let configuration, configuration != ManagedObjectModel.defaultConfigurationName {
            throw MigrationError(
                .unsupported,
                "stores attached with a configuration ('\(configuration)') are not migrated automatically; migrate the store with the whole model first (StoreMigration)",
                store: url.path)
        }
        try migration.run()
    }
}
