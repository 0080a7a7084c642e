/// The part of a ``ManagedObjectID`` besides its primary key: its entity, store and the entity
/// number of its row, in one immutable object that many IDs share.
///
/// Every object holds its ID, so making and freeing an object changes the reference count of
/// what its ID holds. Were that the entity and the store themselves, two contexts making objects
/// on two cores would write the same two counts at every object, and the cache lines holding
/// them would move between the cores each time. Each context makes its IDs with anchors of its
/// own (``ObjectIDAnchors``), so its objects count references on objects only it touches; an ID
/// sent elsewhere keeps its anchor, and so its entity and store, alive like any reference.
///
/// The anchor also holds the entity number of the IDs' rows, so an ID is the anchor and a
/// primary key, 16 bytes: every object holds one, and 8 bytes less made the object fit a
/// 96-byte allocation instead of a 112-byte one.
@usableFromInline
final class ObjectIDAnchor: Sendable {
    @usableFromInline let entity: EntityDescription
    @usableFromInline let store: PersistentStore?
    /// The entity number of the rows of the IDs holding this anchor: the entity's own number,
    /// except for an ID made by hand (``ManagedObjectID/init(entity:rowID:store:)``) for a row
    /// numbered otherwise, which keeps that number as given.
    @usableFromInline let rowEntity: Int32

    init(entity: EntityDescription, store: PersistentStore?, rowEntity: Int32? = nil) {
        self.entity = entity
        self.store = store
        self.rowEntity = rowEntity ?? entity.entityNumber
    }
}

/// Anchors for the IDs one owner makes (a context, or one pass over a batch of rows): one per
/// store and entity, made on first use.
struct ObjectIDAnchors {
    /// Anchors by store (`nil` for temporary IDs), each list indexed by entity number.
    private var lists: [ObjectIdentifier?: [ObjectIDAnchor?]] = [:]
    /// The list of the store asked for last: consecutive IDs of one store skip the lookup.
    private var lastStore: ObjectIdentifier??
    private var lastList: [ObjectIDAnchor?] = []

    /// The ID of `row` of `entity` in `store`.
    mutating func id(_ entity: EntityDescription, _ row: RowID, _ store: PersistentStore?) -> ManagedObjectID {
        ManagedObjectID(anchor: anchor(entity, store), rowID: row)
    }

    /// The anchor for `entity` in `store`.
    mutating func anchor(_ entity: EntityDescription, _ store: PersistentStore?) -> ObjectIDAnchor {
        let key = store.map(ObjectIdentifier.init)
        let number = Int(entity.entityNumber)
        if lastStore != .some(key) {
            if let lastStore { lists[lastStore] = lastList }
            lastList = lists[key] ?? []
            lastStore = .some(key)
        }
        // An anchor of another entity or store under the same numbers (a store attached after
        // one was removed at the same address, a model's entity replaced) is not reused.
        if number >= 0, number < lastList.count, let anchor = lastList[number], anchor.entity === entity,
            anchor.store === store
        {
            return anchor
        }
        let anchor = ObjectIDAnchor(entity: entity, store: store)
        guard number >= 0, number < 1 << 16 else { return anchor }
        if number >= lastList.count { lastList += Array(repeating: nil, count: number + 1 - lastList.count) }
        lastList[number] = anchor
        return anchor
    }
}

/// ``ObjectIDAnchors`` for a value type that makes IDs from non-mutating methods, used on one
/// thread at a time like its owner.
final class ObjectIDAnchorBox {
    var anchors = ObjectIDAnchors()
}
