import Foundation
import Synchronization

/// A unit of work: the objects registered in it, their changes, and the fetches and saves that
/// move them to and from the coordinator's stores.
///
/// One object per object ID (uniquing); faults that load on first access, in batches; inverse
/// relationships kept consistent on every change; delete rules and validation applied at save; a
/// failed save changes nothing in any store.
///
/// Thread safety: `Sendable`, but its state is confined to its executor. Run work with
/// ``perform(_:)`` (async) or ``performAndWait(_:)``; a `.privateQueue` context may also be used
/// directly from the thread that created it (Core Data's confinement contract), and a `.mainQueue`
/// context from the main thread. Debug builds check every call (see <doc:Concurrency> and
/// docs/concurrency.md); release builds do when `STRATA_CONCURRENCY_DEBUG=1`.
public final class ManagedObjectContext: @unchecked Sendable {
    // @unchecked Sendable: every mutable field below is touched only on the context's serial queue
    // (perform/performAndWait), by the thread that created it, or (main-queue contexts) on the main
    // thread, as documented above; `checkConfinement` verifies this at every public entry point in
    // debug builds and under STRATA_CONCURRENCY_DEBUG=1.

    /// Where a context runs its work.
    public enum ConcurrencyType: Sendable {
        /// A private serial queue.
        case privateQueue
        /// The main queue (for UI-like callers).
        case mainQueue
    }

    /// The coordinator the context fetches from and saves to (a child context's is its root's).
    public let coordinator: PersistentStoreCoordinator
    /// The parent context of a child context (Core Data's `parent`), whose objects the child reads
    /// and into which it saves; `nil` for a context that saves to the coordinator's stores.
    public let parent: ManagedObjectContext?
    /// Where the context runs its work.
    public let concurrencyType: ConcurrencyType
    /// A name for debugging and history.
    public var name: String?

    let queue: DispatchQueue
    let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    /// The thread that created the context (allowed to use a private-queue context directly).
    let creatingThread = ThreadIdentity.current
    /// Blocks of this context's work running or waiting on its queue (perform, performAndWait).
    let queuedWork = Atomic<Int>(0)
    /// The first store error a property access could not throw, and how many there were since
    /// (see ``accessFailure``).
    var accessFailures: (first: any Error, count: Int)?
    /// Objects for IDs that no store of this context holds and that this context did not insert
    /// (another context's temporary ID): kept here, inaccessible, so the same object answers for
    /// the same ID and nothing refers to it unretained.
    var orphans: [ManagedObjectID: ManagedObject] = [:]
    // `@exclusivity(unchecked)` on the tables below, as on ManagedObject's stored state: each is
    // read or changed in place on the context's thread, and no access overlaps another to the
    // same table (iterations work on copies or, for `registered.forEachObject`, change the
    // objects, never the table); the runtime checks cost a measurable share of every fetch and save.
    @exclusivity(unchecked) var registered = RegistrationTable()
    /// Inserted objects, in insertion order (keys are allocated in this order).
    @exclusivity(unchecked) var insertedList = ObjectList(.inserted)
    @exclusivity(unchecked) var updatedList = ObjectList(.updated)
    @exclusivity(unchecked) var deletedList = ObjectList(.deleted)
    /// The anchors of the IDs this context makes (``ObjectIDAnchor``: no reference count its
    /// objects change is shared with a context on another thread). Unchecked like the tables
    /// above: changed in place on the context's thread only, by `anchors.id(...)` calls that never
    /// overlap one another.
    @exclusivity(unchecked) var anchors = ObjectIDAnchors()
    /// The ID of the object ``register(_:in:asFault:pinLater:refreshing:awakening:)`` or a
    /// child's save (``accept(_:from:)``) is making (of ``ManagedObject`` itself, whose
    /// initializer runs no user code), between setting it and the initializer taking it.
    /// Unchecked: set and taken on the context's thread, one after the other, never during
    /// another access.
    @exclusivity(unchecked) var registeringID: ManagedObjectID?
    var assignedStores: [ObjectIdentifier: PersistentStore] = [:]
    /// The store each entity's inserts go to, worked out once per save.
    @exclusivity(unchecked) var defaultStores: [Int32: PersistentStore] = [:]
    var faultBatches: [ObjectIdentifier: FaultBatch] = [:]
    /// Results of fetched properties read so far, by object (ManagedObject+FetchedProperties.swift);
    /// kept here rather than on objects, which stay small.
    var fetchedPropertyResults: [ObjectIdentifier: FetchedPropertyResults] = [:]
    /// Registered objects whose rows are waiting to be pinned in the row cache (see ``flushPins()``).
    @exclusivity(unchecked) var pendingPins: [ManagedObject] = []
    /// How a save resolves conflicts (Core Data's `mergePolicy`); ``MergePolicy/error`` by default.
    public var mergePolicy: MergePolicy = .error
    /// Keep every registered object alive until ``reset()`` (Core Data's `retainsRegisteredObjects`).
    /// Off by default: objects without changes that nothing else holds are let go (see
    /// ``ManagedObjectContext/sweepUnreferencedObjects()``).
    public var retainsRegisteredObjects = false
    /// How old a cached row may be before a fault fetches it again from the store, in seconds
    /// (Core Data's `stalenessInterval`); negative (the default) accepts any cached row, 0 always
    /// reads the store.
    public var stalenessInterval: TimeInterval = -1
    var observers = ContextObservers()
    let eventStreams = EventStreams()
    /// Whether changes are collected for objects-did-change (someone observes, or did).
    var tracksObjectChanges = false
    var pendingChanges = PendingObjectChanges()
    /// Saves waiting to be merged in (automaticallyMergesChangesFromParent).
    let mergeInbox = MergeInbox()
    /// This context's child contexts, held weakly.
    let children = ContextList()
    /// Registered objects when the last sweep of unreferenced objects ran.
    var countAfterSweep = 0
    /// The entity ``entity(named:)`` found last: inserts come in runs of one entity name.
    @exclusivity(unchecked) private var lastNamedEntity: EntityDescription?
    /// Links made between objects already known to live in different stores (refused at save).
    var crossStoreLinks: [(ManagedObject, Int, ManagedObject)] = []

    /// Creates a context on `coordinator`.
    public init(coordinator: PersistentStoreCoordinator, concurrencyType: ConcurrencyType = .privateQueue) {
        self.coordinator = coordinator
        self.parent = nil
        self.concurrencyType = concurrencyType
        switch concurrencyType {
        case .privateQueue: queue = DispatchQueue(label: "strata.context")
        case .mainQueue: queue = DispatchQueue.main
        }
        queue.setSpecific(key: queueKey, value: ObjectIdentifier(self))
    }

    /// Creates a child context of `parent` (Core Data's `parent`): it reads the parent's objects,
    /// unsaved changes included, and its `save()` pushes its changes into the parent without
    /// touching a store. Any depth.
    public init(parent: ManagedObjectContext, concurrencyType: ConcurrencyType = .privateQueue) {
        self.coordinator = parent.coordinator
        self.parent = parent
        self.concurrencyType = concurrencyType
        switch concurrencyType {
        case .privateQueue: queue = DispatchQueue(label: "strata.context.child")
        case .mainQueue: queue = DispatchQueue.main
        }
        queue.setSpecific(key: queueKey, value: ObjectIdentifier(self))
        parent.children.add(self)
    }

    /// Creates a main-queue context on `coordinator` (Core Data's `viewContext` kind).
    @MainActor public static func mainQueueContext(coordinator: PersistentStoreCoordinator) -> ManagedObjectContext {
        ManagedObjectContext(coordinator: coordinator, concurrencyType: .mainQueue)
    }

    deinit {
        eventStreams.finishAll()
        coordinator.mergingContexts.remove(self)
        parent?.children.remove(self)
        // One pass: the pinned rows to release, and objects (which may outlive their context)
        // see no context from now on. Pins go back in batches: a list of every pinned key at once
        // was 24 bytes per object more at the moment the most objects were alive (the end of a
        // large fetch's context).
        let cache = coordinator.rowCache
        var keys: [RowCache.Key] = []
        keys.reserveCapacity(Swift.min(registered.count, Self.unpinBatch))
        var batched = false
        registered.drain { object in
            if let key = object.pinnedKey {
                keys.append(key)
                if keys.count == Self.unpinBatch {
                    cache.unpin(keys, evicting: false)
                    keys.removeAll(keepingCapacity: true)
                    batched = true
                }
            }
            object.context = nil
        }
        for object in orphans.values { object.context = nil }
        // The last call evicts what the batches before it made evictable, too.
        if !keys.isEmpty || batched { cache.unpin(keys) }
    }

    /// Pins a context going away releases under one lock of the row cache.
    static let unpinBatch = 4_096

    // MARK: Executor

    /// Runs `body` on the context's queue and waits for it; runs inline when already there.
    ///
    /// Merges waiting saves first and, at the end, applies delete rules and posts objects-did-change
    /// (``processPendingChanges()``), unless it ran inline inside other work of the context.
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        if DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self) { return try body() }
        if concurrencyType == .mainQueue, Thread.isMainThread { return try body() }
        queuedWork.add(1, ordering: .acquiringAndReleasing)
        defer { queuedWork.subtract(1, ordering: .acquiringAndReleasing) }
        return try queue.sync {
            drainMerges()
            defer { endOfEvent() }
            return try body()
        }
    }

    /// Runs `body` on the context's queue and returns its result.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queuedWork.add(1, ordering: .acquiringAndReleasing)
            queue.async {
                defer { self.queuedWork.subtract(1, ordering: .acquiringAndReleasing) }
                self.drainMerges()
                let result = Result { try body() }
                self.endOfEvent()
                continuation.resume(with: result)
            }
        }
    }

    /// Schedules `body` on the context's queue and returns at once.
    public func perform(_ body: @escaping @Sendable () -> Void) {
        queuedWork.add(1, ordering: .acquiringAndReleasing)
        queue.async {
            defer { self.queuedWork.subtract(1, ordering: .acquiringAndReleasing) }
            self.drainMerges()
            body()
            self.endOfEvent()
        }
    }

    // MARK: Registered objects

    /// Whether any object has unsaved changes.
    public var hasChanges: Bool {
        checkConfinement("hasChanges")
        drainMerges()
        return !insertedList.isEmpty || !deletedList.isEmpty || updatedList.values.contains { $0.isUpdated }
    }

    /// Objects inserted and not yet saved.
    public var insertedObjects: Set<ManagedObject> {
        checkConfinement("insertedObjects")
        return Set(insertedList.values.filter { !$0.deleted })
    }
    /// Objects changed and not yet saved (not inserted, not deleted).
    public var updatedObjects: Set<ManagedObject> {
        checkConfinement("updatedObjects")
        return Set(updatedList.values.filter { $0.isUpdated })
    }
    /// Objects deleted and not yet saved.
    public var deletedObjects: Set<ManagedObject> {
        checkConfinement("deletedObjects")
        return Set(deletedList.values.filter { !$0.inserted })
    }
    /// Every object registered in the context.
    public var registeredObjects: Set<ManagedObject> {
        checkConfinement("registeredObjects")
        return Set(registered.values)
    }

    /// Hands the ID ``register(_:in:asFault:pinLater:refreshing:awakening:)`` or
    /// ``accept(_:from:)`` set for the object it is making to that object's initializer, once.
    func takeRegisteringID() -> ManagedObjectID? {
        guard let id = registeringID else { return nil }
        registeringID = nil
        return id
    }

    /// The ID an object made for this context holds until ``insert(_:)`` gives it a temporary one.
    func placeholderID(_ entity: EntityDescription, _ row: RowID) -> ManagedObjectID {
        checkConfinement("init(entity:insertInto:)")
        return anchors.id(entity, row, nil)
    }

    /// Inserts a new object (Core Data's `insert(_:)`); usually done by
    /// ``ManagedObject/init(entity:insertInto:)``.
    public func insert(_ object: ManagedObject) {
        checkConfinement("insert(_:)", of: object)
        if let owner = object.managedObjectContext, owner !== self {
            // Misuse no valid program commits: an object belongs to one context.
            preconditionFailure("\(object.entity.name) is already registered in another context")
        }
        guard !object.inserted else { return }
        let id = coordinator.temporaryID(for: object.entity, anchors: &anchors)
        object.objectID = id
        object.managedObjectContext = self
        object.inserted = true
        object.faulted = false
        object.clearChangedSlots()
        for slot in object.values.indices where object.values[slot].isSetOnInsert { object.markSlotChanged(slot) }
        registered[id] = object
        insertedList.insert(object)
        noteInserted(object)
        object.awakeFromInsert()
    }

    /// Inserts a new object of the entity named `entityName` (Core Data's
    /// `NSEntityDescription.insertNewObject(forEntityName:into:)`).
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` when the entity does not exist or is abstract.
    @discardableResult
    public func insertNewObject(forEntityName entityName: String) throws -> ManagedObject {
        checkConfinement("insertNewObject(forEntityName: \"\(entityName)\")")
        let entity = try entity(named: entityName)
        if entity.isAbstract {
            throw StoreError(.invalidRequest, "entity '\(entityName)' is abstract; insert one of its subentities")
        }
        guard entity.managedObjectClass == ManagedObject.self else {
            return entity.managedObjectClass.init(entity: entity, insertInto: self)
        }
        // The base class runs no code of its own in its initializer: made outside any context and
        // inserted here, the same object results without handing `self` to the initializer, which
        // takes it retained. A context someone holds weakly (a parent holds its children so)
        // counts its references in a side table, where that retain and its release took 7% of a
        // child's inserts.
        let object = ManagedObject(entity: entity, insertInto: nil)
        object.values = ManagedObject.insertedValues(entity)
        insert(object)
        return object
    }

    /// Inserts a new object of a registered subclass: `try context.insert(Person.self)`.
    public func insert<T: ManagedObject>(_ type: T.Type) throws -> T {
        guard let entity = coordinator.managedObjectModel.entities.first(where: { $0.managedObjectClass == type })
        else {
            throw StoreError(
                .invalidRequest,
                "no entity of the model uses class \(type); register it with ManagedObjectModel.registering(_:)")
        }
        // The entity's class is `type`, so the instance is a T.
        return entity.managedObjectClass.init(entity: entity, insertInto: self) as! T
    }

    /// Marks an object deleted; delete rules run at the next ``processPendingChanges()`` or save.
    public func delete(_ object: ManagedObject) {
        checkConfinement("delete(_:)", of: object)
        guard object.isIn(self), !object.deleted else { return }
        object.fireFault()
        object.prepareForDeletion()
        object.deleted = true
        deletedList.insert(object)
        noteDeleted(object)
    }

    /// Sends an inserted object to a particular store (Core Data's `assign(_:to:)`).
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` when the store does not hold the object's entity.
    public func assign(_ object: ManagedObject, to store: PersistentStore) throws {
        checkConfinement("assign(_:to:)", of: object)
        guard store.entityNumbers.contains(object.entity.entityNumber) else {
            throw StoreError(
                .invalidRequest, "store \(store.displayName) does not hold entity '\(object.entity.name)'",
                store: store.displayName)
        }
        assignedStores[ObjectIdentifier(object)] = store
    }

    /// The object for `id`: the registered one, or a new fault (Core Data's `object(with:)`).
    ///
    /// An ID no store of this coordinator can hold (another context's temporary ID, or an ID of
    /// a store not attached here) gives an inaccessible object: it reads as `nil`, refuses
    /// changes, and ``existingObject(with:)`` throws ``StoreError/Code/notFound`` for it.
    public func object(with id: ManagedObjectID) -> ManagedObject {
        checkConfinement("object(with:)")
        drainMerges()
        if let existing = registered[id], existing.entity === id.entity { return existing }
        if let orphan = orphans[id] { return orphan }
        if id.isTemporaryID, parent != nil {
            do {
                if let borrowed = try borrowedObject(for: id) { return borrowed }
            } catch {
                noteAccessFailure(error)
            }
        }
        guard let store = id.persistentStore, !id.isTemporaryID,
            coordinator.isAttached(store)
        else {
            // Nothing can fill it: not registered in the temporary table, which holds only this
            // context's inserts (R1), but here, retained.
            let object = id.entity.managedObjectClass.init(entity: id.entity, insertInto: nil)
            object.objectID = id
            object.managedObjectContext = self
            markInaccessible(object)
            orphans[id] = object
            return object
        }
        return fault(for: id)
    }

    /// The registered object for a saved object's ID that a store of this context gave, or a
    /// new fault for it (``object(with:)`` without its checks, for IDs the core made itself).
    func fault(for id: ManagedObjectID) -> ManagedObject {
        if let existing = registered[id] { return existing }
        let object = id.entity.managedObjectClass.init(entity: id.entity, insertInto: nil)
        object.objectID = id
        object.managedObjectContext = self
        object.faulted = true
        object.values = []
        register(object, as: id)
        return object
    }

    /// The object for `id`, loaded; throws when no store holds it (Core Data's `existingObject(with:)`).
    ///
    /// - Throws: ``StoreError/Code/notFound`` when no store holds the object; the store's error
    ///   when it cannot be read.
    public func existingObject(with id: ManagedObjectID) throws -> ManagedObject {
        checkConfinement("existingObject(with:)")
        drainMerges()
        if let existing = registered[id], existing.entity === id.entity, !existing.faulted {
            if existing.isAccessible { return existing }
            throw StoreError(
                .notFound, "no \(id.entity.name) with ID \(id) exists in the store",
                store: id.persistentStore?.displayName, objectIDs: [id])
        }
        if parent != nil {
            let object = id.isTemporaryID ? try borrowedObject(for: id) : fault(for: id)
            if let object {
                try object.fireFaultThrowing()
                if object.isAccessible { return object }
            }
            throw StoreError(
                .notFound, "no \(id.entity.name) with ID \(id) exists in the parent context or the store",
                objectIDs: [id])
        }
        guard let store = id.persistentStore, !id.isTemporaryID,
            coordinator.isAttached(store)
        else {
            throw StoreError(
                .notFound, "no object with ID \(id) is registered in this context or saved in its stores",
                objectIDs: [id])
        }
        // The row comes pinned for the object, with the entry at hand (a queued pin would look the
        // row up again later, a cache miss per object for scattered IDs).
        guard let (row, pinned) = try coordinator.row(for: id.rowID, in: store, pinning: true) else {
            throw StoreError(
                .notFound, "no \(id.entity.name) with ID \(id) exists in the store", store: store.displayName)
        }
        guard pinned else { return register(row, in: store, asFault: false) }
        let known = registered.count
        let object = register(row, in: store, asFault: false, pinLater: true)
        if registered.count == known {
            // A fault registered before keeps the pin it holds, or takes this one.
            let key = RowCache.Key(store: ObjectIdentifier(store), row: row.id)
            if object.pinnedKey == nil { object.pinnedKey = key } else { coordinator.rowCache.unpin([key]) }
        }
        return object
    }

    /// The registered object for `id`, or `nil` (Core Data's `registeredObject(for:)`).
    public func registeredObject(for id: ManagedObjectID) -> ManagedObject? {
        checkConfinement("registeredObject(for:)")
        if let object = registered[id], object.entity === id.entity { return object }
        return orphans[id]
    }

    /// Registers `object` under the saved-object ID `id`; an object registered under it before
    /// (a fault made for a key before that key was saved) leaves the context (``detach(_:)``).
    func register(_ object: ManagedObject, as id: ManagedObjectID) {
        if let displaced = registered.replace(id, with: object), displaced !== object { detach(displaced) }
    }

    /// Removes `object` from the registration tables.
    func unregister(_ object: ManagedObject) {
        registered.remove(object)
        if !orphans.isEmpty, let orphan = orphans[object.objectID], orphan === object { orphans[object.objectID] = nil }
    }

    /// An object leaving the context: unregistered elsewhere, its pin released, its context
    /// reference cleared, so nothing of it points at the context once it is gone.
    func detach(_ object: ManagedObject) {
        if let key = object.pinnedKey { coordinator.rowCache.unpin([key]) }
        object.pinnedKey = nil
        faultBatches[ObjectIdentifier(object)] = nil
        fetchedPropertyResults[ObjectIdentifier(object)] = nil
        insertedList.remove(object)
        updatedList.remove(object)
        deletedList.remove(object)
        object.managedObjectContext = nil
    }

    func entity(named name: String) throws -> EntityDescription {
        if let last = lastNamedEntity, last.name == name { return last }
        guard let entity = coordinator.managedObjectModel.entity(named: name) else {
            throw StoreError(.invalidRequest, "the model has no entity named '\(name)'")
        }
        lastNamedEntity = entity
        return entity
    }

    func noteUpdated(_ object: ManagedObject) {
        updatedList.insert(object)
        noteChanged(object)
    }
}

/// Objects created as faults together (by one fetch), fulfilled together in chunks.
final class FaultBatch {
    var ids: [ManagedObjectID]
    var index: [ManagedObjectID: Int] = [:]
    let size: Int
    /// Relationship key paths loaded for each chunk when it is fulfilled
    /// (``FetchRequest/relationshipKeyPathsForPrefetching``).
    let prefetching: [String]
    /// Whether rows read from the store for these faults go into the row cache (a batch-faulting
    /// walk's do not: see ``BatchFaultingArray``).
    let cachesRows: Bool
    init(ids: [ManagedObjectID], size: Int, prefetching: [String] = [], cachesRows: Bool = true) {
        self.ids = ids
        self.size = max(size, 1)
        self.prefetching = prefetching
        self.cachesRows = cachesRows
        for (i, id) in ids.enumerated() { index[id] = i }
    }
}

extension ManagedObject {
    func fulfill(from row: RowSnapshot, awaken: Bool = true) {
        values = row.values
        snapshot = row
        faulted = false
        if awaken { awakeFromFetch() }
    }
}
