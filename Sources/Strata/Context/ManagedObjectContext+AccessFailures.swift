import Foundation

// Property access cannot throw (Core Data's accessors do not), but loading a fault or a to-many
// relationship reads the store, and a store can fail. Such a failure never turns into "nothing
// there": the object stays a fault (or the relationship unfetched) so the next access tries again,
// the access returns `nil` (or no objects), and the context keeps the error. Its next `save()`
// throws it before writing anything, so nothing is saved on the strength of a read that failed.
// Throwing forms exist for callers who want the error at once: `ManagedObject.fulfillFault()`,
// `storeValue(forKey:)`, `setConvertedValue(_:forKey:)`, `existingObject(with:)`.

extension ManagedObjectContext {
    /// The first store error that a property access of this context could not throw (a fault
    /// that did not load, a relationship whose members did not load, a change a non-throwing
    /// setter could not make), since the last save, ``rollback()`` or ``reset()``; `nil` when
    /// there was none.
    ///
    /// The next ``save()`` throws it (before writing anything) and forgets it, so a retry can
    /// succeed once the objects involved are checked.
    public var accessFailure: StoreError? {
        checkConfinement("accessFailure")
        return accessFailures.map { Self.storeError($0.first) }
    }

    /// Keeps `error`, met by an access that cannot throw it.
    func noteAccessFailure(_ error: any Error) {
        if let kept = accessFailures {
            accessFailures = (kept.first, kept.count + 1)
        } else {
            accessFailures = (error, 1)
        }
    }

    /// Throws the kept access failure, if any, and forgets it.
    func throwAccessFailure() throws {
        guard let (first, count) = accessFailures else { return }
        accessFailures = nil
        let error = Self.storeError(first)
        let others = count > 1 ? " (and \(count - 1) more since)" : ""
        throw StoreError(
            error.code,
            "nothing was saved: an earlier property access failed\(others): \(error.message). That access returned no value or made no change; check the objects involved and save again",
            store: error.store, objectIDs: error.objectIDs, underlying: first)
    }

    private static func storeError(_ error: any Error) -> StoreError {
        error as? StoreError ?? StoreError(.io, "\(error)", underlying: error)
    }
}
