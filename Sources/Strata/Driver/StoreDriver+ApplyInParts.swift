import Foundation

extension StoreDriver {
    /// By default the change sets are folded into one (``ChangeSetFold``) and applied once.
    public func apply(inParts next: (_ first: Bool) throws -> ChangeBatch?) throws -> CommitResult {
        var fold = ChangeSetFold()
        _ = try ChangeBatch.forEachPart(of: next) { part in
            try fold.add(part)
            return CommitResult(versions: [:])
        }
        let whole = fold.result()
        if whole.isEmpty { return CommitResult(versions: [:]) }
        return try apply(whole)
    }
}

extension ChangeBatch {
    /// Calls `write` with each change set `next` hands out (``StoreDriver/apply(inParts:)``):
    /// `next(true)` first, then `next(false)` until it returns `nil`, skipping empty ones; returns
    /// the versions `write` reported, a later one's for a row reported twice. A driver calls it
    /// inside its transaction, and again from the start when it begins the transaction anew.
    public static func forEachPart(
        of next: (_ first: Bool) throws -> ChangeBatch?, _ write: (ChangeBatch) throws -> CommitResult
    ) throws -> CommitResult {
        var versions: [RowID: RowVersion] = [:]
        var first = true
        while let part = try next(first) {
            first = false
            if part.isEmpty { continue }
            versions.merge(try write(part).versions) { _, later in later }
        }
        return CommitResult(versions: versions)
    }
}

/// Several change sets folded into one that leaves a store as applying them in turn would, for
/// drivers that apply one change set at a time (``StoreDriver/apply(inParts:)``'s default).
///
/// A row inserted and then updated is inserted with its last values; inserted and then deleted,
/// it is left out; updated several times, it is updated once with the union of the changed slots,
/// against the version the first update expected; updated and then deleted, it is deleted against
/// that version. A later change set that expects a version the row would not have by then (an
/// update of a row inserted earlier expects 1, a second update expects the first's plus one) is a
/// ``StoreError/Code/conflict``, as it would be applied in turn. Anything else (a change of a row
/// deleted earlier, an insert of a key already inserted) is left for the driver's ``apply(_:)``
/// to refuse.
public struct ChangeSetFold: Sendable {
    private var inserts: [RowSnapshot?] = []
    private var updates: [RowUpdate?] = []
    private var deletes: [RowDelete] = []
    private var metadata: StoreMetadata?
    /// Position in `inserts` of each row inserted and still there, with the version it has by now.
    private var inserted: [RowID: (index: Int, version: RowVersion)] = [:]
    /// Position in `updates` of each stored row updated so far, with the version it has by now.
    private var updated: [RowID: (index: Int, version: RowVersion)] = [:]

    /// Creates an empty fold.
    public init() {}

    /// Adds the next change set: its deletes, then its inserts, then its updates, as
    /// ``StoreDriver/apply(_:)`` applies them.
    ///
    /// - Throws: ``StoreError/Code/conflict`` for a change that expects a version the row would
    ///   not have after the change sets before it.
    public mutating func add(_ part: ChangeBatch) throws {
        for delete in part.deletes {
            if let earlier = inserted.removeValue(forKey: delete.id) {
                try expect(delete.expectedVersion, earlier.version, delete.id)
                inserts[earlier.index] = nil
            } else if let earlier = updated.removeValue(forKey: delete.id) {
                try expect(delete.expectedVersion, earlier.version, delete.id)
                // Set when the row was first updated.
                deletes.append(RowDelete(id: delete.id, expectedVersion: updates[earlier.index]!.expectedVersion))
                updates[earlier.index] = nil
            } else {
                deletes.append(delete)
            }
        }
        for insert in part.inserts {
            inserted[insert.id] = (inserts.count, 1)
            inserts.append(insert)
        }
        for update in part.updates {
            if let earlier = inserted[update.id] {
                try expect(update.expectedVersion, earlier.version, update.id)
                // Positions in `inserted` hold rows still there.
                var row = inserts[earlier.index]!
                guard update.values.count == row.values.count else {
                    throw StoreError(
                        .invalidRequest,
                        "the update of row \(update.id) has \(update.values.count) values, its insert \(row.values.count)"
                    )
                }
                for slot in update.changedSlots where slot >= 0 && slot < row.values.count {
                    row.values[slot] = update.values[slot]
                }
                inserts[earlier.index] = row
                inserted[update.id] = (earlier.index, earlier.version + 1)
            } else if let earlier = updated[update.id] {
                try expect(update.expectedVersion, earlier.version, update.id)
                // Positions in `updated` hold updates still there.
                var merged = updates[earlier.index]!
                guard update.values.count == merged.values.count else {
                    throw StoreError(
                        .invalidRequest,
                        "the updates of row \(update.id) have \(merged.values.count) and \(update.values.count) values")
                }
                for slot in update.changedSlots where slot >= 0 && slot < merged.values.count {
                    merged.values[slot] = update.values[slot]
                }
                merged.changedSlots = Array(Set(merged.changedSlots).union(update.changedSlots)).sorted()
                updates[earlier.index] = merged
                updated[update.id] = (earlier.index, earlier.version + 1)
            } else {
                updated[update.id] = (updates.count, update.expectedVersion + 1)
                updates.append(update)
            }
        }
        if let new = part.metadata { metadata = new }
    }

    /// The folded change set, immediate.
    public func result() -> ChangeBatch {
        var batch = ChangeBatch()
        batch.inserts = inserts.compactMap { $0 }
        batch.updates = updates.compactMap { $0 }
        batch.deletes = deletes
        batch.metadata = metadata
        batch.durability = .immediate
        return batch
    }

    private func expect(_ expected: RowVersion, _ actual: RowVersion, _ id: RowID) throws {
        guard expected != actual else { return }
        throw StoreError(
            .conflict,
            "row \(id) is changed by a change set expecting version \(expected), but the change sets before it leave it at version \(actual); nothing was applied"
        )
    }
}
