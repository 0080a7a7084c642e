import Foundation
import Strata
import StrataTools

/// The contexts figures, on the SQLite driver (Strata against Strata: no peer has contexts):
/// a child saving N inserts into its parent against inserting them in the parent directly;
/// merging 10% of N changed objects into a view context holding N against refetching them;
/// `DataAccess.writeSync` of 1,000 objects against the same work through a context by hand; and
/// the resident set of a long-lived view context over fetch-and-drop cycles of N objects.
public struct ContextSectionResult: Codable, Sendable {
    /// Objects per workload.
    public var rows: Int
    /// Child insert + save into the parent, and the same inserts in the parent directly (ms per round).
    public var childSaveMs: [Double] = [], parentInsertMs: [Double] = []
    /// The child's `save()` alone, of the same rounds (ms per round); older results lack it.
    public var childSaveStepMs: [Double]? = []
    /// Merging the changed objects, and fetching them into a new context (ms per round).
    public var mergeMs: [Double] = [], refetchMs: [Double] = []
    /// The number of changed objects merged.
    public var merged: Int = 0
    /// DataAccess.writeSync of 1,000 objects, and the same through a context by hand (ms per round).
    public var writeSyncMs: [Double] = [], byHandMs: [Double] = []
    /// Resident bytes after cycle 1, 10, 50 and 100 of fetching N objects and dropping them.
    public var residentByCycle: [Int: Int64] = [:]

    /// The median of `values`.
    public static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}

/// Runs the context workloads (see ``ContextSectionResult``).
public enum ContextSection {
    /// Runs every workload `rounds` times at `rows` objects in stores under `directory`; the memory
    /// cycles run `cycles` times.
    public static func run(rows: Int, rounds: Int, cycles: Int = 100, in directory: URL) throws -> ContextSectionResult
    {
        guard let sqlite = KnownDriver.sqlite.storeType else { throw BenchError("the SQLite driver is not linked") }
        let model = try BenchModel.make()
        var result = ContextSectionResult(rows: rows)
        let dataset = BenchDataset(rows: rows, parents: 0)
        var store = 0
        func freshCoordinator() throws -> PersistentStoreCoordinator {
            store += 1
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(
                type: sqlite, at: directory.appendingPathComponent("contexts-\(store).sqlite"))
            return coordinator
        }
        func insert(_ rows: ArraySlice<BenchRow>, into context: ManagedObjectContext) throws {
            for row in rows {
                let item = try context.insertNewObject(forEntityName: "Item")
                item["id"] = row.id
                item["name"] = row.name
                item["email"] = row.email
                item["age"] = row.age
                item["score"] = row.score
                item["created"] = row.created
            }
        }
        for _ in 0..<rounds {
            // A child's inserts saved into its parent, against the parent inserting them itself.
            let coordinator = try freshCoordinator()
            let parent = ManagedObjectContext(coordinator: coordinator)
            result.parentInsertMs.append(try BenchClock.measure { try insert(dataset.rows[...], into: parent) }.1)
            parent.rollback()
            let child = ManagedObjectContext(parent: parent)
            var saveStep = 0.0
            result.childSaveMs.append(
                try BenchClock.measure { () throws -> Void in
                    try insert(dataset.rows[...], into: child)
                    saveStep = try BenchClock.measure { try child.save() }.1
                }.1)
            result.childSaveStepMs?.append(saveStep)
        }
        // Merging changed objects into a view context that holds every object.
        let coordinator = try freshCoordinator()
        let seeding = ManagedObjectContext(coordinator: coordinator)
        try insert(dataset.rows[...], into: seeding)
        try seeding.save()
        seeding.reset()
        let changedCount = max(rows / 10, 1)
        result.merged = changedCount
        let all = FetchRequest(entityName: "Item")
        for round in 0..<rounds {
            let view = ManagedObjectContext(coordinator: coordinator)
            let held = try view.fetch(all)
            for object in held { _ = object.value(forKey: "score") }
            let writer = ManagedObjectContext(coordinator: coordinator)
            var saved: ContextDidSave?
            writer.addDidSaveObserver { saved = $0 }
            var request = FetchRequest(
                entityName: "Item", predicate: try FetchPredicate(format: "id <= %d", changedCount))
            request.returnsObjectsAsFaults = false
            for object in try writer.fetch(request) {
                let score: Double? = object["score"]
                object["score"] = (score ?? 0) + Double(round + 1)
            }
            try writer.save()
            guard let changes = saved else { throw BenchError("the writer's save posted no did-save record") }
            result.mergeMs.append(
                BenchClock.measure { () -> Void in
                    view.mergeChanges(fromContextDidSave: changes)
                    var sum = 0.0
                    for id in changes.updatedObjectIDs { sum += (view.object(with: id)["score"] as Double?) ?? 0 }
                    blackHole(sum)
                }.1)
            withExtendedLifetime(held) {}
            result.refetchMs.append(
                try BenchClock.measure { () throws -> Void in
                    let fresh = ManagedObjectContext(coordinator: coordinator)
                    var sum = 0.0
                    for object in try fresh.fetch(request) { sum += (object["score"] as Double?) ?? 0 }
                    blackHole(sum)
                }.1)
        }
        // DataAccess.writeSync of 1,000 objects against a context by hand.
        let small = Array(dataset.rows.prefix(1_000))
        let container = PersistentContainer(name: "Bench", managedObjectModel: model)
        container.persistentStoreDescriptions = [
            PersistentStoreDescription(type: sqlite, url: directory.appendingPathComponent("container.sqlite"))
        ]
        try container.loadPersistentStores()
        let data = DataAccess(container: container)
        data.errorHandler = { error in FileHandle.standardError.write(Data("writeSync failed: \(error)\n".utf8)) }
        let byHand = container.newBackgroundContext()
        for _ in 0..<max(rounds, 5) {
            result.writeSyncMs.append(
                BenchClock.measure { () -> Void in
                    data.writeSync { context in try insert(small[...], into: context) }
                }.1)
            result.byHandMs.append(
                try BenchClock.measure { () throws -> Void in
                    try byHand.performAndWait {
                        try insert(small[...], into: byHand)
                        try byHand.save()
                    }
                }.1)
        }
        // A long-lived view context over fetch-and-drop cycles.
        let view = ManagedObjectContext(coordinator: coordinator)
        for cycle in 1...cycles {
            do {
                let objects = try view.fetch(all)
                var sum = 0.0
                for object in objects { sum += (object["score"] as Double?) ?? 0 }
                blackHole(sum)
            }
            if [1, 10, 50, 100].contains(cycle) || cycle == cycles {
                result.residentByCycle[cycle] = MemoryAtRest.residentBytes()
            }
        }
        return result
    }

    @inline(never) static func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }
}
