import Foundation
import Strata

/// A store identity and one-value rows of entity 1, for the row cache's tests.
protocol RowCacheFixture {
    /// Kept alive by the test, so no other object takes its address (and its identity).
    var anchor: NSObject { get }
}

extension RowCacheFixture {
    var store: ObjectIdentifier { ObjectIdentifier(anchor) }

    func row(_ key: Int64, version: RowVersion = 1) -> RowSnapshot {
        RowSnapshot(id: RowID(entity: 1, primaryKey: key), version: version, values: [.integer(key)])
    }

    func key(_ pk: Int64) -> RowCache.Key { RowCache.Key(store: store, row: RowID(entity: 1, primaryKey: pk)) }
}
