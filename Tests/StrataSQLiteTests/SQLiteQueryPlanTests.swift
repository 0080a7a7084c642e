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
            try connection.rows("EXPLAIN QUERY PLAN " + sql).compactMap { $0.last?.text }.joined(separator: "; ")
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
