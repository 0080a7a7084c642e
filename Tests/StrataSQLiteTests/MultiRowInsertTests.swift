import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// Runs of inserts go to SQLite in statements of several rows (`INSERT … VALUES (…), (…), …`)
/// and the rest one row at a time: every value of every row must arrive whatever the row's place
/// in a statement, and a statement that fails must leave the store as it was.
@Suite("SQLite: inserts in statements of several rows")
struct MultiRowInsertTests {
    /// A name exercising text binding: empty, NUL and the escape-like U+0001, non-ASCII, long.
    static func name(_ index: Int) -> String {
        switch index % 5 {
        case 0: return ""
        case 1: return "n\u{0}\(index)"
        case 2: return "Zoë \u{1} \(index)"
        case 3: return String(repeating: "long ", count: 20) + "\(index)"
        default: return "e\(index)"
        }
    }

    /// A context on the SQLite store at `url` (created when missing) with the conformance model.
    static func openStore(_ url: URL) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        return ManagedObjectContext(coordinator: coordinator)
    }

    @Test(
        "a save of 1, 31, 32, 33 and 100 objects with text, nils and to-ones stores every value",
        arguments: [1, 31, 32, 33, 100])
    func saveRuns(count: Int) throws {
        let directory = try TemporaryDirectory(prefix: "multi-row")
        let url = directory.file("store.sqlite")
        let context = try Self.openStore(url)
        let departments = try (0..<3).map { index in
            let department = try context.insertNewObject(forEntityName: "Department")
            department["name"] = "d\(index)"
            return department
        }
        var employees: [ManagedObject] = []
        for index in 0..<count {
            let employee = try context.insertNewObject(forEntityName: "Employee")
            employee["name"] = "\(index)|" + Self.name(index)
            employee["age"] = index % 3 == 0 ? nil : Int16(index % 100)
            employee["email"] = index % 4 == 0 ? nil : "e\(index)@example.com"
            employee["department"] = index % 7 == 0 ? nil : departments[index % 3]
            employee["mentor"] = index > 0 && index % 2 == 0 ? employees[index / 2] : nil
            employees.append(employee)
        }
        try context.save()

        let reader = try Self.openStore(url)
        let stored = try reader.fetch(FetchRequest(entityName: "Employee"))
        #expect(stored.count == count)
        // Names are unique when every value arrived; a repeated one (values in the wrong row) keeps
        // the first and fails below.
        let byName = Dictionary(stored.map { ($0["name"] as? String ?? "?", $0) }) { first, _ in first }
        for index in 0..<count {
            let name = "\(index)|" + Self.name(index)
            guard let employee = byName[name] else {
                Issue.record("employee \(index) (\(name.debugDescription)) is missing")
                continue
            }
            #expect(employee["age"] as? Int == (index % 3 == 0 ? nil : index % 100), "age of \(index)")
            #expect(
                employee["email"] as? String == (index % 4 == 0 ? nil : "e\(index)@example.com"), "email of \(index)")
            let department = (employee["department"] as? ManagedObject)?["name"] as? String
            #expect(department == (index % 7 == 0 ? nil : "d\(index % 3)"), "department of \(index)")
            let mentor = (employee["mentor"] as? ManagedObject)?["name"] as? String
            let expected = index > 0 && index % 2 == 0 ? "\(index / 2)|" + Self.name(index / 2) : nil
            #expect(mentor == expected, "mentor of \(index)")
        }
    }

    @Test("interleaved runs of entities sharing one table keep each row's entity and values")
    func sharedTableRuns() throws {
        let directory = try TemporaryDirectory(prefix: "multi-row")
        let url = directory.file("store.sqlite")
        let context = try Self.openStore(url)
        // 40 cars, 3 trucks, 35 sports cars, 40 more cars: runs longer and shorter than a statement.
        let plan: [(String, Int)] = [("Car", 40), ("Truck", 3), ("SportsCar", 35), ("Car", 40)]
        var made = 0
        for (entity, count) in plan {
            for _ in 0..<count {
                let vehicle = try context.insertNewObject(forEntityName: entity)
                vehicle["name"] = "\(entity) \(made)"
                made += 1
            }
        }
        try context.save()
        let reader = try Self.openStore(url)
        var request = FetchRequest(entityName: "Vehicle")
        request.includesSubentities = true
        let vehicles = try reader.fetch(request)
        #expect(vehicles.count == made)
        for vehicle in vehicles {
            let name = vehicle["name"] as? String ?? ""
            #expect(name.hasPrefix(vehicle.entity.name + " "), "\(name) is stored as a \(vehicle.entity.name)")
            #expect(vehicle["wheels"] as? Int == 4, "\(name) keeps its default")
        }
    }

    @Test("a batch insert of 75 rows of every attribute type stores each value")
    func batchInsert() throws {
        let directory = try TemporaryDirectory(prefix: "multi-row")
        let url = directory.file("store.sqlite")
        let context = try Self.openStore(url)
        let objects: [BatchInsertRequest.Object] = (0..<75).map { index in
            var object: BatchInsertRequest.Object = [
                "int64": Int64(index), "string": Self.name(index), "double": Double(index) / 4,
                "bool": index % 2 == 0, "date": Date(timeIntervalSinceReferenceDate: Double(index)),
                "binary": Data([UInt8(index), 0, 255]),
            ]
            if index % 6 == 0 { object["string"] = nil }
            return object
        }
        let result = try context.execute(BatchInsertRequest(entityName: "Item", objects: objects))
        #expect(result.status)
        let reader = try Self.openStore(url)
        let items = try reader.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("int64")]))
        #expect(items.count == 75)
        for (index, item) in items.enumerated() {
            #expect(item["int64"] as? Int == index)
            #expect(item["string"] as? String == (index % 6 == 0 ? nil : Self.name(index)), "string of \(index)")
            #expect(item["double"] as? Double == Double(index) / 4)
            #expect(item["bool"] as? Bool == (index % 2 == 0))
            #expect(item["date"] as? Date == Date(timeIntervalSinceReferenceDate: Double(index)))
            #expect(item["binary"] as? Data == Data([UInt8(index), 0, 255]))
        }
    }

    @Test("a statement of several rows that fails (keys a damaged counter hands out again) leaves the store as it was")
    func failedStatement() throws {
        let directory = try TemporaryDirectory(prefix: "multi-row")
        let (coordinator, store, url) = try makeItemStore(in: directory, named: "store.sqlite", count: 50) {
            "item \($0)"
        }
        try coordinator.remove(store)
        // Z_MAX set back: the next keys (11, 12, …) are rows the table holds already.
        let connection = try SQLiteConnection(path: url.path, mode: .readWrite)
        try connection.execute(
            "UPDATE Z_PRIMARYKEY SET Z_MAX = 10 WHERE Z_NAME = 'Item'")
        connection.close()

        let context = try Self.openStore(url)
        for index in 0..<60 {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["int64"] = 1_000 + index
            item["string"] = Self.name(index)
        }
        #expect(throws: StoreError.self) { try context.save() }

        let reader = try Self.openStore(url)
        let items = try reader.fetch(FetchRequest(entityName: "Item", sortKeys: [SortKey("int64")]))
        #expect(items.count == 50)
        #expect(items.map { $0["int64"] as? Int } == Array(1...50))
        #expect(items.map { $0["string"] as? String } == (1...50).map { "item \($0)" })
    }
}
