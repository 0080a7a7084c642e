import Foundation
import Strata
import StrataSQLite
import StrataTesting
import StrataTools
import Testing

/// SIGKILL during `strata convert --overwrite`: the destination is always either the old store or
/// a complete new one, never a partial file and never missing.
@Suite("Convert kill tests")
struct ConvertKillTests {
    /// A SQLite store of the kill loops' model (built here with the same shape) holding `entries` rows.
    static func source(_ url: URL, entries: Int) throws {
        let ledger = EntityDescription(
            "Ledger",
            properties: [
                .attribute("round", .integer64, isOptional: false), .toMany("entries", "Entry", inverse: "ledger"),
            ])
        let entry = EntityDescription(
            "Entry",
            properties: [
                .attribute("round", .integer64, isOptional: false), .attribute("payload", .binaryData),
                .toOne("ledger", "Ledger", inverse: "entries"),
            ])
        let coordinator = PersistentStoreCoordinator(
            managedObjectModel: try ManagedObjectModel(entities: [ledger, entry]))
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        let owner = try context.insertNewObject(forEntityName: "Ledger")
        try owner.setConvertedValue(entries, forKey: "round")
        for index in 0..<entries {
            let row = try context.insertNewObject(forEntityName: "Entry")
            try row.setConvertedValue(index, forKey: "round")
            try row.setConvertedValue(Data(repeating: UInt8(index % 251), count: 64), forKey: "payload")
            try row.setConvertedValue(owner, forKey: "ledger")
        }
        try context.save()
        try coordinator.remove(store)
    }

    /// The number of `Entry` rows of the store at `location`, or `nil` when it does not open.
    static func entries(_ location: StoreLocation) -> Result<Int, any Error> {
        Result {
            let (coordinator, context, store) = try KillTests.open(location)
            defer { try? coordinator.remove(store) }  // read-only: closing changes nothing
            return try context.count(for: FetchRequest(entityName: "Entry"))
        }
    }

    @Test(
        "SIGKILL during strata convert --overwrite leaves the old destination or a complete new one",
        arguments: ["sqlite", "xml", "lmdb"])
    func convert(_ driver: String) throws {
        let seed: UInt64 = 0xC0_0000 + UInt64(KillTests.drivers.firstIndex(of: driver) ?? 0)
        print("kill test convert to \(driver): seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory(prefix: "kill-convert")
        let big = directory.file("big.sqlite")
        let small = directory.file("small.sqlite")
        try Self.source(big, entries: 4_000)
        try Self.source(small, entries: 10)
        let destination = KillTests.location(driver, in: directory, name: "destination")
        let strata = try ChildProcess.executable("strata")
        func convert(_ from: URL, killAfter delay: UInt32?) throws -> ChildProcess.Outcome {
            try ChildProcess.run(
                strata, ["convert", from.path, destination.description, "--overwrite", "--quiet"], killAfter: delay)
        }
        // How long a whole conversion takes: kills land anywhere in it.
        let start = Date()
        let full = try convert(big, killAfter: nil)
        try #require(full.status == 0, "the conversion works when not killed: \(full.errors)")
        let span = max(0.05, Date().timeIntervalSince(start))
        var problems: [String] = []
        var sawNew = 0
        var sawOld = 0
        for round in 0..<10 {
            let old = try convert(small, killAfter: nil)
            try #require(old.status == 0, "round \(round): writing the old destination failed: \(old.errors)")
            let delay = UInt32(Double.random(in: 0...(span * 1.5), using: &random) * 1_000_000)
            let run = try convert(big, killAfter: delay)
            let label = "round \(round) (killed after \(delay) µs, \(run.killed ? "killed" : "finished"))"
            switch Self.entries(destination) {
            case .success(10): sawOld += 1
            case .success(4_000):
                sawNew += 1
                try KillTests.validate(destination, "seed \(seed), \(label)")
            case .success(let count):
                problems.append("\(label): the destination holds \(count) entries, neither 10 nor 4000")
            case .failure(let error): problems.append("\(label): the destination does not open: \(error)")
            }
        }
        #expect(
            problems.isEmpty,
            "seed \(seed): \(problems.count) of 10 kills left a partial or missing destination: \(problems.prefix(3).joined(separator: "; "))"
        )
        print("kill test convert to \(driver): \(sawOld) old, \(sawNew) new, \(problems.count) broken")
    }

    @Test(
        "strata convert --overwrite never leaves the destination missing, even for a moment: a watcher that kills the conversion then finds the old or the new store",
        arguments: ["sqlite", "xml", "lmdb"])
    func replacementIsAtomic(_ driver: String) throws {
        let directory = try TemporaryDirectory(prefix: "kill-convert-watch")
        let big = directory.file("big.sqlite")
        let small = directory.file("small.sqlite")
        try Self.source(big, entries: 500)
        try Self.source(small, entries: 10)
        let destination = KillTests.location(driver, in: directory, name: "destination")
        let strata = try ChildProcess.executable("strata")
        var problems: [String] = []
        for round in 0..<5 {
            let old = try ChildProcess.run(
                strata, ["convert", small.path, destination.description, "--overwrite", "--quiet"], killAfter: nil)
            try #require(old.status == 0, "round \(round): writing the old destination failed: \(old.errors)")
            let pid = try StrataTesting.ChildProcess.start(
                [strata.path, "convert", big.path, destination.description, "--overwrite", "--quiet"], output: nil,
                directory: FileManager.default.currentDirectoryPath, environment: nil)
            // Poll the destination's main file as fast as stat allows; the moment it is gone, kill.
            var sawMissing = false
            var info = stat()
            while StrataTesting.ChildProcess.isRunning(pid) {
                if stat(destination.url!.path, &info) != 0 && errno == ENOENT {
                    kill(pid, SIGKILL)
                    sawMissing = true
                    break
                }
            }
            _ = try StrataTesting.ChildProcess.termination(of: pid)
            switch Self.entries(destination) {
            case .success(10), .success(500): break
            case .success(let count): problems.append("round \(round): the destination holds \(count) entries")
            case .failure(let error):
                problems.append(
                    "round \(round): \(sawMissing ? "the destination went missing during the replacement and the conversion was killed then; " : "")it does not open: \(error)"
                )
            }
        }
        #expect(
            problems.isEmpty,
            "\(driver): \(problems.count) of 5 conversions left no usable destination: \(problems.prefix(2).joined(separator: "; "))"
        )
    }
}
