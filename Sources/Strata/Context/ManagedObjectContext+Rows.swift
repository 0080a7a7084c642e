import Foundation

// Fetching rows without making objects: for dictionary results, and for a fetched results
// controller that keeps its objects as faults (it reads sort values from the rows).

extension ManagedObjectContext {
    /// Whether unsaved changes of this context (or, for a child, of its ancestors) can change the
    /// answer of `request`, so that it must be answered from objects.
    func pendingChangesApply(to request: FetchRequest, entity: EntityDescription) -> Bool {
        guard request.includesPendingChanges else { return false }
        if parent != nil { return true }
        return hasPendingChanges { request.includesSubentities ? $0.entity.isKind(of: entity) : $0.entity === entity }
    }

    /// The rows matching `request` (predicate, sort keys, offset and limit), each with its store,
    /// in the order a fetch of objects returns them; `nil` when pending changes apply (then only
    /// objects give the answer). Registers no object.
    func sortedRowsIfUnchanged(_ request: FetchRequest) throws -> [(row: RowSnapshot, store: PersistentStore)]? {
        let entity = try entity(named: request.entityName)
        let model = coordinator.managedObjectModel
        try request.predicate?.validate(for: entity, in: model)
        for key in request.sortKeys {
            try FetchPredicate.keyPath(key.keyPath, equals: .null).validate(for: entity, in: model)
        }
        guard !pendingChangesApply(to: request, entity: entity) else { return nil }
        return try matchingRows(request, entity: entity)
    }

    /// The rows matching `request` in every store, filtered, sorted (ties by row ID, then store)
    /// and paged as a fetch of objects would be.
    ///
    /// - Parameter cacheRows: Whether the rows go into the row cache (for objects made from them later).
    func matchingRows(_ request: FetchRequest, entity: EntityDescription, cacheRows: Bool = true) throws -> [(
        row: RowSnapshot, store: PersistentStore
    )] {
        let model = coordinator.managedObjectModel
        let stores = request.affectedStores ?? coordinator.stores(holding: entity)
        var views: [(view: RowView, store: PersistentStore, order: Int)] = []
        for (order, store) in stores.enumerated() {
            var fetch = StoreFetch(entity: entity)
            fetch.includesSubentities = request.includesSubentities
            fetch.predicate = request.predicate
            let pushesPage = stores.count == 1
            if pushesPage {
                fetch.sort = request.sortKeys
                fetch.limit = request.fetchLimit > 0 ? request.fetchLimit : nil
                fetch.offset = request.fetchOffset
            }
            let result = try coordinator.fetch(fetch, in: store, cacheRows: cacheRows)
            let lookup = rowLookup(store)
            let related = relatedLookup(store)
            var rows = result.rows
            if !result.appliedPredicate, let predicate = request.predicate {
                rows = try rows.filter {
                    try predicate.evaluate(with: RowView($0, model: model, lookup: lookup, related: related))
                }
            }
            if pushesPage && result.appliedPage { return rows.map { ($0, store) } }
            views += rows.map { (RowView($0, model: model, lookup: lookup, related: related), store, order) }
        }
        var failure: (any Error)?
        views.sort { a, b in
            if failure != nil { return false }
            do {
                switch try SortKey.compare(a.view, b.view, by: request.sortKeys) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame:
                    return a.view.row.id != b.view.row.id ? a.view.row.id < b.view.row.id : a.order < b.order
                }
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return views.dropFirst(request.fetchOffset).prefix(request.fetchLimit > 0 ? request.fetchLimit : Int.max).map {
            ($0.view.row, $0.store)
        }
    }

    /// Objects for rows of any stores, as faults that fire together in chunks of `size`,
    /// prefetching `prefetching` for each chunk as it loads.
    func faults(for rows: [(id: RowID, store: PersistentStore)], size: Int, prefetching: [String] = [])
        -> [ManagedObject]
    {
        let model = coordinator.managedObjectModel
        // Rows come from stores of this model.
        let objectIDs = rows.map {
            anchors.id(model.entity(number: $0.id.entity)!, $0.id, $0.store)
        }
        let batch = FaultBatch(ids: objectIDs, size: size, prefetching: prefetching)
        return objectIDs.map { id in
            let object = fault(for: id)
            if object.faulted && !object.hasSnapshot { faultBatches[ObjectIdentifier(object)] = batch }
            return object
        }
    }
}
