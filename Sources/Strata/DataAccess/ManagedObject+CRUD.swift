import Foundation

// Typed create/read/delete helpers on ManagedObject subclasses, for the read/write layer and for
// code that wants `try Book.all(in: context)` instead of fetch requests. They live on a protocol
// every ManagedObject conforms to, because a class's own methods cannot return `[Self]`.

/// The typed create/read/delete helpers every ``ManagedObject`` subclass gets:
/// `try Book.create(in:)`, `all(in:)`, `all(matching:in:)`, `first(in:)`, `count(in:)`,
/// `deleteAll(in:)`, `book.delete()`, `book.in(otherContext)`.
public protocol ManagedObjectAccessors: ManagedObject {}

extension ManagedObject: ManagedObjectAccessors {}

extension ManagedObject {
    /// The entity whose class is `Self` in `context`'s model.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` when no entity uses the class (register it with
    ///   ``ManagedObjectModel/registering(_:)``).
    static func entity(in context: ManagedObjectContext) throws -> EntityDescription {
        guard
            let entity = context.coordinator.managedObjectModel.entities.first(where: { $0.managedObjectClass == self })
        else {
            throw StoreError(
                .invalidRequest,
                "no entity of the model uses class \(self); register it with ManagedObjectModel.registering(_:)")
        }
        return entity
    }

    /// Deletes the object from its context (saved with the context).
    public func delete() {
        managedObjectContext?.delete(self)
    }
}

extension ManagedObjectAccessors {
    /// Inserts a new object of this class into `context`.
    public static func create(in context: ManagedObjectContext) throws -> Self {
        try context.insert(self)
    }

    /// Every object of this class's entity (subentities included) in `context`, unsaved changes included.
    public static func all(in context: ManagedObjectContext) throws -> [Self] {
        try context.fetch(FetchRequest(entityName: try entity(in: context).name), as: self)
    }

    /// The objects of this class's entity matching `predicate`, in `sortKeys` order.
    public static func all(
        matching predicate: FetchPredicate, sortedBy sortKeys: [SortKey] = [], in context: ManagedObjectContext
    ) throws -> [Self] {
        try context.fetch(
            FetchRequest(entityName: try entity(in: context).name, predicate: predicate, sortKeys: sortKeys), as: self)
    }

    /// The first object of this class's entity (matching `predicate`, in `sortKeys` order), or `nil`.
    public static func first(
        matching predicate: FetchPredicate? = nil, sortedBy sortKeys: [SortKey] = [], in context: ManagedObjectContext
    ) throws -> Self? {
        var request = FetchRequest(entityName: try entity(in: context).name, predicate: predicate, sortKeys: sortKeys)
        request.fetchLimit = 1
        return try context.fetch(request, as: self).first
    }

    /// How many objects of this class's entity (matching `predicate`) there are.
    public static func count(matching predicate: FetchPredicate? = nil, in context: ManagedObjectContext) throws -> Int
    {
        try context.count(for: FetchRequest(entityName: try entity(in: context).name, predicate: predicate))
    }

    /// Deletes every object of this class's entity (matching `predicate`) in `context`; the
    /// deletions are saved with the context.
    public static func deleteAll(matching predicate: FetchPredicate? = nil, in context: ManagedObjectContext) throws {
        let request = FetchRequest(entityName: try entity(in: context).name, predicate: predicate)
        for object in try context.fetch(request) { context.delete(object) }
    }

    /// The same object in another context (by its ID): `try book.in(backgroundContext)`.
    ///
    /// - Throws: ``StoreError/Code/notFound`` when `context` cannot reach the object (an unsaved
    ///   object of another context, or a deleted row).
    public func `in`(_ context: ManagedObjectContext) throws -> Self {
        let object = try context.existingObject(with: objectID)
        guard let typed = object as? Self else {
            throw StoreError(
                .invalidRequest, "\(objectID) is a \(type(of: object)) in that context, not a \(Self.self)",
                objectIDs: [objectID])
        }
        return typed
    }
}
