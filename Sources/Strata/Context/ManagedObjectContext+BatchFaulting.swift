import Foundation

// Fetches that return a BatchFaultingArray: the matching IDs, kept compactly, and objects made a
// batch at a time. `fetch(_:)` keeps returning `[ManagedObject]` (every Core Data port reads its
// answer as an array, and an array must hold every object); this is the form to use when a
// result is too large to hold as objects at once.

extension ManagedObjectContext {
    /// Fetches the objects a request describes as a ``BatchFaultingArray``: only their IDs are
    /// read now, and each batch of ``FetchRequest/fetchBatchSize`` objects is made and loaded when
    /// first used, earlier batches let go (Core Data's batch-faulting result of a fetch with a
    /// `fetchBatchSize`).
    ///
    /// It holds the objects ``fetch(_:)`` returns, in the same order. Without pending changes
    /// that apply, one store holding the entity and a driver that applies the predicate, sort and
    /// page, the fetch reads IDs only; otherwise it reads the matching rows once to order them
    /// (without making objects), and when unsaved changes apply (``FetchRequest/includesPendingChanges``,
    /// or any fetch of a child context) or ``FetchRequest/shouldRefreshRefetchedObjects`` is set
    /// it fetches as ``fetch(_:)`` does and keeps the IDs of the answer.
    ///
    /// - Throws: What ``fetch(_:)`` throws.
    public func fetchBatchFaulting(_ request: FetchRequest) throws -> BatchFaultingArray<ManagedObject> {
        checkConfinement("fetchBatchFaulting(_:) of \(request.entityName)")
        return BatchFaultingArray(storage: try batchFaultingStorage(request, keeping: nil))
    }

    /// Fetches objects of a registered subclass as a ``BatchFaultingArray``:
    /// `try context.fetchBatchFaulting(request, as: Person.self)`. Objects of other classes (of
    /// subentities whose class is not a `T`) are left out, as ``fetch(_:as:)`` leaves them out.
    ///
    /// - Throws: What ``fetch(_:)`` throws.
    public func fetchBatchFaulting<T: ManagedObject>(_ request: FetchRequest, as type: T.Type) throws
        -> BatchFaultingArray<T>
    {
        checkConfinement("fetchBatchFaulting(_:as:) of \(request.entityName)")
        let model = coordinator.managedObjectModel
        let storage = try batchFaultingStorage(request) { number in
            model.entity(number: number).map { $0.managedObjectClass is T.Type } ?? false
        }
        return BatchFaultingArray(storage: storage)
    }

    /// The IDs (and held objects) of `request`'s answer.
    ///
    /// - Parameter keeping: Which entity numbers stay in the answer; every one when `nil`.
    func batchFaultingStorage(_ request: FetchRequest, keeping: ((Int32) -> Bool)?) throws -> BatchFaultingStorage {
        drainMerges()
        sweepIfGrown()
        let entity = try entity(named: request.entityName)
        let model = coordinator.managedObjectModel
        try request.predicate?.validate(for: entity, in: model)
        for key in request.sortKeys {
            try FetchPredicate.keyPath(key.keyPath, equals: .null).validate(for: entity, in: model)
        }
        var ids = CompactRowIDs()
        var held: [Int: ManagedObject] = [:]
        var keeps: [Int32: Bool] = [:]
        func kept(_ number: Int32) -> Bool {
            guard let keeping else { return true }
            if let known = keeps[number] { return known }
            let answer = keeping(number)
            keeps[number] = answer
            return answer
        }
        let stores = request.affectedStores ?? coordinator.stores(holding: entity)
        if request.shouldRefreshRefetchedObjects || pendingChangesApply(to: request, entity: entity) {
            // Unsaved changes place objects among the stored ones: fetch as fetch(_:) does.
            for object in try fetch(request) where kept(object.entity.entityNumber) {
                if object.objectID.isTemporaryID { held[ids.count] = object }
                ids.append(object.objectID.rowID, store: object.objectID.persistentStore)
            }
        } else if let store = stores.first, stores.count == 1,
            let found = try storeIDs(request, entity, in: store)
        {
            ids.reserveCapacity(found.count)
            for id in found where kept(id.entity) { ids.append(id, store: store) }
        } else {
            for (row, store) in try matchingRows(request, entity: entity, cacheRows: false) where kept(row.id.entity) {
                ids.append(row.id, store: store)
            }
        }
        return BatchFaultingStorage(
            context: self, ids: ids, held: held, batchSize: request.fetchBatchSize,
            loadsValues: request.includesPropertyValues, prefetching: request.relationshipKeyPathsForPrefetching)
    }

    /// The matching IDs in order, when the store's driver applies the whole request to IDs;
    /// `nil` when it does not (the caller orders rows instead).
    private func storeIDs(_ request: FetchRequest, _ entity: EntityDescription, in store: PersistentStore) throws
        -> [RowID]?
    {
        var fetch = StoreFetch(entity: entity)
        fetch.includesSubentities = request.includesSubentities
        fetch.predicate = request.predicate
        fetch.sort = request.sortKeys
        fetch.resultKind = .ids
        fetch.limit = request.fetchLimit > 0 ? request.fetchLimit : nil
        fetch.offset = request.fetchOffset
        let result = try coordinator.fetch(fetch, in: store, cacheRows: false)
        return result.appliedPage ? result.ids : nil
    }
}
