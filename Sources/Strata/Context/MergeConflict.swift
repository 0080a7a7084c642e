import Foundation

/// An optimistic-locking conflict found by a save (Core Data's `NSMergeConflict`): an object
/// changed in the context whose row changed (or went) in the store since the context read it, or,
/// for a child context, whose state in the parent changed since the child read it.
///
/// Snapshots map property names to stored values (relationships as row references).
///
/// Thread safety: `@unchecked Sendable` so that it can travel inside a ``StoreError``; its
/// ``sourceObject`` belongs to the saving context and must be used only on that context's
/// executor, as Core Data's conflicts must.
public struct MergeConflict: @unchecked Sendable, CustomStringConvertible {
    /// The object in the saving context.
    public let sourceObject: ManagedObject
    /// Its ID.
    public let objectID: ManagedObjectID
    /// The properties the context changed.
    public let changedKeys: [String]
    /// The values the context read (its snapshot), before its changes.
    public let cachedSnapshot: [String: StoreValue]
    /// The values now in the store (or the parent); `nil` when the row is gone.
    public let persistedSnapshot: [String: StoreValue]?
    /// The context's values, with its changes.
    public let objectSnapshot: [String: StoreValue]
    /// The row version the context read.
    public let oldVersionNumber: RowVersion
    /// The row version now in the store (0 when the row is gone or for a parent context).
    public let newVersionNumber: RowVersion

    public var description: String {
        let state = persistedSnapshot == nil ? "deleted" : "version \(oldVersionNumber) -> \(newVersionNumber)"
        return "\(objectID) (\(state)); changed here: \(changedKeys.joined(separator: ", "))"
    }
}

/// A uniqueness-constraint conflict found by a save (Core Data's `NSConstraintConflict`): objects
/// whose values for a constraint's properties equal those of another unsaved object or of a row
/// already in the store.
///
/// Thread safety: as ``MergeConflict``; the objects belong to the saving context.
public struct ConstraintConflict: @unchecked Sendable, CustomStringConvertible {
    /// The constraint's property names.
    public let constraint: [String]
    /// The constraint's values.
    public let constraintValues: [String: StoreValue]
    /// The unsaved (inserted or changed) objects of the context that share the values, in the order
    /// they were inserted or changed.
    public let conflictingObjects: [ManagedObject]
    /// The object (registered, or a fault) of the row already in the store with these values, if any.
    public let databaseObject: ManagedObject?
    /// The stored values of that row.
    public let databaseSnapshot: [String: StoreValue]?

    public var description: String {
        let values = constraint.map { constraintValues[$0]?.displayText ?? "nil" }.joined(separator: ", ")
        let stored = databaseObject.map { " and stored \($0.objectID)" } ?? ""
        return
            "(\(constraint.joined(separator: ", "))) = (\(values)): \(conflictingObjects.count) unsaved object\(conflictingObjects.count == 1 ? "" : "s")\(stored)"
    }
}

extension ManagedObject {
    /// The object's values by property name, for conflict snapshots (transients left out).
    func namedValues(_ values: [StoreValue]) -> [String: StoreValue] {
        var result: [String: StoreValue] = [:]
        for (slot, property) in entity.properties.enumerated() where slot < values.count && !property.isTransient {
            result[property.name] = values[slot]
        }
        return result
    }
}
