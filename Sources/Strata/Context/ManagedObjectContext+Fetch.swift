import Foundation

extension ManagedObjectContext {
    /// Fetches the objects a request describes.
    ///
    /// Predicates, sorts and pages go to each store's driver where it can apply them; the core
    /// applies the rest, merges results of several stores in sort order and, with
    /// ``FetchRequest/includesPendingChanges``, reflects unsaved inserts, updates and deletes.
    ///
    /// - Throws: ``StoreError`` for an unknown entity or a store failure; ``FetchPredicateError`` for a
    ///   predicate or sort key that does not fit the entity.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        checkConfinement("fetch(_:) of \(request.entityName)")
        return try run(request, kind: .rows).objects
    }

    /// Fetches objects of a registered subclass: `try context.fetch(request, as: Person.self)`.
    public func fetch<T: ManagedObject>(_ request: FetchRequest, as type: T.Type) throws -> [T] {
        try fetch(request).compactMap { $0 as? T }
    }

    /// Fetches the IDs of matching objects without loading them.
    public func fetchObjectIDs(_ request: FetchRequest) throws -> [ManagedObjectID] {
        checkConfinement("fetchObjectIDs(_:) of \(request.entityName)")
        return try run(request, kind: .ids).objects.map { $0.objectID }
    }

    /// Runs a request and returns what its ``FetchRequest/resultType`` asks for (Core Data's
    /// `execute(_:)` / result-typed `fetch(_:)`).
    public func execute(_ request: FetchRequest) throws -> FetchResults {
        switch request.resultType {
        case .managedObject: .objects(try fetch(request))
        case .managedObjectID: .objectIDs(try fetchObjectIDs(request))
        case .dictionary: .dictionaries(try fetchDictionaries(request))
        case .count: .count(try count(for: request))
        }
    }

    /// Counts matching objects, without loading them where the stores can count.
    ///
    /// A dictionary request that groups (``FetchRequest/propertiesToGroupBy``, aggregates, or
    /// ``FetchRequest/returnsDistinctResults``) counts its groups.
    public func count(for request: FetchRequest) throws -> Int {
        checkConfinement("count(for:) of \(request.entityName)")
        if Self.groupsResults(request) { return try dictionaryRecords(request).1.count }
        return try run(request, kind: .count).count
    }

    // MARK: Internals

    private struct Outcome {
        var objects: [ManagedObject] = []
        var count: Int = 0
    }

    private func run(_ request: FetchRequest, kind: StoreFetch.ResultKind) throws -> Outcome {
        drainMerges()
        sweepIfGrown()
        let entity = try entity(named: request.entityName)
        let model = coordinator.managedObjectModel
        try request.predicate?.validate(for: entity, in: model)
        for key in request.sortKeys {
            try FetchPredicate.keyPath(key.keyPath, equals: .null).validate(for: entity, in: model)
        }
        let stores = request.affectedStores ?? coordinator.stores(holding: entity)
        let matchesEntity: (ManagedObject) -> Bool = {
            request.includesSubentities ? $0.entity.isKind(of: entity) : $0.entity === entity
        }
        // A child sees its ancestors' unsaved changes as its own pending ones.
        var inherited: (changed: [ManagedObject], deleted: Set<ManagedObjectID>) = ([], [])
        if parent != nil, request.includesPendingChanges {
            inherited = try ancestorChanges(
                for: request.includesSubentities ? entity.hierarchyNumbers : [entity.entityNumber])
        }
        let pending =
            request.includesPendingChanges
            && (hasPendingChanges(matching: matchesEntity) || !inherited.changed.isEmpty || !inherited.deleted.isEmpty)
        let limit = request.fetchLimit > 0 ? request.fetchLimit : nil
        let pushPage = stores.count == 1 && !pending
        // Rows this fetch reads are cached only if no delete removed them meanwhile (RowCache C5).
        let read = coordinator.rowCache.beginRead()
        defer { coordinator.rowCache.endRead(read) }

        // The common case: one store, nothing pending, the driver does everything.
        var firstResult: StoreFetchResult?
        if pushPage, let store = stores.first {
            // Batched fetches, and fetches without property values, ask for IDs and make faults;
            // refreshing registered objects needs the rows.
            let batched =
                kind == .rows && (request.fetchBatchSize > 0 || !request.includesPropertyValues)
                && !request.shouldRefreshRefetchedObjects
            var fetch = storeFetch(request, entity, kind: batched ? .ids : kind)
            fetch.limit = limit
            fetch.offset = request.fetchOffset
            if kind == .rows && !batched {
                // Rows arrive in parts, each made into objects while it is warm.
                var state = Materializing()
                var unpaged: StoreFetchResult?
                do {
                    try coordinator.fetch(fetch, in: store) { part, _ in
                        if part.appliedPage {
                            // The first part makes room in the tables; later ones grow them by doubling.
                            materialize(
                                &part.rows, store, request, into: &state, reserving: state.objects.isEmpty, read: read)
                        } else if unpaged == nil {
                            unpaged = part
                        } else {
                            unpaged?.rows += part.rows
                        }
                    }
                } catch {
                    // Objects registered from earlier parts stay registered, and awake.
                    for object in state.awakening { object.awakeFromFetch() }
                    throw error
                }
                guard let unpaged else {
                    let objects = try finish(state, request)
                    return Outcome(objects: objects, count: objects.count)
                }
                // The driver did not page: finish its rows below instead of asking again.
                if request.fetchOffset == 0 && limit == nil { firstResult = unpaged }
            } else {
                let result = try coordinator.fetch(fetch, in: store, cacheRows: false)
                if result.appliedPage {
                    if kind == .count, let count = result.count { return Outcome(count: count) }
                    if batched, let ids = result.ids {
                        let objects = faults(
                            for: ids, in: store, size: request.fetchBatchSize,
                            prefetching: request.relationshipKeyPathsForPrefetching)
                        return Outcome(objects: objects, count: ids.count)
                    }
                    if kind == .ids, let ids = result.ids {
                        let objects = ids.map {
                            fault(
                                for: anchors.id(model.entity(number: $0.entity)!, $0, store))
                        }  // the coordinator checked the IDs
                        return Outcome(objects: objects, count: objects.count)
                    }
                }
            }
        }

        var candidates: [ManagedObject] = []
        for store in stores {
            let fetch = storeFetch(request, entity, kind: .rows)
            // Taken out of `firstResult`, so materialize owns the rows alone and changes them in place.
            var result = try firstResult.take() ?? coordinator.fetch(fetch, in: store, cacheRows: false)
            if !result.appliedPredicate, let predicate = request.predicate {
                result.rows = try result.rows.filter { row in
                    try predicate.evaluate(
                        with: RowView(row, model: model, lookup: rowLookup(store), related: relatedLookup(store)))
                }
            }
            candidates += try materialize(&result.rows, store, request, read: read)
        }
        if pending {
            candidates = candidates.filter { !$0.deleted && !inherited.deleted.contains($0.objectID) }
            var present = Set(candidates.map(ObjectIdentifier.init))
            let changed =
                updatedList.values.filter { $0.isUpdated && !$0.deleted && matchesEntity($0) }
                + inherited.changed.filter {
                    !$0.deleted && $0.isAccessible && matchesEntity($0) && !inherited.deleted.contains($0.objectID)
                }
            if let predicate = request.predicate {
                let stale = try Set(changed.filter { try !predicate.evaluate(with: $0) }.map(ObjectIdentifier.init))
                candidates.removeAll { stale.contains(ObjectIdentifier($0)) }
                present.subtract(stale)
            }
            let extra = Array(insertedList.values) + changed
            for object in extra
            where !object.deleted && matchesEntity(object) && !present.contains(ObjectIdentifier(object)) {
                if let predicate = request.predicate, try !predicate.evaluate(with: object) { continue }
                candidates.append(object)
                present.insert(ObjectIdentifier(object))
            }
        }
        if !request.sortKeys.isEmpty {
            candidates = try sortObjects(candidates, by: request.sortKeys)
        } else if stores.count > 1 || pending {
            candidates.sort { $0.objectID.rowID < $1.objectID.rowID }
        }
        let page = Array(candidates.dropFirst(request.fetchOffset).prefix(limit ?? Int.max))
        return Outcome(objects: page, count: page.count)
    }

    /// Objects for IDs, as faults that fire together in chunks of `size` (each alone when `size`
    /// is 0), prefetching `prefetching` for each chunk as it loads.
    func faults(for ids: [RowID], in store: PersistentStore, size: Int, prefetching: [String] = []) -> [ManagedObject] {
        let model = coordinator.managedObjectModel
        // IDs come from a store of this model.
        let objectIDs = ids.map { anchors.id(model.entity(number: $0.entity)!, $0, store) }
        guard size > 0 else { return objectIDs.map { fault(for: $0) } }
        let batch = FaultBatch(ids: objectIDs, size: size, prefetching: prefetching)
        return objectIDs.map { id in
            let object = fault(for: id)
            if object.faulted && !object.hasSnapshot { faultBatches[ObjectIdentifier(object)] = batch }
            return object
        }
    }

    private func storeFetch(_ request: FetchRequest, _ entity: EntityDescription, kind: StoreFetch.ResultKind)
        -> StoreFetch
    {
        var fetch = StoreFetch(entity: entity)
        fetch.includesSubentities = request.includesSubentities
        fetch.predicate = request.predicate
        fetch.sort = request.sortKeys
        fetch.resultKind = kind
        return fetch
    }

    func hasPendingChanges(matching matches: (ManagedObject) -> Bool) -> Bool {
        insertedList.values.contains(where: matches) || deletedList.values.contains(where: matches)
            || updatedList.values.contains { $0.isUpdated && matches($0) }
    }

    /// Sorts `objects` by `keys`, equal ones by row ID. Each key is read once per object before
    /// sorting (reading a key path costs far more than comparing two values, and a sort compares
    /// each object about log n times).
    ///
    /// - Complexity: O(n × keys) reads, then O(n log n) comparisons of values.
    private func sortObjects(_ objects: [ManagedObject], by keys: [SortKey]) throws -> [ManagedObject] {
        let width = keys.count
        var values: [StoreValue] = []
        values.reserveCapacity(objects.count * width)
        for object in objects {
            for key in keys { values.append(try key.value(of: object)) }
        }
        var failure: (any Error)?
        let order = objects.indices.sorted { a, b in
            if failure != nil { return false }
            do {
                for (position, key) in keys.enumerated() {
                    let result = try key.compareValues(values[a * width + position], values[b * width + position])
                    if result != .orderedSame { return result == .orderedAscending }
                }
            } catch {
                failure = error
                return false
            }
            return objects[a].objectID.rowID < objects[b].objectID.rowID
        }
        if let failure { throw failure }
        return order.map { objects[$0] }
    }

    func rowLookup(_ store: PersistentStore) -> (RowID) throws -> RowSnapshot? {
        { [coordinator] id in try coordinator.row(for: id, in: store) }
    }

    func relatedLookup(_ store: PersistentStore) -> (RowID, Int) throws -> [RowID] {
        { [coordinator] id, slot in
            // The slot belongs to the row's entity, which is in this model.
            let entity = coordinator.managedObjectModel.entity(number: id.entity)!
            return try coordinator.relatedRows(
                RelatedRowsRequest(entity: entity, slot: slot, sources: [id]), in: store)[id] ?? []
        }
    }
}
