import Foundation

extension StoreDriver {
    /// By default the rows are collected, their keys reserved, and they are applied as one change
    /// set.
    public func insertRows(of entity: Int32, _ fill: (inout [StoreValue]) throws -> Bool) throws -> ClosedRange<Int64>?
    {
        var rows: [[StoreValue]] = []
        var values: [StoreValue] = []
        while try fill(&values) { rows.append(values) }
        guard !rows.isEmpty else { return nil }
        let keys: ClosedRange<Int64>
        do {
            keys = try allocatePrimaryKeys(forEntity: entity, count: rows.count)
        } catch let error as StoreError where error.code == .notDurable {
            // Keys whose reservation may not survive a crash could be handed out twice: refuse them.
            throw StoreError(
                .io,
                "the store could not make its key reservation durable, so no keys were handed out and nothing was saved: \(error.message)",
                store: error.store, underlying: error)
        }
        // Exactly `rows.count` positive keys below Int64.max, or the key counter is damaged; nothing
        // is stored then.
        let length = keys.upperBound.subtractingReportingOverflow(keys.lowerBound)
        guard keys.lowerBound > 0, keys.upperBound < Int64.max, !length.overflow,
            length.partialValue == Int64(rows.count) - 1
        else {
            throw StoreError(
                .corrupt,
                "the store's key counter is damaged: asked for \(rows.count) keys, it handed out \(keys.lowerBound)...\(keys.upperBound); restore the store from a backup"
            )
        }
        var batch = ChangeBatch()
        batch.inserts.reserveCapacity(rows.count)
        var key = keys.lowerBound
        for values in rows {
            batch.inserts.append(RowSnapshot(id: RowID(entity: entity, primaryKey: key), version: 1, values: values))
            key += 1
        }
        rows = []
        _ = try apply(batch)
        return keys
    }
}
