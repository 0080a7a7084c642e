import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// What the core asks of a driver, recorded by a ``RecordingDriver`` around the real SQLite driver:
/// the promises of DESIGN that no answer shows (one fetch per request with the work pushed down,
/// faults fired in batches, saves that cost O(k) whatever the store's size).
@Suite("Calls the core makes to a driver")
struct DriverCallTests {
    /// A store of `items` items and `departments` departments of 10 employees each, reopened
    /// through a recording driver with an empty row cache.
    static func store(items: Int, departments: Int = 0, in directory: TemporaryDirectory) throws -> (
        ManagedObjectContext, RecordingDriver
    ) {
        let url = directory.file("calls.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
            let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
            let context = ManagedObjectContext(coordinator: coordinator)
            for index in 0..<items {
                let item = try context.insertNewObject(forEntityName: "Item")
                item["int64"] = index
                item["string"] = "item \(index)"
            }
            for index in 0..<departments {
                let department = try context.insertNewObject(forEntityName: "Department")
                department["name"] = "department \(index)"
                for member in 0..<10 {
                    let employee = try context.insertNewObject(forEntityName: "Employee")
                    employee["name"] = "employee \(index).\(member)"
                    employee.setValue(department, forKey: "department")
                }
            }
            try context.save()
            try coordinator.remove(store)
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: RecordingDriver.storeType(wrapping: .sqlite), at: url)
        // The store was opened through RecordingDriver.storeType(wrapping:).
        let driver = try #require(store.driver as? RecordingDriver)
        driver.clearCalls()
        return (ManagedObjectContext(coordinator: coordinator), driver)
    }

    @Test(
        "a fetch with a predicate, sort and page is one driver fetch that applies all three, and reads no rows one by one"
    )
    func fetchIsPushedDown() throws {
        let directory = try TemporaryDirectory(prefix: "driver-calls")
        let (context, driver) = try Self.store(items: 500, in: directory)
        var request = FetchRequest(
            entityName: "Item", predicate: try FetchPredicate(format: "int64 >= 100"),
            sortKeys: [SortKey("int64", ascending: false)])
        request.fetchLimit = 20
        let objects = try context.fetch(request)
        #expect(objects.count == 20)
        #expect(objects.first?["int64"] as Int? == 499)
        for object in objects { _ = object["string"] as String? }
        let fetches = driver.calls(.fetch)
        #expect(fetches.count == 1, "\(driver.calls)")
        let applied = try #require(fetches.first?.applied)
        #expect(applied.predicate && applied.sort && applied.page, "the SQLite driver applied \(applied)")
        #expect(driver.calls(.rows).isEmpty, "values came with the fetch: \(driver.calls)")
    }

    @Test("a count is one driver fetch and registers no objects")
    func countIsPushedDown() throws {
        let directory = try TemporaryDirectory(prefix: "driver-calls")
        let (context, driver) = try Self.store(items: 300, in: directory)
        #expect(
            try context.count(
                for: FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "int64 < 120"))) == 120)
        #expect(driver.calls(.fetch).count == 1)
        #expect(driver.calls(.rows).isEmpty)
        #expect(context.registeredObjects.isEmpty)
    }

    @Test("a batched fetch's faults fire one batch at a time: one driver read per batch, not one per object")
    func faultsFireInBatches() throws {
        let directory = try TemporaryDirectory(prefix: "driver-calls")
        let (context, driver) = try Self.store(items: 200, in: directory)
        var request = FetchRequest(entityName: "Item", sortKeys: [SortKey("int64")])
        request.fetchBatchSize = 50
        let faults = try context.fetch(request)
        #expect(faults.count == 200)
        #expect(faults.allSatisfy { $0.isFault })
        #expect(driver.calls(.rows).isEmpty, "a batched fetch reads IDs only")
        driver.clearCalls()
        let total = faults.reduce(0) { $0 + (($1["int64"] as Int?) ?? 0) }
        #expect(total == (0..<200).reduce(0, +))
        #expect(driver.calls(.rows).map(\.size) == [50, 50, 50, 50], "\(driver.calls)")
        #expect(driver.calls(.fetch).isEmpty)
    }

    @Test("without property values or a batch size, each fault reads its own row when used, as in Core Data")
    func faultsWithoutValuesFireAlone() throws {
        let directory = try TemporaryDirectory(prefix: "driver-calls")
        let (context, driver) = try Self.store(items: 30, in: directory)
        var request = FetchRequest(entityName: "Item", sortKeys: [SortKey("int64")])
        request.includesPropertyValues = false
        let faults = try context.fetch(request)
        driver.clearCalls()
        _ = faults[3]["string"] as String?
        _ = faults[7]["string"] as String?
        #expect(driver.calls(.rows).map(\.size) == [1, 1], "only the objects used are read: \(driver.calls)")
        #expect(faults.filter { !$0.isFault }.count == 2)
    }

    @Test(
        "prefetching a to-one relationship reads every destination in one call during the fetch, and the walk reads nothing"
    )
    func prefetchedToOneWalkReadsNothing() throws {
        let directory = try TemporaryDirectory(prefix: "driver-calls")
        let (context, driver) = try Self.store(items: 0, departments: 8, in: directory)
        var request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])
        request.relationshipKeyPathsForPrefetching = ["department"]
        let employees = try context.fetch(request)
        #expect(employees.count == 80)
        let duringFetch = driver.calls.filter { [.fetch, .rows, .relatedRows].contains($0.operation) }
        #expect(duringFetch.count == 2, "the employees, then their 8 departments: \(driver.calls)")
        driver.clearCalls()
        var names = Set<String>()
        for employee in employees {
            if let name = employee.object(forKey: "department")?["name"] as String? { names.insert(name) }
        }
        #expect(names.count == 8)
        #expect(driver.calls.isEmpty, "the walk found everything registered: \(driver.calls)")
    }

    @Test("saving k changed objects sends k rows in one apply, whatever the store's size", arguments: [10, 5_000])
    func saveCostsK(_ size: Int) throws {
        let directory = try TemporaryDirectory(prefix: "driver-calls")
        let (context, driver) = try Self.store(items: size, in: directory)
        let request = FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "int64 < 3"))
        let changed = try context.fetch(request)
        #expect(changed.count == 3)
        for object in changed { object["string"] = "changed" }
        let inserted = try context.insertNewObject(forEntityName: "Item")
        inserted["int64"] = -1
        driver.clearCalls()
        try context.save()
        let applies = driver.calls(.apply)
        #expect(applies.count == 1)
        #expect(applies.first?.size == 4, "3 updates and 1 insert: \(driver.calls)")
        #expect(
            driver.calls(.fetch).isEmpty && driver.calls(.rows).isEmpty, "a save reads nothing back: \(driver.calls)")
        #expect(driver.calls(.allocatePrimaryKeys).map(\.size) == [1])
    }
}
