// strata-postgres-worker: one process of the PostgreSQL tests that need several processes.
//
//   strata-postgres-worker open <store URL>
//       Attaches the store (with the conformance model) and prints "opened <employees>"; on failure
//       prints the error and exits 1. Credentials come from the URL, PGPASSWORD or the password file.
//
//   strata-postgres-worker save <store URL> <worker> <saves> <seed> <workers> <result file>
//       The multi-process test. The store holds counters (Item rows with string "counter-k" and
//       int64 0). Each of <saves> saves either inserts a Node labelled "w<worker>-<i>" or adds 1 to
//       a counter through a long-lived editing context, which holds stale versions once other
//       processes saved: such a save must fail with a conflict, and the worker counts it and
//       refreshes. A view context merges other processes' changes (remote-change notifications).
//       At the end the worker inserts a Tag "done-<worker>", waits for every worker's tag, then
//       waits until its view context shows every counter at its value in the store, and writes a
//       JSON result.
import Foundation
import Strata
import StrataPostgreSQL
import StrataTesting

struct WorkerResult: Codable {
    var inserted: [String] = []
    var increments: [String: Int] = [:]
    var conflicts = 0
    var remoteNotifications = 0
    var remoteRows = 0
    var viewMerged = false
    var seconds = 0.0
}

/// A counter's value (Integer 64 attributes read as `Int`).
func value(_ counter: ManagedObject) -> Int64 { Int64(counter["int64"] as? Int ?? -1) }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[2]) else {
    fail("usage: strata-postgres-worker open <url> | save <url> <worker> <saves> <seed> <workers> <result file>")
}

switch arguments[1] {
case "open":
    do {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .postgreSQL, at: url)
        let count = try ManagedObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Employee"))
        print("opened \(count)")
    } catch {
        print("error: \(error)")
        exit(1)
    }
case "save":
    guard arguments.count == 8, let worker = Int(arguments[3]), let saves = Int(arguments[4]),
        let seed = UInt64(arguments[5]),
        let workers = Int(arguments[6])
    else { fail("bad arguments for save") }
    let start = Date()
    var result = WorkerResult()
    do {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .postgreSQL, at: url)
        let heard = Locked<(notifications: Int, rows: Int)>((0, 0))
        coordinator.addRemoteChangeObserver { saved in
            heard.withLock {
                $0.notifications += 1
                $0.rows += saved.insertedObjectIDs.count + saved.updatedObjectIDs.count + saved.deletedObjectIDs.count
            }
        }
        let counterRequest = FetchRequest(
            entityName: "Item", predicate: try FetchPredicate(format: "string BEGINSWITH 'counter-'"),
            sortKeys: [SortKey("string")])
        let view = ManagedObjectContext(coordinator: coordinator)
        view.automaticallyMergesChangesFromParent = true
        let viewCounters = try view.performAndWait { try view.fetch(counterRequest) }
        let editor = ManagedObjectContext(coordinator: coordinator)
        var counters = try editor.fetch(counterRequest)
        guard !counters.isEmpty else { fail("the store holds no counters") }
        var generator = SeededGenerator(seed: seed)
        for index in 0..<saves {
            if Bool.random(using: &generator) {
                let inserter = ManagedObjectContext(coordinator: coordinator)
                let node = try inserter.insertNewObject(forEntityName: "Node")
                let label = "w\(worker)-\(index)"
                node["label"] = label
                try inserter.save()
                result.inserted.append(label)
            } else {
                let counter = counters[Int.random(in: 0..<counters.count, using: &generator)]
                let name = counter["string"] as? String ?? "?"
                counter["int64"] = value(counter) + 1
                do {
                    try editor.save()
                    result.increments[name, default: 0] += 1
                } catch StoreError.Code.conflict {
                    // Lost update: reported, never written. Start again from the store's values.
                    result.conflicts += 1
                    editor.rollback()
                    editor.refreshAllObjects()
                    counters = try editor.fetch(counterRequest)
                }
            }
        }
        // Barrier: every worker done.
        let marker = ManagedObjectContext(coordinator: coordinator)
        let tag = try marker.insertNewObject(forEntityName: "Tag")
        tag["name"] = "done-\(worker)"
        try marker.save()
        let doneRequest = FetchRequest(
            entityName: "Tag", predicate: try FetchPredicate(format: "name BEGINSWITH 'done-'"))
        let deadline = Date().addingTimeInterval(120)
        while try ManagedObjectContext(coordinator: coordinator).count(for: doneRequest) < workers {
            guard Date() < deadline else { fail("worker \(worker): the other workers did not finish") }
            usleep(20_000)
        }
        // The view context follows the other processes' saves without fetching again.
        let truth = try ManagedObjectContext(coordinator: coordinator).fetch(counterRequest).map(value)
        let mergeDeadline = Date().addingTimeInterval(30)
        while !result.viewMerged, Date() < mergeDeadline {
            result.viewMerged = view.performAndWait {
                view.processPendingChanges()
                return viewCounters.map(value) == truth
            }
            if !result.viewMerged { usleep(20_000) }
        }
        (result.remoteNotifications, result.remoteRows) = heard.withLock { ($0.notifications, $0.rows) }
        result.seconds = Date().timeIntervalSince(start)
        try JSONEncoder().encode(result).write(to: URL(fileURLWithPath: arguments[7]))
    } catch {
        fail("worker \(worker): \(error)")
    }
default:
    fail("unknown command \(arguments[1])")
}
