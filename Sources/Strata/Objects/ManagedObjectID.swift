import Foundation

/// The identity of a managed object: its store, entity and primary key.
///
/// Objects inserted but not saved have a temporary ID (``isTemporaryID``); a save (or
/// ``ManagedObjectContext/obtainPermanentIDs(for:)``) replaces it with a permanent one. IDs are
/// values: compare them, hash them, send them between contexts and threads.
public struct ManagedObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The entity, store and row entity number, held by an object many IDs share
    /// (``ObjectIDAnchor``).
    @usableFromInline let anchor: ObjectIDAnchor
    /// The primary key (`Z_PK`), negative for temporary IDs.
    public let primaryKey: Int64

    /// The row identity inside the store.
    @inlinable public var rowID: RowID { RowID(entity: anchor.rowEntity, primaryKey: primaryKey) }

    /// The object's entity.
    @inlinable public var entity: EntityDescription { anchor.entity }
    /// The store holding the object; `nil` while the ID is temporary.
    @inlinable public var persistentStore: PersistentStore? { anchor.store }

    /// Creates an ID (drivers and the coordinator make them; apps get them from objects).
    public init(entity: EntityDescription, rowID: RowID, store: PersistentStore?) {
        self.anchor = ObjectIDAnchor(entity: entity, store: store, rowEntity: rowID.entity)
        self.primaryKey = rowID.primaryKey
    }

    /// Creates an ID sharing `anchor`'s entity and store; a row numbered otherwise than the
    /// anchor's rows gets an anchor of its own.
    init(anchor: ObjectIDAnchor, rowID: RowID) {
        self.anchor =
            rowID.entity == anchor.rowEntity
            ? anchor : ObjectIDAnchor(entity: anchor.entity, store: anchor.store, rowEntity: rowID.entity)
        self.primaryKey = rowID.primaryKey
    }

    /// Creates the ID of the row of `anchor`'s rows with primary key `key`.
    init(anchor: ObjectIDAnchor, primaryKey key: Int64) {
        self.anchor = anchor
        self.primaryKey = key
    }

    /// Whether the object has not been saved yet.
    public var isTemporaryID: Bool { primaryKey < 0 }

    /// The URI form: `x-coredata://<store UUID>/<Entity>/p<key>` (temporary:
    /// `x-coredata:///<Entity>/t<key>`). Resolve it with
    /// ``PersistentStoreCoordinator/managedObjectID(forURIRepresentation:)``.
    public func uriRepresentation() -> URL {
        let text: String
        if let store = persistentStore, !isTemporaryID {
            text = "x-coredata://\(store.identifier)/\(entity.name)/p\(rowID.primaryKey)"
        } else {
            // The magnitude: a hand-made ID with Int64.min does not trap.
            text = "x-coredata:///\(entity.name)/t\(rowID.primaryKey.magnitude)"
        }
        // The text is built from a UUID, an entity name and digits; entity names are identifiers.
        return URL(string: text) ?? URL(fileURLWithPath: "/invalid-object-uri")
    }

    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        guard lhs.primaryKey == rhs.primaryKey else { return false }
        // IDs one owner made share their anchor; others compare what the anchors say.
        return lhs.anchor === rhs.anchor
            || (lhs.anchor.rowEntity == rhs.anchor.rowEntity && lhs.anchor.store === rhs.anchor.store)
    }

    public func hash(into hasher: inout Hasher) {
        let store = persistentStore.map { UInt64(UInt(bitPattern: ObjectIdentifier($0))) } ?? 0
        hasher.combine(rowID.packed ^ store)
    }

    /// One seeded mixing step instead of SipHash, as for ``RowID``.
    public func _rawHashValue(seed: Int) -> Int {
        let store = persistentStore.map { UInt64(UInt(bitPattern: ObjectIdentifier($0))) } ?? 0
        return RowID.mix(rowID.packed ^ store, seed: seed)
    }

    public var description: String { uriRepresentation().absoluteString }
}
