import Foundation

/// Sets attributes of every matching object in the stores at once, without loading objects (Core
/// Data's `NSBatchUpdateRequest`).
///
/// ```swift
/// var raise = BatchUpdateRequest(entityName: "Item", predicate: try FetchPredicate(format: "age >= 65"))
/// raise.propertiesToUpdate = ["score": try FetchExpression(format: "score + 1"), "flagged": .constant(.bool(true))]
/// let changed = try context.execute(raise)   // the IDs of the updated objects
/// ```
///
/// Each store changes its rows in one transaction; values are the expressions evaluated on each
/// row before the change, converted to the attribute's type. Type, optionality and unique
/// constraints are enforced; other validation rules are not (as in Core Data). Unsaved changes of
/// contexts are not seen; the executing context refreshes its registered objects of the changed
/// rows, other contexts keep their values until they refresh (and a save of a stale object then
/// fails with ``StoreError/Code/conflict``, as after any other save).
public struct BatchUpdateRequest: Sendable {
    /// The entity updated.
    public var entityName: String
    /// Which objects change; `nil` for all.
    public var predicate: FetchPredicate?
    /// Attribute names to new values: constants (`.constant(.integer(3))`) or expressions of the
    /// object's own attributes (`score * 2`) and of its relationships (`owner.rate`).
    public var propertiesToUpdate: [String: FetchExpression]
    /// Whether objects of subentities change too.
    public var includesSubentities: Bool = true
    /// The stores to change; every store holding the entity when `nil`.
    public var affectedStores: [PersistentStore]?

    /// Creates a request.
    public init(
        entityName: String, predicate: FetchPredicate? = nil, propertiesToUpdate: [String: FetchExpression] = [:]
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate
    }
}

/// Deletes every matching object from the stores at once (Core Data's `NSBatchDeleteRequest`).
///
/// For an entity no relationship touches, each store removes the rows itself in one transaction,
/// without loading objects. When relationships are involved the objects are fetched and deleted
/// through a context of their own and saved, so delete rules (nullify, cascade, deny) run exactly
/// as in ``ManagedObjectContext/delete(_:)``. Unsaved changes are not seen; the executing context
/// turns its registered objects of deleted rows into faults that no longer fulfil.
public struct BatchDeleteRequest: Sendable {
    /// The entity deleted.
    public var entityName: String
    /// Which objects go; `nil` for all.
    public var predicate: FetchPredicate?
    /// Whether objects of subentities go too.
    public var includesSubentities: Bool = true
    /// The stores to change; every store holding the entity when `nil`.
    public var affectedStores: [PersistentStore]?

    /// Creates a request.
    public init(entityName: String, predicate: FetchPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }
}

extension ManagedObjectContext {
    /// Runs a batch update and returns the IDs of the objects it changed.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` for an unknown entity or property, a property
    ///   that is not a stored attribute, or a value that does not fit; ``FetchPredicateError`` for a
    ///   predicate that does not fit the entity; ``StoreError/Code/constraint`` for a unique
    ///   constraint the new values break. A store that fails is left unchanged.
    @discardableResult
    public func execute(_ request: BatchUpdateRequest) throws -> [ManagedObjectID] {
        let entity = try entity(named: request.entityName)
        let model = coordinator.managedObjectModel
        try request.predicate?.validate(for: entity, in: model)
        var assignments: [StoreBatchRequest.Assignment] = []
        for (name, expression) in request.propertiesToUpdate.sorted(by: { $0.key < $1.key }) {
            guard let slot = entity.index(ofProperty: name) else {
                throw StoreError(
                    .invalidRequest, "propertiesToUpdate names '\(name)', which '\(entity.name)' does not have")
            }
            assignments.append(StoreBatchRequest.Assignment(slot: slot, expression: expression))
        }
        var storeRequest = StoreBatchRequest(
            model: model, entity: entity, predicate: request.predicate, action: .update(assignments))
        storeRequest.includesSubentities = request.includesSubentities
        let ids = try coordinator.execute(
            storeRequest, in: request.affectedStores ?? coordinator.stores(holding: entity))
        for id in ids { if let object = registeredObject(for: id) { refresh(object, mergeChanges: true) } }
        return ids
    }

    /// Runs a batch delete and returns the IDs of the objects it deleted.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` for an unknown entity; ``FetchPredicateError``
    ///   for a predicate that does not fit it; what ``save()`` throws when relationships are
    ///   involved (a deny rule, a conflict). A store that fails is left unchanged.
    @discardableResult
    public func execute(_ request: BatchDeleteRequest) throws -> [ManagedObjectID] {
        let entity = try entity(named: request.entityName)
        let model = coordinator.managedObjectModel
        try request.predicate?.validate(for: entity, in: model)
        var storeRequest = StoreBatchRequest(
            model: model, entity: entity, predicate: request.predicate, action: .delete)
        storeRequest.includesSubentities = request.includesSubentities
        let stores = request.affectedStores ?? coordinator.stores(holding: entity)
        let ids: [ManagedObjectID]
        if storeRequest.touchesRelationships {
            ids = try deleteThroughObjects(request, stores: stores)
        } else {
            ids = try coordinator.execute(storeRequest, in: stores)
        }
        for id in ids { if let object = registeredObject(for: id) { refresh(object, mergeChanges: false) } }
        return ids
    }

    /// Fetches the objects in a context of their own, deletes them (delete rules run) and saves.
    private func deleteThroughObjects(_ request: BatchDeleteRequest, stores: [PersistentStore]) throws
        -> [ManagedObjectID]
    {
        let worker = ManagedObjectContext(coordinator: coordinator)
        var fetch = FetchRequest(entityName: request.entityName, predicate: request.predicate)
        fetch.includesSubentities = request.includesSubentities
        fetch.affectedStores = stores
        fetch.includesPendingChanges = false
        let objects = try worker.fetch(fetch)
        for object in objects { worker.delete(object) }
        try worker.save()
        return objects.map { $0.objectID }
    }
}
