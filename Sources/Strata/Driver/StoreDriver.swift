import Foundation

/// A store driver: the engine behind one attached store (SQLite, XML, LMDB, in-memory, or yours).
///
/// A driver is small. It loads and saves the store's metadata, answers fetches it may partly push
/// down, returns rows for a list of IDs (fault fulfilment), returns the members of to-many
/// relationships, allocates primary keys and applies one change set all-or-nothing. The core does
/// everything else: it evaluates whatever part of a predicate, sort or page the driver did not
/// apply (``StoreFetchResult``), keeps the row cache, tracks objects and enforces the model.
///
/// ## Calling contract
/// - The coordinator serializes ``apply(_:)``, ``insertRows(of:_:)`` and
///   ``allocatePrimaryKeys(forEntity:count:)`` per store: at most one of them runs at a time.
/// - ``fetch(_:)``, ``rows(for:)`` and ``relatedRows(_:)`` run concurrently with each other and
///   with `apply` only when ``capabilities`` contains ``DriverCapabilities/concurrentReads``;
///   otherwise the coordinator serializes every call.
/// - No call is made after ``close()`` returns, except another `close()`.
///
/// ## Implementing a driver
/// Each item is checked by the conformance suite in `StrataTesting`, which every driver runs:
/// 1. `apply` is atomic: when it throws, the store holds exactly what it held before.
/// 2. `apply` rejects an update or delete whose `expectedVersion` differs from the stored version
///    with ``StoreError/Code/conflict`` naming the rows, and applies nothing.
/// 3. Versions only grow: an insert stores version 1, each applied update adds 1.
/// 4. A row returned by `fetch` or `rows(for:)` carries one value per property of its entity, in
///    ``EntityDescription/properties`` order; transient slots are `.null`; a to-many slot is
///    ``StoreValue/references(_:)`` or ``StoreValue/unfetched``.
/// 5. `fetch` states what it applied; whatever it applied, it applied exactly as the in-memory
///    evaluator would (``FetchPredicate/evaluate(with:substitutionVariables:)``).
/// 6. Primary keys are never handed out twice, even after a failed save or a reopen.
/// 7. `close` is idempotent; the store reopens with every committed change.
/// 8. ``execute(_:)`` gives the answers, versions and atomicity of the same change made through
///    `fetch` and `apply`.
/// 9. A change set applied with ``ChangeBatch/Durability/deferred`` durability follows rules 1–3
///    and is seen by every later call at once, but may reach the disk only with the next
///    ``ChangeBatch/Durability/immediate`` `apply`, which makes it durable together with every
///    earlier deferred one; an empty immediate change set does just that (and changes nothing
///    when nothing is pending). Until then a crash or a ``close()`` may lose deferred change sets,
///    a whole one or several, never part of one: the store then holds what it held after an
///    earlier change set. Any driver may treat deferred as immediate.
/// 10. A row inserted with a primary key the driver did not hand out (a copy keeps its keys)
///    raises the hierarchy's counter: keys handed out later are larger, also after a reopen.
/// 11. ``apply(inParts:)`` applies its change sets as one: each sees the ones before it, and when
///    any part, `next` or the commit fails, the store holds exactly what it held before.
public protocol StoreDriver: AnyObject, Sendable {
    /// What the driver pushes down and allows; the core fills the gaps.
    var capabilities: DriverCapabilities { get }

    /// Reads the store's metadata (identifier, version hashes, custom keys).
    func loadMetadata() throws -> StoreMetadata

    /// Replaces the store's metadata (written with the next change set for drivers that batch it).
    func saveMetadata(_ metadata: StoreMetadata) throws

    /// Answers a fetch. See ``StoreFetchResult`` for what the driver must report back.
    func fetch(_ request: StoreFetch) throws -> StoreFetchResult

    /// Answers a fetch like ``fetch(_:)``, handing the answer to `body` in parts as it is read, so
    /// the caller turns rows into objects while they are still in the processor's caches.
    ///
    /// Rules: at least one part; the parts' rows, in order, are the rows ``fetch(_:)`` would
    /// return; every part states the same applied predicate, sort and page; IDs and counts come
    /// whole in one part. `body` may take the part's rows (the driver starts the next part
    /// afresh) and must not call this driver: the driver may hold its read connection. The
    /// default hands over ``fetch(_:)``'s answer as one part.
    func fetch(_ request: StoreFetch, inParts body: (inout StoreFetchResult) throws -> Void) throws

    /// Returns the current rows of `ids` (fault fulfilment, batched); missing rows are left out.
    func rows(for ids: [RowID]) throws -> [RowSnapshot]

    /// Returns the destinations of a to-many relationship for several source rows at once.
    func relatedRows(_ request: RelatedRowsRequest) throws -> [RowID: [RowID]]

    /// Returns the destinations of a to-many relationship together with the destinations' rows:
    /// what firing a to-many fault reads (Core Data reads the members' rows with the relationship,
    /// so walking them costs no fault per member). Rules: `members` is what ``relatedRows(_:)``
    /// returns; `rows` holds the current row of every member once, by the rules of ``rows(for:)``.
    /// The default calls ``relatedRows(_:)`` and then ``rows(for:)``; a driver that can read both
    /// in one query (a join, a foreign key scan) overrides it.
    func relatedRowsWithDestinations(_ request: RelatedRowsRequest) throws -> RelatedRows

    /// Reserves `count` new primary keys for the inheritance hierarchy of `entity`.
    func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64>

    /// Applies one change set all-or-nothing and returns the new row versions.
    func apply(_ batch: ChangeBatch) throws -> CommitResult

    /// Applies the change sets `next` hands out, one after another until it returns `nil`, as one
    /// all-or-nothing change: when `next`, any change set or the commit throws, the store holds
    /// exactly what it held before (a bulk load of more rows than fit in memory at once, such as
    /// `strata import`).
    ///
    /// The driver calls `next(true)` for the first change set and `next(false)` for each one
    /// after. It may start over, calling `next(true)` again, when it has to begin its transaction
    /// anew (LMDB growing its map, PostgreSQL retrying a serialization failure): `next` must then
    /// hand out the same change sets again from the first. Each change set sees the ones before
    /// it: a later one may update or delete rows an earlier one inserted or changed, expecting the
    /// versions they would have after applying in turn. Their ``ChangeBatch/durability`` is
    /// ignored: the whole is made durable like an immediate change set. `next` must not call this
    /// driver (the driver may hold its write transaction). A driver with a write transaction
    /// applies each change set as it comes, holding one at a time (an atomic store writes each
    /// into its graph, undoing them on a failure: ``AtomicStoreEngine/apply(inParts:persist:)``);
    /// the default folds them (``ChangeSetFold``) and calls ``apply(_:)`` once, holding them all.
    /// The coordinator serializes it like `apply`.
    ///
    /// - Returns: The new versions of updated rows, as ``apply(_:)`` returns them; a row changed by
    ///   several change sets has the version the last gave it. The default stores such a row once,
    ///   its version one more than before (a row inserted and then updated: version 1).
    func apply(inParts next: (_ first: Bool) throws -> ChangeBatch?) throws -> CommitResult

    /// Inserts new rows of `entity`, which `fill` produces one at a time, in one transaction: each
    /// row takes the next primary key of the entity's hierarchy and version 1; when `fill` or the
    /// store throws, no row is stored (batch inserts without uniqueness constraints).
    ///
    /// `fill` sets `values` to the next row's values (one per property, in slot order, no
    /// relationship set) and returns `true`, or returns `false` when there are no more rows; the
    /// buffer it is given may hold the previous row's values. A driver that writes each row as it
    /// comes holds one row at a time; the default collects them, reserves their keys
    /// (``allocatePrimaryKeys(forEntity:count:)``) and applies them as one change set (``apply(_:)``).
    /// The coordinator serializes it like `apply`.
    ///
    /// - Returns: The keys given, in the order of the rows; `nil` when `fill` produced none.
    func insertRows(of entity: Int32, _ fill: (inout [StoreValue]) throws -> Bool) throws -> ClosedRange<Int64>?

    /// Updates or deletes every matching row in one transaction, without objects (batch updates
    /// and deletes). The default runs through ``fetch(_:)`` and ``apply(_:)``; drivers that can
    /// change rows where they lie do it themselves, keeping the rules of ``StoreBatchRequest``.
    func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult

    /// Starts telling `handler` about changes other processes commit to the store (a shared
    /// server's notifications), until ``close()``. Called once, after the store is attached; the
    /// handler may be called on any thread. The default does nothing: file stores are written by
    /// one process at a time through this coordinator.
    func observeRemoteChanges(_ handler: @escaping @Sendable (RemoteChanges) -> Void) throws

    /// Reads every row of exactly `request.entity` (not its subentities) in ascending key order,
    /// handing them to `body` in batches of at most ``RowScan/batchSize``, with every to-many slot
    /// filled (``StoreValue/references(_:)``, never ``StoreValue/unfetched``). Migration and copying
    /// read stores this way, so memory stays bounded by a batch. The default reads the entity's
    /// IDs once and then its rows batch by batch (``rows(for:)``, ``relatedRows(_:)``); a driver
    /// that can walk keys (`Z_PK > ?`, a cursor) overrides it to hold one batch only. `body` may call
    /// the driver.
    func scanRows(_ request: RowScan, _ body: ([RowSnapshot]) throws -> Void) throws

    /// Migrates the store in place to `plan.destinationModel`, all or nothing, and returns `true`;
    /// or returns `false`, changing nothing, when it cannot (the core then copies the rows into a
    /// new store and swaps it in). Called on a driver opened writable with `plan.sourceModel` and
    /// nothing else using it; the core closes the driver afterwards. The store's metadata becomes
    /// `plan.metadata` in the same transaction. The default returns `false`.
    ///
    /// - Throws: ``MigrationError`` (`.constraintViolation`, `.validation`, `.valueConversion`) or
    ///   ``StoreError`` when the migration failed; the store must then be exactly as it was.
    func migrateInPlace(_ plan: StoreMigrationPlan) throws -> Bool

    /// Releases the store; idempotent.
    func close() throws
}

/// The answer of ``StoreDriver/relatedRowsWithDestinations(_:)``: a to-many relationship's
/// members by source row, and the members' rows.
public struct RelatedRows: Sendable {
    /// The members of each source row, as ``StoreDriver/relatedRows(_:)`` returns them.
    public var members: [RowID: [RowID]]
    /// The current row of each member, once each.
    public var rows: [RowSnapshot]

    /// Creates an answer.
    public init(members: [RowID: [RowID]], rows: [RowSnapshot]) {
        self.members = members
        self.rows = rows
    }
}

/// What ``StoreDriver/scanRows(_:_:)`` reads.
public struct RowScan: Sendable {
    /// The entity whose own rows are read.
    public var entity: EntityDescription
    /// The most rows per batch.
    public var batchSize: Int

    /// Creates a scan.
    public init(entity: EntityDescription, batchSize: Int = 1_000) {
        self.entity = entity
        self.batchSize = max(1, batchSize)
    }
}

/// Rows that another process changed in a store (see ``StoreDriver/observeRemoteChanges(_:)``).
public struct RemoteChanges: Sendable, Hashable {
    /// Rows inserted.
    public var inserted: [RowID]
    /// Rows updated.
    public var updated: [RowID]
    /// Rows deleted.
    public var deleted: [RowID]
    /// Whether the driver may have missed changes (its link to the server's notifications was
    /// down for a while): any row of the store may have changed, so the coordinator drops every
    /// row of the store from its row cache. The listed rows are reported as usual.
    public var mayHaveMissedChanges: Bool

    /// Creates a record of remote changes.
    public init(
        inserted: [RowID] = [], updated: [RowID] = [], deleted: [RowID] = [], mayHaveMissedChanges: Bool = false
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.mayHaveMissedChanges = mayHaveMissedChanges
    }

    /// Whether nothing changed and nothing may have been missed.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && !mayHaveMissedChanges }
}

extension StoreDriver {
    /// By default a driver pushes nothing down; the core filters, sorts and pages in memory.
    public var capabilities: DriverCapabilities { [] }

    /// By default no other process changes the store.
    public func observeRemoteChanges(_ handler: @escaping @Sendable (RemoteChanges) -> Void) throws {}

    /// By default the whole answer is one part.
    public func fetch(_ request: StoreFetch, inParts body: (inout StoreFetchResult) throws -> Void) throws {
        var result = try fetch(request)
        try body(&result)
    }

    /// By default a store cannot migrate in place; the core copies.
    public func migrateInPlace(_ plan: StoreMigrationPlan) throws -> Bool { false }

    /// By default the entity's IDs are read once, then its rows batch by batch.
    public func scanRows(_ request: RowScan, _ body: ([RowSnapshot]) throws -> Void) throws {
        var fetch = StoreFetch(entity: request.entity)
        fetch.includesSubentities = false
        fetch.resultKind = .ids
        let result = try self.fetch(fetch)
        let ids = (result.ids ?? result.rows.map(\.id)).filter { $0.entity == request.entity.entityNumber }.sorted()
        var start = 0
        while start < ids.count {
            let end = min(start + request.batchSize, ids.count)
            var rows = try self.rows(for: Array(ids[start..<end])).sorted { $0.id < $1.id }
            try fillToMany(&rows, of: request.entity)
            try body(rows)
            start = end
        }
    }

    /// Replaces every ``StoreValue/unfetched`` to-many slot of `rows` (all of `entity`) with its
    /// members, one ``relatedRows(_:)`` call per relationship.
    public func fillToMany(_ rows: inout [RowSnapshot], of entity: EntityDescription) throws {
        for (slot, property) in entity.properties.enumerated() {
            guard let relationship = property.relationship, relationship.isToMany, !relationship.isTransient else {
                continue
            }
            let unfetched = rows.indices.filter { rows[$0].values[slot] == .unfetched }
            guard !unfetched.isEmpty else { continue }
            let related = try relatedRows(
                RelatedRowsRequest(entity: entity, slot: slot, sources: unfetched.map { rows[$0].id }))
            for index in unfetched { rows[index].values[slot] = .references(related[rows[index].id] ?? []) }
        }
    }

    /// The members by ``relatedRows(_:)``, then their rows by ``rows(for:)`` in one call.
    public func relatedRowsWithDestinations(_ request: RelatedRowsRequest) throws -> RelatedRows {
        let members = try relatedRows(request)
        var seen = SeenRowIDs()
        var ids: [RowID] = []
        for targets in members.values { for id in targets where seen.insert(id) { ids.append(id) } }
        return RelatedRows(members: members, rows: ids.isEmpty ? [] : try rows(for: ids))
    }

    /// By default a to-many relationship's members come with its rows (``StoreValue/references(_:)``),
    /// so this asks for the source rows and reads the slot.
    public func relatedRows(_ request: RelatedRowsRequest) throws -> [RowID: [RowID]] {
        var result: [RowID: [RowID]] = [:]
        for row in try rows(for: request.sources) {
            if case .references(let ids) = row.values[request.slot] { result[row.id] = ids }
        }
        return result
    }
}

/// What a driver pushes down or allows.
public struct DriverCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The driver may evaluate predicates (and says per fetch whether it did).
    public static let predicatePushdown = DriverCapabilities(rawValue: 1 << 0)
    /// The driver may sort.
    public static let sortPushdown = DriverCapabilities(rawValue: 1 << 1)
    /// Reads may run concurrently with each other and with a write.
    public static let concurrentReads = DriverCapabilities(rawValue: 1 << 2)
    /// The driver counts without returning rows.
    public static let countPushdown = DriverCapabilities(rawValue: 1 << 3)
    /// The whole store lives in memory (atomic stores); fetches are cheap.
    public static let inMemory = DriverCapabilities(rawValue: 1 << 4)
}

/// What a driver sees of a context's fetch request.
public struct StoreFetch: Sendable {
    /// The entity fetched.
    public var entity: EntityDescription
    /// Whether rows of subentities are included.
    public var includesSubentities: Bool = true
    /// The predicate, if any; a driver may apply all of it, part of it (a superset), or none.
    public var predicate: FetchPredicate? = nil
    /// Sort keys, most significant first.
    public var sort: [SortKey] = []
    /// The most rows wanted (after ``offset``).
    public var limit: Int? = nil
    /// Rows to skip.
    public var offset: Int = 0
    /// What the caller wants back.
    public var resultKind: ResultKind = .rows
    /// Rows the coordinator's row cache already holds for this store, filled in by the
    /// coordinator; a driver may take a row's values from here when the versions agree
    /// (``CachedRows``), or ignore it.
    public var cachedRows: CachedRows? = nil
    /// Grouping and aggregates wanted instead of rows (a grouped or distinct dictionary fetch). A
    /// driver may answer with ``StoreFetchResult/groups`` (see ``StoreAggregation`` for the rules)
    /// or ignore it and answer with rows; `sort`, `limit` and `offset` are empty when it is set.
    public var aggregation: StoreAggregation? = nil

    /// What a fetch returns.
    public enum ResultKind: Sendable, Hashable {
        /// Whole rows.
        case rows
        /// Row IDs only.
        case ids
        /// A count only.
        case count
    }

    /// Creates a fetch of every row of `entity`.
    public init(entity: EntityDescription) { self.entity = entity }

    /// The entity numbers this fetch covers.
    public var entityNumbers: Set<Int32> {
        includesSubentities ? entity.hierarchyNumbers : [entity.entityNumber]
    }
}

/// A driver's answer to a ``StoreFetch``, saying what it applied.
///
/// Rules: `appliedSort` and `appliedPage` may be true only when `appliedPredicate` is; a driver
/// that applied the page applied the sort. A count is given only when the predicate was applied.
/// When `appliedPredicate` is false the rows may be any superset of the matching rows.
public struct StoreFetchResult: Sendable {
    /// Rows (for ``StoreFetch/ResultKind/rows``, and whenever the core must finish the work).
    public var rows: [RowSnapshot]
    /// IDs (for ``StoreFetch/ResultKind/ids`` when everything was applied).
    public var ids: [RowID]?
    /// The count (for ``StoreFetch/ResultKind/count`` when the predicate was applied).
    public var count: Int?
    /// Whether the predicate was applied exactly.
    public var appliedPredicate: Bool
    /// Whether the rows are in sort order.
    public var appliedSort: Bool
    /// Whether offset and limit were applied.
    public var appliedPage: Bool
    /// The groups of ``StoreFetch/aggregation``, when the driver computed them (then it applied the
    /// predicate); `nil` when it answered with rows.
    public var groups: [StoreGroup]?

    /// Creates a result.
    public init(
        rows: [RowSnapshot] = [], ids: [RowID]? = nil, count: Int? = nil, appliedPredicate: Bool,
        appliedSort: Bool, appliedPage: Bool, groups: [StoreGroup]? = nil
    ) {
        self.rows = rows
        self.ids = ids
        self.count = count
        self.groups = appliedPredicate ? groups : nil
        self.appliedPredicate = appliedPredicate
        self.appliedSort = appliedSort && appliedPredicate
        self.appliedPage = appliedPage && appliedSort && appliedPredicate
    }
}

/// A request for the members of one to-many relationship of several rows.
public struct RelatedRowsRequest: Sendable {
    /// The entity declaring the relationship (or a subentity).
    public var entity: EntityDescription
    /// The relationship's slot in ``EntityDescription/properties``.
    public var slot: Int
    /// The source rows.
    public var sources: [RowID]

    /// Creates a request.
    public init(entity: EntityDescription, slot: Int, sources: [RowID]) {
        self.entity = entity
        self.slot = slot
        self.sources = sources
    }

    /// The relationship asked for.
    public var relationship: RelationshipDescription {
        entity.properties[slot].relationship!  // the coordinator builds requests from relationship slots only
    }
}
