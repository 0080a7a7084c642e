/// The row IDs of a large result in little memory: a primary key per position (8 bytes), plus an
/// entity number per position only when the result mixes entities and a store index per position
/// only when it mixes stores. A million rows of one entity in one store take 8 MB, where as many
/// ``ManagedObjectID``s take 32 MB and as many faults several hundred.
///
/// Positions without a store (objects with temporary IDs, which a ``BatchFaultingArray`` holds
/// itself) read back with a `nil` store.
struct CompactRowIDs {
    /// The primary key of each position.
    private(set) var keys: [Int64] = []
    /// The entity number of every position while ``entities`` is empty.
    private var entity: Int32 = 0
    /// The entity number of each position; empty while every position has ``entity``.
    private var entities: [Int32] = []
    /// The stores positions refer to.
    private(set) var stores: [PersistentStore] = []
    /// The index in ``stores`` of every position while ``storeIndexes`` is empty (``noStore``
    /// for none).
    private var sharedStore = CompactRowIDs.noStore
    /// The index in ``stores`` of each position (``noStore`` for none); empty while every
    /// position has ``sharedStore``.
    private var storeIndexes: [UInt32] = []

    private static let noStore = UInt32.max

    /// The number of positions.
    var count: Int { keys.count }

    /// Makes room for `count` positions.
    mutating func reserveCapacity(_ count: Int) { keys.reserveCapacity(count) }

    /// Adds a position.
    ///
    /// - Complexity: O(1) amortized; O(n) the first time a second entity or store appears.
    mutating func append(_ id: RowID, store: PersistentStore?) {
        let index = storeIndex(of: store)
        if keys.isEmpty {
            entity = id.entity
            sharedStore = index
        }
        if entities.isEmpty && id.entity != entity {
            entities = [Int32](repeating: entity, count: keys.count)
        }
        if !entities.isEmpty { entities.append(id.entity) }
        if storeIndexes.isEmpty && index != sharedStore {
            storeIndexes = [UInt32](repeating: sharedStore, count: keys.count)
        }
        if !storeIndexes.isEmpty { storeIndexes.append(index) }
        keys.append(id.primaryKey)
    }

    /// The row ID and store at `position`.
    subscript(position: Int) -> (id: RowID, store: PersistentStore?) {
        let number = entities.isEmpty ? entity : entities[position]
        let id = RowID(entity: number, primaryKey: keys[position])
        let index = storeIndexes.isEmpty ? sharedStore : storeIndexes[position]
        return (id, index == Self.noStore ? nil : stores[Int(index)])
    }

    /// The entity number at `position`.
    func entityNumber(at position: Int) -> Int32 { entities.isEmpty ? entity : entities[position] }

    /// The index of `store` in ``stores``, added when new.
    private mutating func storeIndex(of store: PersistentStore?) -> UInt32 {
        guard let store else { return Self.noStore }
        if let index = stores.firstIndex(where: { $0 === store }) { return UInt32(index) }
        stores.append(store)
        return UInt32(stores.count - 1)
    }
}
