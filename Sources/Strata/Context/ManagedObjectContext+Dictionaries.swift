import Foundation

// Dictionary fetches (Core Data's dictionary result type): plain projections of key paths, and
// grouped ones with aggregates, `havingPredicate` and distinct results. Without pending changes
// they read rows, registering no objects; a driver may group and aggregate itself
// (StoreFetch.aggregation), else the core does it over the rows with the same rules
// (AggregateAccumulator, GroupKeyValue). With pending changes they read the context's objects.

extension ManagedObjectContext {
    /// Fetches dictionaries of values (Core Data's dictionary result type).
    ///
    /// Each dictionary maps the names of ``FetchRequest/propertiesToFetch`` (every stored
    /// attribute when `nil`) to Swift values: attributes as ``ManagedObject/value(forKey:)``
    /// returns them, to-one relationships as ``ManagedObjectID``, to-many as `[ManagedObjectID]`,
    /// aggregates as `Int` (counts), `Int`/`Double`/`Decimal` (sums), `Double`/`Decimal`
    /// (averages) or the attribute's type (`min`, `max`), converted to an expression's
    /// ``ExpressionDescription/resultType`` when it has one. `nil` values are left out.
    ///
    /// With ``FetchRequest/propertiesToGroupBy`` or aggregate expressions, each dictionary is one
    /// group: ``FetchRequest/havingPredicate`` picks groups, sort keys name result keys (groups
    /// come in group-key order without them), and offset and limit apply to groups. Pending
    /// changes count when ``FetchRequest/includesPendingChanges`` is on, as for objects.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` for a request that does not fit the entity
    ///   (see ``ExpressionDescription``); ``FetchPredicateError`` for a predicate that does not
    ///   fit; the store's error.
    public func fetchDictionaries(_ request: FetchRequest) throws -> [[String: Any]] {
        checkConfinement("fetchDictionaries(_:) of \(request.entityName)")
        let (plan, records) = try dictionaryRecords(request)
        return records.map { plan.output($0) }
    }

    /// The result records of a dictionary fetch, before conversion to Swift values.
    func dictionaryRecords(_ request: FetchRequest) throws -> (DictionaryFetchPlan, [ResultRecord]) {
        drainMerges()
        let entity = try entity(named: request.entityName)
        let model = coordinator.managedObjectModel
        try request.predicate?.validate(for: entity, in: model)
        let plan = try DictionaryFetchPlan(request, entity: entity, model: model)
        if !plan.grouped {
            for key in request.sortKeys {
                try FetchPredicate.keyPath(key.keyPath, equals: .null).validate(for: entity, in: model)
            }
        }
        let pending = pendingChangesApply(to: request, entity: entity)
        let stores = request.affectedStores ?? coordinator.stores(holding: entity)
        if pending {
            // The context's view of the objects, unsaved changes included.
            var objects = request
            if plan.grouped {
                objects.sortKeys = []
                objects.fetchOffset = 0
                objects.fetchLimit = 0
            }
            objects.relationshipKeyPathsForPrefetching = []
            let found = try fetch(objects)
            let reader = ResultValueReader(model: model)
            if !plan.grouped { return (plan, try found.map { try plan.record(of: $0, reader: reader) }) }
            return (plan, try plan.grouping(found.map { object in { try reader.read($0, from: object) } }, request))
        }
        if plan.grouped, stores.count == 1, let store = stores.first {
            var fetch = StoreFetch(entity: entity)
            fetch.includesSubentities = request.includesSubentities
            fetch.predicate = request.predicate
            fetch.aggregation = plan.aggregation
            let result = try coordinator.fetch(fetch, in: store, cacheRows: false)
            if let groups = result.groups, result.appliedPredicate {
                return (plan, try plan.finish(groups.map { plan.record(of: $0, store: store) }, request))
            }
            let rows = try filtered(result, request, store)
            let reader = ResultValueReader(model: model, lookup: rowLookup(store), related: relatedLookup(store))
            return (plan, try plan.grouping(rows.map { row in { try reader.read($0, from: row, in: store) } }, request))
        }
        if !plan.grouped {
            var readers: [ObjectIdentifier: ResultValueReader] = [:]
            return (
                plan,
                try matchingRows(request, entity: entity, cacheRows: false).map { item in
                    let key = ObjectIdentifier(item.store)
                    let reader =
                        readers[key]
                        ?? ResultValueReader(
                            model: model, lookup: rowLookup(item.store), related: relatedLookup(item.store))
                    readers[key] = reader
                    return try plan.record(of: item.row, in: item.store, reader: reader)
                }
            )
        }
        // Grouped over several stores: every store's matching rows, grouped in the core.
        var unordered = request
        unordered.sortKeys = []
        unordered.fetchOffset = 0
        unordered.fetchLimit = 0
        var sources: [(String) throws -> ResultValue] = []
        for store in stores {
            var single = unordered
            single.affectedStores = [store]
            let reader = ResultValueReader(model: model, lookup: rowLookup(store), related: relatedLookup(store))
            sources += try matchingRows(single, entity: entity, cacheRows: false).map { item in
                { try reader.read($0, from: item.row, in: store) }
            }
        }
        return (plan, try plan.grouping(sources, request))
    }

    /// The rows of a store's answer that match the request's predicate.
    private func filtered(_ result: StoreFetchResult, _ request: FetchRequest, _ store: PersistentStore) throws
        -> [RowSnapshot]
    {
        guard !result.appliedPredicate, let predicate = request.predicate else { return result.rows }
        let model = coordinator.managedObjectModel
        let lookup = rowLookup(store)
        let related = relatedLookup(store)
        return try result.rows.filter {
            try predicate.evaluate(with: RowView($0, model: model, lookup: lookup, related: related))
        }
    }

    /// Whether a dictionary request groups its results (then counts count groups).
    static func groupsResults(_ request: FetchRequest) -> Bool {
        request.propertiesToGroupBy != nil || (request.returnsDistinctResults && request.propertiesToFetch != nil)
            || (request.propertiesToFetch ?? []).contains { property in
                if case .expression(let description) = property, case .function(let name, _) = description.expression {
                    return AggregateFunction(selector: name) != nil
                }
                return false
            }
    }
}

/// One value of a result: a stored value, or object IDs for relationships.
enum ResultValue {
    case value(StoreValue)
    case object(ManagedObjectID?)
    case objects([ManagedObjectID])
    /// A composite attribute's elements by name (nested composites nested).
    case composite([String: ResultValue])

    /// The value as grouping, having predicates and sort keys see it.
    var storeValue: StoreValue {
        switch self {
        case .value(let value): value
        case .object(let id): id.map { .reference($0.rowID) } ?? .null
        case .objects(let ids): .references(ids.map(\.rowID))
        case .composite: .null  // not groupable or sortable: the plan refuses composites there
        }
    }

    /// The value as a group key.
    var groupKey: GroupKeyValue {
        switch self {
        case .object(let id?): GroupKeyValue(.reference(id.rowID), store: id.persistentStore.map(ObjectIdentifier.init))
        default: GroupKeyValue(storeValue, store: nil)
        }
    }
}

/// One result dictionary before conversion: values by key.
struct ResultRecord {
    var values: [String: ResultValue]
}

/// A result record read by having predicates and sort keys: its keys, with dotted group key
/// paths (`department.name`) readable step by step.
struct ResultRecordView: PredicateEvaluable {
    let values: [String: StoreValue]
    let prefix: String

    func keyValue(forKey key: String) throws -> KeyValue {
        let full = prefix.isEmpty ? key : prefix + "." + key
        if let value = values[full] { return .value(value) }
        if values.keys.contains(where: { $0.hasPrefix(full + ".") }) {
            return .object(ResultRecordView(values: values, prefix: full))
        }
        throw FetchPredicateError(.unknownKeyPath, "the grouped result has no key '\(full)'")
    }

    var selfValue: StoreValue { .null }
}

/// Reads key paths (through to-one relationships) of rows and objects for dictionary results.
struct ResultValueReader {
    let model: ManagedObjectModel
    var lookup: (RowID) throws -> RowSnapshot? = { _ in nil }
    var related: (RowID, Int) throws -> [RowID] = { _, _ in [] }
    /// Anchors of the object IDs the results hold (one per entity and store for the whole fetch).
    private let anchors = ObjectIDAnchorBox()

    init(model: ManagedObjectModel) { self.model = model }

    init(
        model: ManagedObjectModel, lookup: @escaping (RowID) throws -> RowSnapshot?,
        related: @escaping (RowID, Int) throws -> [RowID]
    ) {
        self.model = model
        self.lookup = lookup
        self.related = related
    }

    /// The value of `path` in a row of `store`.
    func read(_ path: String, from start: RowSnapshot, in store: PersistentStore) throws -> ResultValue {
        var row = start
        var rest = Substring(path)
        while true {
            // Every row comes from a store of this model.
            let entity = model.entity(number: row.id.entity)!
            if let slot = entity.index(ofProperty: String(rest)) {
                switch row.values[slot] {
                case .reference(let id): return .object(objectID(id, store))
                case .references(let ids): return .objects(ids.map { objectID($0, store) })
                case .unfetched: return .objects(try related(row.id, slot).map { objectID($0, store) })
                case .null where entity.properties[slot].relationship != nil:
                    // checked non-nil
                    return entity.properties[slot].relationship!.isToMany ? .objects([]) : .object(nil)
                case let value: return .value(value)
                }
            }
            guard let dot = rest.firstIndex(of: "."), let slot = entity.index(ofProperty: String(rest[..<dot])) else {
                throw FetchPredicateError.unknownKey(String(rest), entity: entity.name)
            }
            guard case .reference(let id) = row.values[slot], let next = try lookup(id) else { return .value(.null) }
            row = next
            rest = rest[rest.index(after: dot)...]
        }
    }

    /// The value of `path` in an object.
    func read(_ path: String, from start: ManagedObject) throws -> ResultValue {
        var object = start
        var rest = Substring(path)
        while true {
            try object.fireFaultThrowing()
            let entity = object.entity
            let key = String(rest)
            if let slot = entity.index(ofProperty: key) {
                if let relationship = entity.properties[slot].relationship {
                    let ids = object.objectIDs(forRelationshipNamed: key)
                    return relationship.isToMany ? .objects(ids) : .object(ids.first)
                }
                return .value(try object.storeValue(forKey: key))
            }
            guard let dot = rest.firstIndex(of: "."), let slot = entity.index(ofProperty: String(rest[..<dot])),
                entity.properties[slot].relationship != nil
            else { throw FetchPredicateError.unknownKey(key, entity: entity.name) }
            guard let next = object.object(forKey: String(rest[..<dot])) else { return .value(.null) }
            object = next
            rest = rest[rest.index(after: dot)...]
        }
    }

    /// A composite attribute's elements at `path`, each leaf read by `read` at its key path.
    func composite(_ attribute: AttributeDescription, at path: String, read: (String) throws -> ResultValue) throws
        -> ResultValue
    {
        var elements: [String: ResultValue] = [:]
        for element in attribute.elements {
            let elementPath = path + "." + element.name
            elements[element.name] =
                element.isComposite ? try composite(element, at: elementPath, read: read) : try read(elementPath)
        }
        return .composite(elements)
    }

    private func objectID(_ id: RowID, _ store: PersistentStore) -> ManagedObjectID {
        // References in rows of this model name entities of this model.
        anchors.anchors.id(model.entity(number: id.entity)!, id, store)
    }
}
