import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataSQLite

/// `name` as a double-quoted SQL identifier, for writing hostile stores by hand.
private func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

/// A name that runs `ATTACH DATABASE` on `target` if it ever reaches SQL text unquoted.
private func attaching(_ target: URL) -> String { "Foo(x); ATTACH DATABASE '\(target.path)' AS p; --" }

/// Writes a Core Data–shaped store by hand: `Z_PRIMARYKEY` naming `entity` (number 1), an empty
/// `Z_METADATA`, the table `table` with `columns` (name, declared type), and a `Z_MODELCACHE` row
/// when `modelCache` is given.
private func writeStore(
    at url: URL, entity: String, table: String, columns: [(String, String)], modelCache: Data? = nil
) throws {
    let connection = try SQLiteConnection(path: url.path, mode: .readWriteCreate)
    defer { connection.close() }
    try connection.execute(
        "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
    try connection.execute("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
    let list = columns.map { ", \(quoted($0.0)) \($0.1)" }.joined()
    try connection.execute(
        "CREATE TABLE \(quoted(table)) (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER\(list))")
    let row = try connection.prepare("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (1, ?, 0, 0)")
    try row.bind([.text(entity)])
    try row.step()
    if let modelCache {
        try connection.execute("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        let cache = try connection.prepare("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)")
        try cache.bind([.blob(modelCache)])
        try cache.step()
    }
}

/// A compressed model cache (as `Z_MODELCACHE.Z_CONTENT`) of one entity with one string attribute.
private func modelCache(entity: String, attribute: String) throws -> Data {
    let archive = try makeArchive(
        objects: [
            "$null",
            ["$class": uid(2), "NSEntities": uid(3)],
            ["$classname": "NSManagedObjectModel", "$classes": ["NSManagedObjectModel", "NSObject"]],
            ["$class": uid(4), "NS.keys": [uid(5)], "NS.objects": [uid(6)]],
            ["$classname": "NSDictionary", "$classes": ["NSDictionary", "NSObject"]],
            entity,
            ["$class": uid(7), "NSEntityName": uid(5), "NSProperties": uid(8)],
            ["$classname": "NSEntityDescription", "$classes": ["NSEntityDescription", "NSObject"]],
            ["$class": uid(4), "NS.keys": [uid(9)], "NS.objects": [uid(10)]],
            attribute,
            ["$class": uid(11), "NSPropertyName": uid(9), "NSAttributeType": 700, "NSIsOptional": true],
            [
                "$classname": "NSAttributeDescription",
                "$classes": ["NSAttributeDescription", "NSPropertyDescription", "NSObject"],
            ],
        ],
        top: ["root": uid(1)])
    return rawDeflate(archive)
}

@Suite("SQLite driver: hostile names")
struct HostileNameTests {
    @Test("text holding a second statement is refused, so an ATTACH after a name never runs")
    func oneStatementOnly() throws {
        let directory = try TemporaryDirectory()
        let target = directory.file("attached.db")
        let connection = try SQLiteConnection(path: directory.file("plain.sqlite").path, mode: .readWriteCreate)
        #expect(throws: SQLiteError.self) {
            try connection.execute("CREATE TABLE t (x); ATTACH DATABASE '\(target.path)' AS p")
        }
        #expect(throws: SQLiteError.self) { try connection.prepare("SELECT 1; ATTACH DATABASE '\(target.path)' AS p") }
        #expect(throws: SQLiteError.self) {
            try connection.prepare("SELECT 1\u{0}; ATTACH DATABASE '\(target.path)' AS p")
        }
        #expect(throws: SQLiteError.self) { try connection.prepare("  ") }
        #expect(!FileManager.default.fileExists(atPath: target.path))
        #expect(try !connection.tableExists("t"), "nothing of refused text runs")
        try connection.execute("CREATE TABLE u (x);  \n")
        #expect(try connection.tableExists("u"), "one statement with its semicolon and trailing space runs")
    }

    @Test("identifiers are quoted unless plain, with embedded quotes doubled")
    func quoting() {
        #expect(SQLIdentifier.quote("ZPERSON") == "ZPERSON" && SQLIdentifier.quote("Z_PK") == "Z_PK")
        #expect(SQLIdentifier.quote("order") == "\"order\"", "keywords are quoted")
        #expect(SQLIdentifier.quote("a\"b; --") == "\"a\"\"b; --\"")
        #expect(SQLIdentifier.quote("ZGRÖSSE") == "\"ZGRÖSSE\"" && SQLIdentifier.quote("1a") == "\"1a\"")
        #expect(SQLIdentifier.display("a\n\"b") == "\"a\\u{A}\\\"b\"")
    }

    @Test("a model cache naming an entity or attribute with SQL is a corrupt store, and nothing is attached")
    func hostileModelCache() throws {
        let directory = try TemporaryDirectory()
        let target = directory.file("attached.db")
        let good = directory.file("good.sqlite")
        try writeStore(
            at: good, entity: "Note", table: "ZNOTE", columns: [("ZTITLE", "VARCHAR")],
            modelCache: try modelCache(entity: "Note", attribute: "title"))
        let recovered = try StoreModelRecovery.recoverModel(fromStoreAt: good.path)
        #expect(recovered.model.entity(named: "Note")?.attributesByName["title"] != nil, "the handmade cache decodes")
        for (entity, attribute) in [(attaching(target), "title"), ("Note", "ti\"tle; " + attaching(target))] {
            let url = directory.file("hostile-\(UUID().uuidString).sqlite")
            try writeStore(
                at: url, entity: entity, table: "ZNOTE", columns: [("ZTITLE", "VARCHAR")],
                modelCache: try modelCache(entity: entity, attribute: attribute))
            #expect(throws: SQLiteError.self) { try StoreModelRecovery.recoverModel(fromStoreAt: url.path) }
            let error = try #require(throws: StoreError.self) {
                try SQLiteDriverFactory().recoverModel(at: url, options: StoreOptions(isReadOnly: true))
            }
            #expect(error.code == .corrupt && error.store == url.path)
            #expect(
                error.description.contains("not an identifier")
                    && error.description.contains("open the store with the model"))
            #expect(!error.description.contains("\n"))
        }
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test("tables whose entity or column names carry SQL are a corrupt store when the model is inferred")
    func hostileInferredNames() throws {
        let directory = try TemporaryDirectory()
        let target = directory.file("attached.db")
        let entity = directory.file("entity.sqlite")
        try writeStore(at: entity, entity: attaching(target), table: "Z" + attaching(target).uppercased(), columns: [])
        let entityError = try #require(throws: StoreError.self) {
            try SQLiteDriverFactory().recoverModel(at: entity, options: StoreOptions(isReadOnly: true))
        }
        #expect(entityError.code == .corrupt && entityError.message.contains("Z_PRIMARYKEY row 1"))
        let column = directory.file("column.sqlite")
        let hostileColumn = "ZTITLE\"; " + attaching(target)
        try writeStore(at: column, entity: "Note", table: "ZNOTE", columns: [(hostileColumn, "VARCHAR")])
        let columnError = try #require(throws: StoreError.self) {
            try SQLiteDriverFactory().recoverModel(at: column, options: StoreOptions(isReadOnly: true))
        }
        #expect(columnError.code == .corrupt && columnError.store == column.path)
        #expect(columnError.message.contains("table \"ZNOTE\" has a column \"ZTITLE\\\"; Foo(x)"))
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test("tables and columns named with quotes, spaces and semicolons work through insert, fetch, update and delete")
    func quotedNamesRoundTrip() throws {
        // Renaming identifiers are free text, and an existing store's tables may carry them: the
        // driver then reads and writes tables whose names need quoting.
        let directory = try TemporaryDirectory()
        let url = directory.file("renamed.sqlite")
        let oldEntity = "old\"; drop table z_primarykey; --"
        let table = "Z" + oldEntity.uppercased()
        let titleColumn = "ZTI\"TLE X"
        let parentColumn = "ZPA\"RENT;"
        try writeStore(
            at: url, entity: oldEntity, table: table, columns: [(titleColumn, "VARCHAR"), (parentColumn, "INTEGER")])
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Note",
                properties: [
                    .attribute(AttributeDescription("title", .string, renamingIdentifier: "ti\"tle x")),
                    .relationship(
                        RelationshipDescription("parent", destination: "Note", renamingIdentifier: "pa\"rent;")),
                ],
                renamingIdentifier: oldEntity)
        ])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        var notes: [ManagedObject] = []
        for title in ["a \"quoted\" one", "b; DROP TABLE x; --", "c"] {
            let note = try context.insertNewObject(forEntityName: "Note")
            note["title"] = title
            notes.append(note)
        }
        notes[1]["parent"] = notes[0]
        try context.save()

        let fresh = ManagedObjectContext(coordinator: coordinator)
        let sorted = try fresh.fetch(FetchRequest(entityName: "Note", sortKeys: [SortKey("title")]))
        #expect(sorted.map { $0["title"] as? String } == ["a \"quoted\" one", "b; DROP TABLE x; --", "c"])
        let children = try fresh.fetch(
            FetchRequest(entityName: "Note", predicate: try FetchPredicate(format: "parent.title BEGINSWITH 'a'")))
        #expect(children.map { $0["title"] as? String } == ["b; DROP TABLE x; --"])
        sorted[2]["title"] = "c2"
        fresh.delete(sorted[0])
        try fresh.save()
        var update = BatchUpdateRequest(entityName: "Note", predicate: try FetchPredicate(format: "title == 'c2'"))
        update.propertiesToUpdate = ["title": .constant(.string("c3"))]
        #expect(try fresh.execute(update).count == 1)
        #expect(
            try fresh.execute(
                BatchDeleteRequest(entityName: "Note", predicate: try FetchPredicate(format: "title == 'c3'"))
            ).count == 1)

        let raw = try SQLiteConnection(path: url.path)
        let rows = try raw.rows(
            "SELECT \(quoted(titleColumn)), typeof(\(quoted(parentColumn))) FROM \(quoted(table)) ORDER BY Z_PK")
        #expect(rows == [[.text("b; DROP TABLE x; --"), .text("integer")]])
        #expect(try raw.tableExists("Z_PRIMARYKEY"))
    }
}
