import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

final class Writer: ManagedObject {
    @ManagedAttribute("name") var name: String
}

/// Reads its writer (a fault the driver must fulfil) when fetched.
final class Volume: ManagedObject {
    @ManagedAttribute("number") var number: Int64
    @ManagedToOne("writer") var writer: Writer?
    var writerOnAwake: String? = nil

    override func awakeFromFetch() { writerOnAwake = writer?.name }
}

/// The SQLite driver hands a fetch's rows over in parts; the context turns each part into objects.
@Suite("SQLite driver: fetches in parts")
struct SQLiteFetchPartsTests {
    static let rowCount = 600

    static func itemStore(_ directory: TemporaryDirectory) throws -> (PersistentStoreCoordinator, PersistentStore, URL)
    {
        try makeItemStore(in: directory, named: "parts.sqlite", count: rowCount) { "s\($0 % 7)-\($0)" }
    }

    static func parts(_ driver: any StoreDriver, _ fetch: StoreFetch) throws -> [StoreFetchResult] {
        var parts: [StoreFetchResult] = []
        try driver.fetch(fetch) { parts.append($0) }
        return parts
    }

    @Test("parts of 256 rows, in order, are the rows of the whole fetch with the same flags")
    func partsMatchWholeFetch() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-parts")
        let (coordinator, store, _) = try Self.itemStore(directory)
        let item = try #require(coordinator.managedObjectModel.entity(named: "Item"))
        var sorted = StoreFetch(entity: item)
        sorted.predicate = try FetchPredicate(format: "int64 > 40")
        sorted.sort = [SortKey("string", ascending: false)]
        var unexact = StoreFetch(entity: item)
        unexact.predicate = try FetchPredicate(format: "int64 * 2 > 80")
        #expect(try store.driver.fetch(unexact).appliedPredicate == false, "one fetch the core finishes")
        for fetch in [StoreFetch(entity: item), sorted, unexact] {
            let whole = try store.driver.fetch(fetch)
            let parts = try Self.parts(store.driver, fetch)
            #expect(whole.rows.count > 256)
            #expect(parts.dropLast().allSatisfy { $0.rows.count == 256 })
            #expect(parts.flatMap(\.rows) == whole.rows)
            for part in parts {
                #expect(part.appliedPredicate == whole.appliedPredicate)
                #expect(part.appliedSort == whole.appliedSort)
                #expect(part.appliedPage == whole.appliedPage)
            }
        }
        #expect(try Self.parts(store.driver, StoreFetch(entity: item)).map(\.rows.count) == [256, 256, 88])

        var count = StoreFetch(entity: item)
        count.resultKind = .count
        let counted = try Self.parts(store.driver, count)
        #expect(counted.count == 1)
        #expect(counted.first?.count == Self.rowCount)
        var none = StoreFetch(entity: item)
        none.predicate = try FetchPredicate(format: "int64 < 0")
        let empty = try Self.parts(store.driver, none)
        #expect(empty.count == 1, "an empty answer is still one part")
        #expect(empty.first?.rows.isEmpty == true)
    }

    @Test("a row whose Z_ENT is not the table's entity is in no fetch, count or page of the table")
    func foreignEntityRows() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-parts")
        let (coordinator, _, url) = try Self.itemStore(directory)
        let other = try SQLiteConnection(path: url.path, mode: .readWrite)
        // One number the model lacks, one of another entity (Tag), which has a table of its own:
        // a fetch of Item's rows leaves the Z_ENT test out of its SQL and skips both itself.
        let tag = try #require(coordinator.managedObjectModel.entity(named: "Tag"))
        try other.execute("INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZINT64) VALUES (100000, 999, 1, -1)")
        try other.execute(
            "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZINT64, ZSTRING) VALUES (100001, \(tag.entityNumber), 1, -2, 'a')")
        other.close()
        let context = ManagedObjectContext(coordinator: coordinator)
        let all = try context.fetch(FetchRequest(entityName: "Item"))
        #expect(all.count == Self.rowCount)
        #expect(all.allSatisfy { $0.entity.name == "Item" })
        var sorted = FetchRequest(entityName: "Item", sortKeys: [SortKey("string")])
        sorted.predicate = try FetchPredicate(format: "int64 < 10")
        #expect(
            try context.fetch(sorted).compactMap { $0["int64"] as? Int }
                == Array(1...9).sorted { "s\($0 % 7)-\($0)" < "s\($1 % 7)-\($1)" })
        #expect(try context.count(for: FetchRequest(entityName: "Item")) == Self.rowCount)
        #expect(try context.fetchObjectIDs(FetchRequest(entityName: "Item")).count == Self.rowCount)
        var page = FetchRequest(entityName: "Item", sortKeys: [SortKey("int64")])
        page.fetchLimit = 5
        #expect(try context.fetch(page).compactMap { $0["int64"] as? Int } == [1, 2, 3, 4, 5])
    }

    @Test("an error thrown by the receiver of a part ends the fetch and leaves the reader on current data")
    func errorMidway() throws {
        struct Stop: Error {}
        let directory = try TemporaryDirectory(prefix: "sqlite-parts")
        let (coordinator, store, url) = try Self.itemStore(directory)
        let item = try #require(coordinator.managedObjectModel.entity(named: "Item"))
        var received = 0
        #expect(throws: Stop.self) {
            try store.driver.fetch(StoreFetch(entity: item)) { part in
                received += 1
                if received == 2 { throw Stop() }
            }
        }
        #expect(received == 2)

        let other = try SQLiteConnection(path: url.path, mode: .readWrite)
        try other.execute("UPDATE ZITEM SET ZSTRING = 'changed', Z_OPT = Z_OPT + 1 WHERE ZINT64 = 600")
        other.close()
        let rows = try store.driver.fetch(StoreFetch(entity: item)).rows
        let slot = try #require(item.index(ofProperty: "string"))
        #expect(rows.count == Self.rowCount)
        #expect(rows.contains { $0.values[slot] == .string("changed") }, "the reader is not held on the old snapshot")
    }

    @Test("awakeFromFetch runs once the rows are in, so it may fire faults")
    func awakeMayFireFaults() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-parts")
        // A fault fired from awakeFromFetch while the fetch held its read would wait forever: the
        // fetch runs against a deadline of its own.
        let (count, awakeReads) = try Deadline.run(seconds: 60, "a fetch whose awakeFromFetch fires faults") {
            try Self.fetchVolumes(at: directory.file("volumes.sqlite"))
        }
        #expect(count == Self.rowCount)
        #expect(awakeReads == Self.rowCount, "every volume read its writer when it awoke")
    }

    /// Saves volumes of three writers at `url`, fetches them with a new coordinator and returns
    /// how many came back and how many read their writer's name in awakeFromFetch.
    private static func fetchVolumes(at url: URL) throws -> (Int, Int) {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Writer", properties: [.attribute("name", .string), .toMany("volumes", "Volume", inverse: "writer")],
                managedObjectClass: Writer.self),
            EntityDescription(
                "Volume",
                properties: [.attribute("number", .integer64), .toOne("writer", "Writer", inverse: "volumes")],
                managedObjectClass: Volume.self),
        ])
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .sqlite, at: url)
            let context = ManagedObjectContext(coordinator: coordinator)
            let writers = (0..<3).map { index -> Writer in
                let writer = Writer(context: context)
                writer.name = "writer \(index)"
                return writer
            }
            for number in 1...Int64(rowCount) {
                let volume = Volume(context: context)
                volume.number = number
                volume.writer = writers[Int(number % 3)]
            }
            try context.save()
        }
        // A new coordinator: nothing cached, so each writer comes from the driver during awakeFromFetch.
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Volume", sortKeys: [SortKey("number")])
        request.returnsObjectsAsFaults = false
        let volumes = try context.fetch(request, as: Volume.self)
        return (volumes.count, volumes.filter { $0.writerOnAwake == "writer \($0.number % 3)" }.count)
    }
}
