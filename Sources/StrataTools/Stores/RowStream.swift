import Foundation
import Strata

/// Reads the rows of one entity straight from a driver, in batches, with every to-many slot
/// filled (``StoreDriver/relatedRows(_:)`` for slots the driver left ``StoreValue/unfetched``).
///
/// Memory: one batch of rows for ``forEachBatch(of:_:)`` on drivers that walk their keys
/// (SQLite, LMDB); drivers using the default ``StoreDriver/scanRows(_:_:)`` hold the
/// IDs of one entity (16 bytes a row) too. ``ids(of:)`` returns every ID of an entity.
public struct RowStream {
    /// The driver read.
    public let driver: any StoreDriver
    /// Rows per batch.
    public var batchSize: Int

    /// Creates a stream over `driver`.
    public init(driver: any StoreDriver, batchSize: Int = 1_000) {
        self.driver = driver
        self.batchSize = max(1, batchSize)
    }

    /// The IDs of the rows of exactly `entity` (not its subentities), ascending.
    public func ids(of entity: EntityDescription) throws -> [RowID] {
        var fetch = StoreFetch(entity: entity)
        fetch.includesSubentities = false
        fetch.resultKind = .ids
        let result = try driver.fetch(fetch)
        let ids = result.ids ?? result.rows.map(\.id)
        return ids.filter { $0.entity == entity.entityNumber }.sorted()
    }

    /// The number of rows of exactly `entity`.
    public func count(of entity: EntityDescription) throws -> Int {
        var fetch = StoreFetch(entity: entity)
        fetch.includesSubentities = false
        fetch.resultKind = .count
        let result = try driver.fetch(fetch)
        if let count = result.count, result.appliedPredicate { return count }
        return try ids(of: entity).count
    }

    /// The rows of `ids` (all of `entity`), in the order given, to-many slots filled.
    public func rows(_ ids: [RowID], of entity: EntityDescription) throws -> [RowSnapshot] {
        var rows = try driver.rows(for: ids)
        let order = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        rows.sort { (order[$0.id] ?? 0) < (order[$1.id] ?? 0) }
        for (slot, property) in entity.properties.enumerated() {
            guard let relationship = property.relationship, relationship.isToMany else { continue }
            let unfetched = rows.indices.filter { rows[$0].values[slot] == .unfetched }
            guard !unfetched.isEmpty else { continue }
            let related = try driver.relatedRows(
                RelatedRowsRequest(entity: entity, slot: slot, sources: unfetched.map { rows[$0].id }))
            for index in unfetched { rows[index].values[slot] = .references(related[rows[index].id] ?? []) }
        }
        return rows
    }

    /// Calls `body` with each batch of rows of exactly `entity`, in primary-key order, to-many
    /// slots filled (the driver's ``StoreDriver/scanRows(_:_:)``).
    public func forEachBatch(of entity: EntityDescription, _ body: ([RowSnapshot]) throws -> Void) throws {
        try driver.scanRows(RowScan(entity: entity, batchSize: batchSize), body)
    }
}
