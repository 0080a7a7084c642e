import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

@Suite("XML crash safety")
struct XMLCrashTests {
    /// The model `strata-xml-killtest` saves with.
    static let model: ManagedObjectModel = {
        let counter = EntityDescription(
            "Counter",
            properties: [
                .attribute("value", .integer64), .toMany("items", "Item", inverse: "counter", deleteRule: .cascade),
            ])
        let item = EntityDescription(
            "Item",
            properties: [
                .attribute("index", .integer64), .attribute("payload", .string),
                .toOne("counter", "Counter", inverse: "items"),
            ])
        return try! ManagedObjectModel(entities: [counter, item])  // the helper's fixed, valid model
    }()

    /// The helper executable, built beside the test bundle.
    static func helper() throws -> URL {
        var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        candidates.append(root.appendingPathComponent(".build/debug"))
        for directory in candidates {
            let url = directory.appendingPathComponent("strata-xml-killtest")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw StoreError(.notFound, "strata-xml-killtest is not built; run swift build --build-tests")
    }

    /// The counter value of the store and its items' indexes, checking the helper's invariant.
    static func savedState(_ url: URL) throws -> Int {
        guard FileManager.default.fileExists(atPath: url.path) else { return 0 }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .xml, at: url, options: StoreOptions(isReadOnly: true))
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(coordinator: coordinator)
        let counters = try context.fetch(FetchRequest(entityName: "Counter"))
        guard let counter = counters.first else { return 0 }
        #expect(counters.count == 1)
        let value = try #require(counter["value"] as? Int)
        let indexes = counter.objects(forKey: "items").compactMap { $0["index"] as? Int }.sorted()
        #expect(indexes == Array(max(1, value - 49)...value), "items of saved state \(value)")
        #expect(try context.count(for: FetchRequest(entityName: "Item")) == indexes.count, "items without a counter")
        return value
    }

    @Test("killing a process that saves in a loop, 50 times at random moments, always leaves a complete saved state")
    func killWhileSaving() throws {
        let helper = try Self.helper()
        let seed: UInt64 = 0x0C0D_C1A5
        print("XML kill test: seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory(prefix: "xml-kill")
        let url = directory.file("killed.xml")
        var known = 0
        var kills = 0
        var attempts = 0
        while kills < 50 {
            attempts += 1
            try #require(attempts < 200, "the helper keeps exiting before it is killed")
            let delay = UInt32.random(in: 40_000...300_000, using: &random)
            let run = try ChildProcess.capture([helper.path, url.path]) { pid in
                usleep(delay)
                kill(pid, SIGKILL)
            }
            let printed = String(decoding: run.output, as: UTF8.self)
            let failure = String(decoding: run.errors, as: UTF8.self)
            try #require(failure.isEmpty, "helper failed: \(failure)")
            if run.termination.signal != nil { kills += 1 }
            let lastPrinted =
                printed.split(separator: "\n").compactMap { Int($0.dropFirst("saved ".count)) }.last ?? known
            let value = try Self.savedState(url)
            // The save after the last printed line may have reached the disk before the kill.
            #expect(
                value == lastPrinted || value == lastPrinted + 1,
                "seed \(seed), attempt \(attempts): file holds \(value), last save printed \(lastPrinted)")
            #expect(value >= known, "seed \(seed), attempt \(attempts): a saved state was lost: \(value) < \(known)")
            known = value
        }
        #expect(known > 50, "the helper made progress between kills")
    }

    /// Runs the helper in `mode` on `url` under `/bin/sh` with `umask`, until it exits or is
    /// killed after `killAfter` microseconds; returns its output, errors and whether it was killed.
    static func run(
        _ mode: String, on url: URL, umask mask: String = "022", killAfter delay: UInt32? = nil
    ) throws -> (output: String, errors: String, killed: Bool) {
        let run = try ChildProcess.capture(
            ["/bin/sh", "-c", "umask \(mask) && exec \"$0\" \"$1\" \"$2\"", try helper().path, url.path, mode]
        ) { pid in
            if let delay {
                usleep(delay)
                kill(pid, SIGKILL)
            }
        }
        let printed = run.output
        let failure = run.errors
        return (
            String(decoding: printed, as: UTF8.self), String(decoding: failure, as: UTF8.self),
            run.termination.signal != nil
        )
    }

    @Test("keys handed out before a kill, saved or not, are never handed out again after reopening")
    func keysSurviveKills() throws {
        let seed: UInt64 = 0x5EED_0016
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory(prefix: "xml-kill-keys")
        let url = directory.file("keys.xml")
        var seen: [Int64: Int] = [:]  // key → the run that printed it
        var repeated: [String] = []
        var kills = 0
        for run in 0..<20 {
            let delay = UInt32.random(in: 60_000...400_000, using: &generator)
            let result = try Self.run("allocate", on: url, killAfter: delay)
            try #require(result.errors.isEmpty, "seed \(seed), run \(run): helper failed: \(result.errors)")
            if result.killed { kills += 1 }
            // Only complete lines: the last one may have been cut by the kill.
            let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            for line in lines where line.hasPrefix("keys ") {
                for key in line.dropFirst(5).split(separator: " ").compactMap({ Int64($0) }) {
                    if let earlier = seen[key] { repeated.append("\(key) (runs \(earlier) and \(run))") }
                    seen[key] = run
                }
            }
        }
        #expect(
            repeated.isEmpty,
            "seed \(seed): \(repeated.count) keys handed out twice: \(repeated.prefix(5).joined(separator: ", "))")
        #expect(kills > 10, "seed \(seed): the helper was killed while allocating")
        #expect(seen.count > 100, "seed \(seed): the helper handed out keys before it was killed")
    }

    @Test("a store created by a process follows its umask")
    func createdFileFollowsUmask() throws {
        let directory = try TemporaryDirectory(prefix: "xml-umask")
        let url = directory.file("private.xml")
        let result = try Self.run("save-once", on: url, umask: "027")
        try #require(result.errors.isEmpty, "helper failed: \(result.errors)")
        var status = stat()
        try #require(stat(url.path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o640, "mode \(String(status.st_mode & 0o777, radix: 8))")
        try #require(stat(url.path + ".lock", &status) == 0)
        #expect(status.st_mode & 0o777 == 0o640, "lock file mode \(String(status.st_mode & 0o777, radix: 8))")
        let shared = directory.file("shared.xml")
        _ = try Self.run("save-once", on: shared, umask: "002")
        try #require(stat(shared.path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o664, "mode \(String(status.st_mode & 0o777, radix: 8))")
    }
}
