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
        var builder = try BatchInsertRows(entity: entity)
        if let objects = request.objects {
            builder.reserve(objects.count)
            for object in objects { try builder.append(object) }
        } else if let handler = request.dictionaryHandler {
            while true {
                var object: BatchInsertRequest.Object = [:]
                if handler(&object) { break }
                try builder.append(object)
            }
        }
        let outcome = try coordinator.insert(
            builder.rows, of: entity, constraints: constraints(of: entity).map { (constraintOwner(entity, $0), $0) },
            policy: mergePolicy, in: store)
        switch request.resultType {
        case .statusOnly:
            return BatchInsertResult(resultType: .statusOnly)
        case .count:
            return BatchInsertResult(resultType: .count, count: outcome.rows.count)
        case .objectIDs:
            let ids = outcome.rows.map { ManagedObjectID(entity: entity, rowID: $0, store: store) }
            let updated = Set(outcome.updated)
            return BatchInsertResult(
                resultType: .objectIDs, objectIDs: ids,
                changes: ContextDidSave(
                    insertedObjectIDs: ids.filter { !updated.contains($0.rowID) },
                    updatedObjectIDs: ids.filter { updated.contains($0.rowID) }))
        }
    }
}

/// The rows of a batch insert, checked against the entity as they are added.
struct BatchInsertRows {
    let entity: EntityDescription
    private(set) var rows: [[StoreValue]] = []
    /// Non-optional attributes, checked on every row.
    private let required: [(slot: Int, name: String)]
    /// Each slot's attribute type when it is a stored attribute a batch insert may set, else `nil`:
    /// looked up once, so the common value (already of the attribute's Swift type) is stored
    /// without copying the attribute's description.
    private let settableTypes: [AttributeType?]

    init(entity: EntityDescription) throws {
        if entity.isAbstract {
            throw StoreError(
                .invalidRequest,
                "a batch insert cannot insert objects of '\(entity.name)', which is abstract; insert one of its subentities"
            )
        }
        self.entity = entity
        var required: [(Int, String)] = []
        for (slot, property) in entity.properties.enumerated() where !property.isTransient {
            switch property {
            case .attribute(let attribute) where !attribute.isOptional: required.append((slot, attribute.name))
            case .relationship(let relationship) where !relationship.isOptional && !relationship.isToMany:
                throw StoreError(
                    .invalidRequest,
                    "a batch insert cannot set relationships, and '\(entity.name).\(relationship.name)' is required; insert these objects through a context"
                )
            default: break
            }
        }
        self.required = required
        settableTypes = entity.properties.map { property in
            property.attribute.flatMap { $0.isTransient ? nil : $0.type }
        }
    }

    mutating func reserve(_ count: Int) { rows.reserveCapacity(count) }

    /// Adds one object's row: defaults, then the object's values converted to their attributes.
    mutating func append(_ object: BatchInsertRequest.Object) throws {
        var values = entity.defaultValues
        for (key, value) in object {
            guard let slot = entity.index(ofProperty: key) else {
                throw StoreError(
                    .invalidRequest,
                    "object \(rows.count) of the batch insert names '\(key)', which '\(entity.name)' does not have; use the model's attribute names"
                )
            }
            guard let type = settableTypes[slot] else {
                throw StoreError(
                    .invalidRequest,
                    "object \(rows.count) of the batch insert sets '\(entity.name).\(key)'; a batch insert sets stored attributes only"
                )
            }
            if let exact = StoreValueCoercion.exactMatch(value, type) {
                values[slot] = exact
                continue
            }
            // A stored attribute: settableTypes has a type for it.
            let attribute = entity.properties[slot].attribute!
            do {
                values[slot] = try StoreValueCoercion.coerce(any: value, to: attribute, entity: entity.name)
            } catch let error as StoreError {
                throw StoreError(error.code, "object \(rows.count) of the batch insert: \(error.message)")
            }
        }
        for (slot, name) in required where values[slot].isNull {
            throw StoreError(
                .invalidRequest,
                "object \(rows.count) of the batch insert leaves the non-optional attribute '\(entity.name).\(name)' nil and it has no default; give it a value"
            )
        }
        for slot in entity.transientSlots { values[slot] = .null }
        rows.append(values)
    }
}
