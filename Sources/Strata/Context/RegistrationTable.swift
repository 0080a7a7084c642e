/// The objects registered in a context, by object ID: saved objects in one table, unsaved ones
/// (temporary IDs) in another keyed by their negative key, so inserting many objects and giving
/// them permanent IDs does not grow and rehash one big table twice.
struct RegistrationTable {
    private var permanent: [ManagedObjectID: ManagedObject] = [:]
    private var temporary: [Int64: ManagedObject] = [:]

    subscript(id: ManagedObjectID) -> ManagedObject? {
        get { id.isTemporaryID ? temporary[id.primaryKey] : permanent[id] }
        set {
            if id.isTemporaryID { temporary[id.primaryKey] = newValue } else { permanent[id] = newValue }
        }
    }

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
    mutating func removeAllTemporary() { temporary = [:] }

    /// Forgets the object with the temporary key `key`.
    mutating func removeTemporary(_ key: Int64) { temporary[key] = nil }

    /// Makes room for `count` more saved objects.
    mutating func reservePermanent(_ count: Int) { permanent.reserveCapacity(permanent.count + count) }

    mutating func removeAll() {
        permanent = [:]
        temporary = [:]
    }
}
