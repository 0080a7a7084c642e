import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// Bad files and hostile environments give typed errors naming the file, and never change the store.
@Suite("SQLite driver errors")
struct SQLiteErrorTests {
    static func open(_ url: URL, options: StoreOptions = StoreOptions()) throws -> (
        PersistentStoreCoordinator, ManagedObjectContext
    ) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: options)
        return (coordinator, ManagedObjectContext(coordinator: coordinator))
    }

    static func code(of body: () throws -> Void) -> StoreError? {
        do {
            try body()
            return nil
        } catch let error as StoreError {
            return error
        } catch {
            return StoreError(.unsupported, "unexpected error \(error)")
        }
    }

    @Test("a file that is not a SQLite database is a corrupt-store error naming the file")
    func notADatabase() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-errors")
        let url = directory.file("text.sqlite")
        try Data(String(repeating: "this is not a database\n", count: 400).utf8).write(to: url)
        let error = Self.code { _ = try Self.open(url) }
        #expect(error?.code == .corrupt)
        #expect(error?.store == url.path)
        #expect(error?.message.contains("not a SQLite database") == true)
        #expect(error?.underlying is SQLiteError)
    }

    @Test("a SQLite database that is not a Core Data store is refused without changing it")
    func foreignDatabase() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-errors")
        let url = directory.file("other.sqlite")
        let connection = try SQLiteConnection(path: url.path, mode: .readWriteCreate)
        try connection.execute("CREATE TABLE notes (body TEXT)")
        connection.close()
        let error = Self.code { _ = try Self.open(url) }
        #expect(error?.code == .corrupt)
        let again = try SQLiteConnection(path: url.path)
        defer { again.close() }
        #expect(try again.tableExists("Z_PRIMARYKEY") == false)
    }

    @Test(
        "a transaction a crash left half-written (a hot journal) is rolled back when a writer reads the metadata, and named to a read-only reader"
    )
    func hotJournal() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-errors")
        let text = String(repeating: "s", count: 400)
        let (coordinator, store, url) = try makeItemStore(in: directory, named: "live.sqlite", count: 300) {
            "\(text) \($0)"
        }
        try coordinator.remove(store)
        // A writer in rollback-journal mode whose transaction spilled pages into the file (its
        // cache holds two pages, so the journal was synced and is live); copying the file and its
        // journal then is what a crash at that moment leaves: a journal no process holds.
        let crashed = directory.file("crashed.sqlite")
        let writer = try SQLiteConnection(path: url.path, mode: .readWrite)
        try writer.execute("PRAGMA journal_mode=DELETE")
        try writer.execute("PRAGMA cache_size=2")
        try writer.execute("BEGIN IMMEDIATE")
        try writer.execute("DELETE FROM Z_METADATA")
        try writer.execute("UPDATE ZITEM SET ZSTRING = 'changed ' || ZSTRING")
        try FileManager.default.copyItem(atPath: url.path, toPath: crashed.path)
        try FileManager.default.copyItem(atPath: url.path + "-journal", toPath: crashed.path + "-journal")
        try writer.execute("ROLLBACK")
        writer.close()

        let factory = StoreType.sqlite.factory
        let readOnly = Self.code { _ = try factory.metadata(at: crashed, options: StoreOptions(isReadOnly: true)) }
        #expect(readOnly?.code == .readOnly)
        #expect(readOnly?.message.contains("-journal") == true, "\(String(describing: readOnly))")
        #expect(readOnly?.store == crashed.path)

        let recovered = try factory.metadata(at: crashed, options: StoreOptions())
        #expect(recovered?.values[StoreMetadata.modelKey] != nil, "the rolled-back store has its metadata again")
        let again = try factory.metadata(at: crashed, options: StoreOptions(isReadOnly: true))
        #expect(again?.uuid == recovered?.uuid)
        let (_, context) = try Self.open(crashed, options: StoreOptions(isReadOnly: true))
        #expect(try context.count(for: FetchRequest(entityName: "Item")) == 300)
        let changed = try context.count(
            for: FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "string BEGINSWITH 'changed'")))
        #expect(changed == 0, "the half-written update is rolled back")
    }

    @Test("a truncated store fails with a corrupt error instead of crashing")
    func truncated() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-errors")
        let url = directory.file("cut.sqlite")
        do {
            let (coordinator, context) = try Self.open(url)
            for index in 0..<200 {
                let item = try context.insertNewObject(forEntityName: "Item")
                item["binary"] = Data(repeating: UInt8(index % 251), count: 2_000)
            }
            try context.save()
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"), "closing checkpoints the WAL")
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(size / 3))
        try handle.close()
        let error = Self.code {
            let (_, context) = try Self.open(url)
            for item in try context.fetch(FetchRequest(entityName: "Item")) { _ = item.value(forKey: "binary") }
        }
        #expect(error?.code == .corrupt)
        #expect(error?.store == url.path)
    }

    @Test("a store locked by another writer past the timeout gives a locked error and keeps its rows")
    func locked() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-errors")
        let url = directory.file("busy.sqlite")
        let (_, context) = try Self.open(url, options: StoreOptions(timeout: 0.2))
        let tag = try context.insertNewObject(forEntityName: "Tag")
        tag["name"] = "first"
        try context.save()
        let other = try SQLiteConnection(path: url.path, mode: .readWrite)
        defer { other.close() }
        try other.execute("BEGIN EXCLUSIVE")
        let second = try context.insertNewObject(forEntityName: "Tag")
        second["name"] = "second"
        tag["name"] = "changed"
        let error = Self.code { try context.save() }
        #expect(error?.code == .locked)
        #expect(error?.message.contains("timeout") == true)
        try other.execute("ROLLBACK")
        let names = try other.rows("SELECT ZNAME FROM ZTAG").compactMap { $0[0].text }
        #expect(names == ["first"])
    }

    @Test("a full store (max_page_count) fails the save with a full error and keeps what it held")
    func full() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-errors")
        let url = directory.file("small.sqlite")
        let (_, context) = try Self.open(url, options: StoreOptions(values: ["max_page_count": "120"]))
        let kept = try context.insertNewObject(forEntityName: "Item")
        kept["string"] = "kept"
        try context.save()
        for _ in 0..<20 {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["binary"] = Data(repeating: 7, count: 100_000)
        }
        let error = Self.code { try context.save() }
        #expect(error?.code == .full)
        #expect(error?.store == url.path)
        let check = try SQLiteConnection(path: url.path)
        defer { check.close() }
        #expect(try check.scalar("SELECT COUNT(*) FROM ZITEM")?.integer == 1)
        #expect(try check.scalar("PRAGMA integrity_check")?.text == "ok")
    }

    @Test("writes through a read-only store and opening in a missing folder are typed errors")
    func readOnlyAndMissing() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-errors")
        let url = directory.file("ro.sqlite")
        _ = try Self.open(url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(isReadOnly: true))
        let tag = try #require(ConformanceModel.model.entity(named: "Tag"))
        let error = Self.code { _ = try store.driver.allocatePrimaryKeys(forEntity: tag.entityNumber, count: 1) }
        #expect(error?.code == .readOnly)
        let missing = directory.url.appendingPathComponent("no/such/folder/x.sqlite")
        let openError = Self.code { _ = try Self.open(missing) }
        #expect(openError?.code == .io)
        #expect(openError?.store == missing.path)
        let absent = Self.code {
            _ = try Self.open(directory.file("absent.sqlite"), options: StoreOptions(isReadOnly: true))
        }
        #expect(absent?.code == .notFound)
    }
}
