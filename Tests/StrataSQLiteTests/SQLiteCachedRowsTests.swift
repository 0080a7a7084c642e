import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// A fetch takes the values of rows the row cache holds at the stored `Z_OPT` instead of decoding
/// them again, and decodes every other row.
@Suite("SQLite driver: cached rows")
struct SQLiteCachedRowsTests {
    static let rowCount = 600

    /// A store with `rowCount` items (`int64` = key, `string` = "v<key>").
    static func makeStore(_ directory: TemporaryDirectory) throws -> (PersistentStoreCoordinator, PersistentStore, URL)
    {
        try makeItemStore(in: directory, named: "cached.sqlite", count: rowCount) { "v\($0)" }
    }

    static func strings(_ coordinator: PersistentStoreCoordinator) throws -> [Int: String] {
        let context = ManagedObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Item")
        request.returnsObjectsAsFaults = false
        var result: [Int: String] = [:]
        for item in try context.fetch(request) { result[item["int64"] as? Int ?? 0] = item["string"] as? String }
        return result
    }

    @Test("the driver takes cached values where the version agrees and decodes the rest")
    func driverTakesAgreeingVersions() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-cached")
        let (coordinator, store, _) = try Self.makeStore(directory)
        let model = coordinator.managedObjectModel
        let item = try #require(model.entity(named: "Item"))
        let plain = try store.driver.fetch(StoreFetch(entity: item)).rows.sorted { $0.id < $1.id }
        #expect(plain.count == Self.rowCount)
        #expect(plain.allSatisfy { $0.version == 1 })

        // A separate cache holding marked values: row 1 at the stored version, row 2 at another.
        let cache = RowCache()
        let key = ObjectIdentifier(store)
        let marked = plain[0].values.map { _ in StoreValue.string("marked") }
        cache.store(
            [
                RowSnapshot(id: plain[0].id, version: 1, values: marked),
                RowSnapshot(id: plain[1].id, version: 7, values: marked),
            ], in: key)
        var fetch = StoreFetch(entity: item)
        fetch.cachedRows = CachedRows(cache, store: key)
        let rows = try store.driver.fetch(fetch).rows.sorted { $0.id < $1.id }
        #expect(rows.count == Self.rowCount)
        #expect(rows[0].values == marked, "same version: the cached values, not decoded")
        #expect(rows[0].version == 1)
        #expect(rows[1] == plain[1], "another version: decoded from the file")
        #expect(Array(rows[2...]) == Array(plain[2...]))
    }

    @Test("a fetch that finds few cached rows stops asking for a stretch and decodes it, then asks again")
    func fewFoundSkipsAStretch() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-cached")
        let (coordinator, store, _) = try Self.makeStore(directory)
        let item = try #require(coordinator.managedObjectModel.entity(named: "Item"))
        let plain = try store.driver.fetch(StoreFetch(entity: item)).rows.sorted { $0.id < $1.id }
        // Every row but the first window's is cached with marked values at the stored version.
        let window = CachedRows.Probe.window
        let skipped = window * (CachedRows.Probe.minimumShare - 1)
        let cache = RowCache()
        let key = ObjectIdentifier(store)
        let marked = plain[0].values.map { _ in StoreValue.string("marked") }
        cache.store(plain[window...].map { RowSnapshot(id: $0.id, version: $0.version, values: marked) }, in: key)
        var fetch = StoreFetch(entity: item)
        fetch.cachedRows = CachedRows(cache, store: key)
        let rows = try store.driver.fetch(fetch).rows
        #expect(rows.map(\.id) == plain.map(\.id), "rows in key order")
        #expect(Array(rows[..<(window + skipped)]) == Array(plain[..<(window + skipped)]), "decoded from the file")
        #expect(rows[(window + skipped)...].allSatisfy { $0.values == marked }, "taken from the cache again")
    }

    @Test("a new context sees a row another writer changed, and the cache's values where Z_OPT did not move")
    func versionsDecide() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-cached")
        let (coordinator, store, url) = try Self.makeStore(directory)
        #expect(try Self.strings(coordinator)[5] == "v5")

        // Another program: one row changed as Core Data changes it (Z_OPT + 1), one behind its back.
        let other = try SQLiteConnection(path: url.path, mode: .readWrite)
        try other.execute("UPDATE ZITEM SET ZSTRING = 'moved', Z_OPT = Z_OPT + 1 WHERE ZINT64 = 5")
        try other.execute("UPDATE ZITEM SET ZSTRING = 'unseen' WHERE ZINT64 = 6")
        other.close()

        let seen = try Self.strings(coordinator)
        #expect(seen.count == Self.rowCount)
        #expect(seen[5] == "moved", "a new version is decoded")
        #expect(seen[6] == "v6", "the same version is taken from the row cache")
        #expect(seen[7] == "v7")
        let context = ManagedObjectContext(coordinator: coordinator)
        let five = try context.fetch(
            FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "int64 == 5")))
        #expect(five.first?["string"] as? String == "moved")

        // Once the cache forgets the store's rows, every row comes from the file.
        coordinator.rowCache.removeAll(in: ObjectIdentifier(store))
        #expect(try Self.strings(coordinator)[6] == "unseen")
    }

    @Test("a fetch larger than one part registers, caches and pins every row once")
    func fetchInParts() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-cached")
        let (coordinator, store, _) = try Self.makeStore(directory)
        coordinator.rowCache.removeAll(in: ObjectIdentifier(store))
        let context = ManagedObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Item", sortKeys: [SortKey("int64")])
        request.returnsObjectsAsFaults = false
        let first = try context.fetch(request)
        #expect(first.map { $0["int64"] as? Int } == (1...Self.rowCount).map { $0 })
        #expect(first.map { $0["string"] as? String } == (1...Self.rowCount).map { "v\($0)" })
        var stats = coordinator.rowCache.statistics
        #expect(stats.count == Self.rowCount)
        #expect(stats.pinned == Self.rowCount)

        let again = try context.fetch(request)
        #expect(zip(first, again).allSatisfy { $0 === $1 }, "objects are uniqued across fetches")
        stats = coordinator.rowCache.statistics
        #expect(stats.pinned == Self.rowCount, "a second fetch does not pin twice")

        context.reset()
        #expect(coordinator.rowCache.statistics.pinned == 0)
    }
}
