/// One row as a store holds it: identity, version and one value per property.
///
/// Values follow ``EntityDescription/properties`` of the row's entity (inherited properties
/// first). Transient slots are `.null`. To-one slots hold ``StoreValue/reference(_:)`` or `.null`;
/// to-many slots hold ``StoreValue/references(_:)`` or ``StoreValue/unfetched``.
public struct RowSnapshot: Sendable, Hashable {
    /// The row's identity.
    public var id: RowID
    /// The row's version (`Z_OPT`); 1 after insert, +1 per applied update.
    public var version: RowVersion
    /// One value per property of the entity.
    public var values: [StoreValue]

    /// Creates a snapshot.
    @inlinable public init(id: RowID, version: RowVersion, values: [StoreValue]) {
        self.id = id
        self.version = version
        self.values = values
    }
}

/// One change set for one store, applied all-or-nothing by ``StoreDriver/apply(_:)``.
public struct ChangeBatch: Sendable {
    /// New rows with permanent IDs (their ``RowSnapshot/version`` is ignored; the driver stores 1).
    public var inserts: [RowSnapshot] = []
    /// Changed rows.
    public var updates: [RowUpdate] = []
    /// Removed rows.
    public var deletes: [RowDelete] = []
    /// New metadata to store with the change set, if any.
    public var metadata: StoreMetadata? = nil
    /// How soon the change set must be on disk (``StoreDriver`` rule 9). Saves through a context
    /// are always ``Durability/immediate``; bulk loading (`strata convert`) sends its batches
    /// ``Durability/deferred`` and then one empty immediate batch.
    public var durability: Durability = .immediate

    /// How soon an applied change set must be on disk.
    public enum Durability: Sendable, Hashable {
        /// Durable when ``StoreDriver/apply(_:)`` returns, as far as the store's options make any
        /// commit durable.
        case immediate
        /// Checked, applied all-or-nothing and visible to every later call like any other change
        /// set, but it may reach the disk only with the next immediate one. An atomic store keeps
        /// it in memory (so a run of them costs one file write instead of one each); an engine may
        /// commit it without waiting for the disk, or treat it as immediate.
        case deferred
    }

    /// Creates an empty batch.
    public init() {}

    /// Whether the batch changes nothing.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && metadata == nil }
}

/// An update of one row.
public struct RowUpdate: Sendable, Hashable {
    /// The row.
    public var id: RowID
    /// The version the change was made against; a different stored version is a conflict.
    public var expectedVersion: RowVersion
    /// The row's complete new values (to-many slots not changed may be ``StoreValue/unfetched``).
    public var values: [StoreValue]
    /// The slots that changed, ascending.
    public var changedSlots: [Int]

    /// Creates an update.
    public init(id: RowID, expectedVersion: RowVersion, values: [StoreValue], changedSlots: [Int]) {
        self.id = id
        self.expectedVersion = expectedVersion
        self.values = values
        self.changedSlots = changedSlots
    }
}

/// A deletion of one row.
public struct RowDelete: Sendable, Hashable {
    /// The row.
    public var id: RowID
    /// The version the deletion was decided against; a different stored version is a conflict.
    public var expectedVersion: RowVersion

    /// Creates a deletion.
    public init(id: RowID, expectedVersion: RowVersion) {
        self.id = id
        self.expectedVersion = expectedVersion
    }
}

/// What a driver reports after applying a change set.
public struct CommitResult: Sendable {
    /// The new version of updated rows. Inserted rows have version 1 and may be left out; an
    /// updated row left out has its expected version plus one.
    public var versions: [RowID: RowVersion]

    /// Creates a result.
    public init(versions: [RowID: RowVersion]) { self.versions = versions }
}
