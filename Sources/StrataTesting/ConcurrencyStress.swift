import Foundation
import Strata
import Synchronization

/// Contexts on several threads inserting, updating, deleting, refreshing, fetching and looking
/// objects up by ID through one coordinator at once, with fixed seeds and operation counts;
/// afterwards every context agrees with the store. Run it from a driver's test target, and under
/// ThreadSanitizer with `scripts/sanitize.sh thread`.
///
/// Each worker owns a context made on its own thread. What the workers may meet and handle:
/// optimistic-locking conflicts (rolled back), and rows deleted by another worker. What they check
/// as they go: after a delete's save returns, the row is gone for a new context (no fetch racing the
/// delete puts it back in the row cache). The row cache is kept small (`rowCacheLimit`), so rows
/// no context holds are evicted and lookups by ID read them from the driver (the report counts the
/// cache's misses); when every worker's context is gone, the cache holds no pin.
public enum ConcurrencyStress {
    /// What a run did.
    public struct Report: Sendable, CustomStringConvertible {
        /// Saves that committed, by kind of operation.
        public var inserts = 0, updates = 0, deletes = 0
        /// Saves refused by optimistic locking (then rolled back).
        public var conflicts = 0
        /// Fetches, counts, refreshes and lookups by ID run.
        public var reads = 0
        /// Rows the row cache was asked for and did not hold (read from the driver instead).
        public var rowCacheMisses = 0

        public var description: String {
            "\(inserts) inserts, \(updates) updates, \(deletes) deletes, \(conflicts) conflicts, \(reads) reads, "
                + "\(rowCacheMisses) row-cache misses"
        }
    }

    /// Runs `workers` threads of `operations` random operations each on a fresh store of `harness`,
    /// with the coordinator's row cache limited to `rowCacheLimit` rows (rows that contexts pin
    /// stay beyond it).
    ///
    /// - Throws: ``ConformanceFailure`` naming the seed when a check fails; the store's error when
    ///   an operation fails in a way the workload does not expect.
    @discardableResult
    public static func run(
        _ harness: DriverHarness, seed: UInt64, workers: Int = 4, operations: Int = 150, rowCacheLimit: Int = 16
    ) throws -> Report {
        let fixture = try ConformanceSuite.Fixture(harness)
        let coordinator = fixture.coordinator
        coordinator.rowCache.limit = rowCacheLimit
        // The seeding context's pins would go with any seeded row a worker deletes: let them go now.
        fixture.resetContexts()
        try requireEqual(coordinator.rowCache.statistics.pinned, 0, "rows pinned before the workers start")
        let missesBefore = coordinator.rowCache.statistics.misses
        let report = Locked(Report())
        let failures = Locked<[String]>([])
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for worker in 0..<workers {
            done.enter()
            Thread {
                defer { done.leave() }
                start.wait()
                do {
                    let local = try work(
                        coordinator, seed: seed &+ UInt64(worker), worker: worker, operations: operations)
                    report.withLock {
                        $0.inserts += local.inserts
                        $0.updates += local.updates
                        $0.deletes += local.deletes
                        $0.conflicts += local.conflicts
                        $0.reads += local.reads
                    }
                } catch {
                    failures.withLock { $0.append("worker \(worker) (seed \(seed &+ UInt64(worker)))): \(error)") }
                }
            }.start()
        }
        for _ in 0..<workers { start.signal() }
        done.wait()
        if let failure = failures.withLock({ $0.first }) {
            throw ConformanceFailure(
                message: "stress run with seed \(seed) failed: \(failure)", file: #fileID, line: #line)
        }
        // Each pin a worker's context took went with the context, whichever way its row came.
        try requireEqual(
            coordinator.rowCache.statistics.pinned, 0,
            "rows pinned in the row cache once every worker's context is gone (seed \(seed))")
        // Every context agrees with the store: a new context and the driver see the same rows.
        let check = ManagedObjectContext(coordinator: coordinator)
        let titles = try check.fetch(FetchRequest(entityName: "Track")).compactMap {
            $0.value(forKey: "title") as? String
        }
        let entity = coordinator.managedObjectModel.entity(named: "Track")!  // in the conformance model
        let stored = try fixture.store.driver.fetch(StoreFetch(entity: entity)).rows
        try requireEqual(titles.count, stored.count, "tracks seen by a new context and by the driver (seed \(seed))")
        let expected = 6 + report.withLock { $0.inserts - $0.deletes }
        try requireEqual(stored.count, expected, "tracks after \(report.withLock { $0 }) (seed \(seed))")
        report.withLock { $0.rowCacheMisses = coordinator.rowCache.statistics.misses - missesBefore }
        return report.withLock { $0 }
    }

    private static func work(_ coordinator: PersistentStoreCoordinator, seed: UInt64, worker: Int, operations: Int)
        throws -> Report
    {
        var random = SeededGenerator(seed: seed)
        var report = Report()
        let context = ManagedObjectContext(coordinator: coordinator)
        context.name = "stress worker \(worker)"
        let all = FetchRequest(entityName: "Track")
        for step in 0..<operations {
            switch Int.random(in: 0..<10, using: &random) {
            case 0...2:
                let count = Int.random(in: 1...3, using: &random)
                for index in 0..<count {
                    let track = try context.insertNewObject(forEntityName: "Track")
                    track["title"] = "w\(worker) s\(step) i\(index)"
                }
                try context.save()
                report.inserts += count
            case 3...4:
                guard let track = try context.fetch(all).randomElement(using: &random) else { continue }
                track["title"] = "w\(worker) s\(step) updated"
                if try saveOrRollback(context) { report.updates += 1 } else { report.conflicts += 1 }
            case 5:
                guard let track = try context.fetch(all).randomElement(using: &random), track.isAccessible else {
                    continue
                }
                let id = track.objectID
                context.delete(track)
                guard try saveOrRollback(context) else {
                    report.conflicts += 1
                    continue
                }
                report.deletes += 1
                do {
                    _ = try ManagedObjectContext(coordinator: coordinator).existingObject(with: id)
                    throw ConformanceFailure(
                        message: "row \(id) came back after its delete was saved", file: #fileID, line: #line)
                } catch StoreError.Code.notFound {}
            case 6:
                for object in context.registeredObjects.shuffled(using: &random).prefix(5) {
                    context.refresh(object, mergeChanges: Bool.random(using: &random))
                }
                report.reads += 1
            case 7:
                _ = try context.count(for: all)
                report.reads += 1
            case 8:
                // Lookups by ID of rows saved by a context that is gone: no context pins them, and
                // more unpinned rows than the small row cache's slack start an eviction pass when
                // the context lets them go, so most are read from the driver (a row another worker
                // deleted meanwhile is not found).
                let writer = ManagedObjectContext(coordinator: coordinator)
                for index in 0..<20 {
                    try writer.insertNewObject(forEntityName: "Track")["title"] = "w\(worker) s\(step) saved \(index)"
                }
                try writer.save()
                report.inserts += 20
                let ids = writer.registeredObjects.map(\.objectID).shuffled(using: &random).prefix(5)
                writer.reset()
                let reader = ManagedObjectContext(coordinator: coordinator)
                for id in ids {
                    do {
                        let track = try reader.existingObject(with: id)
                        try requireEqual(track.isFault, false, "a track looked up by ID (seed \(seed))")
                    } catch StoreError.Code.notFound {}
                }
                report.reads += 1
            default:
                let tracks = try context.fetch(all)
                for track in tracks.prefix(10) { _ = track.value(forKey: "title") }
                report.reads += 1
            }
            if step % 25 == 24 { context.reset() }
        }
        if let failure = context.accessFailure { throw failure }
        return report
    }

    /// Saves; on an optimistic-locking conflict or a row deleted elsewhere, rolls back and says so.
    private static func saveOrRollback(_ context: ManagedObjectContext) throws -> Bool {
        do {
            try context.save()
            return true
        } catch let error as StoreError where error.code == .conflict || error.code == .notFound {
            context.rollback()
            return false
        }
    }
}
