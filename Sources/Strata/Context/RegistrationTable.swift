/// The objects registered in a context, by object ID: saved objects in one table, unsaved ones
/// (temporary IDs) in another keyed by their negative key, so inserting many objects and giving
/// them permanent IDs does not grow and rehash one big table twice.
struct RegistrationTable {
    private var permanent: [ManagedObjectID: ManagedObject] = [:]
    private var temporary: [Int64: ManagedObject] = [:]
    /// How many objects of each table belong to entities with relationships.
    private var permanentLinked = 0
    private var temporaryLinked = 0

    subscript(id: ManagedObjectID) -> ManagedObject? {
        get { id.isTemporaryID ? temporary[id.primaryKey] : permanent[id] }
        set {
            let old: ManagedObject?
            if id.isTemporaryID {
                old = newValue.map { temporary.updateValue($0, forKey: id.primaryKey) } ?? temporary.removeValue(forKey: id.primaryKey)
                temporaryLinked += Self.linked(newValue) - Self.linked(old)
            } else {
                old = newValue.map { permanent.updateValue($0, forKey: id) } ?? permanent.removeValue(forKey: id)
                permanentLinked += Self.linked(newValue) - Self.linked(old)
            }
        }
    }

    private static func linked(_ object: ManagedObject?) -> Int {
        object.map { $0.entity.relationshipSlots.isEmpty ? 0 : 1 } ?? 0
    }

    /// Whether some registered object's entity has relationships (only those can hold
    /// references to other objects).
    var hasObjectsWithRelationships: Bool { permanentLinked + temporaryLinked > 0 }

    /// Every registered object.
    var values: [ManagedObject] { Array(permanent.values) + Array(temporary.values) }

    /// Calls `body` with every registered object, without collecting them first.
    func forEachObject(_ body: (ManagedObject) -> Void) {
        for object in permanent.values { body(object) }
        for object in temporary.values { body(object) }
    }

    /// The number of registered objects.
    var count: Int { permanent.count + temporary.count }

    /// The number of registered objects with temporary IDs.
    var temporaryCount: Int { temporary.count }

    /// Forgets every object with a temporary ID (after they all received permanent ones).
    mutating func removeAllTemporary() {
        temporary = [:]
        temporaryLinked = 0
    }

    /// Forgets the object with the temporary key `key`.
    mutating func removeTemporary(_ key: Int64) {
        temporaryLinked -= Self.linked(temporary.removeValue(forKey: key))
    }

    /// Makes room for `count` more saved objects.
    mutating func reservePermanent(_ count: Int) { permanent.reserveCapacity(permanent.count + count) }

    mutating func removeAll() {
        permanent = [:]
        temporary = [:]
        permanentLinked = 0
        temporaryLinked = 0
    }
}
