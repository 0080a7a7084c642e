/// The objects registered in a context, by object ID: saved objects in one table, unsaved ones
/// (temporary IDs) in another keyed by their negative key, so inserting many objects and giving
/// them permanent IDs does not grow one big table twice.
///
/// Both are ``RowTable``s, arrays indexed by key: fetched rows arrive in key order and temporary
/// keys come from a counter, so registering a batch touches memory in order.
///
/// R1. Every object in the temporary table is also in its context's list of inserted objects,
///     which holds it strongly: `insert(_:)` adds an object to both; an object leaves the list
///     (`rollback()`, `reset()`, the end of a save) only after it left the temporary table
///     (`rollback()` and `finishSave` unregister it first, `reset()` empties both, and a save
///     gives every listed insert a permanent ID or unregisters it). So the temporary table holds
///     its objects without retaining them: adding and dropping 100,000 inserts costs no
///     reference counting on objects that are by then out of the processor's caches.
struct RegistrationTable {
    /// An object held without retaining it, valid by R1.
    private struct Unretained {
        // unowned(unsafe): never read after its object is gone, because R1 keeps the object
        // alive for as long as the entry exists.
        unowned(unsafe) let object: ManagedObject
    }

    private var permanent = RowTable<ManagedObject>()
    private var temporary = RowTable<Unretained>()
    /// Objects with temporary IDs that the context did not insert: a child context's copies of its
    /// parent's unsaved objects (and its own inserts once saved into the parent). Held strongly,
    /// since no inserted list holds them (R1 covers only ``temporary``).
    private var borrowed = RowTable<ManagedObject>()
    /// How many objects of each table belong to entities with relationships.
    private var permanentLinked = 0
    private var temporaryLinked = 0

    /// Stands in for a store in the keys of temporary IDs, which have none.
    private static let noStore = ObjectIdentifier(RegistrationTable.self)

    /// The table key of a saved object's ID.
    private static func permanentKey(_ id: ManagedObjectID) -> RowCache.Key {
        RowCache.Key(store: id.persistentStore.map(ObjectIdentifier.init) ?? noStore, row: id.rowID)
    }

    /// The table key of a temporary key: counted up from 1, in one lane for every entity.
    private static func temporaryKey(_ primaryKey: Int64) -> RowCache.Key {
        // Wrapping: an ID made by hand with Int64.min maps to itself instead of trapping.
        RowCache.Key(store: noStore, row: RowID(entity: 0, primaryKey: 0 &- primaryKey))
    }

    /// Whether an object of a subclass of ``ManagedObject`` was ever registered here (since the
    /// last ``removeAll()``). Without one, no object overrides the lifecycle hooks, and a save
    /// need not visit every object to call them.
    private(set) var hasSubclassObjects = false

    subscript(id: ManagedObjectID) -> ManagedObject? {
        get {
            guard id.isTemporaryID else { return permanent[Self.permanentKey(id)] }
            let key = Self.temporaryKey(id.primaryKey)
            return temporary[key]?.object ?? (borrowed.isEmpty ? nil : borrowed[key])
        }
        set {
            if let newValue, !hasSubclassObjects, type(of: newValue) != ManagedObject.self { hasSubclassObjects = true }
            let old: ManagedObject?
            if id.isTemporaryID {
                let key = Self.temporaryKey(id.primaryKey)
                if newValue == nil, !borrowed.isEmpty, let lent = borrowed.removeValue(forKey: key) {
                    temporaryLinked -= Self.linked(lent)
                }
                old =
                    newValue.map { temporary.updateValue(Unretained(object: $0), forKey: key)?.object }
                    ?? temporary.removeValue(forKey: key)?.object
                temporaryLinked += Self.linked(newValue) - Self.linked(old)
            } else {
                let key = Self.permanentKey(id)
                old = newValue.map { permanent.updateValue($0, forKey: key) } ?? permanent.removeValue(forKey: key)
                permanentLinked += Self.linked(newValue) - Self.linked(old)
            }
        }
    }

    /// Unregisters `object` when it is the object registered for its ID (another object may have
    /// taken the ID since); a saved object costs one lookup.
    mutating func remove(_ object: ManagedObject) {
        let id = object.objectID
        guard !id.isTemporaryID else {
            if let current = self[id], current === object { self[id] = nil }
            return
        }
        let key = Self.permanentKey(id)
        guard let old = permanent.removeValue(forKey: key) else { return }
        guard old === object else {
            // Another object holds the ID: it stays registered.
            _ = permanent.updateValue(old, forKey: key)
            return
        }
        permanentLinked -= Self.linked(old)
    }

    /// Registers `object`, whose temporary ID the context did not insert, strongly (see ``borrowed``).
    mutating func registerBorrowed(_ object: ManagedObject) {
        // callers check
        precondition(object.objectID.isTemporaryID, "registerBorrowed(_:) takes objects with temporary IDs")
        if !hasSubclassObjects, type(of: object) != ManagedObject.self { hasSubclassObjects = true }
        let old = borrowed.updateValue(object, forKey: Self.temporaryKey(object.objectID.primaryKey))
        temporaryLinked += Self.linked(object) - Self.linked(old)
    }

    /// Moves an unsaved object of the context, saved into its parent, from the unretained table to
    /// the borrowed one (before it leaves the inserted list, R1).
    mutating func lend(_ object: ManagedObject) {
        let key = Self.temporaryKey(object.objectID.primaryKey)
        guard temporary.removeValue(forKey: key) != nil else { return }
        borrowed.updateValue(object, forKey: key)
    }

    /// Lends every object of `objects` (``lend(_:)``), then calls `body` with each; when they are
    /// all the unsaved objects there are (a child's whole save), the borrowed table takes them in
    /// one pass (``RowTable/updateValues(store:entity:keys:values:replaced:)``) and the unretained
    /// table is emptied in one step instead of key by key.
    mutating func lend(all objects: [ManagedObject], _ body: (ManagedObject) -> Void) {
        guard objects.count > 64, objects.count == temporary.count, borrowed.isEmpty else {
            for object in objects {
                lend(object)
                body(object)
            }
            return
        }
        // The objects are the unretained table's: the callers pass a context's inserted objects,
        // each listed once and each in the table (R1 and insert(_:) put them in both), and there
        // are as many as the table holds. Then the whole table moves.
        assert(
            objects.allSatisfy { temporary[Self.temporaryKey($0.objectID.primaryKey)]?.object === $0 },
            "lend(all:) of objects that are not the unsaved ones")
        // One pass over the objects (out of the processor's caches by now) for keys and `body`.
        var keys: [Int64] = []
        keys.reserveCapacity(objects.count)
        for object in objects {
            keys.append(Self.newKey(object.objectID.primaryKey))
            body(object)
        }
        borrowed.updateValues(store: Self.noStore, entity: 0, keys: keys, values: objects, replaced: { _ in })
        temporary.removeAll()
    }

    /// The key that ``registerNew(_:)`` files an object with the temporary ID key `primaryKey`
    /// under, for callers that collect them while they make the objects.
    static func newKey(_ primaryKey: Int64) -> Int64 { temporaryKey(primaryKey).row.primaryKey }

    /// Unsaved objects with temporary IDs that this context inserts (a child's inserts arriving
    /// in its parent), collected by the caller as it makes them, to register in one pass.
    struct NewObjects {
        fileprivate(set) var objects: [ManagedObject] = []
        fileprivate var keys: [Int64] = []
        fileprivate var low = Int64.max
        fileprivate var high = Int64.min
        fileprivate var linked = 0
        fileprivate var hasSubclassObjects = false

        init(capacity: Int) {
            objects.reserveCapacity(capacity)
            keys.reserveCapacity(capacity)
        }

        /// Adds `object`, of `entity` (its class `entity.managedObjectClass`), with the temporary
        /// ID key `primaryKey`: read from what the caller holds, without touching the object.
        mutating func append(_ object: ManagedObject, of entity: EntityDescription, primaryKey: Int64) {
            let key = RegistrationTable.newKey(primaryKey)
            objects.append(object)
            keys.append(key)
            low = Swift.min(low, key)
            high = Swift.max(high, key)
            if entity.hasRelationships { linked += 1 }
            if entity.managedObjectClass != ManagedObject.self { hasSubclassObjects = true }
        }
    }

    /// Registers `new` as the subscript would one by one: room made once for their key range,
    /// then one pass (``RowTable/updateValues(store:entity:keys:values:replaced:)``).
    mutating func registerNew(_ new: NewObjects) {
        guard !new.objects.isEmpty else { return }
        if new.hasSubclassObjects { hasSubclassObjects = true }
        if new.objects.count > 64 {
            temporary.reserve(store: Self.noStore, entity: 0, keys: new.low...new.high, count: new.objects.count)
        }
        var linked = new.linked
        temporary.updateValues(
            store: Self.noStore, entity: 0, keys: new.keys, values: new.objects.map { Unretained(object: $0) },
            replaced: { old in linked -= Self.linked(old.object) })
        temporaryLinked += linked
    }

    /// Registers `object` under the saved object ID `id` and returns the object registered under
    /// it before, if any (the caller detaches it).
    mutating func replace(_ id: ManagedObjectID, with object: ManagedObject) -> ManagedObject? {
        precondition(!id.isTemporaryID, "replace(_:with:) registers saved objects only")  // callers pass permanent IDs
        if !hasSubclassObjects, type(of: object) != ManagedObject.self { hasSubclassObjects = true }
        let old = permanent.updateValue(object, forKey: Self.permanentKey(id))
        permanentLinked += Self.linked(object) - Self.linked(old)
        return old
    }

    /// The object registered under the saved object ID `id`, or else `make()`'s object, now
    /// registered under it; one lookup for both. `make` runs while the table is being changed,
    /// so it must not touch the table (it runs no user code: the caller uses this for objects of
    /// the base class only).
    mutating func permanentObject(
        _ id: ManagedObjectID, orMake make: () -> ManagedObject
    ) -> (object: ManagedObject, isNew: Bool) {
        let (object, isNew) = permanent.withValue(forKey: Self.permanentKey(id), default: make()) { ($0, $1) }
        if isNew {
            if !hasSubclassObjects, type(of: object) != ManagedObject.self { hasSubclassObjects = true }
            permanentLinked += Self.linked(object)
        }
        return (object, isNew)
    }

    private static func linked(_ object: ManagedObject?) -> Int {
        object.map { $0.entity.hasRelationships ? 1 : 0 } ?? 0
    }

    /// Makes room at once for `count` saved objects of `entity` in `store` with keys in `keys`
    /// (at least doubling a lane that grows, with `doubling`); keys too scattered to share a lane
    /// go to the overflow table (``RowTable`` T4).
    mutating func reservePermanent(
        store: PersistentStore, entity: Int32, keys: ClosedRange<Int64>, count: Int, doubling: Bool = false
    ) {
        permanent.reserve(store: ObjectIdentifier(store), entity: entity, keys: keys, count: count, doubling: doubling)
    }

    /// Whether some registered object's entity has relationships (only those can hold
    /// references to other objects).
    var hasObjectsWithRelationships: Bool { permanentLinked + temporaryLinked > 0 }

    /// Lets go of saved (and borrowed) objects nothing but this table holds and that have no
    /// changes, calling `released` with each first; returns how many went. Unsaved objects (the
    /// temporary table) always stay.
    ///
    /// - Complexity: O(n) for n registered objects.
    mutating func sweep(_ released: (ManagedObject) -> Void) -> Int {
        var linkedGone = 0
        let gone = permanent.removeValues { object in
            guard isKnownUniquelyReferenced(&object), !object.hasChanges else { return false }
            released(object)
            linkedGone += Self.linked(object)
            return true
        }
        permanentLinked -= linkedGone
        var lentLinkedGone = 0
        let lentGone = borrowed.removeValues { object in
            guard isKnownUniquelyReferenced(&object), !object.hasChanges else { return false }
            released(object)
            lentLinkedGone += Self.linked(object)
            return true
        }
        temporaryLinked -= lentLinkedGone
        return gone + lentGone
    }

    /// Whether any object is registered with a temporary ID this context did not insert.
    var hasBorrowed: Bool { !borrowed.isEmpty }

    /// Every registered object.
    var values: [ManagedObject] {
        var all: [ManagedObject] = []
        all.reserveCapacity(count)
        forEachObject { all.append($0) }
        return all
    }

    /// Calls `body` with every registered object, without collecting them first.
    func forEachObject(_ body: (ManagedObject) -> Void) {
        permanent.forEachValue(body)
        temporary.forEachValue { body($0.object) }
        borrowed.forEachValue(body)
    }

    /// Forgets every object, calling `body` with each as it goes (each saved object is released
    /// right after `body`, while it is still in the processor's caches). Unsaved objects stay
    /// alive through `body` by R1.
    mutating func drain(_ body: (ManagedObject) -> Void) {
        permanent.drainPrefetching(body)
        temporary.drain { body($0.object) }
        borrowed.drain(body)
        removeAll()
    }

    /// The number of registered objects.
    var count: Int { permanent.count + temporary.count + borrowed.count }

    /// The number of registered objects with temporary IDs.
    var temporaryCount: Int { temporary.count }

    /// Forgets every object with a temporary ID (after they all received permanent ones).
    mutating func removeAllTemporary() {
        temporary.removeAll()
        var linked = 0
        borrowed.forEachValue { linked += Self.linked($0) }
        temporaryLinked = linked
    }

    /// Forgets the object with the temporary key `key`.
    mutating func removeTemporary(_ key: Int64) {
        if let removed = temporary.removeValue(forKey: Self.temporaryKey(key))?.object {
            temporaryLinked -= Self.linked(removed)
        } else if !borrowed.isEmpty, let lent = borrowed.removeValue(forKey: Self.temporaryKey(key)) {
            temporaryLinked -= Self.linked(lent)
        }
    }

    mutating func removeAll() {
        permanent.removeAll()
        temporary.removeAll()
        borrowed.removeAll()
        permanentLinked = 0
        temporaryLinked = 0
        hasSubclassObjects = false
    }
}
