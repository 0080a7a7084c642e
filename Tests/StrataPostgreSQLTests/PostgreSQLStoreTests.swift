import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataPostgreSQL

@Suite("PostgreSQL store")
struct PostgreSQLStoreTests {
    /// A fresh store on the shared server, seeded or not.
    static func store(
        _ label: String, seeded: Bool = false, options: [String: String] = [:],
        storeOptions: StoreOptions = StoreOptions()
    )
        throws -> (PersistentStoreCoordinator, PersistentStore, URL)
    {
        let server = try PostgreSQLServer.shared()
        let url = server.url(schema: PostgreSQLTestServer.schemaName(label), options: options)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: .postgreSQL, at: url, options: storeOptions)
        if seeded { try ConformanceModel.seed(ManagedObjectContext(coordinator: coordinator)) }
        return (coordinator, store, url)
    }

    /// A fresh store like ``store(_:seeded:options:storeOptions:)`` whose statements go to a
    /// ``LogCapture``, with its URL.
    static func loggedStore(_ label: String) throws -> (PersistentStoreCoordinator, URL, LogCapture) {
        let capture = LogCapture()
        let (coordinator, _, url) = try store(label, storeOptions: StoreOptions(log: capture.storeLog(.statements)))
        return (coordinator, url, capture)
    }

    /// The schema a store URL names (its `schema` query item).
    static func schema(of url: URL) throws -> String {
        try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first?.value)
    }

    static let pieces = [
        "a", "A", "b", "é", "e\u{301}", "E", "\u{0}", "\u{1}", "\r\n", "\n", "K", "\u{212A}", "ß", "ss", "%", "_", "*",
        "?",
        "\\", "👩‍👩‍👧", " ", "z", "İ", "i", "Å", "A\u{30A}",
    ]

    @Test(
        "strings compare, sort and match in the store exactly as in memory: canonical equivalence, folding, NUL, patterns"
    )
    func stringsDifferential() throws {
        let (coordinator, _, _) = try Self.store("strings")
        let seed: UInt64 = 0x5EED_2105
        var generator = SeededGenerator(seed: seed)
        func word(_ maximum: Int) -> String {
            (0..<Int.random(in: 0...maximum, using: &generator)).map { _ in
                Self.pieces.randomElement(using: &generator)!
            }.joined()
        }
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<80 {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["string"] = index % 17 == 0 ? nil : word(4)
            item["int16"] = Int16(index)
        }
        try context.save()
        let all = try ManagedObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Item"))
        let operators = ["==", "!=", "<", ">=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "IN"]
        let options = ["", "[c]", "[d]", "[cd]"]
        var checked = 0
        var failures: [String] = []
        for _ in 0..<160 {
            let op = operators.randomElement(using: &generator)!
            let option = options.randomElement(using: &generator)!
            var pattern = word(2)
            if op == "LIKE" { pattern = [pattern, "*", "?", word(1)].shuffled(using: &generator).joined() }
            let predicate: FetchPredicate
            if op == "IN" {
                predicate = try FetchPredicate(format: "string IN\(option) %@", [pattern, word(2)])
            } else {
                predicate = try FetchPredicate(format: "string \(op)\(option) %@", pattern)
            }
            let expected = Set(try all.filter { try predicate.evaluate(with: $0) }.map(\.objectID))
            let fresh = ManagedObjectContext(coordinator: coordinator)
            let fetched = try fresh.fetch(FetchRequest(entityName: "Item", predicate: predicate))
            let counted = try fresh.count(for: FetchRequest(entityName: "Item", predicate: predicate))
            if Set(fetched.map(\.objectID)) != expected || fetched.count != expected.count || counted != expected.count
            {
                failures.append(
                    "\(predicate.predicateFormat): expected \(expected.count), fetched \(fetched.count), counted \(counted)"
                )
            }
            checked += 1
        }
        // Sorting by string, both ways, ties broken by ID as the core does.
        for ascending in [true, false] {
            let keys = [SortKey("string", ascending: ascending)]
            let expected = try SortKey.sort(all, by: keys + [SortKey("int16")]).map(\.objectID)
            let request = FetchRequest(entityName: "Item", sortKeys: keys + [SortKey("int16")])
            let fetched = try ManagedObjectContext(coordinator: coordinator).fetch(request).map(\.objectID)
            if fetched != expected { failures.append("sort ascending=\(ascending) differs") }
            // A page of a sorted, string-filtered fetch: the driver filters and pages itself.
            var paged = FetchRequest(
                entityName: "Item", predicate: try FetchPredicate(format: "string CONTAINS[c] 'a'"),
                sortKeys: keys + [SortKey("int16")])
            paged.fetchOffset = 2
            paged.fetchLimit = 5
            let matching = try SortKey.sort(
                all.filter { try paged.predicate!.evaluate(with: $0) }, by: keys + [SortKey("int16")])
            let page = try ManagedObjectContext(coordinator: coordinator).fetch(paged).map(\.objectID)
            if page != Array(matching.dropFirst(2).prefix(5)).map(\.objectID) {
                failures.append("page ascending=\(ascending) differs")
            }
        }
        print("string differential: seed \(seed), 80 rows, \(checked) predicates, 2 sorts, 2 pages")
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test("a save of more rows than one insert statement takes is one transaction: a late failure leaves nothing")
    func insertsInPieces() throws {
        let server = try PostgreSQLServer.shared()
        let (coordinator, url, capture) = try Self.loggedStore("insert-pieces")
        let schema = try Self.schema(of: url)
        let chunk = PostgreSQLDriver.insertChunk
        let count = 3 * chunk
        // A row planted under a key the save hands out to a row of its third statement: the
        // server refuses that statement after the first two ran.
        let item = try #require(ConformanceModel.model.entity(named: "Item"))
        try PostgreSQLAdmin.execute(
            [
                "INSERT INTO \(schema.sqlName).\"ZITEM\" (\"Z_PK\", \"Z_ENT\", \"Z_OPT\") VALUES (\(2 * chunk + 5), \(item.entityNumber), 1)"
            ], on: server)
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<count {
            let object = try context.insertNewObject(forEntityName: "Item")
            object["int32"] = Int32(index)
            object["string"] = "row \(index)"
        }
        #expect(throws: StoreError.self) { try context.save() }
        let inserts = capture.lines.filter { $0.text.contains("INSERT INTO") && $0.text.contains("ZITEM") }
        #expect(inserts.count == 3, "three insert statements ran, the last refused: \(inserts.count)")
        let stored = try PostgreSQLAdmin.rows("SELECT count(*)::text FROM \(schema.sqlName).\"ZITEM\"", on: server)
        #expect(stored == [["1"]], "only the planted row is in the table")

        // Without the planted row the same save goes through, every row in it.
        try PostgreSQLAdmin.execute(["DELETE FROM \(schema.sqlName).\"ZITEM\""], on: server)
        try context.save()
        let again = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try again.addPersistentStore(type: .postgreSQL, at: url)
        let rows = try ManagedObjectContext(coordinator: again).fetch(FetchRequest(entityName: "Item"))
        #expect(rows.count == count)
        let values = Set(rows.compactMap { $0["int32"] as? Int })
        #expect(values.count == count && values.min() == 0 && values.max() == count - 1, "\(values.count) values")
        let wrong = rows.filter { ($0["string"] as? String) != "row \($0["int32"] as? Int ?? -1)" }
        #expect(wrong.isEmpty, "\(wrong.count) rows whose string does not match their number")
    }

    @Test("a schema name with quotes and SQL in it is one schema; values with SQL in them are stored as they are")
    func hostileNames() throws {
        let server = try PostgreSQLServer.shared()
        let schema = "we\"ird'; DROP SCHEMA public CASCADE; --\(UInt16.random(in: 0...UInt16.max))"
        let url = server.url(schema: schema)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: .postgreSQL, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        let tag = try context.insertNewObject(forEntityName: "Tag")
        let value = "x'); DELETE FROM \"ZTAG\"; --"
        tag["name"] = value
        try context.save()
        try coordinator.remove(store)
        let again = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try again.addPersistentStore(type: .postgreSQL, at: url)
        let tags = try ManagedObjectContext(coordinator: again).fetch(
            FetchRequest(entityName: "Tag", predicate: try FetchPredicate(format: "name == %@", value)))
        #expect(tags.count == 1)
        let names = try PostgreSQLAdmin.rows(
            "SELECT nspname::text FROM pg_namespace WHERE nspname IN ('public', \(PostgreSQLAdmin.literal(schema)))",
            on: server)
        #expect(Set(names.compactMap { $0.first ?? nil }) == ["public", schema])
    }

    @Test("saves in one coordinator reach another coordinator's merging view context through notifications")
    func remoteChanges() throws {
        let (mine, _, url) = try Self.store("remote", seeded: true)
        let theirs = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try theirs.addPersistentStore(type: .postgreSQL, at: url)
        let view = ManagedObjectContext(coordinator: mine)
        view.automaticallyMergesChangesFromParent = true
        let ann = try view.fetch(
            FetchRequest(entityName: "Employee", predicate: try FetchPredicate(format: "name == 'Ann'")))[0]
        #expect(ann["age"] as? Int == 20)
        let heard = Locked<[ContextDidSave]>([])
        mine.addRemoteChangeObserver { saved in heard.withLock { $0.append(saved) } }
        let other = ManagedObjectContext(coordinator: theirs)
        let theirAnn = try other.fetch(
            FetchRequest(entityName: "Employee", predicate: try FetchPredicate(format: "name == 'Ann'")))[0]
        theirAnn["age"] = 90
        let tag = try other.insertNewObject(forEntityName: "Tag")
        tag["name"] = "remote"
        try other.save()
        let deadline = Date().addingTimeInterval(10)
        while heard.withLock({ $0.isEmpty }), Date() < deadline { usleep(10_000) }
        let saved = try #require(heard.withLock { $0.first })
        #expect(saved.updatedObjectIDs.map(\.rowID) == [ann.objectID.rowID])
        #expect(saved.insertedObjectIDs.map(\.rowID) == [tag.objectID.rowID])
        view.processPendingChanges()
        #expect(ann["age"] as? Int == 90, "the view context merged the other coordinator's save")
        // A coordinator is not told of its own saves.
        let own = ManagedObjectContext(coordinator: mine)
        try own.insertNewObject(forEntityName: "Tag")["name"] = "mine"
        try own.save()
        usleep(200_000)
        #expect(heard.withLock { $0.count } == 1)
    }

    @Test("fetches through the row cache return current rows whether all, some or most rows changed elsewhere")
    func cachedFetches() throws {
        let (mine, _, url) = try Self.store("cachedfetch", seeded: true)
        let theirs = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try theirs.addPersistentStore(type: .postgreSQL, at: url)
        func ages(_ coordinator: PersistentStoreCoordinator, where format: String = "TRUEPREDICATE") throws -> [Int] {
            let request = FetchRequest(
                entityName: "Employee", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("name")])
            return try ManagedObjectContext(coordinator: coordinator).fetch(request).map { $0["age"] as? Int ?? -1 }
        }
        func change(_ count: Int, by amount: Int) throws {
            let context = ManagedObjectContext(coordinator: theirs)
            let request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])
            for employee in try context.fetch(request).prefix(count) {
                employee["age"] = (employee["age"] as? Int ?? 0) + amount
            }
            try context.save()
        }
        let before = try ages(mine)
        #expect(try ages(mine) == before, "every row from the cache")
        for (count, amount) in [(1, 100), (12, 1_000), (3, 7)] {
            try change(count, by: amount)
            // Whether or not the notification has arrived yet, the versions tell what is stale.
            #expect(try ages(mine) == ages(theirs), "\(count) changed")
            #expect(try ages(mine, where: "age > 50") == ages(theirs, where: "age > 50"))
        }
    }

    @Test("primary keys are never handed out twice: across coordinators at once, and after a reopen")
    func keys() throws {
        let (first, store, url) = try Self.store("keys")
        let second = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let other = try second.addPersistentStore(type: .postgreSQL, at: url)
        let tag = try #require(ConformanceModel.model.entity(named: "Tag")).entityNumber
        let ranges = Locked<[ClosedRange<Int64>]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let driver = (index % 2 == 0 ? store : other).driver
            for _ in 0..<25 {
                // A failure shows as too few ranges below.
                if let range = try? driver.allocatePrimaryKeys(forEntity: tag, count: 1 + index) {
                    ranges.withLock { $0.append(range) }
                }
            }
        }
        let all = ranges.withLock { $0 }.sorted { $0.lowerBound < $1.lowerBound }
        #expect(all.count == 200)
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.upperBound < $1.lowerBound }, "ranges overlap")
        let highest = all.last?.upperBound ?? 0
        try first.remove(store)
        try second.remove(other)
        let reopened = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let again = try reopened.addPersistentStore(type: .postgreSQL, at: url)
        #expect(try again.driver.allocatePrimaryKeys(forEntity: tag, count: 1).lowerBound == highest + 1)
    }

    @Test(
        "a lock held past lock_timeout is a locked error, a statement past statement_timeout a timedOut error; nothing changes"
    )
    func timeouts() throws {
        let server = try PostgreSQLServer.shared()
        let (coordinator, _, url) = try Self.store("timeouts", seeded: true)
        let context = ManagedObjectContext(coordinator: coordinator)
        let ann = try context.fetch(
            FetchRequest(entityName: "Employee", predicate: try FetchPredicate(format: "name == 'Ann'")))[0]
        let schema = try Self.schema(of: url)
        // Another session holds Ann's row.
        let holder = try PostgreSQLAdmin.connect(server)
        defer { holder.close() }
        try holder.executeScript("BEGIN")
        try holder.executeScript(
            "SELECT 1 FROM \(schema.sqlName).\"ZEMPLOYEE\" WHERE \"Z_PK\" = \(ann.objectID.primaryKey) FOR UPDATE")
        for (options, code) in [
            (["lock_timeout": "0.2"], StoreError.Code.locked),
            (["lock_timeout": "0", "statement_timeout": "0.3"], .timedOut),
        ] {
            var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
            components.queryItems =
                (components.queryItems ?? []) + options.map { URLQueryItem(name: $0.key, value: $0.value) }
            let other = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
            try other.addPersistentStore(type: .postgreSQL, at: try Self.url(components))
            let editor = ManagedObjectContext(coordinator: other)
            let theirAnn = try editor.existingObject(
                with: ManagedObjectID(entity: ann.entity, rowID: ann.objectID.rowID, store: other.persistentStores[0]))
            theirAnn["age"] = 77
            let started = Date()
            #expect(throws: StoreError.self) { try editor.save() }
            do { try editor.save() } catch let error as StoreError {
                #expect(error.code == code, "\(error)")
                #expect(error.underlying is PostgreSQLError)
            }
            #expect(Date().timeIntervalSince(started) < 5)
        }
        try holder.executeScript("ROLLBACK")
        let fresh = try ManagedObjectContext(coordinator: coordinator).fetch(
            FetchRequest(entityName: "Employee", predicate: try FetchPredicate(format: "name == 'Ann'")))[0]
        #expect(fresh["age"] as? Int == 20)
    }

    @Test(
        "read-only stores refuse saves; a missing store is not created when asked not to; a foreign schema and another model are refused"
    )
    func openingRules() throws {
        let server = try PostgreSQLServer.shared()
        let (_, _, url) = try Self.store("rules", seeded: true)
        let reader = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try reader.addPersistentStore(type: .postgreSQL, at: url, options: StoreOptions(isReadOnly: true))
        let context = ManagedObjectContext(coordinator: reader)
        try context.insertNewObject(forEntityName: "Tag")["name"] = "nope"
        #expect { try context.save() } throws: { ($0 as? StoreError)?.code == .readOnly }
        // No store and no creating.
        let empty = server.url(schema: PostgreSQLTestServer.schemaName("empty"))
        #expect {
            try PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
                .addPersistentStore(type: .postgreSQL, at: empty, options: StoreOptions(createIfMissing: false))
        } throws: { ($0 as? StoreError)?.code == .notFound }
        // A schema holding someone else's tables.
        let foreign = PostgreSQLTestServer.schemaName("foreign")
        try PostgreSQLAdmin.execute(
            ["CREATE SCHEMA \(foreign)", "CREATE TABLE \(foreign).orders (id int)"], on: server)
        #expect {
            try PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model).addPersistentStore(
                type: .postgreSQL, at: server.url(schema: foreign))
        } throws: { ($0 as? StoreError)?.code == .invalidRequest && "\($0)".contains("orders") }
        // Another model.
        let other = try ManagedObjectModel(entities: [
            EntityDescription("Tag", properties: [.attribute("label", .string)])
        ])
        #expect {
            try PersistentStoreCoordinator(managedObjectModel: other).addPersistentStore(type: .postgreSQL, at: url)
        } throws: { ($0 as? StoreError)?.code == .modelMismatch }
        // A server that is not there.
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.port = try PostgreSQLTestServer.freePort()
        #expect {
            try PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model).addPersistentStore(
                type: .postgreSQL, at: try Self.url(components))
        } throws: { ($0 as? StoreError)?.code == .io }
    }

    @Test(
        "after the server restarts, the store reconnects, saves again and drops its cached rows (notifications may have been missed)"
    )
    func restart() throws {
        let server = try PostgreSQLTestServer(durable: false)
        defer { server.stop() }
        let url = server.url(schema: "restart")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .postgreSQL, at: url)
        try ConformanceModel.seed(ManagedObjectContext(coordinator: coordinator))
        _ = try ManagedObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Employee"))
        #expect(coordinator.rowCache.statistics.count > 0)
        try server.restart()
        let deadline = Date().addingTimeInterval(15)
        while coordinator.rowCache.statistics.count > 0, Date() < deadline { usleep(20_000) }
        #expect(coordinator.rowCache.statistics.count == 0, "the listener reported that it may have missed changes")
        let context = ManagedObjectContext(coordinator: coordinator)
        let employees = try context.fetch(FetchRequest(entityName: "Employee"))
        #expect(employees.count == ConformanceModel.employeeNames.count)
        employees[0]["age"] = 55
        try context.save()
        // And a second coordinator still hears the first one's saves.
        let other = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try other.addPersistentStore(type: .postgreSQL, at: url)
        let heard = Locked<Int>(0)
        coordinator.addRemoteChangeObserver { _ in heard.withLock { $0 += 1 } }
        let writer = ManagedObjectContext(coordinator: other)
        try writer.insertNewObject(forEntityName: "Tag")["name"] = "after restart"
        try writer.save()
        let heardDeadline = Date().addingTimeInterval(10)
        while heard.withLock({ $0 }) == 0, Date() < heardDeadline { usleep(10_000) }
        #expect(heard.withLock { $0 } == 1)
    }
}

extension PostgreSQLStoreTests {
    /// The URL of `components` (a test failure when they form none).
    static func url(_ components: URLComponents) throws -> URL {
        guard let url = components.url as URL? else {
            throw PostgreSQLTestServer.Failure(message: "no URL from \(components)")
        }
        return url
    }
}

extension PostgreSQLAdmin {
    /// `text` as an SQL string literal, for the test's own queries.
    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}
