import Foundation

extension PersistentStoreCoordinator {
    /// Runs a fetch on one store and, unless the caller caches them itself, caches the rows it
    /// returns.
    func fetch(_ request: StoreFetch, in store: PersistentStore, cacheRows: Bool = true) throws -> StoreFetchResult {
        var request = request
        if request.cachedRows == nil { request.cachedRows = CachedRows(rowCache, store: ObjectIdentifier(store)) }
        let result = try store.read { try store.driver.fetch(request) }
        if cacheRows && !result.rows.isEmpty { rowCache.store(result.rows, in: ObjectIdentifier(store)) }
        return result
    }

    /// Runs a fetch on one store, handing its answer to `body` in parts
    /// (``StoreDriver/fetch(_:inParts:)``); the caller caches the rows. `body` must not call
    /// into `store`.
    func fetch(_ request: StoreFetch, in store: PersistentStore, inParts body: (inout StoreFetchResult) throws -> Void) throws {
        var request = request
        if request.cachedRows == nil { request.cachedRows = CachedRows(rowCache, store: ObjectIdentifier(store)) }
        try store.read { try store.driver.fetch(request, inParts: body) }
    }

    /// The rows of `ids` in `store`: from the row cache where resident, the rest from the driver
    /// in one call.
    func rows(for ids: [RowID], in store: PersistentStore) throws -> [RowID: RowSnapshot] {
        var found: [RowID: RowSnapshot] = [:]
        var missing: [RowID] = []
        let storeKey = ObjectIdentifier(store)
        for id in ids {
            if let cached = rowCache.snapshot(for: RowCache.Key(store: storeKey, row: id)) {
                found[id] = cached
            } else {
                missing.append(id)
            }
        }
        if !missing.isEmpty {
            let loaded = try store.read { try store.driver.rows(for: missing) }
            rowCache.store(loaded, in: storeKey)
            for row in loaded { found[row.id] = row }
        }
        return found
    }

    /// The members of a to-many relationship for several rows of one store.
    func relatedRows(_ request: RelatedRowsRequest, in store: PersistentStore) throws -> [RowID: [RowID]] {
        try store.read { try store.driver.relatedRows(request) }
    }

    /// Reserves permanent keys in `store` for the hierarchy of `entity`.
    func allocatePrimaryKeys(for entity: EntityDescription, count: Int, in store: PersistentStore) throws -> ClosedRange<Int64> {
        if store.isReadOnly {
            throw StoreError(.readOnly, "cannot insert into a store opened read-only", store: store.displayName)
        }
        return try store.write { try store.driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: count) }
    }

    /// Applies one change set per store. Each store commits atomically; when a later store fails
    /// after an earlier one committed, the error is ``StoreError/Code/partialCommit`` and says which.
    ///
    /// - Parameter pinInserts: Pin inserted rows in the row cache as they are stored (the saving
    ///   context's new objects hold them); the caller owns those pins.
    func commit(
        _ batches: [(store: PersistentStore, batch: ChangeBatch)], pinInserts: Bool = false
    ) throws -> [ObjectIdentifier: CommitResult] {
        for (store, batch) in batches where !batch.isEmpty {
            if store.isReadOnly {
                throw StoreError(.readOnly, "cannot save to a store opened read-only", store: store.displayName)
            }
            if store.isClosed {
                throw StoreError(.closed, "the store was removed from its coordinator", store: store.displayName)
            }
        }
        var results: [ObjectIdentifier: CommitResult] = [:]
        var committed: [PersistentStore] = []
        for (store, batch) in batches where !batch.isEmpty {
            do {
                let result = try store.write { try store.driver.apply(batch) }
                results[ObjectIdentifier(store)] = result
                committed.append(store)
                updateCache(after: batch, result: result, in: store, pinInserts: pinInserts)
                if let metadata = batch.metadata { store.updateCachedMetadata(metadata) }
            } catch where !committed.isEmpty {
                let storeError = error as? StoreError
                throw StoreError(
                    .partialCommit,
                    "saving to \(store.displayName) failed after \(committed.map(\.displayName).joined(separator: ", ")) committed: \(storeError?.message ?? "\(error)")",
                    store: store.displayName, objectIDs: storeError?.objectIDs ?? [], underlying: storeError ?? StoreError(.io, "\(error)"))
            }
        }
        return results
    }

    private func updateCache(after batch: ChangeBatch, result: CommitResult, in store: PersistentStore, pinInserts: Bool) {
        let key = ObjectIdentifier(store)
        // Inserted rows have version 1 (drivers may still report it); the batch's rows are stored
        // as they are when they say so already.
        if batch.inserts.allSatisfy({ $0.version == 1 }) && result.versions.isEmpty {
            rowCache.store(batch.inserts, in: key, pin: pinInserts)
        } else {
            rowCache.store(batch.inserts.map { RowSnapshot(id: $0.id, version: result.versions[$0.id] ?? 1, values: $0.values) }, in: key, pin: pinInserts)
        }
        var fresh: [RowSnapshot] = []
        fresh.reserveCapacity(batch.updates.count)
        for update in batch.updates {
            let version = result.versions[update.id] ?? update.expectedVersion + 1
            fresh.append(RowSnapshot(id: update.id, version: version, values: update.values))
        }
        rowCache.remove(batch.deletes.map { RowCache.Key(store: key, row: $0.id) })
        rowCache.store(fresh, in: key)
    }
}
