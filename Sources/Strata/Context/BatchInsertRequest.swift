import Foundation

/// Inserts many objects straight into a store, without contexts (Core Data's
/// `NSBatchInsertRequest`).
///
/// ```swift
/// let request = BatchInsertRequest(entityName: "Item", objects: [
///     ["name": "pen", "price": 1.5],
///     ["name": "ink", "price": 4.0],
/// ])
/// request.resultType = .objectIDs
/// let result = try context.execute(request)
/// context.mergeChanges(fromContextDidSave: result.changes)   // contexts are not told otherwise
/// ```
///
/// Or one object at a time, the handler filling an empty dictionary and returning `true` when
/// there are no more objects (that last dictionary is not inserted), as Core Data's
/// `dictionaryHandler`:
///
/// ```swift
/// var next = 0
/// let request = BatchInsertRequest(entityName: "Item") { object in
///     guard next < names.count else { return true }
///     object["name"] = names[next]
///     next += 1
///     return false
/// }
/// ```
///
/// Rules, as in Core Data:
/// - Each object is a dictionary of attribute names to values (Swift values or ``StoreValue``s,
///   converted like ``ManagedObject/setValue(_:forKey:)`` converts them); attributes left out
///   take their default values. Relationships cannot be set.
/// - The rows go to one store in one transaction: when the request throws, the store holds what
///   it held before.
/// - Types and optionality are checked (an error names the object's position, the entity and the
///   attribute); other validation rules of the model are not run.
/// - Uniqueness constraints are kept, resolved by the executing context's ``MergePolicy``:
///   under ``MergePolicy/error`` (the default) an object sharing a constraint's values with a
///   stored row or another object of the request fails the request with
///   ``StoreError/Code/constraint``; under ``MergePolicy/mergeByPropertyObjectTrump`` and
///   ``MergePolicy/overwrite`` it updates that row instead (an upsert: every attribute takes the
///   object's value or its default; relationships keep theirs), and of several objects sharing
///   values the last wins; under ``MergePolicy/mergeByPropertyStoreTrump`` and
///   ``MergePolicy/rollback`` the stored row (or the first object) is kept and the object dropped.
/// - No context learns of the rows: objects already registered keep their values until they are
///   refreshed. Merge ``BatchInsertResult/changes`` (result type ``ResultType/objectIDs``) into a
///   context with ``ManagedObjectContext/mergeChanges(fromContextDidSave:)`` to show them there.
public struct BatchInsertRequest: Sendable {
    /// What ``ManagedObjectContext/execute(_:)-(BatchInsertRequest)`` returns (Core Data's
    /// `NSBatchInsertRequestResultType`).
    public enum ResultType: Sendable, Hashable {
        /// Only whether the request succeeded.
        case statusOnly
        /// The IDs of the inserted (and upserted) objects.
        case objectIDs
        /// The number of inserted (and upserted) objects.
        case count
    }

    /// One object's attribute names and values.
    public typealias Object = [String: any Sendable]

    /// The entity inserted.
    public var entityName: String
    /// The objects, when given as an array.
    public var objects: [Object]?
    /// Fills one object per call and returns `true` when there are no more (that call's object is
    /// not inserted); used when ``objects`` is `nil`.
    public var dictionaryHandler: (@Sendable (inout Object) -> Bool)?
    /// Sets the attributes of one object per call and returns `true` when there are no more
    /// (that call's object is not inserted); used when ``objects`` and ``dictionaryHandler`` are
    /// `nil` (Core Data's `managedObjectHandler`).
    ///
    /// The object is of the entity's class, in no context, with the entity's default values at
    /// each call. Set attributes as on any object (typed properties, the subscript,
    /// `setValue(_:forKey:)`), which convert and check each value as it is set; relationships
    /// cannot be set. The same object is passed to every call: keep nothing of it between calls.
    public var managedObjectHandler: (@Sendable (ManagedObject) -> Bool)?
    /// What the result carries; ``ResultType/statusOnly`` by default.
    public var resultType: ResultType = .statusOnly
    /// The store to insert into: the first writable one holding the entity when `nil`.
    public var affectedStores: [PersistentStore]?

    /// Creates a request inserting `objects`.
    public init(entityName: String, objects: [Object]) {
        self.entityName = entityName
        self.objects = objects
    }

    /// Creates a request whose handler fills one object per call and returns `true` when done.
    public init(entityName: String, dictionaryHandler: @escaping @Sendable (inout Object) -> Bool) {
        self.entityName = entityName
        self.dictionaryHandler = dictionaryHandler
    }

    /// Creates a request whose handler sets the attributes of one object per call and returns
    /// `true` when done (Core Data's `init(entityName:managedObjectHandler:)`); see
    /// ``managedObjectHandler``.
    ///
    /// ```swift
    /// var next = 0
    /// let request = BatchInsertRequest(entityName: "Item", managedObjectHandler: { object in
    ///     guard next < rows.count else { return true }
    ///     object["name"] = rows[next].name
    ///     object["price"] = rows[next].price
    ///     next += 1
    ///     return false
    /// })
    /// ```
    ///
    /// Name the handler's label (or the closure's parameter type): a trailing closure whose
    /// parameter type is left to inference also fits ``init(entityName:dictionaryHandler:)``,
    /// since a dictionary has a subscript too, and Swift picks that one.
    public init(entityName: String, managedObjectHandler: @escaping @Sendable (ManagedObject) -> Bool) {
        self.entityName = entityName
        self.managedObjectHandler = managedObjectHandler
    }
}

/// What a ``BatchInsertRequest`` did (Core Data's `NSBatchInsertResult`).
public struct BatchInsertResult: Sendable {
    /// The request's result type.
    public var resultType: BatchInsertRequest.ResultType
    /// Whether the request succeeded (always `true`: a failure throws).
    public var status: Bool { true }
    /// The number of objects inserted or upserted; `nil` unless the result type is
    /// ``BatchInsertRequest/ResultType/count``.
    public var count: Int?
    /// The IDs of the objects inserted or upserted, in the order of the request; `nil` unless the
    /// result type is ``BatchInsertRequest/ResultType/objectIDs``.
    public var objectIDs: [ManagedObjectID]?
    /// The change as a save would report it (new rows as inserted, upserted rows as updated), for
    /// ``ManagedObjectContext/mergeChanges(fromContextDidSave:)``; empty unless the result type is
    /// ``BatchInsertRequest/ResultType/objectIDs``.
    public var changes: ContextDidSave

    /// Creates a result.
    public init(
        resultType: BatchInsertRequest.ResultType, count: Int? = nil, objectIDs: [ManagedObjectID]? = nil,
        changes: ContextDidSave = ContextDidSave()
    ) {
        self.resultType = resultType
        self.count = count
        self.objectIDs = objectIDs
        self.changes = changes
    }
}

extension ManagedObjectContext {
    /// Runs a batch insert: the rows reach one store in one transaction, bypassing every context.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` for an unknown or abstract entity, a key that
    ///   is not a stored attribute, a value that does not fit its attribute, a missing
    ///   non-optional value (each naming the object's position, the entity and the attribute), or
    ///   no store holding the entity; ``StoreError/Code/constraint`` for a uniqueness conflict
    ///   under ``MergePolicy/error``; ``StoreError/Code/readOnly`` for a read-only store. The store
    ///   is unchanged when it throws.
    @discardableResult
    public func execute(_ request: BatchInsertRequest) throws -> BatchInsertResult {
        let entity = try entity(named: request.entityName)
        let stores = (request.affectedStores ?? coordinator.stores(holding: entity)).filter {
            $0.holds(entityNumber: entity.entityNumber)
        }
        guard let store = stores.first(where: { !$0.isReadOnly }) ?? stores.first else {
            throw StoreError(
                .invalidRequest,
                "no \(request.affectedStores == nil ? "attached" : "affected") store holds entity '\(entity.name)'; add a store whose configuration includes it"
            )
        }
        var builder = try BatchInsertRows(entity: entity, model: coordinator.managedObjectModel)
        let uniqueness = constraints(of: entity).map { (constraintOwner(entity, $0), $0) }
        if let objects = request.objects, uniqueness.isEmpty {
            // Nothing to check across rows: each row goes to the store as it is made, so the
            // batch holds one row at a time (no handler runs while the store is being written).
            var next = 0
            let keys = try coordinator.insert(of: entity, in: store) { values in
                guard next < objects.count else { return false }
                try builder.fill(&values, with: objects[next])
                next += 1
                return true
            }
            switch request.resultType {
            case .statusOnly: return BatchInsertResult(resultType: .statusOnly)
            case .count: return BatchInsertResult(resultType: .count, count: keys?.count ?? 0)
            case .objectIDs:
                let rows = keys.map { $0.map { RowID(entity: entity.entityNumber, primaryKey: $0) } } ?? []
                return Self.result(.objectIDs, rows: rows, updated: [], entity: entity, store: store)
            }
        }
        if let objects = request.objects {
            builder.reserve(objects.count)
            for object in objects { try builder.append(object) }
        } else if let handler = request.dictionaryHandler {
            while true {
                var object: BatchInsertRequest.Object = [:]
                if handler(&object) { break }
                try builder.append(object)
            }
        } else if let handler = request.managedObjectHandler {
            let object = entity.managedObjectClass.init(entity: entity, insertInto: nil)
            object.values = entity.defaultValues
            while true {
                object.clearChangedSlots()
                if handler(object) { break }
                let values = object.values
                object.values = entity.defaultValues  // the row keeps its values alone
                try builder.append(values: values, changed: object.changedSlots)
            }
        }
        let outcome = try coordinator.insert(
            builder.take(), of: entity, constraints: uniqueness, policy: mergePolicy, in: store)
        return Self.result(
            request.resultType, rows: outcome.rows, updated: outcome.updated, entity: entity, store: store)
    }

    /// The result of a batch insert that stored `rows` (inserted, or upserted when in `updated`).
    private static func result(
        _ type: BatchInsertRequest.ResultType, rows: [RowID], updated: [RowID], entity: EntityDescription,
        store: PersistentStore
    ) -> BatchInsertResult {
        switch type {
        case .statusOnly:
            return BatchInsertResult(resultType: .statusOnly)
        case .count:
            return BatchInsertResult(resultType: .count, count: rows.count)
        case .objectIDs:
            // One anchor for every ID of the result.
            let anchor = ObjectIDAnchor(entity: entity, store: store)
            let ids = rows.map { ManagedObjectID(anchor: anchor, rowID: $0) }
            let updated = Set(updated)
            return BatchInsertResult(
                resultType: .objectIDs, objectIDs: ids,
                changes: ContextDidSave(
                    insertedObjectIDs: ids.filter { !updated.contains($0.rowID) },
                    updatedObjectIDs: ids.filter { updated.contains($0.rowID) }))
        }
    }
}
