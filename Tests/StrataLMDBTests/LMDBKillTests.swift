import Foundation
import Strata
import StrataLMDB
import StrataTesting
import Testing

@Suite("LMDB kill test")
struct LMDBKillTests {
    /// The helper executable, built beside the test binary.
    static var helper: URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL,
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug"),
        ]
        for directory in candidates {
            let url = directory.appendingPathComponent("strata-lmdb-killtest")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return candidates[0].appendingPathComponent("strata-lmdb-killtest")
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription("Counter", properties: [.attribute("value", .integer64, isOptional: false)]),
            EntityDescription(
                "Entry", properties: [.attribute("round", .integer64, isOptional: false), .attribute("note", .string)]),
        ])
    }

    @Test(
        "a child saving in a loop and killed at random moments 50 times never loses a committed save or shows a partial one"
    )
    func killedWhileSaving() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-kill")
        let store = directory.file("kill.lmdb")
        let seed: UInt64 = 0x1D0B_C1A5
        print("LMDB kill test: seed \(seed)")
        var generator = SeededGenerator(seed: seed)
        var lastConfirmed: Int64 = 0
        var kills = 0
        for round in 0..<50 {
            let delay = UInt32.random(in: 0...30_000, using: &generator)
            let run = try ChildProcess.capture(
                [Self.helper.path, store.path],
                watching: { pid, output in
                    // Wait until the child has committed at least once (printed a line), then kill it a
                    // random moment later.
                    var info = stat()
                    while ChildProcess.isRunning(pid), stat(output, &info) == 0, info.st_size == 0 { usleep(1_000) }
                    usleep(delay)
                    kill(pid, SIGKILL)
                })
            let text = run.output
            let failure = String(decoding: run.errors, as: UTF8.self)
            #expect(
                run.termination.signal != nil, "seed \(seed), round \(round): the child exited by itself: \(failure)")
            if run.termination.signal != nil { kills += 1 }
            let lines = String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            // The last piece may be a line cut by the kill; complete lines end with "\n".
            let confirmed = lines.dropLast().compactMap { Int64($0) }.last ?? lastConfirmed
            #expect(confirmed >= lastConfirmed)

            let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
            let attached = try coordinator.addPersistentStore(type: .lmdb, at: store)
            let context = ManagedObjectContext(coordinator: coordinator)
            let counters = try context.fetch(FetchRequest(entityName: "Counter"))
            try #require(counters.count == 1, "seed \(seed), round \(round): one counter")
            let value = Int64(counters[0]["value"] as? Int ?? -1)
            #expect(
                value == confirmed || value == confirmed + 1,
                "seed \(seed), round \(round): counter \(value), confirmed \(confirmed)")
            let entries = try context.fetch(FetchRequest(entityName: "Entry"))
            #expect(
                entries.count == Int(value) * 3,
                "seed \(seed), round \(round): \(entries.count) entries for counter \(value)")
            var perRound: [Int64: Int] = [:]
            for entry in entries { perRound[Int64(entry["round"] as? Int ?? -1), default: 0] += 1 }
            #expect(
                perRound.values.allSatisfy { $0 == 3 } && perRound.keys.allSatisfy { $0 >= 1 && $0 <= value },
                "seed \(seed), round \(round): partial round")
            lastConfirmed = value
            try coordinator.remove(attached)
        }
        #expect(kills >= 50)
        #expect(lastConfirmed > 50, "the children saved \(lastConfirmed) rounds")
    }
}
