// Registering fetched rows as objects (uniquing, refilling faults) and pinning their rows in the
// row cache.

extension ManagedObjectContext {
    /// Registers a row as an object (uniquing): fills an existing fault, or creates the object.
    ///
    /// - Parameter pinLater: When true, a new object is marked as holding the row's pin and the
    ///   caller pins it while caching the row (``RowCache/store(_:in:pins:)``); otherwise the pin
    ///   is queued here.
    @discardableResult
    func register(_ row: RowSnapshot, in store: PersistentStore, asFault: Bool, pinLater: Bool = false) -> ManagedObject
    {
        var awakening: [ManagedObject] = []
        let object = register(row, in: store, asFault: asFault, pinLater: pinLater, awakening: &awakening)
        for object in awakening { object.awakeFromFetch() }
        return object
    }

    /// Registers a row like ``register(_:in:asFault:pinLater:)`` but leaves `awakeFromFetch()` to
    /// the caller: objects whose values it loaded are appended to `awakening` (only those of
    /// subclasses; ManagedObject's own hook does nothing).
    ///
    /// - Parameters:
    ///   - refreshing: Whether an object already loaded takes the row's values, its unsaved
    ///     changes staying on top (``FetchRequest/shouldRefreshRefetchedObjects``).
    ///   - known: The row's entity when the caller has it already; otherwise it is looked up in
    ///     the model.
    func register(
        _ row: RowSnapshot, in store: PersistentStore, asFault: Bool, pinLater: Bool, refreshing: Bool = false,
        entity known: EntityDescription? = nil, awakening: inout [ManagedObject]
    ) -> ManagedObject {
        // Rows come from stores of this coordinator's model.
        let entity = known ?? coordinator.managedObjectModel.entity(number: row.id.entity)!
        let id = anchors.id(entity, row.id, store)
        let object: ManagedObject
        if entity.managedObjectClass == ManagedObject.self && !id.isTemporaryID {
            // The base class, whose initializer runs no user code: look up and register at once.
            let found = registered.permanentObject(id) {
                // Made with the row's ID: no placeholder ID, no default values, not inserted.
                registeringID = id
                return ManagedObject(entity: entity, insertInto: self)
            }
            object = found.object
            if !found.isNew {
                refill(object, from: row, asFault: asFault, refreshing: refreshing, awakening: &awakening)
                return object
            }
        } else {
            if let existing = registered[id] {
                refill(existing, from: row, asFault: asFault, refreshing: refreshing, awakening: &awakening)
                return existing
            }
            object = entity.managedObjectClass.init(entity: entity, insertInto: nil)
            registered[id] = object
        }
        object.objectID = id
        object.managedObjectContext = self
        object.snapshot = row
        if asFault {
            object.faulted = true
            object.values = []
        } else {
            object.values = row.values
            if type(of: object) != ManagedObject.self { awakening.append(object) }
        }
        if pinLater {
            object.pinnedKey = RowCache.Key(store: ObjectIdentifier(store), row: row.id)
        } else {
            notePin(object)
        }
        return object
    }

    /// A registered object meets a fetched row of itself: a fault keeps the row as its snapshot
    /// and, unless `asFault`, takes its values; a loaded object keeps its values (as in Core Data),
    /// unless `refreshing`: then a newer row replaces its saved values, its unsaved changes on top.
    private func refill(
        _ object: ManagedObject, from row: RowSnapshot, asFault: Bool, refreshing: Bool,
        awakening: inout [ManagedObject]
    ) {
        guard object.faulted else {
            if refreshing, !object.inserted, object.isAccessible, object.snapshotVersionIfSaved != row.version {
                object.rebase(onto: row)
                noteRefreshed(object)
            }
            return
        }
        object.snapshot = row
        if !asFault {
            object.fulfill(from: row, awaken: false)
            if type(of: object) != ManagedObject.self { awakening.append(object) }
        }
    }

    /// Queues an object's row to be pinned in the row cache (in bulk by ``flushPins()``).
    func notePin(_ object: ManagedObject) {
        guard object.pinnedKey == nil, object.objectID.persistentStore != nil, !object.objectID.isTemporaryID else {
            return
        }
        pendingPins.append(object)
        if pendingPins.count >= 4096 { flushPins() }
    }

    /// Pins queued rows; each object remembers the key the cache really pinned, so it is unpinned
    /// exactly once (a row not resident is not pinned; the object keeps its own snapshot).
    func flushPins() {
        guard !pendingPins.isEmpty else { return }
        var objects: [ManagedObject] = []
        var keys: [RowCache.Key] = []
        objects.reserveCapacity(pendingPins.count)
        keys.reserveCapacity(pendingPins.count)
        for object in pendingPins where object.pinnedKey == nil && object.isIn(self) {
            // notePin only queues objects with a permanent ID, which has a store.
            let key = RowCache.Key(
                store: ObjectIdentifier(object.objectID.persistentStore!), row: object.objectID.rowID)
            object.pinnedKey = key
            objects.append(object)
            keys.append(key)
        }
        let pinned = coordinator.rowCache.pinResident(keys)
        for (object, done) in zip(objects, pinned) where !done { object.pinnedKey = nil }
        pendingPins.removeAll(keepingCapacity: true)
    }
}
