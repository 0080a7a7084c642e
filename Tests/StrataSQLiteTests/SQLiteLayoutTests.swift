import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// The file a Strata-made store writes: Core Data's tables, columns, indexes and value encodings.
@Suite("SQLite store layout")
struct SQLiteLayoutTests {
    static func seededStore() throws -> (TemporaryDirectory, PersistentStoreCoordinator, PersistentStore, String) {
        let directory = try TemporaryDirectory(prefix: "sqlite-layout")
        let (coordinator, store) = try DriverHarness.sqlite.openStack(in: directory)
        try ConformanceModel.seed(ManagedObjectContext(coordinator: coordinator))
        return (directory, coordinator, store, directory.file("Conformance.sqlite").path)
    }

    static func schema(_ connection: SQLiteConnection) throws -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: try connection.rows("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL").map {
                ($0[0].text ?? "", $0[1].text ?? "")
            })
    }

    @Test("tables, columns, join tables, order columns and indexes follow Core Data's naming")
    func tables() throws {
        let (directory, _, _, path) = try Self.seededStore()
        defer { withExtendedLifetime(directory) {} }
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let schema = try Self.schema(connection)
        #expect(
            schema["Z_PRIMARYKEY"]
                == "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"
        )
        #expect(
            schema["Z_METADATA"]
                == "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        #expect(
            schema["ZEMPLOYEE"]?.hasPrefix(
                "CREATE TABLE ZEMPLOYEE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAGE INTEGER") == true
        )
        #expect(schema["ZVEHICLE"]?.contains("ZTOPSPEED FLOAT") == true)
        #expect(schema["ZCAR"] == nil, "subentities share their root's table")
        #expect(schema["ZVEHICLE_Z_ENT_INDEX"] != nil)
        #expect(
            schema["ZEMPLOYEE_ZDEPARTMENT_INDEX"]
                == "CREATE INDEX ZEMPLOYEE_ZDEPARTMENT_INDEX ON ZEMPLOYEE (ZDEPARTMENT)")
        #expect(schema["Z_Tag_UNIQUE_name"]?.contains("ON ZTAG (ZNAME COLLATE BINARY ASC)") == true)
        #expect(schema["ZCHAPTER"]?.contains("ZPLAYLIST INTEGER, Z_FOK_PLAYLIST INTEGER") == true)
        let item = try #require(ConformanceModel.model.entity(named: "Item")).entityNumber
        let tag = try #require(ConformanceModel.model.entity(named: "Tag")).entityNumber
        let join = "Z_\(min(item, tag))\(item < tag ? "TAGS" : "ITEMS")"
        #expect(schema[join]?.contains("PRIMARY KEY") == true, "join table \(join) in \(schema.keys.sorted())")
        let types = try connection.rows(
            "SELECT typeof(ZDATE), typeof(ZUUID), length(ZUUID), typeof(ZBOOL), typeof(ZURI) FROM ZITEM WHERE ZDATE > 700000000 LIMIT 1"
        )
        #expect(types.first == [.text("real"), .text("blob"), .integer(16), .text("integer"), .text("text")])
        // Seconds since 2001-01-01; SQLite's NUMERIC affinity keeps an integral value as INTEGER.
        #expect(try connection.scalar("SELECT MIN(ZDATE) FROM ZITEM")?.integer == 700_000_000)
        let entities = try connection.rows("SELECT Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT").map {
            $0[0].text ?? ""
        }
        #expect(entities == ConformanceModel.model.entities.map(\.name))
        #expect(try connection.scalar("PRAGMA integrity_check")?.text == "ok")
    }

    @Test("metadata keeps Core Data's keys and adds Strata's version hashes in the binary plist")
    func metadata() throws {
        let (directory, _, store, path) = try Self.seededStore()
        defer { withExtendedLifetime(directory) {} }
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let row = try connection.rows("SELECT Z_UUID, Z_PLIST FROM Z_METADATA")
        #expect(row.first?[0].text == store.identifier)
        let data = try #require(row.first?[1].blob)
        #expect(data.prefix(6) == Data("bplist".utf8))
        let plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        #expect(plist["NSStoreType"] as? String == "SQLite")
        #expect((plist["StrataEntityVersionHashes"] as? [String: Any])?.count == ConformanceModel.model.entities.count)
        #expect(plist[StoreMetadata.modelVersionHashKey] != nil)
    }

    @Test("journal mode and synchronous default to WAL and NORMAL and follow store options")
    func pragmas() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-pragmas")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .sqlite, at: directory.file("a.sqlite"))
        let wal = try SQLiteConnection(path: directory.file("a.sqlite").path)
        #expect(try wal.scalar("PRAGMA journal_mode")?.text == "wal")
        wal.close()
        let other = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try other.addPersistentStore(
            type: .sqlite, at: directory.file("b.sqlite"),
            options: StoreOptions(values: ["journal_mode": "DELETE", "synchronous": "FULL"]))
        let rollback = try SQLiteConnection(path: directory.file("b.sqlite").path)
        #expect(try rollback.scalar("PRAGMA journal_mode")?.text == "delete")
        rollback.close()
        #expect(throws: StoreError.self) {
            try PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model).addPersistentStore(
                type: .sqlite, at: directory.file("c.sqlite"),
                options: StoreOptions(values: ["synchronous": "FULL; DROP"]))
        }
        _ = store
    }

    @Test("predicates of the corpus are pushed down to SQL except the ones SQL cannot answer exactly")
    func pushdown() throws {
        let (directory, _, store, _) = try Self.seededStore()
        defer { withExtendedLifetime(directory) {} }
        var notPushed: [String] = []
        for (entityName, format) in PredicateCorpus.entries {
            var fetch = StoreFetch(entity: try #require(ConformanceModel.model.entity(named: entityName)))
            fetch.predicate = try FetchPredicate(format: format)
            if !(try store.driver.fetch(fetch).appliedPredicate) { notPushed.append(format) }
        }
        #expect(
            Set(notPushed) == [
                "SUBQUERY(mentees, $m, $m.age > 30).@count >= 2", "mentees.@max.age > 45", "mentees.@avg.age < 40",
                "mentees.@sum.age > 100", "mentees.@min.age == 20", "age * 2 > 80", "age + 10 == 44", "-age < -50",
                "age / 7 > 4", "SUBQUERY(employees, $e, $e.salary == nil).@count > 0", "decimal > 4.5",
            ], "not pushed: \(notPushed)")
    }

    @Test(
        "two key paths whose types do not compare are left to the evaluator, which refuses them, never answered by SQL")
    func mismatchedKeyPaths() throws {
        // Found by the reliability suite's predicate-sql target (seed 1343684612, cases 381, 623,
        // 681, 773): SQLite compares a number with text, the evaluator throws a type mismatch.
        let (directory, _, store, _) = try Self.seededStore()
        defer { withExtendedLifetime(directory) {} }
        for (entityName, format) in [
            ("Vehicle", "wheels < name"), ("Vehicle", "wheels != name"), ("Department", "budget <= name"),
            ("Department", "budget == name"), ("Item", "date > int64"), ("Item", "string == double"),
        ] {
            var fetch = StoreFetch(entity: try #require(ConformanceModel.model.entity(named: entityName)))
            fetch.predicate = try FetchPredicate(format: format)
            #expect(!(try store.driver.fetch(fetch).appliedPredicate), "\(format) was answered by SQL")
        }
        for (entityName, format) in [
            ("Employee", "salary > age"), ("Item", "int16 < double"), ("Item", "int32 == int64"),
        ] {
            var fetch = StoreFetch(entity: try #require(ConformanceModel.model.entity(named: entityName)))
            fetch.predicate = try FetchPredicate(format: format)
            #expect(
                try store.driver.fetch(fetch).appliedPredicate, "\(format) (numbers on both sides) still goes to SQL")
        }
    }

    @Test("counts, ID fetches and pages are answered by SQL")
    func countsAndPages() throws {
        let (directory, _, store, _) = try Self.seededStore()
        defer { withExtendedLifetime(directory) {} }
        var fetch = StoreFetch(entity: try #require(ConformanceModel.model.entity(named: "Employee")))
        fetch.predicate = try FetchPredicate(format: "age > 25")
        fetch.sort = [SortKey("name", comparison: .caseInsensitive)]
        fetch.resultKind = .count
        let count = try store.driver.fetch(fetch)
        #expect(count.count != nil && count.appliedPredicate)
        fetch.resultKind = .ids
        fetch.offset = 1
        fetch.limit = 3
        let ids = try store.driver.fetch(fetch)
        #expect(ids.appliedPage && ids.ids?.count == 3)
        fetch.resultKind = .rows
        let rows = try store.driver.fetch(fetch)
        #expect(rows.appliedPage && rows.rows.map(\.id) == ids.ids)
    }

    @Test("a count on the read connection sees a save committed right after it")
    func countSeesLaterSaves() throws {
        let (directory, coordinator, _, _) = try Self.seededStore()
        defer { withExtendedLifetime(directory) {} }
        let context = ManagedObjectContext(coordinator: coordinator)
        let before = try context.count(for: FetchRequest(entityName: "Tag"))
        let tag = try context.insertNewObject(forEntityName: "Tag")
        tag["name"] = "fresh"
        try context.save()
        #expect(
            try ManagedObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Tag")) == before + 1
        )
    }

    @Test(
        "a subentity's unique constraint is a partial index over its own rows and its descendants' (round-trip seed 21)"
    )
    func subentityConstraintIndex() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-layout")
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Unit", properties: [.attribute("code", .string)], uniquenessConstraints: [["code"]]),
            EntityDescription("Order", parent: "Unit", uniquenessConstraints: [["code"]]),
            EntityDescription("Rush", parent: "Order"),
            EntityDescription("Note", parent: "Unit"),
        ])
        let path = directory.file("partial.sqlite").path
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path))
        try coordinator.remove(store)
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let schema = try Self.schema(connection)
        let numbers = ["Order", "Rush"].compactMap { model.entity(named: $0)?.entityNumber }.sorted()
        #expect(
            schema["Z_Unit_UNIQUE_code"] == "CREATE UNIQUE INDEX Z_Unit_UNIQUE_code ON ZUNIT (ZCODE COLLATE BINARY ASC)"
        )
        #expect(
            schema["Z_Order_UNIQUE_code"]
                == "CREATE UNIQUE INDEX Z_Order_UNIQUE_code ON ZUNIT (ZCODE COLLATE BINARY ASC) WHERE Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
        )
    }
}
