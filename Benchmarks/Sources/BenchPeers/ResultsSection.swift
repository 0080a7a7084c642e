import CSQLiteBench
import Foundation
import Strata
import StrataTools

/// The results figures: a batch insert of N rows on SQLite against raw sqlite3 C inserts of the
/// same rows (one transaction, one prepared statement); a fetched results controller updating
/// after 100 changes against a result of N objects, against a full refetch; and the peak resident
/// growth of walking a large result fetched with `fetchBatchSize = 500` (measured by the caller in
/// child processes, ``walkBatched(store:type:)``).
public struct ResultsSectionResult: Codable, Sendable {
    /// Rows of the batch insert and objects of the controller's result.
    public var rows: Int
    /// Batch insert through `context.execute` in the dictionary form (`objects:`, an array of
    /// `[String: any Sendable]` built before the clock starts), and raw C inserts of the same
    /// rows (ms per round).
    public var batchInsertMs: [Double] = [], rawInsertMs: [Double] = []
    /// The same batch insert in the managed object handler form (`managedObjectHandler:`, each
    /// row's six values set through the typed subscript), ms per round; `nil` in results written
    /// before it was measured.
    public var batchInsertHandlerMs: [Double]? = []
    /// The calling thread's CPU time over the dictionary-form batch insert and over the raw C
    /// inserts (ms per round, the rounds of ``batchInsertMs`` and ``rawInsertMs``): wall time
    /// above it is waiting, mostly for the disk in the commit's checkpoint. `nil` in results
    /// written before it was measured.
    public var batchInsertCpuMs: [Double]? = [], rawInsertCpuMs: [Double]? = []
    /// The controller following 100 changes, and a full refetch (`performFetch`) (ms per round).
    public var controllerUpdateMs: [Double] = [], refetchMs: [Double] = []
    /// Objects changed per controller update.
    public var changed: Int = 100
    /// Rows walked by the batched fetch.
    public var walkedRows: Int = 0
    /// Peak resident growth of the batched walk by driver name, in bytes.
    public var walkGrowthBytes: [String: Int64] = [:]
    /// Seconds each batched walk took, by driver name.
    public var walkSeconds: [String: Double] = [:]
    /// The anonymous (heap) part of the resident set at its largest during the walk, minus that
    /// part after opening the store, by driver name: the growth without the store file's pages
    /// that a memory map (LMDB's) makes resident. `nil` in results written before it was measured.
    public var walkAnonymousGrowthBytes: [String: Int64]? = [:]
    /// The resident set right after the fetch (the matching IDs read, no object made yet), minus
    /// the resident set after opening, by driver name.
    public var walkAfterFetchBytes: [String: Int64]? = [:]
    /// The resident pages of the store file's memory map at the end of the walk (LMDB's; 0 for
    /// a store read without one), by driver name: page cache the walk's growth includes.
    public var walkMappedStoreBytes: [String: Int64]? = [:]

    /// The median of `values`.
    public static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// Creates an empty result.
    public init(rows: Int) { self.rows = rows }
}

/// Runs the results workloads (see ``ResultsSectionResult``).
public enum ResultsSection {
    /// A batch insert of `rows` in the managed object handler form: the handler sets each row's
    /// values on the object it is given, as Core Data code fills an `NSBatchInsertRequest`'s object.
    static func handlerRequest(_ rows: [BenchRow]) -> BatchInsertRequest {
        let cursor = RowCursor()
        return BatchInsertRequest(
            entityName: "Item",
            managedObjectHandler: { object in
                let index = cursor.next
                guard index < rows.count else { return true }
                let row = rows[index]
                object["id"] = row.id
                object["name"] = row.name
                object["email"] = row.email
                object["age"] = row.age
                object["score"] = row.score
                object["created"] = row.created
                cursor.next = index + 1
                return false
            })
    }

    /// The objects of a batch insert of `rows`, in the request's dictionary form.
    static func objects(_ rows: ArraySlice<BenchRow>) -> [BatchInsertRequest.Object] {
        rows.map {
            ["id": $0.id, "name": $0.name, "email": $0.email, "age": $0.age, "score": $0.score, "created": $0.created]
        }
    }

    /// Times the batch insert and the controller `rounds` times at `rows` objects in stores under
    /// `directory`.
    public static func run(rows: Int, rounds: Int, in directory: URL) throws -> ResultsSectionResult {
        guard let sqlite = KnownDriver.sqlite.storeType else { throw BenchError("the SQLite driver is not linked") }
        let model = try BenchModel.make()
        var result = ResultsSectionResult(rows: rows)
        let dataset = BenchDataset(rows: rows, parents: 0)
        let objects = objects(dataset.rows[...])
        for round in 0..<rounds {
            // The three contenders run in a different order each round, so none always runs
            // first (on a fresh heap) or last.
            let contenders: [() throws -> Void] = [
                {
                    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
                    try coordinator.addPersistentStore(
                        type: sqlite, at: directory.appendingPathComponent("insert-\(round).sqlite"))
                    let context = ManagedObjectContext(coordinator: coordinator)
                    let request = BatchInsertRequest(entityName: "Item", objects: objects)
                    let timed = try BenchClock.measureWithCPU { () throws -> Void in _ = try context.execute(request) }
                    result.batchInsertMs.append(timed.wall)
                    result.batchInsertCpuMs?.append(timed.cpu)
                    let count = try context.count(for: FetchRequest(entityName: "Item"))
                    guard count == rows else { throw BenchError("the batch insert stored \(count) rows, not \(rows)") }
                },
                {
                    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
                    try coordinator.addPersistentStore(
                        type: sqlite, at: directory.appendingPathComponent("handler-\(round).sqlite"))
                    let context = ManagedObjectContext(coordinator: coordinator)
                    let request = handlerRequest(dataset.rows)
                    result.batchInsertHandlerMs?.append(
                        try BenchClock.measure { () throws -> Void in _ = try context.execute(request) }.1)
                    let count = try context.count(for: FetchRequest(entityName: "Item"))
                    guard count == rows else {
                        throw BenchError("the handler's batch insert stored \(count) rows, not \(rows)")
                    }
                },
                {
                    let db = try RawSQLite(path: directory.appendingPathComponent("raw-\(round).sqlite").path)
                    try db.exec(SQLiteCContender.schema)
                    let timed = try BenchClock.measureWithCPU { () throws -> Void in
                        try db.exec("BEGIN IMMEDIATE")
                        try SQLiteCContender.insertItems(dataset.rows, into: db)
                        try db.exec("COMMIT")
                    }
                    result.rawInsertMs.append(timed.wall)
                    result.rawInsertCpuMs?.append(timed.cpu)
                },
            ]
            for offset in contenders.indices { try contenders[(round + offset) % contenders.count]() }
        }
        // A controller over every object, sorted by score, following 100 changes of its context.
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: sqlite, at: directory.appendingPathComponent("controller.sqlite"))
        let context = ManagedObjectContext(coordinator: coordinator)
        try context.execute(BatchInsertRequest(entityName: "Item", objects: objects))
        let request = FetchRequest(entityName: "Item", sortKeys: [SortKey("score"), SortKey("id")])
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
        try controller.performFetch()
        let held = controller.fetchedObjects ?? []
        guard held.count == rows else { throw BenchError("the controller holds \(held.count) objects, not \(rows)") }
        let changed = min(100, rows)
        result.changed = changed
        var generator = SystemRandomNumberGenerator()
        for round in 0..<max(rounds, 5) {
            let picked = (0..<changed).map { _ in held[Int.random(in: 0..<held.count, using: &generator)] }
            result.controllerUpdateMs.append(
                BenchClock.measure { () -> Void in
                    for (offset, object) in picked.enumerated() {
                        object["score"] = Double((round * 7_919 + offset * 104_729) % 100_000) / 7
                    }
                    context.processPendingChanges()
                }.1)
            guard controller.fetchedObjects?.count == rows else { throw BenchError("the controller lost objects") }
            result.refetchMs.append(try BenchClock.measure { () throws -> Void in try controller.performFetch() }.1)
        }
        return result
    }

    /// Builds a store of `rows` items of `type` at `url` with batch inserts of 50,000 (untimed).
    public static func buildWalkStore(rows: Int, type: StoreType, at url: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try BenchModel.make())
        try coordinator.addPersistentStore(type: type, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        var start = 0
        while start < rows {
            let end = min(start + 50_000, rows)
            let dataset = BenchDataset(rows: end - start, parents: 0)
            var batch = objects(dataset.rows[...])
            for index in batch.indices { batch[index]["id"] = Int64(start + index + 1) }
            try context.execute(BatchInsertRequest(entityName: "Item", objects: batch))
            start = end
        }
        try coordinator.remove(coordinator.persistentStores[0])
    }

    /// What a batched walk measured (see ``walkBatched(store:type:)``).
    public struct Walk: Sendable {
        /// Rows walked.
        public var rows: Int
        /// Peak resident growth (`VmHWM`) over the resident set after opening.
        public var growth: Int64
        /// The anonymous part of the resident set at its largest (sampled after the fetch and every
        /// 10,000 rows) over that part after opening.
        public var anonymousGrowth: Int64
        /// The resident set after the fetch over the resident set after opening.
        public var afterFetch: Int64
        /// The resident pages of the store file's memory map at the end (LMDB's map; 0 without one).
        public var mappedStore: Int64
        /// Seconds the fetch and walk took.
        public var seconds: Double

        /// Creates the figures of a walk.
        public init(
            rows: Int, growth: Int64, anonymousGrowth: Int64, afterFetch: Int64, mappedStore: Int64, seconds: Double
        ) {
            self.rows = rows
            self.growth = growth
            self.anonymousGrowth = anonymousGrowth
            self.afterFetch = afterFetch
            self.mappedStore = mappedStore
            self.seconds = seconds
        }
    }

    /// In a child process: opens the store, fetches every item with `fetchBatchSize = 500`
    /// through `fetchBatchFaulting(_:)` (the IDs read at once, objects made a batch at a time) and
    /// reads one attribute of each in order.
    public static func walkBatched(store url: URL, type: StoreType) throws -> Walk {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try BenchModel.make())
        try coordinator.addPersistentStore(type: type, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        let before = MemoryAtRest.residentBytes()
        let anonymousBefore = MigrationSection.residentAnonymousBytes()
        var anonymousPeak = anonymousBefore
        var afterFetch: Int64 = 0
        var request = FetchRequest(entityName: "Item")
        request.fetchBatchSize = 500
        var sum = 0.0
        var count = 0
        let seconds =
            try BenchClock.measure { () throws -> Void in
                let objects = try context.fetchBatchFaulting(request)
                afterFetch = MemoryAtRest.residentBytesUntrimmed() - before
                anonymousPeak = max(anonymousPeak, MigrationSection.residentAnonymousBytes())
                for object in objects {
                    sum += (object["score"] as Double?) ?? 0
                    count += 1
                    if count % 10_000 == 0 {
                        anonymousPeak = max(anonymousPeak, MigrationSection.residentAnonymousBytes())
                    }
                }
            }.1 / 1000
        withExtendedLifetime(sum) {}
        return Walk(
            rows: count, growth: MemoryAtRest.peakResidentBytes() - before,
            anonymousGrowth: anonymousPeak - anonymousBefore, afterFetch: afterFetch,
            mappedStore: MemoryAtRest.mappedResidentBytes(of: url.path), seconds: seconds)
    }
}

/// The next row a batch insert handler fills (the handler runs synchronously, on one thread).
private final class RowCursor: @unchecked Sendable {
    // @unchecked Sendable: only the executing batch insert calls the handler, one call at a time.
    var next = 0
}
