import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataSQLite

/// Numbers a damaged or hostile file may hold, and predicate shapes that once crashed the query
/// translator: each is a typed error or the evaluator's own answer, never a trap.
@Suite("SQLite driver: damaged numbers and awkward predicates")
struct SQLiteDamagedDataTests {
    static let rowCount = 20

    static func itemStore(_ directory: TemporaryDirectory) throws -> (PersistentStoreCoordinator, PersistentStore, URL)
    {
        try makeItemStore(in: directory, named: "damaged.sqlite", count: rowCount) { "s\($0)" }
    }

    /// Runs one SQL statement on the store file with a connection of its own.
    static func edit(_ url: URL, _ sql: String) throws {
        let connection = try SQLiteConnection(path: url.path, mode: .readWrite)
        defer { connection.close() }
        try connection.execute(sql)
    }

    /// The store's `Z_ENT` for Item.
    static func itemNumber(_ url: URL) throws -> Int64 {
        let connection = try SQLiteConnection(path: url.path)
        defer { connection.close() }
        return try #require(try connection.scalar("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'")?.integer)
    }

    // MARK: Predicates

    static let constantPredicates = [
        "2 => 1", "!(1 < 0)", "(1 < 0) || (1 > 0)", "1 == 1 AND int64 > 5", "1 != 1 OR int64 <= 3", "'a' < 'b'",
        "nil == nil", "nil != 1", "1 IN {1, 2}", "3 BETWEEN {1, 5}", "NOT (2 < 1) AND NOT (int64 > 15)", "1 == 1.0",
        "'abc' BEGINSWITH 'a'", "'x' ==[c] 'X'",
    ]

    @Test(
        "comparisons of two constants answer as the evaluator does, in fetches, counts and batch updates",
        arguments: constantPredicates)
    func constantComparisons(_ format: String) throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-damaged")
        let (coordinator, _, _) = try Self.itemStore(directory)
        let predicate = try FetchPredicate(format: format)
        let context = ManagedObjectContext(coordinator: coordinator)
        let all = try context.fetch(FetchRequest(entityName: "Item"))
        let expected = try all.filter { try predicate.evaluate(with: $0) }.map(\.objectID).sorted {
            $0.rowID < $1.rowID
        }
        let request = FetchRequest(entityName: "Item", predicate: predicate)
        let fresh = ManagedObjectContext(coordinator: coordinator)
        #expect(try fresh.fetch(request).map(\.objectID).sorted { $0.rowID < $1.rowID } == expected)
        #expect(try fresh.count(for: request) == expected.count)
        let update = BatchUpdateRequest(
            entityName: "Item", predicate: predicate, propertiesToUpdate: ["string": .constant(.string("hit"))])
        #expect(try fresh.execute(update).count == expected.count)
    }

    @Test(
        "a Z_UUID that is not a store identifier (empty, huge, control characters) is a corrupt store",
        arguments: [String(repeating: "\u{0}", count: 4_000), "", String(repeating: "u", count: 200), "a\nb"])
    func damagedUUID(_ value: String) throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-uuid")
        let (coordinator, store, url) = try Self.itemStore(directory)
        try coordinator.remove(store)
        let connection = try SQLiteConnection(path: url.path, mode: .readWrite)
        let update = try connection.prepare("UPDATE Z_METADATA SET Z_UUID = ?")
        try update.bind(value, at: 1)
        _ = try update.step()
        connection.close()
        #expect {
            try PersistentStoreCoordinator(managedObjectModel: coordinator.managedObjectModel).addPersistentStore(
                type: .sqlite, at: url)
        } throws: { ($0 as? StoreError)?.code == .corrupt }
    }

    @Test("a comparison of constants the evaluator refuses is refused the same way")
    func constantTypeMismatch() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-damaged")
        let (coordinator, _, _) = try Self.itemStore(directory)
        let predicate = try FetchPredicate(format: "'a' < 2")
        #expect(throws: FetchPredicateError.self) { try predicate.evaluate(with: [String: StoreValue]()) }
        #expect(throws: FetchPredicateError.self) {
            try ManagedObjectContext(coordinator: coordinator).fetch(
                FetchRequest(entityName: "Item", predicate: predicate))
        }
    }

    @Test("deeply nested predicates and long IN lists answer as the evaluator does")
    func deepAndWide() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-damaged")
        let (coordinator, _, _) = try Self.itemStore(directory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let all = try context.fetch(FetchRequest(entityName: "Item"))
        let nested = String(repeating: "NOT (", count: 120) + "int64 > 5" + String(repeating: ")", count: 120)
        let wide = "int64 IN {" + (1...3_000).map { String($0 * 3) }.joined(separator: ", ") + "}"
        let ors = (1...1_500).map { "int64 == \($0 * 2)" }.joined(separator: " OR ")
        for format in [nested, wide, ors, "(\(ors)) AND (2 > 1)"] {
            let predicate = try FetchPredicate(format: format)
            let expected = try all.filter { try predicate.evaluate(with: $0) }.count
            let fresh = ManagedObjectContext(coordinator: coordinator)
            #expect(
                try fresh.fetch(FetchRequest(entityName: "Item", predicate: predicate)).count == expected,
                "\(format.prefix(40))")
            #expect(
                try fresh.count(for: FetchRequest(entityName: "Item", predicate: predicate)) == expected,
                "\(format.prefix(40))")
        }
    }

    static let innerPredicates = [
        "int64 > 5", "double > 1.5", "string BEGINSWITH[c] 'S1'", "ANY tags.name == 'x'", "tags.@count == 0",
        "int64 IN {" + (1...50).map { String($0 * 2) }.joined(separator: ", ") + "}",
        (1...40).map { "int64 == \($0)" }.joined(separator: " OR "), "NONE tags.name == 'x' AND int64 BETWEEN {3, 9}",
    ]

    @Test(
        "predicates nested in NOTs at every depth the parser takes answer as the evaluator does",
        arguments: innerPredicates)
    func nestingSweep(_ inner: String) throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-damaged")
        let (coordinator, _, _) = try Self.itemStore(directory)
        let all = try ManagedObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Item"))
        for level in stride(from: 0, through: 120, by: 4) {
            let format = String(repeating: "NOT (", count: level) + inner + String(repeating: ")", count: level)
            let predicate = try FetchPredicate(format: format)
            let expected = try all.filter { try predicate.evaluate(with: $0) }.count
            let context = ManagedObjectContext(coordinator: coordinator)
            do {
                #expect(
                    try context.fetch(FetchRequest(entityName: "Item", predicate: predicate)).count == expected,
                    "level \(level)")
                #expect(
                    try context.count(for: FetchRequest(entityName: "Item", predicate: predicate)) == expected,
                    "level \(level)")
                var sorted = FetchRequest(entityName: "Item", predicate: predicate, sortKeys: [SortKey("int64")])
                sorted.fetchLimit = 3
                #expect(try context.fetchObjectIDs(sorted).count == min(3, expected), "level \(level)")
                #expect(try context.count(for: sorted) == min(3, expected), "level \(level)")
            } catch {
                Issue.record("nested \(level) levels: \(String(describing: error).suffix(120))")
                break
            }
        }
    }

    // MARK: Entity numbers and keys

    @Test("a Z_ENT beyond Int32 is a row of no entity, never truncated onto one")
    func hugeEntityNumber() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-damaged")
        let (coordinator, store, url) = try Self.itemStore(directory)
        do {
            let context = ManagedObjectContext(coordinator: coordinator)
            let first = try #require(
                try context.fetch(FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "int64 == 1")))
                    .first)
            let tag = try context.insertNewObject(forEntityName: "Tag")
            tag["name"] = "real"
            first.addObject(tag, toRelationship: "tags")
            try context.save()
            try coordinator.remove(store)
        }
        // A Tag row whose Z_ENT truncates to Tag's number, joined to the first item, and an Item
        // row likewise: to-many loads and fetches see neither.
        let raw = try SQLiteConnection(path: url.path, mode: .readWrite)
        let tagNumber = try #require(try raw.scalar("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag'")?.integer)
        let join = try #require(
            try raw.scalar("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%TAGS' ESCAPE '\\'")?
                .text)
        let columns = try raw.rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(join)]).compactMap {
            $0[0].text
        }
        let tagColumn = try #require(columns.first { $0.hasSuffix("TAGS") })
        let itemColumn = try #require(columns.first { $0.hasSuffix("ITEMS") })
        let huge = (Int64(1) << 32) + tagNumber
        try raw.execute("INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (100000, \(huge), 1, 'ghost')")
        try raw.execute("INSERT INTO \(join) (\(itemColumn), \(tagColumn)) VALUES (1, 100000)")
        try raw.execute(
            "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZINT64) VALUES (100000, \((Int64(1) << 32) + (try Self.itemNumber(url))), 1, -1)"
        )
        raw.close()
        // A coordinator of its own: nothing cached from the save above.
        let reopened = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try reopened.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(isReadOnly: true))
        let context = ManagedObjectContext(coordinator: reopened)
        let first = try #require(
            try context.fetch(FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "int64 == 1")))
                .first)
        #expect(first.objects(forKey: "tags").compactMap { $0["name"] as? String } == ["real"])
        #expect(try context.fetch(FetchRequest(entityName: "Item")).count == Self.rowCount)
        #expect(try context.fetchObjectIDs(FetchRequest(entityName: "Item")).count == Self.rowCount)
        #expect(try context.fetch(FetchRequest(entityName: "Tag")).count == 1)
    }

    @Test(
        "a primary key below 1 is a corrupt store naming the entity and the key", arguments: [Int64(0), -5, Int64.min])
    func keyBelowOne(_ key: Int64) throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-damaged")
        let (coordinator, _, url) = try Self.itemStore(directory)
        let item = try Self.itemNumber(url)
        try Self.edit(url, "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZINT64) VALUES (\(key), \(item), 1, 7777)")
        let context = ManagedObjectContext(coordinator: coordinator)
        for request in [
            FetchRequest(entityName: "Item"), FetchRequest(entityName: "Item", sortKeys: [SortKey("int64")]),
        ] {
            let error = try #require(throws: StoreError.self) { try context.fetch(request) }
            #expect(error.code == .corrupt && error.store == url.path)
            #expect(error.message.contains("Item") && error.message.contains("\(key)"), "\(error)")
        }
        #expect(throws: StoreError.self) {
            try context.fetchObjectIDs(FetchRequest(entityName: "Item", sortKeys: [SortKey("int64")]))
        }
        let update = BatchUpdateRequest(
            entityName: "Item", predicate: try FetchPredicate(format: "int64 == 7777"),
            propertiesToUpdate: ["int64": .constant(.integer(1))])
        #expect(throws: StoreError.self) { try context.execute(update) }
        #expect(throws: StoreError.self) {
            try context.execute(
                BatchDeleteRequest(entityName: "Item", predicate: try FetchPredicate(format: "int64 == 7777")))
        }
    }

    @Test("a to-one key below 1 is a corrupt store, not a reference to a temporary object")
    func referenceBelowOne() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-damaged")
        let url = directory.file("staff.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        _ = try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        let department = try context.insertNewObject(forEntityName: "Department")
        department["name"] = "Sales"
        let employee = try context.insertNewObject(forEntityName: "Employee")
        employee["name"] = "Ann"
        employee["department"] = department
        try context.save()
        try Self.edit(url, "UPDATE ZEMPLOYEE SET ZDEPARTMENT = -1, Z_OPT = Z_OPT + 1")
        let error = try #require(throws: StoreError.self) {
            try ManagedObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Employee"))
        }
        #expect(error.code == .corrupt && error.message.contains("Employee"), "\(error)")
    }

    // MARK: Counters at the end of Int64

    @Test("saving a row whose version is Int64.max is a corrupt-store error, and the row stays as it was")
    func versionAtMaximum() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-damaged")
        let (coordinator, store, url) = try Self.itemStore(directory)
        try Self.edit(url, "UPDATE ZITEM SET Z_OPT = 9223372036854775807 WHERE ZINT64 = 1")
        // The driver itself: a change set naming that version.
        let item = try #require(coordinator.managedObjectModel.entity(named: "Item"))
        let raw = try SQLiteConnection(path: url.path)
        let key = try #require(try raw.scalar("SELECT Z_PK FROM ZITEM WHERE ZINT64 = 1")?.integer)
        var values = [StoreValue](repeating: .unfetched, count: item.properties.count)
        let slot = try #require(item.index(ofProperty: "string"))
        values[slot] = .string("changed")
        var batch = ChangeBatch()
        batch.updates = [
            RowUpdate(
                id: RowID(entity: item.entityNumber, primaryKey: key), expectedVersion: .max, values: values,
                changedSlots: [slot])
        ]
        let error = try #require(throws: StoreError.self) { try store.driver.apply(batch) }
        #expect(
            error.code == .corrupt && error.message.contains("Item") && error.message.contains("version"), "\(error)")
        // A batch update through a context (the core may refuse the row first; either way, typed).
        let update = BatchUpdateRequest(entityName: "Item", propertiesToUpdate: ["string": .constant(.string("batch"))])
        let batchError = try #require(throws: StoreError.self) {
            try ManagedObjectContext(coordinator: coordinator).execute(update)
        }
        #expect(batchError.code == .corrupt, "\(batchError)")
        // And a save of the fetched object, when the core lets the row through at all (it may
        // refuse the fetch as corrupt; that refusal is not what this part checks, hence `try?`).
        let context = ManagedObjectContext(coordinator: coordinator)
        if let one = try? context.fetch(
            FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "int64 == 1"))
        ).first {
            one["string"] = "changed"
            let saveError = try #require(throws: StoreError.self) { try context.save() }
            #expect(saveError.code == .corrupt, "\(saveError)")
        }
        #expect(try raw.rows("SELECT Z_OPT, ZSTRING FROM ZITEM WHERE ZINT64 = 1") == [[.integer(.max), .text("s1")]])
        #expect(
            try raw.scalar("SELECT count(*) FROM ZITEM WHERE ZSTRING = 'batch'") == .integer(0), "the batch rolled back"
        )
    }

    @Test(
        "allocating keys past Int64.max, or from a negative or non-integer Z_MAX, is a corrupt-store error",
        arguments: ["9223372036854775806", "-10", "'many'", "NULL", "1.5"])
    func keyCounterDamaged(_ value: String) throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-damaged")
        let (coordinator, _, url) = try Self.itemStore(directory)
        try Self.edit(url, "UPDATE Z_PRIMARYKEY SET Z_MAX = \(value) WHERE Z_NAME = 'Item'")
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<5 { try context.insertNewObject(forEntityName: "Item")["int64"] = 1_000 + index }
        let error = try #require(throws: StoreError.self) { try context.save() }
        #expect(error.code == .corrupt && error.message.contains("Z_MAX") && error.message.contains("Item"), "\(error)")
        let raw = try SQLiteConnection(path: url.path)
        #expect(try raw.scalar("SELECT count(*) FROM ZITEM") == .integer(Int64(Self.rowCount)))
    }

    // MARK: Archives

    @Test("a string or data object that refers to itself, or nests deeply, reads as nothing instead of recursing")
    func cyclicArchiveStrings() throws {
        var objects: [Any] = [
            "$null",
            ["$class": uid(3), "name": uid(2), "bytes": uid(4), "deep": uid(5)],
            ["$class": uid(3), "NS.string": uid(2), "NS.data": uid(2)],
            ["$classname": "NSString", "$classes": ["NSString", "NSObject"]],
            ["$class": uid(3), "NS.data": uid(4)],
        ]
        for index in 5..<2_005 { objects.append(["$class": uid(3), "NS.string": uid(index + 1)]) }
        objects.append("bottom")
        let archive = try KeyedArchive(data: try makeArchive(objects: objects, top: ["root": uid(1)]))
        let root = try archive.topObject()
        #expect(root["name"]?.string == nil)
        #expect(root["name"]?.data == nil)
        #expect(root["bytes"]?.data == nil)
        #expect(root["deep"]?.string == nil)
    }
}
