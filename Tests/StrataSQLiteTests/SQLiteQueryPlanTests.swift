import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// How SQLite runs the driver's fetches: asked through `EXPLAIN QUERY PLAN` for the statements the
/// driver logs.
@Suite("SQLite query plans")
struct SQLiteQueryPlanTests {
    static let model: ManagedObjectModel = {
        // Configured by hand, and a model no valid program changes: `try!` cannot fail here.
        try! ManagedObjectModel(entities: [
            EntityDescription(
                "Item", properties: [.attribute("name", .string), .attribute("age", .integer32)]),
            EntityDescription("Shape", properties: [.attribute("label", .string)]),
            EntityDescription("Circle", parent: "Shape", properties: [.attribute("radius", .double)]),
        ])
    }()

    /// The plan SQLite chooses for each `SELECT` a fetch logs, one string per statement.
    static func plans(
        of requests: [FetchRequest], in directory: TemporaryDirectory
    ) throws -> [String] {
        try explain(requests, in: directory, "EXPLAIN QUERY PLAN ", column: { $0.last?.text })
    }

    /// The opcodes of the program SQLite compiles for each `SELECT` a fetch logs, with the statement.
    static func programs(
        of requests: [FetchRequest], in directory: TemporaryDirectory
    ) throws -> [(sql: String, opcodes: String)] {
        var statements: [String] = []
        let opcodes = try explain(
            requests, in: directory, "EXPLAIN ", logged: { statements.append($0) },
            column: { $0.count > 1 ? $0[1].text : nil })
        return Array(zip(statements, opcodes))
    }

    private static func explain(
        _ requests: [FetchRequest], in directory: TemporaryDirectory, _ prefix: String,
        logged: (String) -> Void = { _ in }, column: ([SQLiteValue]) -> String?
    ) throws -> [String] {
        let url = directory.file("plans.sqlite")
        let capture = LogCapture()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            type: .sqlite, at: url, options: StoreOptions(log: capture.storeLog(.statements)))
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<200 {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["name"] = "item \(index)"
            item["age"] = Int32(index % 90)
            let shape = try context.insertNewObject(forEntityName: index % 2 == 0 ? "Shape" : "Circle")
            shape["label"] = "shape \(index)"
        }
        try context.save()
        let before = capture.lines.count
        for request in requests { _ = try context.fetch(request) }
        let statements = capture.lines.dropFirst(before).compactMap { line -> String? in
            guard let start = line.text.range(of: "SELECT ") else { return nil }
            // The driver's collation lives on its own connections; it does not change which index
            // SQLite picks here (no index holds the sorted column).
            return String(line.text[start.lowerBound...]).replacingOccurrences(of: " COLLATE STRATA", with: "")
        }
        let connection = try SQLiteConnection(path: url.path)
        defer { connection.close() }
        return try statements.map { sql in
            logged(sql)
            return try connection.rows(prefix + sql).compactMap(column).joined(separator: "; ")
        }
    }

    @Test("a sorted fetch without a page sorts with SQLite's merge sorter; a paged one keeps its LIMIT and OFFSET")
    func unpagedSortsUseTheSorter() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-plans")
        let sorted = FetchRequest(entityName: "Item", sortKeys: [SortKey("name")])
        var paged = sorted
        paged.fetchLimit = 5
        paged.fetchOffset = 3
        let programs = try Self.programs(of: [sorted, paged], in: directory)
        #expect(programs.count == 2, "one statement per fetch: \(programs.map(\.sql))")
        guard programs.count == 2 else { return }
        // With any LIMIT clause, even `LIMIT -1`, SQLite sorts through an ephemeral b-tree instead.
        #expect(!programs[0].sql.contains("LIMIT"), "\(programs[0].sql)")
        #expect(programs[0].opcodes.contains("SorterSort"), "\(programs[0].opcodes)")
        #expect(!programs[0].opcodes.contains("OpenEphemeral"), "\(programs[0].opcodes)")
        #expect(programs[1].sql.hasSuffix(" LIMIT 5 OFFSET 3"), "\(programs[1].sql)")
    }

    @Test("a page of a sorted fetch is the same slice of the whole sorted fetch")
    func pagesAreSlicesOfTheSortedFetch() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-pages")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model)
        try coordinator.addPersistentStore(type: .sqlite, at: directory.file("pages.sqlite"))
        let context = ManagedObjectContext(coordinator: coordinator)
        // Ages repeat, so the tie-break by row decides the order within each age.
        for index in 0..<120 {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["name"] = "item \((index * 37) % 120)"
            item["age"] = Int32(index % 7)
        }
        try context.save()
        let sorts = [SortKey("age", ascending: false)]
        let whole = try context.fetch(FetchRequest(entityName: "Item", sortKeys: sorts))
        #expect(whole.count == 120)
        let ages = whole.map { ($0["age"] as Int32?) ?? -1 }
        #expect(ages == ages.sorted(by: >))
        for (offset, limit) in [(0, 10), (15, 20), (110, 30), (120, 5)] {
            var request = FetchRequest(entityName: "Item", sortKeys: sorts)
            request.fetchOffset = offset
            request.fetchLimit = limit
            let page = try context.fetch(request)
            let expected = whole[min(offset, whole.count)..<min(offset + limit, whole.count)]
            #expect(page.map(\.objectID) == expected.map(\.objectID), "offset \(offset), limit \(limit)")
        }
    }

    @Test("a fetch without sort keys reads its table in key order: one pass, no index, no sort")
    func unsortedFetchesScan() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-plans")
        let plans = try Self.plans(
            of: [
                FetchRequest(entityName: "Item"),
                FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "age BETWEEN {30, 40}")),
            ], in: directory)
        #expect(plans.count == 2, "one statement per fetch: \(plans)")
        for plan in plans {
            #expect(plan == "SCAN t0", "the tie-break order by Z_ENT, Z_PK must cost no sort: \(plan)")
        }
    }

    @Test("a fetch of a subentity alone searches the Z_ENT index")
    func subentitiesUseTheIndex() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-plans")
        let subentity = try Self.plans(of: [FetchRequest(entityName: "Circle")], in: directory)
        #expect(
            subentity.count == 1 && subentity[0].contains("USING INDEX ZSHAPE_Z_ENT_INDEX (Z_ENT=?)"), "\(subentity)")
    }
}
