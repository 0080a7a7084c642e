import Foundation

/// The identity of a managed object: its store, entity and primary key.
///
/// Objects inserted but not saved have a temporary ID (``isTemporaryID``); a save (or
/// ``ManagedObjectContext/obtainPermanentIDs(for:)``) replaces it with a permanent one. IDs are
/// values: compare them, hash them, send them between contexts and threads.
public struct ManagedObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The entity and store, held by an object many IDs share (``ObjectIDAnchor``).
    @usableFromInline let anchor: ObjectIDAnchor
    /// The row identity inside the store.
    public let rowID: RowID

    /// The object's entity.
    @inlinable public var entity: EntityDescription { anchor.entity }
    /// The store holding the object; `nil` while the ID is temporary.
    @inlinable public var persistentStore: PersistentStore? { anchor.store }

    /// Creates an ID (drivers and the coordinator make them; apps get them from objects).
    public init(entity: EntityDescription, rowID: RowID, store: PersistentStore?) {
        self.anchor = ObjectIDAnchor(entity: entity, store: store)
        self.rowID = rowID
    }

    /// Creates an ID sharing `anchor`'s entity and store.
    init(anchor: ObjectIDAnchor, rowID: RowID) {
        self.anchor = anchor
        self.rowID = rowID
    }

    /// Whether the object has not been saved yet.
    public var isTemporaryID: Bool { rowID.isTemporary }

    /// The primary key (`Z_PK`), negative for temporary IDs.
    public var primaryKey: Int64 { rowID.primaryKey }

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
        lhs.rowID == rhs.rowID && lhs.persistentStore === rhs.persistentStore
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
