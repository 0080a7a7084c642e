import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataSQLite

/// The names Strata gives tables and columns when names collide or relationships are reflexive
/// (docs/formats/sqlite.md, "Names").
@Suite("SQLite naming of relationship shapes and colliding names")
struct SQLiteNamingTests {
    /// A seeded store of `model` in `directory`, closed again; its path.
    static func seededStore(
        _ model: ManagedObjectModel, _ seed: (ManagedObjectContext) throws -> Void, in directory: TemporaryDirectory
    ) throws -> String {
        let url = directory.file("Store.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        try seed(ManagedObjectContext(coordinator: coordinator))
        try coordinator.remove(store)
        return url.path
    }

    static func schema(_ connection: SQLiteConnection) throws -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: try connection.rows("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL").map {
                ($0[0].text ?? "", $0[1].text ?? "")
            })
    }

    static func number(_ model: ManagedObjectModel, _ entity: String) -> Int32 {
        model.entity(named: entity)?.entityNumber ?? -1
    }

    @Test(
        "a to-many that is its own inverse is a join table Z_<n><NAME> beside a REFLEXIVE column, one row per direction"
    )
    func reflexiveJoinTables() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-naming")
        let model = ConformanceShapesModel.model
        let connection = try SQLiteConnection(
            path: try Self.seededStore(model, ConformanceShapesModel.seed, in: directory))
        defer { connection.close() }
        let schema = try Self.schema(connection)
        let n = Self.number(model, "Person")
        #expect(
            schema["Z_\(n)FRIENDS"]
                == "CREATE TABLE Z_\(n)FRIENDS ( Z_\(n)FRIENDS INTEGER, REFLEXIVE INTEGER, PRIMARY KEY (Z_\(n)FRIENDS, REFLEXIVE) )"
        )
        #expect(
            schema["Z_\(n)PALS"]
                == "CREATE TABLE Z_\(n)PALS ( Z_\(n)PALS INTEGER, REFLEXIVE INTEGER, Z_FOK_\(n)PALS INTEGER, FOK_REFLEXIVE INTEGER, PRIMARY KEY (Z_\(n)PALS, REFLEXIVE) )"
        )
        #expect(
            schema["Z_\(n)FOLLOWERS"]
                == "CREATE TABLE Z_\(n)FOLLOWERS ( Z_\(n)FOLLOWING INTEGER, Z_\(n)FOLLOWERS INTEGER, PRIMARY KEY (Z_\(n)FOLLOWING, Z_\(n)FOLLOWERS) )"
        )
        let m = Self.number(model, "Employee")
        #expect(
            schema["Z_\(m)MENTEES"]
                == "CREATE TABLE Z_\(m)MENTEES ( Z_\(m)MENTORS INTEGER, Z_\(n)MENTEES INTEGER, PRIMARY KEY (Z_\(m)MENTORS, Z_\(n)MENTEES) )"
        )
        #expect(schema["ZPERSON"]?.contains("ZSPOUSE INTEGER, Z\(n)_SPOUSE INTEGER") == true)
        // Every friendship is stored from both ends: (Ada, Ben) and (Ben, Ada).
        let pairs = Set(
            try connection.rows("SELECT Z_\(n)FRIENDS, REFLEXIVE FROM Z_\(n)FRIENDS").map {
                [$0[0].integer ?? 0, $0[1].integer ?? 0]
            })
        #expect(pairs.count == 6 && pairs.allSatisfy { pairs.contains([$0[1], $0[0]]) })
        // Each row's FOK_REFLEXIVE is the member's position in the owner's list; Z_FOK_ the owner's in the member's.
        let ada = try #require(try connection.scalar("SELECT Z_PK FROM ZPERSON WHERE ZNAME = 'Ada'")?.integer)
        let ben = try #require(try connection.scalar("SELECT Z_PK FROM ZPERSON WHERE ZNAME = 'Ben'")?.integer)
        let row = try connection.rows(
            "SELECT FOK_REFLEXIVE, Z_FOK_\(n)PALS FROM Z_\(n)PALS WHERE Z_\(n)PALS = ? AND REFLEXIVE = ?",
            [.integer(ada), .integer(ben)])
        #expect(row == [[.integer(2), .integer(1)]])
        #expect(try connection.scalar("PRAGMA integrity_check")?.text == "ok")
    }

    @Test(
        "colliding names get suffixes in Core Data's order: attributes by name before relationships, Z_PK, Z_ENT and Z_OPT never reused"
    )
    func columnSuffixes() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-naming")
        let model = ConformanceShapesModel.collisions
        let connection = try SQLiteConnection(
            path: try Self.seededStore(model, ConformanceShapesModel.seedCollisions, in: directory))
        defer { connection.close() }
        let schema = try Self.schema(connection)
        #expect(
            schema["ZGADGET"]
                == "CREATE TABLE ZGADGET ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME INTEGER, Z_PK1 INTEGER, ZOWNER1 INTEGER, Z_OPT1 FLOAT, ZNAME1 VARCHAR, ZTITLE VARCHAR, Z_ENT1 VARCHAR, ZNAME2 VARCHAR, ZOWNER VARCHAR, ZTITLE1 VARCHAR, ZTITLE11 VARCHAR, ZZ_PK VARCHAR )"
        )
        let row = try connection.rows(
            "SELECT ZNAME, ZNAME1, ZNAME2, Z_PK1, Z_ENT1, Z_OPT1, ZZ_PK, ZTITLE, ZTITLE1, ZTITLE11, ZOWNER FROM ZGADGET ORDER BY ZNAME2 LIMIT 1"
        )
        #expect(
            row == [
                [
                    .integer(100), .text("Name 0"), .text("name 0"), .integer(0), .text("ent 0"), .real(0.5),
                    .text("z_pk 0"), .text("Title 0"), .text("title 0"), .text("title1 0"), .text("owner 0"),
                ]
            ])
        // Subentities of one table: the first entity (by Z_ENT) keeps the bare name.
        #expect(
            schema["ZSHAPE"]
                == "CREATE TABLE ZSHAPE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZOWNER INTEGER, ZSIZE1 INTEGER, ZOWNER1 INTEGER, ZSIZE FLOAT, ZKIND VARCHAR, ZLABEL VARCHAR, ZLABEL1 VARCHAR )"
        )
        #expect(
            try connection.rows("SELECT ZSIZE, ZSIZE1, ZLABEL, ZLABEL1 FROM ZSHAPE ORDER BY Z_ENT") == [
                [.real(2.5), .null, .text("circle"), .null], [.null, .integer(4), .null, .text("square")],
            ])
    }

    @Test("join tables and join columns that collide get suffixes too")
    func joinSuffixes() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-naming")
        let model = ConformanceShapesModel.collisions
        let connection = try SQLiteConnection(
            path: try Self.seededStore(model, ConformanceShapesModel.seedCollisions, in: directory))
        defer { connection.close() }
        let schema = try Self.schema(connection)
        let g = Self.number(model, "Gadget")
        let p = Self.number(model, "Part")
        #expect(
            schema["Z_\(g)PARTS"]
                == "CREATE TABLE Z_\(g)PARTS ( Z_\(g)GADGETS INTEGER, Z_\(p)PARTS INTEGER, PRIMARY KEY (Z_\(g)GADGETS, Z_\(p)PARTS) )"
        )
        #expect(
            schema["Z_\(g)PARTS1"]
                == "CREATE TABLE Z_\(g)PARTS1 ( Z_\(g)GADGETS1 INTEGER, Z_\(p)PARTS1 INTEGER, PRIMARY KEY (Z_\(g)GADGETS1, Z_\(p)PARTS1) )"
        )
        #expect(
            schema["Z_\(g)LINKS"]
                == "CREATE TABLE Z_\(g)LINKS ( Z_\(g)LINKS1 INTEGER, Z_\(g)LINKS INTEGER, PRIMARY KEY (Z_\(g)LINKS1, Z_\(g)LINKS) )"
        )
        #expect(
            try connection.scalar("SELECT COUNT(*) FROM Z_\(g)PARTS")?.integer == 2,
            "Parts: gadget 0 → part 2, gadget 1 → part 1")
        #expect(
            try connection.scalar("SELECT COUNT(*) FROM Z_\(g)PARTS1")?.integer == 2, "parts: gadget 0 → parts 0 and 1")
    }

    @Test("deleting a row removes its keys from every join table, from both columns")
    func deletesUnlink() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-naming")
        let model = ConformanceShapesModel.model
        let path = try Self.seededStore(model, ConformanceShapesModel.seed, in: directory)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path))
        let context = ManagedObjectContext(coordinator: coordinator)
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        defer { connection.close() }
        let ben = try #require(try connection.scalar("SELECT Z_PK FROM ZPERSON WHERE ZNAME = 'Ben'")?.integer)
        let person = Self.number(model, "Person")
        let employee = Self.number(model, "Employee")
        let note = try #require(try connection.scalar("SELECT Z_PK FROM ZNOTE WHERE ZTEXT = 'note 1'")?.integer)
        func references() throws -> Int64 {
            var total: Int64 = 0
            for table in try connection.rows(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA')"
            ).compactMap({ $0[0].text }) {
                let columns = try connection.rows(
                    "SELECT name FROM pragma_table_info(?) WHERE name NOT LIKE '%FOK%'", [.text(table)]
                ).compactMap { $0[0].text }
                // The columns holding keys of people: named with Person's or Employee's number, or REFLEXIVE.
                let people = columns.filter {
                    $0 == "REFLEXIVE" || $0.hasPrefix("Z_\(person)") || $0.hasPrefix("Z_\(employee)")
                }
                for column in people {
                    total +=
                        try connection.scalar("SELECT COUNT(*) FROM \(table) WHERE \(column) = ?", [.integer(ben)])?
                        .integer ?? 0
                }
            }
            return total
        }
        #expect(try references() > 0)
        context.delete(
            try #require(
                try context.fetch(
                    FetchRequest(entityName: "Person", predicate: FetchPredicate(format: "name == 'Ben'"))
                ).first))
        context.delete(
            try #require(
                try context.fetch(
                    FetchRequest(entityName: "Note", predicate: FetchPredicate(format: "text == 'note 1'"))
                ).first))
        try context.save()
        #expect(try references() == 0)
        let n = Self.number(model, "Note")
        // A to-many without inverse: the deleted destination's rows go too (no owner is told of the delete).
        for table in ["Z_\(Self.number(model, "Person"))BOOKMARKS", "Z_\(Self.number(model, "Person"))READING"] {
            let member = table.hasSuffix("BOOKMARKS") ? "Z_\(n)BOOKMARKS" : "Z_\(n)READING"
            #expect(
                try connection.scalar("SELECT COUNT(*) FROM \(table) WHERE \(member) = ?", [.integer(note)])?.integer
                    == 0, "\(table)")
        }
    }

    @Test("a batch delete removes the deleted rows' keys from the join tables of to-many relationships without inverse")
    func batchDeleteUnlinks() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-naming")
        let model = ConformanceShapesModel.model
        let path = try Self.seededStore(model, ConformanceShapesModel.seed, in: directory)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path))
        let context = ManagedObjectContext(coordinator: coordinator)
        let deleted = try context.execute(
            BatchDeleteRequest(entityName: "Note", predicate: try FetchPredicate(format: "text == 'note 1'")))
        #expect(deleted.count == 1)
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        defer { connection.close() }
        let p = Self.number(model, "Person")
        let n = Self.number(model, "Note")
        let key = try #require(deleted.first?.primaryKey)
        #expect(
            try connection.scalar("SELECT COUNT(*) FROM Z_\(p)BOOKMARKS WHERE Z_\(n)BOOKMARKS = ?", [.integer(key)])?
                .integer == 0)
        #expect(
            try connection.scalar("SELECT COUNT(*) FROM Z_\(p)READING WHERE Z_\(n)READING = ?", [.integer(key)])?
                .integer == 0)
        #expect(
            try connection.scalar("SELECT COUNT(*) FROM Z_\(p)BOOKMARKS")?.integer == 2,
            "Ada's note 0 and Ben's note 2 stay")
    }

    @Test("new stores record their naming rules in the metadata, hidden from the metadata values")
    func namingRecorded() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-naming")
        let path = try Self.seededStore(ConformanceShapesModel.model, ConformanceShapesModel.seed, in: directory)
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let stored = try #require(try MetadataCoding.readWithNaming(from: connection))
        #expect(stored.naming == .coreData && stored.recorded == 2)
        #expect(stored.metadata.values[LayoutNaming.metadataKey] == nil)
        #expect(!stored.metadata.entityVersionHashes.isEmpty)
    }

    @Test("a store naming its columns by unknown rules is refused as unsupported")
    func unknownNaming() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-naming")
        let path = try Self.seededStore(ConformanceShapesModel.model, ConformanceShapesModel.seed, in: directory)
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        let stored = try #require(try MetadataCoding.readWithNaming(from: connection))
        var metadata = stored.metadata
        metadata.values[LayoutNaming.metadataKey] = .integer(99)
        // Written by hand: MetadataCoding.write records the driver's own rules.
        var dictionary: [String: Any] = [:]
        for (key, value) in metadata.values { dictionary[key] = MetadataCoding.plistValue(value) }
        dictionary["StrataEntityVersionHashes"] = metadata.entityVersionHashes
        let data = try PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0)
        _ = try connection.rows("UPDATE Z_METADATA SET Z_PLIST = ?", [.blob(data)])
        connection.close()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceShapesModel.model)
        let error = #expect(throws: StoreError.self) {
            try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path))
        }
        #expect(error?.code == .unsupported && error?.message.contains("newer Strata") == true)
    }

    /// A model whose names collide differently under the legacy rules (declaration order, Unicode
    /// upper-casing) and Core Data's (attributes by name, then relationships; ASCII upper-casing).
    static let legacyModel: ManagedObjectModel = {
        let box = EntityDescription(
            "Box",
            properties: [
                .toOne("Owner", "Box"), .attribute("owner", .string), .attribute("label", .string),
                .attribute("Label", .string), .attribute("größe", .string),
            ])
        // Fixed and valid; building it cannot fail.
        return try! ManagedObjectModel(entities: [box])
    }()

    @Test("a store Strata wrote before the naming rules were recorded keeps its columns, also after saving")
    func legacyNaming() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-naming")
        let path = directory.file("Legacy.sqlite").path
        let model = Self.legacyModel
        // The store as Strata wrote it then: its columns, its version hashes, no naming key.
        let layout = StoreLayout(
            model: model, entities: model.entities, storeNumbers: [1: 1], existingColumns: nil, existingTables: nil,
            naming: .strataLegacy)
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        for statement in layout.creationStatements() { try connection.execute(statement) }
        #expect(
            try Self.schema(connection)["ZBOX"]
                == "CREATE TABLE ZBOX ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZOWNER INTEGER, ZOWNER1 VARCHAR, ZLABEL VARCHAR, ZLABEL1 VARCHAR, \"ZGRÖSSE\" VARCHAR )"
        )
        _ = try connection.rows("INSERT INTO Z_PRIMARYKEY VALUES (1, 'Box', 0, 1)")
        _ = try connection.rows("INSERT INTO ZBOX VALUES (1, 1, 1, 1, 'text', 'lower', 'upper', 'big')")
        let hashes = Dictionary(uniqueKeysWithValues: model.entities.map { ($0.name, $0.versionHash) })
        try MetadataCoding.write(
            StoreMetadata(
                storeType: StoreType.sqliteName, entityVersionHashes: hashes,
                values: MetadataCoding.initialValues(for: model)),
            naming: .strataLegacy, to: connection)
        connection.close()

        for round in 0..<2 {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path))
            let context = ManagedObjectContext(coordinator: coordinator)
            let box = try #require(try context.fetch(FetchRequest(entityName: "Box")).first)
            #expect(box["label"] as? String == (round == 0 ? "lower" : "lower!"), "round \(round)")
            #expect(box["Label"] as? String == "upper")
            #expect(box["owner"] as? String == "text")
            #expect(box["größe"] as? String == "big")
            #expect(box.object(forKey: "Owner") === box)
            box["label"] = "lower!"
            try context.save()
            try coordinator.remove(store)
        }
        let check = try SQLiteConnection(path: path, mode: .readOnly)
        defer { check.close() }
        #expect(try check.rows("SELECT ZLABEL, ZLABEL1 FROM ZBOX") == [[.text("lower!"), .text("upper")]])
        #expect(
            try MetadataCoding.readWithNaming(from: check)?.recorded == nil,
            "the legacy store is not marked with the new rules")
    }

    @Test(
        "the same model under Core Data's rules draws attributes by name before relationships and upper-cases ASCII only"
    )
    func coreDataNaming() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-naming")
        let path = try Self.seededStore(Self.legacyModel, { _ in }, in: directory)
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        defer { connection.close() }
        #expect(
            try Self.schema(connection)["ZBOX"]
                == "CREATE TABLE ZBOX ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZOWNER1 INTEGER, ZLABEL VARCHAR, \"ZGRößE\" VARCHAR, ZLABEL1 VARCHAR, ZOWNER VARCHAR )"
        )
    }

    @Test(
        "entity tables equal after upper-casing, or named like Core Data's own tables, get suffixes; recovery finds them"
    )
    func tableSuffixes() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-naming")
        // Fixed and valid; building it cannot fail.
        let model = try! ManagedObjectModel(entities: [
            EntityDescription("Widget", properties: [.attribute("name", .string)]),
            EntityDescription("WIDGET", properties: [.attribute("name", .string)]),
            EntityDescription("_PRIMARYKEY", properties: [.attribute("name", .string)]),
        ])
        let path = try Self.seededStore(
            model,
            { context in
                for entity in ["Widget", "WIDGET", "_PRIMARYKEY"] {
                    for index in 0..<(entity.count % 4 + 1) {
                        try context.insertNewObject(forEntityName: entity)["name"] = "\(entity) \(index)"
                    }
                }
                try context.save()
            }, in: directory)
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        defer { connection.close() }
        let tables = Set(
            try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0[0].text })
        #expect(tables == ["Z_PRIMARYKEY", "Z_METADATA", "ZWIDGET", "ZWIDGET1", "Z_PRIMARYKEY1"])
        let recovered = try StoreModelRecovery.recoverModel(fromStoreAt: path).model
        let driver = try #require(
            try SQLiteDriverFactory().makeDriver(
                StoreOpenRequest(
                    url: URL(fileURLWithPath: path), model: recovered, configuration: nil,
                    options: StoreOptions(isReadOnly: true)))
                as? SQLiteDriver)
        defer { try? driver.close() }  // read-only; nothing to lose
        for entity in ["Widget", "WIDGET", "_PRIMARYKEY"] {
            let described = try #require(recovered.entity(named: entity))
            let names = try driver.fetch(StoreFetch(entity: described)).rows.map { row -> String in
                if case .string(let name) = row.values[0] { return name }
                return "?"
            }
            #expect(names.sorted() == (0..<(entity.count % 4 + 1)).map { "\(entity) \($0)" }, "\(entity)")
        }
    }
}
