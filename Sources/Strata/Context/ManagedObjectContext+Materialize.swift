import Foundation

// Turning fetched rows into registered objects. A fetch's rows are touched once each, while
// warm: the driver hands them over in parts (StoreDriver.fetch(_:inParts:)), and each part is
// registered, cached and let go before the next is read. A hundred thousand rows and their
// objects do not fit in the processor's caches; passes over all of them, one after another,
// each paid a cache miss per row.

extension ManagedObjectContext {
    /// Objects made from one fetch's rows so far, and what is left to do once all rows are in.
    struct Materializing {
        var objects: [ManagedObject] = []
        /// Objects of subclasses whose values were loaded: their `awakeFromFetch()` runs after
        /// the fetch, when the driver no longer holds its read connection.
        var awakening: [ManagedObject] = []
    }

    /// Rows registered and cached at a time: small enough that a part's rows, values and
    /// objects are still in the processor's caches when it is cached and let go.
    static let materializePart = 256

    /// Registers the objects of fetched rows and caches the rows, pinning those the new objects
    /// hold, in parts of ``materializePart`` rows; then drops `rows`' own reference to each
    /// row's values (the objects and the row cache keep theirs). `rows` keeps IDs and versions.
    ///
    /// - Parameter reserving: Whether the context's and the row cache's tables make room for
    ///   exactly `rows`: for a whole answer, or the first part of one. Later parts reserve too,
    ///   but a table that grows for them at least doubles (growing by exactly each part would copy
    ///   it each time); either way rows too scattered for a lane go to the overflow table at once.
    func materialize(
        _ rows: inout [RowSnapshot], _ store: PersistentStore, _ request: FetchRequest,
        into state: inout Materializing, reserving: Bool, read: RowCache.Read
    ) {
        materialize(
            &rows, store, asFault: request.returnsObjectsAsFaults || !request.includesPropertyValues,
            refreshing: request.shouldRefreshRefetchedObjects, into: &state, reserving: reserving, read: read)
    }

    /// Registers rows as ``materialize(_:_:_:into:reserving:read:)`` does, as faults when
    /// `asFault`, an already loaded object taking a newer row when `refreshing`
    /// (``FetchRequest/shouldRefreshRefetchedObjects``).
    func materialize(
        _ rows: inout [RowSnapshot], _ store: PersistentStore, asFault: Bool, refreshing: Bool,
        into state: inout Materializing, reserving: Bool, read: RowCache.Read
    ) {
        let cache = coordinator.rowCache
        let storeKey = ObjectIdentifier(store)
        if reserving { state.objects.reserveCapacity(rows.count) }
        // Every part of two rows or more, the last one too: a part too scattered for a lane must
        // not grow it key by key (RowTable T4).
        if let span = RowTable<ManagedObject>.span(of: rows, minimum: 2) {
            registered.reservePermanent(
                store: store, entity: span.entity, keys: span.keys, count: rows.count, doubling: !reserving)
            cache.reserve(for: rows, in: storeKey, doubling: !reserving)
        }
        var pins = [Bool](repeating: false, count: rows.count)
        // The rows' entity, looked up when it changes rather than per row: the model's entities
        // are shared by every context, and a reference count changed per row by readers on two
        // threads moves its cache line between the cores each time.
        var entityNumber = Int32.min
        var entity: EntityDescription?
        var start = rows.startIndex
        while start < rows.endIndex {
            let end = min(start + Self.materializePart, rows.endIndex)
            for index in start..<end {
                if rows[index].id.entity != entityNumber {
                    entityNumber = rows[index].id.entity
                    entity = coordinator.managedObjectModel.entity(number: entityNumber)
                }
                let known = registered.count
                let object = register(
                    rows[index], in: store, asFault: asFault, pinLater: true, refreshing: refreshing,
                    entity: entity, awakening: &state.awakening)
                state.objects.append(object)
                let isNew = registered.count > known
                if !isNew && object.pinnedKey == nil {
                    object.pinnedKey = RowCache.Key(store: storeKey, row: rows[index].id)
                    pins[index] = true
                } else {
                    pins[index] = isNew
                }
            }
            // One lock per part: store every row, pinning those of newly registered objects.
            cache.store(rows[start..<end], in: storeKey, pins: pins[start..<end], since: read)
            for index in start..<end { rows[index].values = [] }
            start = end
        }
    }

    /// Finishes a fetch's objects once every row is in: pins queued rows, runs subclasses'
    /// `awakeFromFetch()` and prefetches the request's relationship key paths.
    ///
    /// - Throws: The store's error when prefetching fails; the fetched objects stay registered
    ///   (and awake), and the relationships not prefetched load when first used.
    func finish(_ state: Materializing, _ request: FetchRequest) throws -> [ManagedObject] {
        flushPins()
        for object in state.awakening { object.awakeFromFetch() }
        if !request.relationshipKeyPathsForPrefetching.isEmpty {
            try prefetch(request.relationshipKeyPathsForPrefetching, of: state.objects)
        }
        return state.objects
    }

    /// Registers the objects of a whole answer's rows (``materialize(_:_:_:into:reserving:read:)``
    /// and ``finish(_:_:)`` in one).
    func materialize(
        _ rows: inout [RowSnapshot], _ store: PersistentStore, _ request: FetchRequest, read: RowCache.Read
    ) throws -> [ManagedObject] {
        var state = Materializing()
        materialize(&rows, store, request, into: &state, reserving: true, read: read)
        return try finish(state, request)
    }

    /// Loads the destinations of relationship key paths for many objects with one driver call per
    /// relationship and store.
    ///
    /// - Throws: The store's error; what was loaded before it stays loaded.
    func prefetch(_ keyPaths: [String], of objects: [ManagedObject]) throws {
        for keyPath in keyPaths {
            var level = objects
            let keys = keyPath.split(separator: ".").map(String.init)
            for (depth, key) in keys.enumerated() {
                let isLast = depth == keys.count - 1
                var next: [ManagedObject] = []
                var bySlot: [Int: [ManagedObject]] = [:]
                for object in level where !object.values.isEmpty || object.hasSnapshot {
                    try object.fireFaultThrowing()
                    guard object.isAccessible else { continue }
                    guard let slot = object.entity.index(ofProperty: key),
                        object.entity.properties[slot].relationship != nil
                    else { continue }
                    bySlot[slot, default: []].append(object)
                }
                for (slot, owners) in bySlot {
                    var unfetched = owners.filter {
                        guard $0.objectID.persistentStore != nil, case .unfetched = $0.values[slot] else {
                            return false
                        }
                        return true
                    }
                    // Whether every owner's members were read here, each with its row (the driver
                    // lists each row once): then they are all loaded objects now.
                    var readInFull = unfetched.count == owners.count
                    // One call per store the owners live in.
                    while let first = unfetched.first, let store = first.objectID.persistentStore {
                        let here = unfetched.filter { $0.objectID.persistentStore === store }
                        unfetched.removeAll { $0.objectID.persistentStore === store }
                        let request = RelatedRowsRequest(
                            entity: first.entity, slot: slot, sources: here.map(\.objectID.rowID))
                        // The members' rows come with them: one driver call loads the level.
                        let awakening = try coordinator.relatedRowsWithDestinations(request, in: store) {
                            related, read in
                            var listed = 0
                            for owner in here {
                                let members = related.members[owner.objectID.rowID] ?? []
                                listed += members.count
                                owner.values[slot] = .references(members)
                                owner.snapshot?.values[slot] = owner.values[slot]
                            }
                            if listed != related.rows.count { readInFull = false }
                            return registerMembers(&related.rows, in: store, read: read)
                        }
                        for member in awakening { member.awakeFromFetch() }
                    }
                    // The last level's members need no objects made here when all came with their
                    // rows; a member left a fault (a row the driver did not hand over) would load
                    // when used, as it does without a prefetch.
                    if isLast && readInFull { continue }
                    var targets: [ManagedObject] = []
                    for owner in owners { targets += relatedObjects(owner, slot) }
                    var faults = targets.filter { $0.faulted && !$0.hasSnapshot && $0.objectID.persistentStore != nil }
                    // One call per store the faults live in.
                    while let store = faults.first?.objectID.persistentStore {
                        let here = faults.filter { $0.objectID.persistentStore === store }
                        faults.removeAll { $0.objectID.persistentStore === store }
                        let rows = try coordinator.rows(for: here.map(\.objectID.rowID), in: store)
                        for fault in here where fault.faulted {
                            if let row = rows[fault.objectID.rowID] {
                                fault.fulfill(from: row)
                                notePin(fault)
                            } else {
                                markInaccessible(fault)
                            }
                        }
                        flushPins()
                    }
                    next += targets
                }
                level = next
            }
        }
    }
}
