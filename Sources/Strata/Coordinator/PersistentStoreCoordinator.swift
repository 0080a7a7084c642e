import Foundation
import Synchronization

// COORDINATOR INVARIANTS
// K1. Every attached store holds only entities of the coordinator's model, and a store's metadata
//     version hashes match the model (or the store was empty and got the model's hashes).
// K2. Temporary primary keys are negative and never repeat within a coordinator.
// K3. Writes to one store are serialized (PersistentStore.write); a change set reaches a driver
//     only after every object in it has a permanent ID of that store.
// K4. After a successful apply, the row cache holds the new version of every inserted and updated
//     row and no deleted row.

/// Routes a model's entities to attached stores, hands out object IDs and owns the row cache.
///
/// One coordinator, one model, many stores. Each store is attached with a configuration; an
/// entity's inserts go to the first store whose configuration holds it (or the store named with
/// ``ManagedObjectContext/assign(_:to:)``); fetches span every store holding the entity.
///
/// Thread safety: `Sendable`; contexts on any thread share one coordinator.
public final class PersistentStoreCoordinator: Sendable {
    /// The model.
    public let managedObjectModel: ManagedObjectModel
    /// The row cache shared by every context of this coordinator.
    public let rowCache: RowCache
    private let stores = Locked<[PersistentStore]>([])
    private let temporaryKeys = Atomic<Int64>(0)
    /// Root contexts that merge the saves of other contexts automatically.
    let mergingContexts = ContextList()
    /// Observers of changes other processes commit (``addRemoteChangeObserver(_:)``).
    let remoteObservers = Locked<[(ObserverToken, @Sendable (ContextDidSave) -> Void)]>([])

    /// Creates a coordinator.
    ///
    /// - Parameters:
    ///   - model: The model every attached store must match.
    ///   - rowCacheLimit: The most unpinned rows the row cache keeps.
    ///   - rowCacheByteLimit: When given, about how many bytes of values the row cache keeps.
    public init(
        managedObjectModel model: ManagedObjectModel, rowCacheLimit: Int = 100_000, rowCacheByteLimit: Int? = nil
    ) {
        self.managedObjectModel = model
        self.rowCache = RowCache(limit: rowCacheLimit, byteLimit: rowCacheByteLimit)
    }

    /// The attached stores, in the order they were added.
    public var persistentStores: [PersistentStore] { stores.withLock { $0 } }

    /// Whether `store` is attached (``persistentStores`` holds it), without copying the list.
    func isAttached(_ store: PersistentStore) -> Bool { stores.withLock { $0.contains { $0 === store } } }

    /// Attaches a store.
    ///
    /// - Parameters:
    ///   - type: The store type (`.inMemory`, `.sqlite`, …).
    ///   - configuration: The model configuration the store holds (`nil`: every entity).
    ///   - url: Where the store lives (`nil` for stores that need no file).
    ///   - options: Store options.
    /// - Throws: ``StoreError`` when the store does not open or its model does not match
    ///   (``StoreError/Code/modelMismatch``, listing the entities that differ);
    ///   ``MigrationError`` when a migration the options ask for fails (the store is then as it
    ///   was), or `.olderModel` when the store was written with a newer model than this one.
    ///   With ``StoreOptions/shouldMigrateStoreAutomatically``, a store written with another
    ///   version of the model is migrated first (see docs/migration.md).
    @discardableResult
    public func addPersistentStore(
        type: StoreType, configuration: String? = nil, at url: URL? = nil, options: StoreOptions = StoreOptions()
    ) throws -> PersistentStore {
        let entities: [EntityDescription]
        do {
            entities = try managedObjectModel.entities(forConfiguration: configuration)
        } catch {
            throw StoreError(.invalidRequest, "\(error)", store: url?.storeName)
        }
        if let url, persistentStore(for: url) != nil {
            throw StoreError(.invalidRequest, "the store is already attached to this coordinator", store: url.storeName)
        }
        if let url { try migrateIfNeeded(at: url, type: type, configuration: configuration, options: options) }
        let request = StoreOpenRequest(
            url: url, model: managedObjectModel, configuration: configuration, options: options)
        let driver: any StoreDriver
        do {
            driver = try type.factory.makeDriver(request)
        } catch {
            // A store written with a newer model often does not even open with this one: say so.
            if let url, let older = olderModelError(at: url, type: type, options: options) { throw older }
            throw error
        }
        do {
            return try attach(
                driver, type: type, url: url, configuration: configuration, options: options, entities: entities)
        } catch {
            // A store that did not attach releases its engine (an LMDB environment stays mapped
            // for the process otherwise). Ignored on purpose: the attach error is the one to report.
            try? driver.close()
            throw error
        }
    }

    private func attach(
        _ driver: any StoreDriver, type: StoreType, url: URL?, configuration: String?, options: StoreOptions,
        entities: [EntityDescription]
    ) throws -> PersistentStore {
        var metadata = try driver.loadMetadata()
        let name = url?.storeName ?? "\(type.name) store"
        if metadata.entityVersionHashes.isEmpty {
            metadata.entityVersionHashes = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.versionHash) })
            metadata.values[StoreMetadata.modelVersionHashKey] = .data(managedObjectModel.versionHash)
            // Embed the model so tools and later opens need no model file (see ModelArchive).
            metadata.values[StoreMetadata.modelKey] = .data(try managedObjectModel.encodedRepresentation())
            if !options.isReadOnly { try driver.saveMetadata(metadata) }
        } else if metadata.values[StoreMetadata.modelVersionHashKey] != nil {
            let differing = managedObjectModel.differingEntities(configuration, from: metadata.entityVersionHashes)
            if !differing.isEmpty {
                do {
                    try StoreMigration.checkNotOlder(
                        managedObjectModel, metadata: metadata, versions: options.migration.modelVersions)
                } catch let error as MigrationError {
                    throw error.naming(store: name)
                }
                throw StoreError(
                    .modelMismatch,
                    "the store was written with a different model; entities that differ: \(differing.joined(separator: ", ")). Open it with the model that wrote it, or migrate it",
                    store: name)
            }
        }
        let store = PersistentStore(
            type: type, url: url, configurationName: configuration, options: options, driver: driver,
            metadata: metadata, entityNumbers: Set(entities.map(\.entityNumber)))
        stores.withLock { $0.append(store) }
        do {
            // The store is found again by identity rather than held weakly: a weak reference gives
            // the store a side table, and every retain and release of it (one for each object ID
            // made or dropped) then takes the runtime's slow path. A removed store's driver is
            // closed and calls the handler no more, so the identity cannot name a later store.
            let identity = ObjectIdentifier(store)
            try driver.observeRemoteChanges { [weak self] changes in
                guard let self, let store = self.stores.withLock({ $0.first { ObjectIdentifier($0) == identity } })
                else { return }
                self.deliverRemoteChanges(changes, in: store)
            }
        } catch {
            stores.withLock { list in list.removeAll { $0 === store } }
            throw error
        }
        return store
    }

    /// Detaches and closes a store; objects of it in contexts become inaccessible.
    public func remove(_ store: PersistentStore) throws {
        let removed = stores.withLock { list -> Bool in
            guard let index = list.firstIndex(where: { $0 === store }) else { return false }
            list.remove(at: index)
            return true
        }
        guard removed else {
            throw StoreError(.notFound, "the store is not attached to this coordinator", store: store.displayName)
        }
        rowCache.removeAll(in: ObjectIdentifier(store))
        try store.close()
    }

    /// The attached store at `url`, or `nil`.
    public func persistentStore(for url: URL) -> PersistentStore? {
        persistentStores.first { $0.url?.standardizedFileURL == url.standardizedFileURL }
    }

    /// The attached store with the given UUID, or `nil`.
    public func persistentStore(withIdentifier identifier: String) -> PersistentStore? {
        persistentStores.first { $0.identifier.caseInsensitiveCompare(identifier) == .orderedSame }
    }

    /// The metadata of an attached store.
    public func metadata(for store: PersistentStore) -> StoreMetadata { store.metadata }

    /// Replaces the metadata of an attached store.
    public func setMetadata(_ metadata: StoreMetadata, for store: PersistentStore) throws {
        try store.setMetadata(metadata)
    }

    /// The stores holding `entity`, in attach order.
    public func stores(holding entity: EntityDescription) -> [PersistentStore] {
        persistentStores.filter { $0.entityNumbers.contains(entity.entityNumber) }
    }

    /// The ID a URI names (see ``ManagedObjectID/uriRepresentation()``), or `nil` when no attached
    /// store or entity matches.
    public func managedObjectID(forURIRepresentation uri: URL) -> ManagedObjectID? {
        guard uri.scheme == "x-coredata" else { return nil }
        let parts = uri.path.split(separator: "/").map(String.init)
        guard parts.count == 2, let entity = managedObjectModel.entity(named: parts[0]) else { return nil }
        let key = parts[1]
        if key.hasPrefix("t"), let value = Int64(key.dropFirst()), value > 0, (uri.host ?? "").isEmpty {
            return ManagedObjectID(
                entity: entity, rowID: RowID(entity: entity.entityNumber, primaryKey: -value), store: nil)
        }
        guard key.hasPrefix("p"), let value = Int64(key.dropFirst()), value > 0, let host = uri.host,
            let store = persistentStore(withIdentifier: host), store.entityNumbers.contains(entity.entityNumber)
        else { return nil }
        return ManagedObjectID(
            entity: entity, rowID: RowID(entity: entity.entityNumber, primaryKey: value), store: store)
    }

    /// A new temporary ID for an object of `entity` (K2), anchored in `anchors`.
    func temporaryID(for entity: EntityDescription, anchors: inout ObjectIDAnchors) -> ManagedObjectID {
        let key = temporaryKeys.wrappingAdd(1, ordering: .relaxed).newValue
        return anchors.id(entity, RowID(entity: entity.entityNumber, primaryKey: -key), nil)
    }
}
