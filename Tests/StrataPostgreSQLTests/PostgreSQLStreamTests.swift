import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataPostgreSQL

/// Fetches without bound values read their rows as a binary COPY stream (PGConnection+Copy.swift):
/// the rows must be the ones a statement returns, streams that stop early or fail must leave the
/// connection usable, and a damaged stream is an error, never a wrong row.
@Suite("PostgreSQL streamed fetches")
struct PostgreSQLStreamTests {
    // MARK: The stream format

    /// The bytes of a binary COPY stream holding `rows` (nil for NULL), split into one message for
    /// the header and first row, one per later row, and one for the trailer, as the server sends.
    static func stream(_ rows: [[[UInt8]?]], extensionBytes: [UInt8] = []) -> [[UInt8]] {
        func int16(_ value: Int16) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        func int32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        var messages: [[UInt8]] = []
        let header = BinaryCopyReader.signature + int32(0) + int32(Int32(extensionBytes.count)) + extensionBytes
        for (index, row) in rows.enumerated() {
            var message = index == 0 ? header : []
            message += int16(Int16(row.count))
            for value in row { message += value.map { int32(Int32($0.count)) + $0 } ?? int32(-1) }
            messages.append(message)
        }
        messages.append((rows.isEmpty ? header : []) + int16(-1))
        return messages
    }

    /// Reads `messages` with a reader of `columns` columns; the rows as (bytes or nil) per column.
    static func read(_ messages: [[UInt8]], columns: Int) throws -> (rows: [[[UInt8]?]], finished: Bool) {
        let reader = BinaryCopyReader(columns: columns)
        var rows: [[[UInt8]?]] = []
        for message in messages {
            _ = try message.withUnsafeBytes { bytes in
                try reader.read(bytes, state: &rows) { row, rows in
                    rows.append((0..<columns).map { row.isNull($0) ? nil : Array(row.bytes($0)) })
                    return true
                }
            }
        }
        return (rows, reader.finished)
    }

    @Test("binary COPY messages split into rows with NULLs, empty values and a header extension")
    func streamFormat() throws {
        let rows: [[[UInt8]?]] = [
            [[0, 0, 0, 0, 0, 0, 0, 7], nil, Array("héllo".utf8)],
            [[0, 0, 0, 0, 0, 0, 0, 8], [], nil],
            [[0, 0, 0, 0, 0, 0, 0, 9], [1], Array(repeating: 0x41, count: 3000)],
        ]
        let read = try Self.read(Self.stream(rows, extensionBytes: [9, 9, 9]), columns: 3)
        #expect(read.rows == rows)
        #expect(read.finished)
        // Everything in one message reads the same.
        let whole = try Self.read([Self.stream(rows).flatMap { $0 }], columns: 3)
        #expect(whole.rows == rows)
        #expect(whole.finished)
        // No rows at all: a header and a trailer.
        let empty = try Self.read(Self.stream([]), columns: 3)
        #expect(empty.rows.isEmpty && empty.finished)
        // Integers of every width read through the row as the driver reads them.
        let widths: [[UInt8]?] = [[0xFF, 0xFE], [0, 0, 1, 0], [0x80, 0, 0, 0, 0, 0, 0, 0]]
        let reader = BinaryCopyReader(columns: 3)
        var values: [Int64] = []
        for message in Self.stream([widths]) {
            _ = try message.withUnsafeBytes { bytes in
                try reader.read(bytes, state: &values) { row, values in
                    values = (0..<3).map { row.int64($0) }
                    return true
                }
            }
        }
        #expect(values == [-2, 256, Int64.min])
    }

    @Test("a damaged COPY stream is an error naming what is wrong, never a row read from the wrong bytes")
    func damagedStreams() throws {
        let good = Self.stream([[[1, 2], nil], [[3], [4, 5, 6]]])
        var wrongSignature = good
        wrongSignature[0][0] = 0x51
        var withOIDs = good
        withOIDs[0][12] = 1  // flags bit 16 (big-endian, after the 11-byte signature)
        var longExtension = good
        longExtension[0][18] = 200  // a header extension longer than the message
        let cases: [(String, [[UInt8]], String)] = [
            ("signature", wrongSignature, "signature"),
            ("OIDs", withOIDs, "OIDs"),
            ("extension", longExtension, "header is cut short"),
            ("short header", [Array(good[0].prefix(12))], "signature"),
            ("value count", [good[0], [0, 3] + Array(good[1].dropFirst(2))], "3 values, not 2"),
            ("cut value", [good[0], Array(good[1].dropLast(1))], "value is cut short"),
            ("cut length", [good[0], Array(good[1].prefix(9))], "row is cut short"),
            ("after trailer", good + [good[1]], "data follows its trailer"),
            ("half a count", [good[0], [0]], "row is cut short"),
        ]
        for (name, messages, expected) in cases {
            #expect("\(name)") {
                _ = try Self.read(messages, columns: 2)
            } throws: { error in
                "\(error)".contains(expected) && "\(error)".contains("COPY stream")
            }
        }
        // A stream that just ends (no trailer) reads its rows but is not finished; the connection
        // reports that as an error.
        let unfinished = try Self.read(Array(good.dropLast()), columns: 2)
        #expect(unfinished.rows.count == 2 && !unfinished.finished)
    }

    // MARK: Against the server

    /// A store with `count` items holding values of every type, some NULL, strings with the
    /// escaped characters U+0000 and U+0001.
    static func seededStore(_ label: String, count: Int, seed: UInt64, options: [String: String] = [:]) throws
        -> (PersistentStoreCoordinator, PersistentStore, URL)
    {
        let (coordinator, store, url) = try PostgreSQLStoreTests.store(label, options: options)
        var generator = SeededGenerator(seed: seed)
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<count {
            let item = try context.insertNewObject(forEntityName: "Item")
            let empty = Int.random(in: 0..<6, using: &generator) == 0
            item["int16"] = empty ? nil : Int16.random(in: .min ... .max, using: &generator)
            item["int32"] = Int32(index)
            item["int64"] = empty ? nil : Int64.random(in: .min ... .max, using: &generator)
            item["decimal"] = empty ? nil : Decimal(string: "\(Int.random(in: -99999...99999, using: &generator)).125")
            item["double"] = Double.random(in: -1e9...1e9, using: &generator)
            item["float"] = empty ? nil : Float.random(in: -1000...1000, using: &generator)
            let pieces = ["a", "\u{0}", "\u{1}", "é", "👩‍👩‍👧", " ", "z"]
            item["string"] =
                empty
                ? nil
                : (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                    .joined()
            item["bool"] = index % 3 == 0
            item["date"] = Date(timeIntervalSinceReferenceDate: Double(index) * 3_600.25)
            item["binary"] = empty ? nil : Data((0..<Int.random(in: 0...40, using: &generator)).map { UInt8($0 % 256) })
            item["uuid"] = empty ? nil : UUID()
            item["uri"] = URL(string: "https://example.com/\(index)")
            item["words"] = ["w\(index)"]
        }
        try context.save()
        return (coordinator, store, url)
    }

    /// The store at `url` opened again with a pool of one connection, and its driver.
    static func singleConnection(_ url: URL) throws -> (PersistentStoreCoordinator, PostgreSQLDriver) {
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "pool_size", value: "1")]
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: .postgreSQL, at: try PostgreSQLStoreTests.url(components))
        return (coordinator, try #require(store.driver as? PostgreSQLDriver))
    }

    @Test("a fetch without bound values streams its rows: the rows and values the prepared reads give, in parts")
    func streamedRowsMatch() throws {
        let seed: UInt64 = 0x57_2EA4
        let count = 1_500
        let capture = LogCapture()
        let (_, store, url) = try Self.seededStore("stream-match", count: count, seed: seed)
        print("streamed rows: seed \(seed), \(count) items")
        // Another coordinator, with an empty row cache and statements logged.
        let reader = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let logged = try reader.addPersistentStore(
            type: .postgreSQL, at: url, options: StoreOptions(log: capture.storeLog(.statements)))
        let item = try #require(ConformanceModel.model.entity(named: "Item"))
        var parts = 0
        var streamed: [RowSnapshot] = []
        try logged.driver.fetch(StoreFetch(entity: item)) { part in
            parts += 1
            streamed += part.rows
        }
        #expect(streamed.count == count)
        #expect(parts >= count / PostgreSQLDriver.fetchPart, "handed over in parts, \(parts)")
        #expect(capture.lines.contains { $0.text.contains("COPY (SELECT") && $0.text.contains("FORMAT binary") })
        // The same rows through prepared statements (a statement's answer, not a stream).
        let byKey = try store.driver.rows(for: streamed.map(\.id))
        let expected = Dictionary(byKey.map { ($0.id, $0) }) { first, _ in first }
        var differing: [String] = []
        for row in streamed where expected[row.id] != row {
            differing.append("\(row.id): \(row.values) against \(String(describing: expected[row.id]?.values))")
        }
        #expect(differing.isEmpty, "\(differing.prefix(3).joined(separator: "\n"))")
        // And the one-call fetch gives the same rows in the same order.
        #expect(try logged.driver.fetch(StoreFetch(entity: item)).rows == streamed)
        // With a bound value, the statement's answer: the same rows.
        var filtered = StoreFetch(entity: item)
        filtered.predicate = try FetchPredicate(format: "int32 >= %d", 0)
        #expect(Set(try logged.driver.fetch(filtered).rows.map(\.id)) == Set(streamed.map(\.id)))
    }

    @Test("a stream stopped early (a residual predicate with a limit) is cancelled; the same connection serves on")
    func stoppedEarly() throws {
        let (_, _, url) = try Self.seededStore("stream-stop", count: 3_000, seed: 0x5709)
        let (coordinator, driver) = try Self.singleConnection(url)
        let before = driver.pool.idleBackendPIDs
        #expect(before.count == 1)
        let item = try #require(ConformanceModel.model.entity(named: "Item"))
        // MATCHES is not translated: the driver filters (the SQL only sorts) and pages itself, so
        // it stops reading after the fifth match.
        var request = StoreFetch(entity: item)
        request.predicate = try FetchPredicate(format: "string MATCHES %@", ".*a.*")
        request.sort = [SortKey("int32")]
        request.limit = 5
        let page = try driver.fetch(request)
        #expect(page.appliedPredicate && page.appliedPage)
        let all = try ManagedObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Item"))
        let expected = try all.filter { try request.predicate!.evaluate(with: $0) }
            .compactMap { $0["int32"] as? Int }.sorted().prefix(5)
        #expect(expected.count == 5)
        let firsts = page.rows.map { $0.values[item.index(ofProperty: "int32")!] }
        #expect(firsts == expected.map { StoreValue.integer(Int64($0)) })
        #expect(driver.pool.idleBackendPIDs == before, "the connection went back to the pool idle")
        // The next fetch on the one connection reads everything.
        #expect(try driver.fetch(StoreFetch(entity: item)).rows.count == 3_000)
        #expect(driver.pool.idleBackendPIDs == before)
        // A context's fetch with a limit and the residual predicate gives the same page.
        var fetch = FetchRequest(entityName: "Item", predicate: request.predicate, sortKeys: request.sort)
        fetch.fetchLimit = 5
        let objects = try ManagedObjectContext(coordinator: coordinator).fetch(fetch)
        #expect(objects.compactMap { $0["int32"] as? Int } == Array(expected))
    }

    @Test("a damaged row in the middle of a stream is a corrupt error naming it; once fixed, the store reads again")
    func damagedRowMidStream() throws {
        let server = try PostgreSQLServer.shared()
        let (_, _, url) = try Self.seededStore("stream-damage", count: 2_000, seed: 0xDA3A)
        let schema = try PostgreSQLStoreTests.schema(of: url)
        try PostgreSQLAdmin.execute(
            ["UPDATE \(schema.sqlName).\"ZITEM\" SET \"Z_PK\" = -7 WHERE \"ZINT32\" = 1200"], on: server)
        let (coordinator, driver) = try Self.singleConnection(url)
        let before = driver.pool.idleBackendPIDs
        let item = try #require(ConformanceModel.model.entity(named: "Item"))
        var parts = 0
        #expect {
            try driver.fetch(StoreFetch(entity: item)) { _ in parts += 1 }
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .corrupt && "\(error)".contains("'Item'") && "\(error)".contains("-7")
        }
        #expect(driver.pool.idleBackendPIDs == before, "the stream was cancelled and the connection kept")
        // A context sees the same error and keeps nothing half-fetched.
        let context = ManagedObjectContext(coordinator: coordinator)
        #expect(throws: StoreError.self) { try context.fetch(FetchRequest(entityName: "Item")) }
        #expect(context.registeredObjects.isEmpty)
        try PostgreSQLAdmin.execute(
            ["UPDATE \(schema.sqlName).\"ZITEM\" SET \"Z_PK\" = 1000000 WHERE \"Z_PK\" = -7"], on: server)
        #expect(try context.fetch(FetchRequest(entityName: "Item")).count == 2_000)
    }

    @Test("rows come in key order: one entity's from the primary key's index, a hierarchy's by entity then key")
    func keyOrder() throws {
        let server = try PostgreSQLServer.shared()
        let (coordinator, url, capture) = try PostgreSQLStoreTests.loggedStore("key-order")
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<300 {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["int32"] = Int32(index)
            let vehicle = try context.insertNewObject(forEntityName: ["Car", "Truck", "SportsCar"][index % 3])
            vehicle["name"] = "v\(index)"
        }
        try context.save()
        // Updating every third row moves it to the end of the table's heap: stored order is no
        // longer key order.
        let schema = try PostgreSQLStoreTests.schema(of: url)
        try PostgreSQLAdmin.execute(
            [
                "UPDATE \(schema.sqlName).\"ZITEM\" SET \"ZINT32\" = \"ZINT32\" WHERE \"Z_PK\" % 3 = 0",
                "UPDATE \(schema.sqlName).\"ZVEHICLE\" SET \"ZNAME\" = \"ZNAME\" WHERE \"Z_PK\" % 3 = 0",
            ], on: server)
        let heap = try PostgreSQLAdmin.rows("SELECT \"Z_PK\"::text FROM \(schema.sqlName).\"ZITEM\"", on: server)
        #expect(heap.map { Int($0[0]!)! } != heap.map { Int($0[0]!)! }.sorted(), "the heap is out of key order")

        let model = ConformanceModel.model
        let driver = coordinator.persistentStores[0].driver
        let items = try driver.fetch(StoreFetch(entity: try #require(model.entity(named: "Item")))).rows.map(\.id)
        #expect(items.count == 300)
        #expect(items == items.sorted())
        // The statement's order is the primary key's index order: with the index preferred (the
        // planner reads a table this small whole and sorts it; 100,000 rows it reads by the index),
        // the plan has no sort of its own.
        let copy = try #require(capture.lines.last { $0.text.contains("COPY (SELECT") && $0.text.contains("ZITEM") })
        let select = try #require(copy.text.range(of: "COPY (").map { copy.text[$0.upperBound...] })
            .components(separatedBy: ") TO STDOUT").first
        let admin = try PostgreSQLAdmin.connect(server)
        defer { admin.close() }
        try admin.executeScript("SET enable_seqscan = off")
        let plan = try admin.execute("EXPLAIN \(try #require(select))")
        let lines = (0..<plan.rowCount).map { plan.rawString($0, 0) }
        #expect(lines.first?.contains("Index Scan") == true && !lines.contains { $0.contains("Sort") }, "\(lines)")

        // A hierarchy: by entity, then key.
        var vehicles = StoreFetch(entity: try #require(model.entity(named: "Vehicle")))
        vehicles.includesSubentities = true
        let all = try driver.fetch(vehicles).rows.map(\.id)
        #expect(all.count == 300)
        #expect(all == all.sorted())
        #expect(Set(all.map(\.entity)).count == 3)
        // One entity of the hierarchy: its own rows, by key.
        var cars = StoreFetch(entity: try #require(model.entity(named: "Car")))
        cars.includesSubentities = false
        let carIDs = try driver.fetch(cars).rows.map(\.id)
        #expect(carIDs.count == 100)
        #expect(carIDs == carIDs.sorted())
        // A context's fetch without sort keys gives the objects in the same order.
        let objects = try ManagedObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Item"))
        #expect(objects.map(\.objectID.rowID) == items)
    }
}
