import Foundation
import Strata
import StrataTools

/// A Strata store of N `Item` rows for the sections that measure a store already full (memory at
/// rest, parallel readers), and the object reads they share.
///
/// Thread safety: `Sendable` (the coordinator and store are; the rest is constant).
public struct SectionStore: Sendable {
    /// The driver.
    public let kind: KnownDriver
    /// The coordinator, with only this store.
    public let coordinator: PersistentStoreCoordinator
    /// The open store.
    public let store: PersistentStore
    /// The rows it holds.
    public let rows: Int
    /// What fetching every `Item` and reading every attribute must give (``BenchDataset/expectedFetchAll``).
    public let expected: BenchOutcome
    /// Where it lives (a file, a server's schema, or `nil` in memory).
    public let location: URL?

    /// Builds a store of `rows` items with `kind`'s driver (untimed; 10,000 inserts per save, each
    /// in a context of its own) under `directory`, and opens it as a reader finds it: a file or
    /// server store is closed and opened again by a new coordinator, so nothing the building
    /// contexts cached is left; the in-memory store, which cannot be reopened, keeps its
    /// coordinator with the store's rows removed from the row cache.
    public static func build(_ kind: KnownDriver, rows: Int, in directory: URL) throws -> SectionStore {
        guard let type = kind.storeType, kind.unavailableReason == nil else {
            throw BenchError("the \(kind.driverName) driver is not available: \(kind.unavailableReason ?? "")")
        }
        let model = try BenchModel.make()
        let location = kind.location(in: directory)
        var expected = BenchOutcome(rows: 0)
        var coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        var store = try coordinator.addPersistentStore(type: type, at: location, options: kind.storeOptions)
        do {
            let dataset = BenchDataset(rows: rows, parents: 0)
            expected = dataset.expectedFetchAll
            var start = 0
            while start < dataset.rows.count {
                let end = min(start + 10_000, dataset.rows.count)
                let context = ManagedObjectContext(coordinator: coordinator)
                for row in dataset.rows[start..<end] {
                    let item = try context.insertNewObject(forEntityName: "Item")
                    item["id"] = row.id
                    item["name"] = row.name
                    item["email"] = row.email
                    item["age"] = row.age
                    item["score"] = row.score
                    item["created"] = row.created
                }
                try context.save()
                start = end
            }
        }
        if kind == .memory {
            coordinator.rowCache.removeAll(in: ObjectIdentifier(store))
        } else {
            try coordinator.remove(store)
            coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            store = try coordinator.addPersistentStore(type: type, at: location, options: kind.storeOptions)
        }
        return SectionStore(
            kind: kind, coordinator: coordinator, store: store, rows: rows, expected: expected, location: location)
    }

    /// Closes the store and removes what it left on a server (files go with their directory).
    public func close() throws {
        try coordinator.remove(store)
        try kind.removeStore(at: location)
    }

    /// Fetches every `Item` as objects in `context` (`returnsObjectsAsFaults = false`), reads every
    /// attribute with the typed subscript, as W2 does, and checks what was read.
    ///
    /// - Throws: ``BenchError`` when the rows or checksum differ from ``expected``.
    public func fetchAll(in context: ManagedObjectContext) throws -> [ManagedObject] {
        var request = FetchRequest(entityName: "Item")
        request.returnsObjectsAsFaults = false
        let items = try context.fetch(request)
        var sum: Int64 = 0
        for item in items { sum = sum &+ Self.checksum(item) }
        guard items.count == expected.rows, sum == expected.checksum else {
            throw BenchError(
                "\(kind.rawValue): fetched \(items.count) items (checksum \(sum)), expected \(expected.rows) (checksum \(expected.checksum))"
            )
        }
        return items
    }

    /// The checksum of one `Item`'s six attributes, read with the typed subscript (as the
    /// `strata-X` contenders read them).
    public static func checksum(_ item: ManagedObject) -> Int64 { StrataBenchContender.checksum(item) }
}
