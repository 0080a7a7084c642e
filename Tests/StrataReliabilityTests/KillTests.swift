import Foundation
import Strata
import StrataTesting
import StrataTools
import Testing

/// SIGKILL during saves, key allocation and metadata saves on every file driver, and during
/// `strata convert`. The loops are the worker's (`KillLoops.swift` says what each writes); the
/// kill moments come from a fixed, printed seed.
@Suite("Kill tests")
struct KillTests {
    static let drivers = ["sqlite", "xml", "lmdb"]

    static func location(_ driver: String, in directory: TemporaryDirectory, name: String = "killed") -> StoreLocation {
        let scheme = KnownDriver(rawValue: driver) ?? .sqlite
        return StoreLocation(scheme: scheme, url: directory.file("\(name).\(driver)"))
    }

    /// Opens a store the loops wrote, with the model it embeds.
    static func open(_ location: StoreLocation, readOnly: Bool = true) throws -> (
        PersistentStoreCoordinator, ManagedObjectContext, PersistentStore
    ) {
        KnownDriver.registerAll()
        let model = try StoreOpener.resolveModel(at: location, modelPath: nil).model
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            type: try location.storeType(), at: location.url, options: StoreOptions(isReadOnly: readOnly))
        return (coordinator, ManagedObjectContext(coordinator: coordinator), store)
    }

    /// Whether the store at `location` has been written to at all: a child killed while it created
    /// the store (the file exists, its metadata and model not yet saved) leaves a store that opens
    /// with its model but carries none yet, which only a store nothing was confirmed for may be.
    /// Read as an app restarting would: with a connection that may write, so a transaction the
    /// kill left half-written (a SQLite hot journal) is rolled back first.
    static func isInitialized(_ location: StoreLocation) throws -> Bool {
        KnownDriver.registerAll()
        guard let url = location.url else { return false }
        let metadata = try location.storeType().factory.metadata(at: url, options: StoreOptions(createIfMissing: false))
        return metadata?.values[StoreMetadata.modelKey] != nil
    }

    /// `strata validate` on the store: it must exit 0.
    static func validate(_ location: StoreLocation, _ label: String) throws {
        let result = try ChildProcess.run(
            try ChildProcess.executable("strata"), ["validate", location.description], killAfter: nil)
        #expect(
            result.status == 0, "\(label): strata validate: \(result.lines.joined(separator: "\n")) \(result.errors)")
    }

    @Test(
        "SIGKILL during SQLite saves, 60 times: every committed save is there in full, no partial save, and the store validates"
    )
    func sqliteSaves() throws {
        try killSaves("sqlite", kills: 60, seed: 0x5A7E_0001)
    }

    @Test("SIGKILL during saves on XML and LMDB, 20 times each, with the same checks", arguments: ["xml", "lmdb"])
    func otherSaves(_ driver: String) throws {
        try killSaves(driver, kills: 20, seed: driver == "xml" ? 0x5A7E_0002 : 0x5A7E_0003)
    }

    func killSaves(_ driver: String, kills: Int, seed: UInt64) throws {
        print("kill test \(driver) saves: seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory(prefix: "kill-saves")
        let location = Self.location(driver, in: directory)
        let worker = try FuzzHarness.worker()
        var known: Int64 = 0
        var killed = 0
        for round in 0..<kills * 3 where killed < kills {
            let delay = UInt32.random(in: 20_000...250_000, using: &random)
            let run = try ChildProcess.run(worker, ["save-loop", driver, location.url!.path], killAfter: delay)
            try #require(run.killed || run.errors.isEmpty, "round \(round): the loop failed: \(run.errors)")
            if run.killed { killed += 1 }
            let printed = run.lines.compactMap { $0.hasPrefix("saved ") ? Int64($0.dropFirst(6)) : nil }.last ?? known
            guard FileManager.default.fileExists(atPath: location.url!.path) else { continue }
            let label = "seed \(seed), round \(round) (killed after \(delay) µs)"
            guard try Self.isInitialized(location) else {
                #expect(printed == 0, "\(label): the store has no model, but save \(printed) was confirmed")
                continue
            }
            let (coordinator, context, store) = try Self.open(location)
            defer { try? coordinator.remove(store) }  // read-only: closing changes nothing
            let ledgers = try context.fetch(FetchRequest(entityName: "Ledger"))
            guard let ledger = ledgers.first else {
                #expect(printed == 0, "\(label): no ledger, but save \(printed) was confirmed")
                continue
            }
            #expect(ledgers.count == 1, "\(label): \(ledgers.count) ledgers")
            let stored = ledger.value(forKey: "round", as: Int64.self) ?? -1
            #expect(
                stored == printed || stored == printed + 1,
                "\(label): the store holds round \(stored), the loop confirmed \(printed)")
            #expect(stored >= known, "\(label): a committed save was lost: round \(stored) < \(known)")
            // Rounds max(1, r - 9)...r, three entries each, linked to the ledger and to the round before.
            let entries = try context.fetch(FetchRequest(entityName: "Entry"))
            var byRound: [Int64: [ManagedObject]] = [:]
            for entry in entries {
                byRound[entry.value(forKey: "round", as: Int64.self) ?? -1, default: []].append(entry)
            }
            let expectedRounds = Set(max(1, stored - 9)...max(1, stored)).filter { $0 <= stored }
            #expect(
                Set(byRound.keys) == expectedRounds,
                "\(label): entry rounds \(byRound.keys.sorted()), expected \(expectedRounds.sorted())")
            for (number, group) in byRound {
                #expect(group.count == 3, "\(label): round \(number) has \(group.count) entries (a partial save)")
                #expect(
                    group.allSatisfy { $0.object(forKey: "ledger") === ledger },
                    "\(label): an entry of round \(number) lost its ledger")
                if let before = byRound[number - 1] {
                    for entry in group {
                        #expect(
                            Set(entry.objects(forKey: "previous")) == Set(before), "\(label): links of round \(number)")
                    }
                }
                let size = 100 + Int(number % 50) * 40
                #expect(
                    group.allSatisfy { ($0.value(forKey: "payload") as? Data)?.count == size },
                    "\(label): payload of round \(number)")
            }
            #expect(ledger.objects(forKey: "entries").count == entries.count, "\(label): entries without the ledger")
            try coordinator.remove(store)
            try Self.validate(location, label)
            known = stored
        }
        #expect(killed == kills, "the loop was killed \(killed) times")
        #expect(known > Int64(kills), "the loops saved \(known) rounds in all")
    }

    @Test(
        "SIGKILL while obtaining permanent IDs without saving: keys handed out are never handed out again after a reopen",
        arguments: drivers)
    func keyAllocation(_ driver: String) throws {
        let seed: UInt64 = 0x4E75_0000 + UInt64(Self.drivers.firstIndex(of: driver) ?? 0)
        print("kill test \(driver) key allocation: seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory(prefix: "kill-keys")
        let location = Self.location(driver, in: directory)
        let worker = try FuzzHarness.worker()
        var handedOut: [String: Int64] = [:]
        var reissued: [String] = []
        var killed = 0
        for round in 0..<15 {
            let delay = UInt32.random(in: 30_000...200_000, using: &random)
            let run = try ChildProcess.run(worker, ["key-loop", driver, location.url!.path], killAfter: delay)
            try #require(run.killed, "round \(round): the loop stopped by itself: \(run.errors)")
            killed += 1
            for line in run.lines where line.hasPrefix("keys ") {
                let parts = line.split(separator: " ")
                let keys = parts.dropFirst(2).compactMap { Int64($0) }
                handedOut[String(parts[1]), default: 0] = max(handedOut[String(parts[1])] ?? 0, keys.max() ?? 0)
            }
            guard FileManager.default.fileExists(atPath: location.url!.path) else { continue }
            guard try Self.isInitialized(location) else {
                #expect(
                    handedOut.isEmpty, "seed \(seed), round \(round): the store has no model, but keys were handed out")
                continue
            }
            let (coordinator, context, store) = try Self.open(location, readOnly: false)
            defer { try? coordinator.remove(store) }  // nothing was saved; closing changes nothing
            for (entity, highest) in handedOut {
                let objects = try (0..<3).map { _ in try context.insertNewObject(forEntityName: entity) }
                try context.obtainPermanentIDs(for: objects)
                let keys = objects.map(\.objectID.primaryKey)
                if !keys.allSatisfy({ $0 > highest }) {
                    reissued.append("round \(round): \(entity) keys \(keys) after \(highest)")
                }
                handedOut[entity] = max(highest, keys.max() ?? highest)
            }
        }
        #expect(
            reissued.isEmpty,
            "seed \(seed): keys handed out again after a reopen in \(reissued.count) rounds: \(reissued.prefix(3).joined(separator: "; "))"
        )
        #expect(killed == 15)
        #expect(handedOut.values.allSatisfy { $0 > 15 }, "keys handed out: \(handedOut)")
    }

    @Test(
        "SIGKILL during metadata saves: the metadata is always one whole version and the store opens",
        arguments: drivers)
    func metadataSaves(_ driver: String) throws {
        let seed: UInt64 = 0x3E7A_0000 + UInt64(Self.drivers.firstIndex(of: driver) ?? 0)
        print("kill test \(driver) metadata: seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory(prefix: "kill-metadata")
        let location = Self.location(driver, in: directory)
        let worker = try FuzzHarness.worker()
        var known: Int64 = 0
        for round in 0..<15 {
            let delay = UInt32.random(in: 30_000...250_000, using: &random)
            let run = try ChildProcess.run(worker, ["metadata-loop", driver, location.url!.path], killAfter: delay)
            try #require(run.killed, "round \(round): the loop stopped by itself: \(run.errors)")
            let printed =
                run.lines.compactMap { $0.hasPrefix("metadata ") ? Int64($0.dropFirst(9)) : nil }.last ?? known
            guard FileManager.default.fileExists(atPath: location.url!.path) else { continue }
            let label = "seed \(seed), round \(round) (killed after \(delay) µs)"
            guard try Self.isInitialized(location) else {
                #expect(printed == 0, "\(label): the store has no model, but metadata \(printed) was confirmed")
                continue
            }
            let (coordinator, _, store) = try Self.open(location)
            defer { try? coordinator.remove(store) }  // read-only: closing changes nothing
            let values = store.metadata.values
            guard case .integer(let stored)? = values["fuzzRound"] else {
                #expect(printed == 0, "\(label): no metadata round, but \(printed) was confirmed")
                continue
            }
            #expect(
                stored == printed || stored == printed + 1, "\(label): metadata round \(stored), confirmed \(printed)")
            #expect(stored >= known, "\(label): committed metadata was lost: \(stored) < \(known)")
            let size = Int(stored % 97) * 300
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: Int64($0) &* 31 &+ stored) })
            #expect(values["fuzzData"] == .data(data), "\(label): the data of round \(stored) is not whole")
            #expect(
                values["fuzzCheck"] == .string("round \(stored), \(size) bytes"),
                "\(label): the check of round \(stored)")
            known = stored
        }
        #expect(known > 15, "the loops saved metadata \(known) times")
    }
}
