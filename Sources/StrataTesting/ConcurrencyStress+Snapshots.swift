import Foundation
import Strata
import Synchronization

extension ConcurrencyStress {
    /// What a run of ``snapshotReads(_:readers:fetches:saves:rows:)`` did.
    public struct SnapshotReport: Sendable, CustomStringConvertible {
        /// Saves that committed, each changing every row.
        public var saves = 0
        /// Fetches of every row, each in a new context (at least `readers` × `fetches`).
        public var fetches = 0
        /// How many distinct saves the readers' fetches saw (1 when every fetch ran before or
        /// after all saves: then the run checked nothing against a save in flight).
        public var generationsSeen = 0

        public var description: String {
            "\(saves) saves, \(fetches) fetches, \(generationsSeen) generations seen"
        }
    }

    /// Readers on threads of their own fetch every row again and again, each fetch in a new
    /// context, while a writer on another thread saves changes of every row (save `g` sets each
    /// row's `int64` to `g`), all through one coordinator and its row cache. A fetch reads one
    /// state of the store, so every object of one fetch must hold the same `int64`: a row's
    /// values taken from the row cache at a version other than the one the driver read (a probe
    /// reading ahead, say, handing out what it read before a save) would mix generations.
    ///
    /// Counts, no clock: `saves` saves; each reader fetches at least `fetches` times and on
    /// while the writer saves (at most `fetches` × 100 times), so the fetches meet saves in
    /// flight; ``SnapshotReport/generationsSeen`` says how many states they saw.
    ///
    /// - Throws: ``ConformanceFailure`` when a fetch mixes generations or misses rows; the
    ///   store's error when a fetch or save fails.
    @discardableResult
    public static func snapshotReads(
        _ harness: DriverHarness, readers: Int = 2, fetches: Int = 12, saves: Int = 12, rows: Int = 1_500
    ) throws -> SnapshotReport {
        let fixture = try ConformanceSuite.Fixture(harness, seeded: false)
        let coordinator = fixture.coordinator
        let setup = ManagedObjectContext(coordinator: coordinator)
        for _ in 0..<rows {
            let item = try setup.insertNewObject(forEntityName: "Item")
            item["int64"] = Int64(0)
        }
        try setup.save()
        let report = Locked(SnapshotReport())
        let failures = Locked<[String]>([])
        let seen = Locked(Set<Int64>())
        let writerDone = Atomic(false)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for reader in 0..<readers {
            done.enter()
            Thread {
                defer { done.leave() }
                start.wait()
                do {
                    // At least `fetches` each, and on until the writer is done (at most
                    // `fetches` × 100), so fetches run while saves commit.
                    var fetch = 0
                    while fetch < fetches || (!writerDone.load(ordering: .acquiring) && fetch < fetches * 100) {
                        defer { fetch += 1 }
                        let context = ManagedObjectContext(coordinator: coordinator)
                        var request = FetchRequest(entityName: "Item")
                        request.returnsObjectsAsFaults = false
                        let items = try context.fetch(request)
                        let generations = Set(
                            items.map { item -> Int64 in
                                let value: Int64? = item["int64"]
                                return value ?? -1
                            })
                        guard items.count == rows, generations.count == 1, let generation = generations.first else {
                            failures.withLock {
                                $0.append(
                                    "reader \(reader), fetch \(fetch): \(items.count) of \(rows) rows, int64 values \(generations.sorted())"
                                )
                            }
                            return
                        }
                        seen.withLock { _ = $0.insert(generation) }
                        report.withLock { $0.fetches += 1 }
                    }
                } catch {
                    failures.withLock { $0.append("reader \(reader): \(error)") }
                }
            }.start()
        }
        done.enter()
        Thread {
            defer {
                writerDone.store(true, ordering: .releasing)
                done.leave()
            }
            start.wait()
            do {
                let context = ManagedObjectContext(coordinator: coordinator)
                var request = FetchRequest(entityName: "Item")
                request.returnsObjectsAsFaults = false
                let items = try context.fetch(request)
                for generation in 1...Int64(max(saves, 1)) {
                    for item in items { item["int64"] = generation }
                    try context.save()
                    report.withLock { $0.saves += 1 }
                }
            } catch {
                failures.withLock { $0.append("writer: \(error)") }
            }
        }.start()
        for _ in 0...readers { start.signal() }
        done.wait()
        let problems = failures.withLock { $0 }
        guard problems.isEmpty else {
            throw ConformanceFailure(
                message: "snapshot reads on \(harness.name): " + problems.joined(separator: "; "), file: #fileID,
                line: #line)
        }
        var result = report.withLock { $0 }
        result.generationsSeen = seen.withLock { $0.count }
        return result
    }
}
