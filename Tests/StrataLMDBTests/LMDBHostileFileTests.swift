import CLMDB
import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

/// Damaged or hostile LMDB stores, crafted through the driver's own engine layer: IDs naming
/// entities the model lacks, keys at or below zero, versions and counters at `Int64.max`, and
/// files LMDB must not be handed. Each is a corrupt error naming the store, never a trap.
@Suite("LMDB hostile files")
struct LMDBHostileFileTests {
    static let model: ManagedObjectModel = {
        let team = EntityDescription(
            "Team", properties: [.attribute("name", .string), .toMany("members", "Person", inverse: "team")])
        let person = EntityDescription(
            "Person",
            properties: [
                .attribute("name", .string), .attribute("age", .integer64), .toOne("team", "Team", inverse: "members"),
            ])
        return try! ManagedObjectModel(entities: [team, person])  // a fixed, valid model
    }()

    /// A store with one team of two people, saved and closed.
    static func seeded(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("people.lmdb")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .lmdb, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        let team = try context.insertNewObject(forEntityName: "Team")
        team["name"] = "blue"
        for (name, age) in [("ada", 36), ("alan", 41)] {
            let person = try context.insertNewObject(forEntityName: "Person")
            person["name"] = name
            person["age"] = age
            person["team"] = team
        }
        try context.save()
        try coordinator.remove(store)
        return url
    }

    /// Opens the store's driver, runs `body` in a write transaction, and closes it.
    static func edit(_ url: URL, _ body: (LMDBDriver, LMDBTransaction) throws -> Void) throws {
        let driver = try LMDBDriverFactory().open(url: url, model: model, options: StoreOptions())
        defer { try? driver.close() }
        try driver.environment.write { txn in try body(driver, txn) }
    }

    static func entity(_ name: String) throws -> EntityDescription { try #require(model.entity(named: name)) }

    /// Rewrites the first Person row with `change` applied to its decoded values and version.
    static func editFirstPerson(_ url: URL, _ change: (inout RowSnapshot) -> Void) throws -> RowID {
        var id: RowID?
        try edit(url) { driver, txn in
            let person = try entity("Person")
            let dbi = try driver.rowsDatabase(person.entityNumber)
            let slots = try #require(driver.layout.slots[person.entityNumber])
            var row = try txn.withCursor(dbi) { cursor -> RowSnapshot in
                let entry = try #require(try cursor.move(MDB_SET_RANGE, to: Keys.entityStart(person.entityNumber)))
                return try RowCodec.decode(entry.value, id: try Keys.rowID(entry.key), layout: slots)
            }
            change(&row)
            try txn.put(
                dbi, Keys.row(row.id), try RowCodec.encode(version: row.version, values: row.values, layout: slots))
            id = row.id
        }
        return try #require(id)
    }

    /// Opens the store and reads every Person and Team row through a context, and every team's
    /// members through the driver (the context turns relationship load errors into no members).
    static func readEverything(_ url: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .lmdb, at: url)
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(coordinator: coordinator)
        for person in try context.fetch(FetchRequest(entityName: "Person")) {
            _ = person.objectIDs(forRelationshipNamed: "team")
        }
        let teams = try context.fetch(FetchRequest(entityName: "Team"))
        let team = try entity("Team")
        let driver = try #require(store.driver as? LMDBDriver)
        let slot = try #require(team.index(ofProperty: "members"))
        _ = try driver.relatedRows(RelatedRowsRequest(entity: team, slot: slot, sources: teams.map(\.objectID.rowID)))
    }

    static func expectCorrupt(_ url: URL, _ words: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("no error")
        } catch let error as StoreError {
            #expect(error.code == .corrupt, "\(error)")
            #expect(error.store == url.path, "\(error)")
            #expect(error.message.contains(words), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test(
        "a to-one reference to an entity the model lacks, to the wrong entity, or to key 0 is a corrupt error",
        arguments: [
            ("missing", 1, "which the model does not have"), ("Person", 1, "outside the relationship's destination"),
            ("Team", 0, "not positive"),
        ] as [(String, Int64, String)])
    func badToOne(_ entityName: String, _ key: Int64, _ words: String) throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-bad-ref")
        let url = try Self.seeded(in: directory)
        let person = try Self.entity("Person")
        let slot = try #require(person.index(ofProperty: "team"))
        let target = entityName == "missing" ? Int32(99) : try Self.entity(entityName).entityNumber
        _ = try Self.editFirstPerson(url) { row in
            row.values[slot] = .reference(RowID(entity: target, primaryKey: key))
        }
        Self.expectCorrupt(url, words) { try Self.readEverything(url) }
    }

    @Test("a to-many member naming an entity the model lacks is a corrupt error")
    func badMember() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-bad-member")
        let url = try Self.seeded(in: directory)
        let team = try Self.entity("Team")
        let slot = try #require(team.index(ofProperty: "members"))
        try Self.edit(url) { driver, txn in
            guard case .reverse(let inverse, _) = try #require(driver.layout.slots[team.entityNumber])[slot] else {
                Issue.record("members is not stored as reverse entries")
                return
            }
            let teamID = RowID(entity: team.entityNumber, primaryKey: 1)
            try txn.put(
                driver.databases.refs, Keys.relationship(inverse, teamID), Keys.row(RowID(entity: 77, primaryKey: 5)))
        }
        Self.expectCorrupt(url, "which the model does not have") { try Self.readEverything(url) }
    }

    @Test("a row stored under a key at or below zero is a corrupt error", arguments: [0, -3] as [Int64])
    func badRowKey(_ key: Int64) throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-bad-key")
        let url = try Self.seeded(in: directory)
        let person = try Self.entity("Person")
        try Self.edit(url) { driver, txn in
            let slots = try #require(driver.layout.slots[person.entityNumber])
            let values: [StoreValue] = [.string("ghost"), .integer(1), .null]
            try txn.put(
                try driver.rowsDatabase(person.entityNumber),
                Keys.row(RowID(entity: person.entityNumber, primaryKey: key)),
                try RowCodec.encode(version: 1, values: values, layout: slots))
        }
        Self.expectCorrupt(url, "not positive") { try Self.readEverything(url) }
    }

    @Test("updating a row whose version is Int64.max is a corrupt error, through a save and through a batch update")
    func versionAtTheLimit() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-max-version")
        let url = try Self.seeded(in: directory)
        let id = try Self.editFirstPerson(url) { $0.version = .max }
        let person = try Self.entity("Person")
        let driver = try LMDBDriverFactory().open(url: url, model: Self.model, options: StoreOptions())
        defer { try? driver.close() }
        let row = try #require(try driver.rows(for: [id]).first)
        #expect(row.version == .max)
        var values = row.values
        values[1] = .integer(99)
        var batch = ChangeBatch()
        batch.updates = [RowUpdate(id: id, expectedVersion: .max, values: values, changedSlots: [1])]
        Self.expectCorrupt(url, "cannot grow") { _ = try driver.apply(batch) }
        let request = StoreBatchRequest(
            model: Self.model, entity: person, action: .update([.init(slot: 1, expression: .constant(.integer(7)))]))
        Self.expectCorrupt(url, "cannot grow") { _ = try driver.execute(request) }
        #expect(try driver.rows(for: [id]).first == row, "nothing changed")
    }

    @Test(
        "a primary-key counter at Int64.max or below zero is a corrupt error, not a wrapped key",
        arguments: [Int64.max, Int64.max - 1, -5])
    func counterAtTheLimit(_ value: Int64) throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-max-counter")
        let url = try Self.seeded(in: directory)
        let person = try Self.entity("Person")
        try Self.edit(url) { driver, txn in try driver.setMaximumKey(person.entityNumber, value, txn) }
        let driver = try LMDBDriverFactory().open(url: url, model: Self.model, options: StoreOptions())
        defer { try? driver.close() }
        if value == .max - 1 {
            #expect(try driver.allocatePrimaryKeys(forEntity: person.entityNumber, count: 1) == Int64.max...Int64.max)
        }
        Self.expectCorrupt(url, value < 0 ? "below zero" : "keys are used up") {
            _ = try driver.allocatePrimaryKeys(forEntity: person.entityNumber, count: 2)
        }
    }

    @Test("a string whose length points past the end of its row is a corrupt error")
    func lengthPastTheEnd() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-bad-length")
        let url = try Self.seeded(in: directory)
        let person = try Self.entity("Person")
        try Self.edit(url) { driver, txn in
            let dbi = try driver.rowsDatabase(person.entityNumber)
            let key = Keys.row(RowID(entity: person.entityNumber, primaryKey: 1))
            var bytes = try #require(try txn.get(dbi, key).map { Array($0) })
            // The name is the first field after the 12-byte header: its u32 length.
            bytes[12] = 0xFF
            bytes[13] = 0xFF
            try txn.put(dbi, key, bytes)
        }
        Self.expectCorrupt(url, "malformed") { try Self.readEverything(url) }
    }
}
