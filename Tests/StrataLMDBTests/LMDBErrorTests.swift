import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

@Suite("LMDB errors")
struct LMDBErrorTests {
    static func model(extra: Bool = false) throws -> ManagedObjectModel {
        var entities = [
            EntityDescription("Note", properties: [.attribute("text", .string), .attribute("blob", .binaryData)])
        ]
        if extra {
            entities[0] = EntityDescription(
                "Note",
                properties: [
                    .attribute("text", .string), .attribute("blob", .binaryData), .attribute("rank", .integer32),
                ])
        }
        return try ManagedObjectModel(entities: entities)
    }

    static func open(_ url: URL, model: ManagedObjectModel, options: StoreOptions = StoreOptions()) throws -> (
        PersistentStoreCoordinator, PersistentStore
    ) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        return (coordinator, try coordinator.addPersistentStore(type: .lmdb, at: url, options: options))
    }

    @Test("a file that is not an LMDB environment is refused as corrupt, naming the store")
    func notLMDB() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-errors")
        let url = directory.file("notes.lmdb")
        try Data(repeating: 0x41, count: 8192).write(to: url)
        let error = try #require(throws: StoreError.self) { try Self.open(url, model: Self.model()) }
        #expect(error.code == .corrupt)
        #expect(error.store == url.path)
        #expect(error.message.contains("not an LMDB environment"))
    }

    @Test("a store with an unknown format version is refused as unsupported")
    func unknownFormat() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-errors")
        let url = directory.file("notes.lmdb")
        let driver = try LMDBDriverFactory().open(url: url, model: Self.model(), options: StoreOptions())
        try driver.environment.write { txn in
            var writer = ByteWriter()
            writer.appendLittleEndian(UInt32(99))
            try txn.put(driver.databases.meta, Array("format".utf8), writer.bytes)
        }
        try driver.close()
        let error = try #require(throws: StoreError.self) { try Self.open(url, model: Self.model()) }
        #expect(error.code == .unsupported)
        #expect(error.message.contains("format version 99"))
    }

    @Test("a store written with another model is refused with modelMismatch listing the entities")
    func modelMismatch() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-errors")
        let url = directory.file("notes.lmdb")
        let (coordinator, store) = try Self.open(url, model: Self.model())
        let context = ManagedObjectContext(coordinator: coordinator)
        let note = try context.insertNewObject(forEntityName: "Note")
        note["text"] = "hello"
        try context.save()
        try coordinator.remove(store)
        let error = try #require(throws: StoreError.self) { try Self.open(url, model: Self.model(extra: true)) }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains("Note"))
    }

    @Test("a save beyond the maximum map size fails with .full and leaves the store unchanged")
    func mapFull() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-errors")
        let url = directory.file("notes.lmdb")
        let options = StoreOptions(values: ["mapSize": "256K", "maxMapSize": "1M"])
        let (coordinator, _) = try Self.open(url, model: Self.model(), options: options)
        let context = ManagedObjectContext(coordinator: coordinator)
        let small = try context.insertNewObject(forEntityName: "Note")
        small["text"] = "small"
        small["blob"] = Data(repeating: 7, count: 200_000)
        try context.save()
        let big = try context.insertNewObject(forEntityName: "Note")
        big["text"] = "big"
        big["blob"] = Data(repeating: 9, count: 3_000_000)
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .full)
        #expect(error.message.contains("maxMapSize"))
        let fresh = ManagedObjectContext(coordinator: coordinator)
        let notes = try fresh.fetch(FetchRequest(entityName: "Note"))
        #expect(notes.map { $0["text"] as? String } == ["small"])
        #expect((notes.first?["blob"] as? Data)?.count == 200_000)
    }

    /// A new store of `Note`s opened with a 128 KiB map, in a directory kept while it is used.
    private static func smallMap() throws -> (TemporaryDirectory, LMDBDriver, EntityDescription) {
        let directory = try TemporaryDirectory(prefix: "lmdb-errors")
        let driver = try LMDBDriverFactory().open(
            url: directory.file("notes.lmdb"), model: Self.model(), options: StoreOptions(values: ["mapSize": "128K"]))
        return (directory, driver, try #require(driver.model.entity(named: "Note")))
    }

    @Test("the map grows automatically when a save needs more room than the initial size")
    func mapGrows() throws {
        let (directory, driver, entity) = try Self.smallMap()
        defer { withExtendedLifetime(directory) {} }
        let before = driver.mapSize
        let keys = try driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: 1)
        var batch = ChangeBatch()
        batch.inserts = [
            RowSnapshot(
                id: RowID(entity: entity.entityNumber, primaryKey: keys.lowerBound), version: 0,
                values: [.string("x"), .binary(Data(repeating: 1, count: 2_000_000))])
        ]
        _ = try driver.apply(batch)
        #expect(driver.mapSize > before)
        #expect(
            try driver.rows(for: [batch.inserts[0].id]).first?.values[1]
                == .binary(Data(repeating: 1, count: 2_000_000)))
        try driver.close()
    }

    @Test("a change in parts that fills the map starts over from its first part in a grown map")
    func mapGrowsInParts() throws {
        let (directory, driver, entity) = try Self.smallMap()
        defer { withExtendedLifetime(directory) {} }
        let before = driver.mapSize
        let keys = try driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: 4)
        let parts = keys.map { key in
            var batch = ChangeBatch()
            batch.inserts = [
                RowSnapshot(
                    id: RowID(entity: entity.entityNumber, primaryKey: key), version: 0,
                    values: [.string("n\(key)"), .binary(Data(repeating: UInt8(key), count: 600_000))])
            ]
            return batch
        }
        let replay = ChangeSetReplay(parts)
        _ = try driver.apply(inParts: replay.next)
        #expect(replay.starts > 1, "the transaction started over after growing the map")
        #expect(driver.mapSize > before)
        let stored = try driver.rows(for: parts.map { $0.inserts[0].id })
        #expect(stored.map(\.values) == parts.map { $0.inserts[0].values })
        try driver.close()
    }

    @Test("a missing store with createIfMissing off is notFound; a read-only store refuses saves")
    func missingAndReadOnly() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-errors")
        let url = directory.file("notes.lmdb")
        let missing = try #require(throws: StoreError.self) {
            try Self.open(url, model: Self.model(), options: StoreOptions(createIfMissing: false))
        }
        #expect(missing.code == .notFound)
        let (first, store) = try Self.open(url, model: Self.model())
        try first.remove(store)
        let (coordinator, _) = try Self.open(url, model: Self.model(), options: StoreOptions(isReadOnly: true))
        let context = ManagedObjectContext(coordinator: coordinator)
        _ = try context.insertNewObject(forEntityName: "Note")
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .readOnly)
    }

    @Test("engine codes map to typed errors naming the store and the next step")
    func engineCodes() throws {
        let cases: [(Int32, StoreError.Code, String)] = [
            (EACCES, .io, "permission denied"), (mdbReadersFullCode, .locked, "stale reader slots"),
            (mdbMapFullCode, .full, "maxMapSize"), (mdbInvalidCode, .corrupt, "not an LMDB environment"),
        ]
        for (rc, code, phrase) in cases {
            let error = try #require(throws: StoreError.self) {
                try LMDBEnvironment.check(rc, path: "/tmp/x.lmdb", "opening")
            }
            #expect(error.code == code)
            #expect(error.store == "/tmp/x.lmdb")
            #expect(error.message.contains(phrase))
        }
    }

    @Test("when every reader slot is taken a read fails with .locked instead of waiting")
    func readersFull() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-errors")
        let url = directory.file("notes.lmdb")
        let driver = try LMDBDriverFactory().open(
            url: url, model: Self.model(), options: StoreOptions(values: ["maxReaders": "1"]))
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = try? driver.environment.read { _ in
                holding.signal()
                release.wait()
            }
        }
        thread.start()
        holding.wait()
        let error = try #require(throws: StoreError.self) { try driver.loadMetadata() }
        release.signal()
        #expect(error.code == .locked)
        #expect(error.message.contains("reader slot"))
        try driver.close()
    }

    @Test("a change set that deletes and updates the same row is refused without a trap, and nothing is written")
    func deleteAndUpdateOfOneRow() throws {
        // Found by the reliability suite (lmdb case 487260161/364): a row that checkVersions found
        // was gone when the update read it again, and a force unwrap trapped.
        let directory = try TemporaryDirectory(prefix: "lmdb-errors")
        let url = directory.file("notes.lmdb")
        let model = try Self.model()
        let driver = try LMDBDriverFactory().open(url: url, model: model, options: StoreOptions())
        defer { try? driver.close() }  // a test store; closing changes nothing
        let entity = try #require(model.entity(named: "Note"))
        let keys = try driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: 1)
        let id = RowID(entity: entity.entityNumber, primaryKey: keys.lowerBound)
        var insert = ChangeBatch()
        insert.inserts = [RowSnapshot(id: id, version: 1, values: [.string("a"), .null])]
        _ = try driver.apply(insert)
        var both = ChangeBatch()
        both.deletes = [RowDelete(id: id, expectedVersion: 1)]
        both.updates = [RowUpdate(id: id, expectedVersion: 1, values: [.string("b"), .null], changedSlots: [0])]
        #expect(throws: StoreError.self) { try driver.apply(both) }
        let rows = try driver.rows(for: [id])
        #expect(rows.map(\.values) == [[.string("a"), .null]] && rows.map(\.version) == [1], "the store is as before")
    }
}
