import Foundation

/// How a context resolves conflicts when it saves (Core Data's `NSMergePolicy`): optimistic-locking
/// conflicts (the store, or the parent context, changed an object since the context read it) and
/// uniqueness-constraint conflicts.
///
/// Built in: ``error`` (the default: the save fails and the error lists the conflicts),
/// ``mergeByPropertyStoreTrump``, ``mergeByPropertyObjectTrump``, ``overwrite`` and ``rollback``.
/// For a policy of your own, subclass and override ``resolve(mergeConflicts:)`` and
/// ``resolve(constraintConflicts:)``: set each conflicting object's values to what should be saved
/// (or call `super` for a built-in behaviour), or throw to fail the save. After `resolve` returns,
/// the context saves each conflicting object's values against the row as it is now: what differs
/// from the stored row is written.
///
/// Thread safety: `Sendable`; `resolve` runs on the saving context's executor.
open class MergePolicy: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: the built-in policies hold only their immutable kind; subclasses must
    // keep their own state thread-safe (resolve runs on the executor of whichever context saves).

    /// The built-in behaviours (Core Data's `NSMergePolicyType`).
    public enum Kind: Sendable, Hashable {
        /// Fail the save on any conflict (`NSErrorMergePolicy`).
        case error
        /// Per property, changes in the store win over the context's (`NSMergeByPropertyStoreTrumpMergePolicy`).
        case mergeByPropertyStoreTrump
        /// Per property, the context's changes win; other properties take the store's values
        /// (`NSMergeByPropertyObjectTrumpMergePolicy`). A new object that matches a stored row on a
        /// uniqueness constraint updates that row (an upsert).
        case mergeByPropertyObjectTrump
        /// The context's whole object replaces the store's (`NSOverwriteMergePolicy`).
        case overwrite
        /// The context's changes to conflicting objects are dropped (`NSRollbackMergePolicy`).
        case rollback
    }

    /// The behaviour of this policy's default `resolve` methods.
    public let kind: Kind

    /// Creates a policy with a built-in behaviour.
    public init(kind: Kind) { self.kind = kind }

    /// Fail the save on any conflict; the default.
    public static let error = MergePolicy(kind: .error)
    /// Per property, changes in the store win.
    public static let mergeByPropertyStoreTrump = MergePolicy(kind: .mergeByPropertyStoreTrump)
    /// Per property, the context's changes win; new objects that match a stored row update it.
    public static let mergeByPropertyObjectTrump = MergePolicy(kind: .mergeByPropertyObjectTrump)
    /// The context's objects replace the store's.
    public static let overwrite = MergePolicy(kind: .overwrite)
    /// The context's changes to conflicting objects are dropped.
    public static let rollback = MergePolicy(kind: .rollback)

    public var description: String { "MergePolicy(\(kind))" }

    /// Resolves optimistic-locking conflicts by setting each ``MergeConflict/sourceObject``'s
    /// values to what should be saved, or throws to fail the save.
    ///
    /// The default follows ``kind``. Under ``Kind/error`` it throws ``StoreError/Code/conflict``
    /// carrying the conflicts (``StoreError/mergeConflicts``). A row deleted in the store cannot be
    /// updated: under every other kind the deletion wins and the object becomes inaccessible.
    open func resolve(mergeConflicts conflicts: [MergeConflict]) throws {
        guard kind != .error else {
            throw StoreError(
                .conflict,
                "\(conflicts.count) object\(conflicts.count == 1 ? "" : "s") changed elsewhere since this context read \(conflicts.count == 1 ? "it" : "them"): \(conflicts.map(\.description).joined(separator: "; ")). Refresh them (refresh(_:mergeChanges:)) and save again, or set a merge policy",
                store: conflicts.first?.objectID.persistentStore?.displayName, objectIDs: conflicts.map { $0.objectID },
                mergeConflicts: conflicts)
        }
        for conflict in conflicts {
            let object = conflict.sourceObject
            guard let persisted = conflict.persistedSnapshot else { continue }
            for (slot, property) in object.entity.properties.enumerated() where !property.isTransient {
                guard let stored = persisted[property.name] else { continue }
                let changedHere = conflict.changedKeys.contains(property.name)
                let changedThere = stored != (conflict.cachedSnapshot[property.name] ?? .null)
                switch kind {
                case .mergeByPropertyStoreTrump:
                    if changedThere || !changedHere { object.values[slot] = stored }
                case .mergeByPropertyObjectTrump:
                    if !changedHere { object.values[slot] = stored }
                case .rollback:
                    object.values[slot] = stored
                case .overwrite, .error:
                    break
                }
            }
        }
    }

    /// Resolves uniqueness-constraint conflicts, or throws to fail the save.
    ///
    /// The default follows ``kind``. Under ``Kind/error`` it throws a ``ObjectValidationError`` listing
    /// each clash (``ObjectValidationError/Failure/Code/uniqueConstraint``) and carrying the conflicts.
    /// Under ``Kind/mergeByPropertyObjectTrump`` and ``Kind/overwrite`` the newest unsaved object
    /// wins: when a stored row has the values, the object takes over that row (an update instead of
    /// an insert; object-trump keeps the row's values for properties the object never set); the
    /// other unsaved objects leave the context unsaved. Under ``Kind/mergeByPropertyStoreTrump`` and
    /// ``Kind/rollback`` the stored row (or the first unsaved object) wins and the others' changes
    /// are dropped: a new object takes over the stored row with the row's values.
    open func resolve(constraintConflicts conflicts: [ConstraintConflict]) throws {
        // The context applies the built-in resolution (ManagedObjectContext+Constraints), which needs
        // its tables; a subclass that overrides this and does not call super leaves the objects as
        // it set them, and the context saves them as they are.
        if kind == .error {
            let context = conflicts.first?.conflictingObjects.first?.managedObjectContext
            throw ObjectValidationError(
                failures: context?.uniquenessFailures(conflicts) ?? [], constraintConflicts: conflicts)
        }
        for conflict in conflicts {
            try conflict.conflictingObjects.first?.managedObjectContext?.resolveBuiltIn(conflict, kind: kind)
        }
    }
}
