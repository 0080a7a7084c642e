import Foundation
import Strata
import Synchronization

/// The life of an app under load, bounded by operation counts: a container's main-queue view
/// context fetching, four background writers and two child editors inserting, updating and deleting
/// at once, every context merging the others' saves. Afterwards every context agrees with the
/// store. Run it from a driver's test target, and under ThreadSanitizer with
/// `scripts/sanitize.sh thread`.
public enum ContainerStress {
    /// What a run did.
    public struct Report: Sendable, CustomStringConvertible {
        /// Saves that reached the store.
        public var saves = 0
        /// Child saves into a parent.
        public var childSaves = 0
        /// Saves refused by the merge policy (rolled back).
        public var conflicts = 0
        /// View-context fetches.
        public var viewFetches = 0

        public var description: String {
            "\(saves) saves, \(childSaves) child saves, \(conflicts) conflicts, \(viewFetches) view fetches"
        }
    }

    /// Runs the workload on a fresh store of `harness`.
    ///
    /// - Throws: ``ConformanceFailure`` naming the seed when a context disagrees with the store.
    @discardableResult
    public static func run(_ harness: DriverHarness, seed: UInt64, operations: Int = 60) throws -> Report {
        let directory = try TemporaryDirectory(prefix: "container-stress-\(harness.name)")
        let container = PersistentContainer(name: "Stress", managedObjectModel: ConformanceModel.model)
        var description = PersistentStoreDescription(type: harness.storeType, url: harness.location(directory.url))
        description.options = harness.options
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        try container.viewContext.performAndWait { try ConformanceModel.seed(container.viewContext) }
        let report = Locked(Report())
        let failures = Locked<[String]>([])
        let workers = DispatchGroup()
        let writers = Locked<[ManagedObjectContext]>([])
        for worker in 0..<6 {
            workers.enter()
            Thread {
                defer { workers.leave() }
                do {
                    let context = container.newBackgroundContext()
                    context.mergePolicy = worker % 2 == 0 ? .mergeByPropertyObjectTrump : .error
                    context.automaticallyMergesChangesFromParent = true
                    writers.withLock { $0.append(context) }
                    let local = try write(
                        context, child: worker >= 4, seed: seed &+ UInt64(worker), worker: worker,
                        operations: operations)
                    report.withLock {
                        $0.saves += local.saves
                        $0.childSaves += local.childSaves
                        $0.conflicts += local.conflicts
                    }
                } catch {
                    failures.withLock { $0.append("worker \(worker): \(error)") }
                }
            }.start()
        }
        // The view context reads while the writers work.
        var fetches = 0
        while workers.wait(timeout: .now() + .milliseconds(5)) == .timedOut {
            try container.viewContext.performAndWait {
                for track in try container.viewContext.fetch(FetchRequest(entityName: "Track")).prefix(20) {
                    _ = track.value(forKey: "title")
                }
            }
            fetches += 1
        }
        if let failure = failures.withLock({ $0.first }) {
            throw ConformanceFailure(
                message: "container stress (seed \(seed)) failed: \(failure)", file: #fileID, line: #line)
        }
        // Every context, once it merged what is waiting, agrees with the store.
        let stored = try storedTitles(container)
        try check(container.viewContext, against: stored, "the view context", seed: seed)
        for context in writers.withLock({ $0 }) {
            try check(context, against: stored, context.name ?? "a writer", seed: seed)
        }
        return report.withLock { report in
            report.viewFetches = fetches
            return report
        }
    }

    private static func write(_ context: ManagedObjectContext, child: Bool, seed: UInt64, worker: Int, operations: Int)
        throws -> Report
    {
        var random = SeededGenerator(seed: seed)
        var report = Report()
        context.name = "stress writer \(worker)"
        let editor = child ? ManagedObjectContext(parent: context) : nil
        let working = editor ?? context
        for step in 0..<operations {
            try working.performAndWait {
                let tracks = try working.fetch(FetchRequest(entityName: "Track"))
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    let track = try working.insertNewObject(forEntityName: "Track")
                    track["title"] = "w\(worker) s\(step)"
                case 1, 2:
                    tracks.randomElement(using: &random)?["title"] = "w\(worker) s\(step) edit"
                default:
                    if let victim = tracks.randomElement(using: &random) { working.delete(victim) }
                }
            }
            do {
                if let editor {
                    try editor.performAndWait { try editor.save() }
                    report.childSaves += 1
                }
                try context.performAndWait { try context.save() }
                report.saves += 1
            } catch let error as StoreError where error.code == .conflict || error.code == .notFound {
                report.conflicts += 1
                editor?.performAndWait { editor?.rollback() }
                context.performAndWait { context.rollback() }
            }
        }
        return report
    }

    private static func storedTitles(_ container: PersistentContainer) throws -> [ManagedObjectID: String?] {
        let reader = ManagedObjectContext(coordinator: container.persistentStoreCoordinator)
        var titles: [ManagedObjectID: String?] = [:]
        for track in try reader.fetch(FetchRequest(entityName: "Track")) {
            titles[track.objectID] = track.value(forKey: "title") as? String
        }
        return titles
    }

    private static func check(
        _ context: ManagedObjectContext, against stored: [ManagedObjectID: String?], _ name: String, seed: UInt64
    ) throws {
        try context.performAndWait {
            context.processPendingChanges()
            for object in context.registeredObjects
            where object.entity.name == "Track" && !object.isFault && !object.hasChanges {
                guard object.isAccessible else {
                    try require(
                        stored[object.objectID] == nil,
                        "\(name) (seed \(seed)): \(object.objectID) is gone here but stored")
                    continue
                }
                guard !object.objectID.isTemporaryID else { continue }
                try requireEqual(
                    object.value(forKey: "title") as? String, stored[object.objectID] ?? nil,
                    "\(name) (seed \(seed)): title of \(object.objectID)")
            }
            let count = try context.count(for: FetchRequest(entityName: "Track"))
            try requireEqual(count, stored.count, "\(name) (seed \(seed)): tracks counted")
        }
    }
}
