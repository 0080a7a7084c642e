import Foundation

extension PersistentStoreCoordinator {
    /// Runs a fetch on one store and, unless the caller caches them itself, caches the rows it
    /// returns.
    func fetch(_ request: StoreFetch, in store: PersistentStore, cacheRows: Bool = true) throws -> StoreFetchResult {
        var request = request
        if request.cachedRows == nil { request.cachedRows = CachedRows(rowCache, store: ObjectIdentifier(store)) }
        let read = rowCache.beginRead()
        defer { rowCache.endRead(read) }
        let result = try store.read { try store.driver.fetch(request) }
        try checkResult(result, from: store)
        if cacheRows && !result.rows.isEmpty { rowCache.store(result.rows, in: ObjectIdentifier(store), since: read) }
        return result
    }

    /// Runs a fetch on one store, handing its answer to `body` in parts
    /// (``StoreDriver/fetch(_:inParts:)``) with the read it belongs to; the caller caches the rows
    /// (``RowCache/store(_:in:pins:since:)``). `body` must not call into `store`.
    func fetch(
        _ request: StoreFetch, in store: PersistentStore,
        inParts body: (inout StoreFetchResult, RowCache.Read) throws -> Void
    ) throws {
        var request = request
        if request.cachedRows == nil { request.cachedRows = CachedRows(rowCache, store: ObjectIdentifier(store)) }
        let read = rowCache.beginRead()
        defer { rowCache.endRead(read) }
        try store.read {
            try store.driver.fetch(request) { part in
                try checkResult(part, from: store)
                try body(&part, read)
            }
        }
    }

    /// The rows of `ids` in `store`: from the row cache where resident, the rest from the driver
    /// in one call.
    ///
    /// - Parameters:
    ///   - maxAge: When not negative, cached rows stored longer ago than this many seconds are read
    ///     again from the driver (a context's `stalenessInterval`).
    ///   - caching: Whether rows read from the driver go into the row cache.
    func rows(
        for ids: [RowID], in store: PersistentStore, maxAge: TimeInterval = -1, caching: Bool = true
    ) throws -> [RowID: RowSnapshot] {
        var found: [RowID: RowSnapshot] = [:]
        var missing: [RowID] = []
        let storeKey = ObjectIdentifier(store)
        for id in ids {
            if let cached = rowCache.snapshot(for: RowCache.Key(store: storeKey, row: id), maxAge: maxAge) {
                found[id] = cached
            } else {
                missing.append(id)
            }
        }
        if !missing.isEmpty {
            let read = rowCache.beginRead()
            defer { rowCache.endRead(read) }
            let loaded = try store.read { try store.driver.rows(for: missing) }
            try checkRows(loaded[...], from: store)
            if caching { rowCache.store(loaded, in: storeKey, since: read) }
            for row in loaded { found[row.id] = row }
        }
        return found
    }

    /// The row of `id` in `store`, or `nil` when the store does not hold it:
    /// ``rows(for:in:maxAge:caching:)`` for one ID, without the arrays and dictionary (an object
    /// looked up by ID, one at a time, is the common case).
    func row(for id: RowID, in store: PersistentStore) throws -> RowSnapshot? {
        try row(for: id, in: store, pinning: false)?.row
    }

    /// The row of `id` in `store` like ``row(for:in:)``; with `pinning`, the row is pinned in the
    /// row cache under the lock that found or stored it (`pinned` is true, and the caller owns the
    /// pin), unless it is not resident after the driver's read (removed meanwhile, or evicted).
    ///
    /// Two locks of the row cache per row: one to look it up (and, on a miss, begin the read), one
    /// to store, pin and end the read.
    func row(for id: RowID, in store: PersistentStore, pinning: Bool) throws -> (row: RowSnapshot, pinned: Bool)? {
        let key = RowCache.Key(store: ObjectIdentifier(store), row: id)
        let read: RowCache.Read
        switch rowCache.snapshotOrRead(for: key, pin: pinning) {
        case .cached(let row): return (row, pinning)
        case .read(let begun): read = begun
        }
        let loaded: [RowSnapshot]
        do {
            loaded = try store.read { try store.driver.rows(for: [id]) }
            try checkRows(loaded[...], from: store)
        } catch {
            rowCache.endRead(read)
            throw error
        }
        guard let row = loaded.first(where: { $0.id == id }) else {
            _ = rowCache.store(loaded, in: key.store, pinning: nil, ending: read)
            return nil
        }
        return (row, rowCache.store(loaded, in: key.store, pinning: pinning ? key : nil, ending: read))
    }

    /// The current rows of `ids` in `store`, read from the driver past the row cache (for
    /// ``ManagedObjectContext/refresh(_:mergeChanges:)``), and cached; a row the store no longer
    /// holds leaves the cache.
    func freshRows(for ids: [RowID], in store: PersistentStore) throws -> [RowID: RowSnapshot] {
        let read = rowCache.beginRead()
        defer { rowCache.endRead(read) }
        let loaded = try store.read { try store.driver.rows(for: ids) }
        try checkRows(loaded[...], from: store)
        let storeKey = ObjectIdentifier(store)
        rowCache.store(loaded, in: storeKey, since: read)
        var found: [RowID: RowSnapshot] = [:]
        for row in loaded { found[row.id] = row }
        let gone = ids.filter { found[$0] == nil }
        // This read stored its rows already and stores none of these.
        if !gone.isEmpty { rowCache.remove(gone.map { RowCache.Key(store: storeKey, row: $0) }, by: read) }
        return found
    }

    /// The members of a to-many relationship for several rows of one store.
    func relatedRows(_ request: RelatedRowsRequest, in store: PersistentStore) throws -> [RowID: [RowID]] {
        let members = try store.read { try store.driver.relatedRows(request) }
        for (source, targets) in members {
            try checkID(source, from: store)
            for target in targets { try checkID(target, from: store) }
        }
        return members
    }

    /// The members of a to-many relationship for several rows of one store, with the members'
    /// rows, checked and handed to `body` with the read they belong to; `body` caches the rows
    /// (``RowCache/store(_:in:pins:since:)``, pinning those its objects hold), as a fetch's parts
    /// are cached, and returns what the caller gets. The driver's read is over when `body` runs.
    func relatedRowsWithDestinations<Result>(
        _ request: RelatedRowsRequest, in store: PersistentStore,
        _ body: (inout RelatedRows, RowCache.Read) throws -> Result
    ) throws -> Result {
        let read = rowCache.beginRead()
        defer { rowCache.endRead(read) }
        var related = try store.read { try store.driver.relatedRowsWithDestinations(request) }
        for (source, targets) in related.members {
            try checkID(source, from: store)
            for target in targets { try checkID(target, from: store) }
        }
        try checkRows(related.rows[...], from: store)
        return try body(&related, read)
    }

    // MARK: Checking what drivers return

    /// Checks a driver's answer (rows and IDs) with ``checkRows(_:from:)``.
    private func checkResult(_ result: StoreFetchResult, from store: PersistentStore) throws {
        try checkRows(result.rows[...], from: store)
        if let ids = result.ids { for id in ids { try checkID(id, from: store) } }
    }

    /// Checks rows a driver returned before the core relies on them (StoreDriver rule 4, and the
    /// guard against damaged files): positive keys (negative keys are the core's temporary IDs),
    /// entities of the model that the store holds, one value per property, versions that can
    /// still grow, and references to rows of the model's entities with positive keys.
    ///
    /// - Throws: ``StoreError/Code/corrupt`` naming the store, the entity and the key.
    /// - Complexity: O(n) for n rows, plus O(r) for r references.
    func checkRows(_ rows: ArraySlice<RowSnapshot>, from store: PersistentStore) throws {
        // What a row of the last entity seen must have, looked up when the entity changes (rows of
        // a fetch are nearly always of one entity). Looking the entity up for every row retained
        // and released it twice per row: one reference count shared by every thread fetching.
        var entityNumber: Int32?
        var propertyCount = 0
        var relationshipSlots: [Int] = []
        for row in rows {
            if row.id.entity != entityNumber || row.id.primaryKey <= 0 {
                try checkID(row.id, from: store)
                // checkID found the entity.
                let entity = managedObjectModel.entity(number: row.id.entity)!
                entityNumber = row.id.entity
                propertyCount = entity.properties.count
                relationshipSlots = entity.relationshipSlots
            }
            guard row.values.count == propertyCount else {
                let name = managedObjectModel.entity(number: row.id.entity)?.name ?? "?"
                throw corruptRow(
                    row.id, store,
                    "has \(row.values.count) values where entity '\(name)' has \(propertyCount) properties")
            }
            guard row.version >= 0 && row.version < RowVersion.max else {
                throw corruptRow(row.id, store, "has row version \(row.version), outside 0..<\(RowVersion.max)")
            }
            for index in relationshipSlots.indices {
                switch row.values[relationshipSlots[index]] {
                case .reference(let target): try checkReference(target, of: row.id, store)
                case .references(let targets): for target in targets { try checkReference(target, of: row.id, store) }
                default: break
                }
            }
        }
    }

    private func checkID(_ id: RowID, from store: PersistentStore) throws {
        guard id.primaryKey > 0 else {
            throw corruptRow(id, store, "has primary key \(id.primaryKey); keys read from a store are positive")
        }
        guard managedObjectModel.entity(number: id.entity) != nil, store.holds(entityNumber: id.entity) else {
            throw corruptRow(id, store, "names entity number \(id.entity), which the store's model does not give it")
        }
    }

    private func checkReference(_ target: RowID, of source: RowID, _ store: PersistentStore) throws {
        guard target.primaryKey > 0, managedObjectModel.entity(number: target.entity) != nil else {
            throw corruptRow(
                source, store,
                "refers to row \(target.primaryKey) of entity number \(target.entity), which cannot exist")
        }
    }

    private func corruptRow(_ id: RowID, _ store: PersistentStore, _ problem: String) -> StoreError {
        let entity = managedObjectModel.entity(number: id.entity).map { "\($0.name) " } ?? ""
        return StoreError(
            .corrupt,
            "store \(store.displayName) is damaged: row \(entity)\(id.primaryKey) \(problem); restore the store from a backup or recover what remains with `strata export`",
            store: store.displayName)
    }

    /// Reserves permanent keys in `store` for the hierarchy of `entity`.
    func allocatePrimaryKeys(for entity: EntityDescription, count: Int, in store: PersistentStore) throws
        -> ClosedRange<Int64>
    {
        if store.isReadOnly {
            throw StoreError(.readOnly, "cannot insert into a store opened read-only", store: store.displayName)
        }
        return try store.write { try allocatePrimaryKeysHoldingWriteLock(for: entity, count: count, in: store) }
    }

    /// ``allocatePrimaryKeys(for:count:in:)`` for a caller already inside `store.write`.
    func allocatePrimaryKeysHoldingWriteLock(for entity: EntityDescription, count: Int, in store: PersistentStore)
        throws -> ClosedRange<Int64>
    {
        let keys: ClosedRange<Int64>
        do {
            keys = try store.driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: count)
        } catch let error as StoreError where error.code == .notDurable {
            // Keys whose reservation may not survive a crash could be handed out twice: refuse them.
            throw StoreError(
                .io,
                "the store could not make its key reservation durable, so no keys were handed out and nothing was saved: \(error.message)",
                store: store.displayName, underlying: error)
        }
        // The caller assigns keys.lowerBound, +1, … : the range must be exactly `count` positive
        // keys (a key at or below zero would pass for a temporary ID) ending below Int64.max. A
        // damaged key counter in the file (SQLite's Z_MAX, LMDB's pk counter) gives anything else.
        let length = keys.upperBound.subtractingReportingOverflow(keys.lowerBound)
        guard keys.lowerBound > 0, keys.upperBound < Int64.max, !length.overflow,
            length.partialValue == Int64(max(count, 1)) - 1
        else {
            throw StoreError(
                .corrupt,
                "the store's key counter for \(entity.name) is damaged: asked for \(count) keys, it handed out \(keys.lowerBound)...\(keys.upperBound); restore the store from a backup",
                store: store.displayName)
        }
        return keys
    }

    /// What ``commit(_:pinInserts:)`` did: the results of the stores that committed and, when a
    /// later store failed after an earlier one committed, that failure.
    struct CommitOutcome {
        /// Results by store, for every store that committed.
        var results: [ObjectIdentifier: CommitResult] = [:]
        /// The ``StoreError/Code/partialCommit`` error, when some stores committed and one failed.
        var partialFailure: StoreError?
        /// A ``StoreError/Code/notDurable`` error a store gave after applying its batch: the
        /// batch counts as committed, and the caller reports the error once the save is done.
        var notDurable: StoreError?

        /// Whether `store`'s change set reached it.
        func committed(_ store: PersistentStore) -> Bool { results[ObjectIdentifier(store)] != nil }
    }

    /// Applies one change set per store. Each store commits atomically. When the first store
    /// fails, nothing was written and the error is thrown; when a later store fails after an
    /// earlier one committed, the outcome lists what committed and carries a
    /// ``StoreError/Code/partialCommit`` error saying which store failed, for the caller to finish
    /// the committed part and then throw.
    ///
    /// - Parameter pinInserts: Pin inserted rows in the row cache as they are stored (the saving
    ///   context's new objects hold them); the caller owns those pins.
    func commit(
        _ batches: [(store: PersistentStore, batch: ChangeBatch)], pinInserts: Bool = false
    ) throws -> CommitOutcome {
        for (store, batch) in batches where !batch.isEmpty {
            if store.isReadOnly {
                throw StoreError(.readOnly, "cannot save to a store opened read-only", store: store.displayName)
            }
            if store.isClosed {
                throw StoreError(.closed, "the store was removed from its coordinator", store: store.displayName)
            }
        }
        var outcome = CommitOutcome()
        var committed: [PersistentStore] = []
        // A ticket (C5) taken before any driver writes: once a store has committed, another
        // context may read a saved row from the driver, delete it and drop it from the cache
        // before this thread stores the row; the ticket keeps it from coming back.
        let read = rowCache.beginRead()
        defer { rowCache.endRead(read) }
        for (store, batch) in batches where !batch.isEmpty {
            do {
                let result: CommitResult
                do {
                    result = try store.write { try store.driver.apply(batch) }
                } catch let error as StoreError where error.code == .notDurable {
                    // Applied: readers see it. Versions follow the rules of CommitResult.
                    outcome.notDurable = outcome.notDurable ?? error
                    result = CommitResult(versions: [:])
                }
                outcome.results[ObjectIdentifier(store)] = result
                committed.append(store)
                updateCache(after: batch, result: result, in: store, pinInserts: pinInserts, since: read)
                if let metadata = batch.metadata { store.updateCachedMetadata(metadata) }
            } catch  where !committed.isEmpty {
                let storeError = error as? StoreError
                outcome.partialFailure = StoreError(
                    .partialCommit,
                    "saving to \(store.displayName) failed after \(committed.map(\.displayName).joined(separator: ", ")) committed: \(storeError?.message ?? "\(error)"). The committed changes are saved; the rest are still pending in the context: save again to retry them, or roll them back",
                    store: store.displayName, objectIDs: storeError?.objectIDs ?? [],
                    underlying: storeError ?? StoreError(.io, "\(error)"))
                return outcome
            }
        }
        return outcome
    }

    private func updateCache(
        after batch: ChangeBatch, result: CommitResult, in store: PersistentStore, pinInserts: Bool,
        since read: RowCache.Read
    ) {
        let key = ObjectIdentifier(store)
        // Inserted rows have version 1 (drivers may still report it); the batch's rows are stored
        // as they are when they say so already.
        if batch.inserts.allSatisfy({ $0.version == 1 }) && result.versions.isEmpty {
            rowCache.store(batch.inserts, in: key, pin: pinInserts, since: read)
        } else {
            rowCache.store(
                batch.inserts.map { RowSnapshot(id: $0.id, version: result.versions[$0.id] ?? 1, values: $0.values) },
                in: key, pin: pinInserts, since: read)
        }
        var fresh: [RowSnapshot] = []
        fresh.reserveCapacity(batch.updates.count)
        let reported = !result.versions.isEmpty
        for update in batch.updates {
            let version = (reported ? result.versions[update.id] : nil) ?? update.expectedVersion + 1
            fresh.append(RowSnapshot(id: update.id, version: version, values: update.values))
        }
        if !batch.deletes.isEmpty {
            // This save stores none of the rows it deleted (a batch naming a row twice keeps the
            // delete), so its own read needs no tombstones of them.
            if !fresh.isEmpty {
                let gone = Set(batch.deletes.map(\.id))
                fresh.removeAll { gone.contains($0.id) }
            }
            rowCache.remove(batch.deletes.map { RowCache.Key(store: key, row: $0.id) }, by: read)
        }
        rowCache.store(fresh, in: key, since: read)
    }
}
