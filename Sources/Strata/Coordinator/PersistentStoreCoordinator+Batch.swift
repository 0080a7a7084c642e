import Foundation

extension PersistentStoreCoordinator {
    /// Runs a batch request on each store (one transaction per store) and drops the changed rows
    /// from the row cache. When a later store fails after an earlier one changed, the error is
    /// ``StoreError/Code/partialCommit`` and says which.
    ///
    /// - Returns: The IDs of the changed objects, store by store, each store's in row order.
    public func execute(_ request: StoreBatchRequest, in stores: [PersistentStore]) throws -> [ManagedObjectID] {
        try request.check()
        for store in stores where store.isReadOnly {
            throw StoreError(.readOnly, "cannot change a store opened read-only", store: store.displayName)
        }
        var ids: [ManagedObjectID] = []
        var changed: [PersistentStore] = []
        for store in stores where !request.entityNumbers.isDisjoint(with: store.entityNumbers) {
            let result: StoreBatchResult
            do {
                result = try store.write { try store.driver.execute(request) }
            } catch  where !changed.isEmpty {
                let storeError = error as? StoreError
                throw StoreError(
                    .partialCommit,
                    "the batch change of \(store.displayName) failed after \(changed.map(\.displayName).joined(separator: ", ")) changed: \(storeError?.message ?? "\(error)")",
                    store: store.displayName, underlying: storeError ?? StoreError(.io, "\(error)"))
            }
            changed.append(store)
            let key = ObjectIdentifier(store)
            rowCache.remove(result.ids.map { RowCache.Key(store: key, row: $0) })
            var anchors = ObjectIDAnchors()
            for id in result.ids {
                // Drivers return rows of the entities of this model.
                ids.append(anchors.id(managedObjectModel.entity(number: id.entity)!, id, store))
            }
        }
        return ids
    }
}
