import Foundation
import Strata
import StrataTesting
import StrataTools
import Testing

/// SIGKILL during a migration on open (SQLite in place, XML and LMDB by copying and swapping),
/// and migrations that fail: the store is always entirely the old version or entirely the new.
/// The worker's `migration-*` commands (Tests/FuzzWorker/MigrationKill.swift) write, migrate and
/// check the stores; the kill moments come from a fixed, printed seed.
@Suite("Migration kill tests")
struct MigrationKillTests {
    /// People in the store migrated: enough rows that kills land inside the migration.
    static let people = ["sqlite": 1_500, "xml": 800, "lmdb": 1_500]

    /// The worker's answer for the store at `path`: `old`, `new` or `broken …`.
    static func check(_ worker: URL, _ driver: String, _ path: String, people: Int) throws -> String {
        let run = try ChildProcess.run(worker, ["migration-check", driver, path, "\(people)"], killAfter: nil)
        return run.lines.last ?? "broken the check printed nothing (status \(run.status)): \(run.errors)"
    }

    /// Files in `directory` other than the store's own and the backups.
    static func leftovers(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") }.sorted()
    }

    @Test(
        "SIGKILL during a migration on open, at least 50 times per file driver: the store is entirely the old version or entirely the new, and what a kill leaves behind never confuses a later open or migration",
        arguments: KillTests.drivers)
    func killMigration(_ driver: String) throws {
        let kills = 50
        let seed: UInt64 = 0x419_0000 + UInt64(KillTests.drivers.firstIndex(of: driver) ?? 0)
        print("kill test \(driver) migration: seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory(prefix: "kill-migration")
        let people = Self.people[driver] ?? 1_000
        KnownDriver.registerAll()
        let worker = try FuzzHarness.worker()
        let type = try #require(StoreType.named(KnownDriver(rawValue: driver)?.driverName ?? driver))
        let pristine = directory.file("pristine.\(driver)")
        let store = directory.file("store.\(driver)")
        let seeded = try ChildProcess.run(
            worker, ["migration-seed", driver, pristine.path, "\(people)"], killAfter: nil)
        try #require(seeded.status == 0, "writing the store to migrate failed: \(seeded.errors)")
        func restore() throws {
            try type.factory.destroyStore(at: store, options: StoreOptions())
            try type.factory.copyStore(from: pristine, to: store, options: StoreOptions())
        }
        // How long a whole migration takes, the process's start included (the shorter of two
        // runs): kills land anywhere in it. The clock only spreads the kills; counts decide.
        var span = Double.infinity
        for _ in 0..<2 {
            try restore()
            try #require(
                try Self.check(worker, driver, store.path, people: people) == "old",
                "the copied store is the old version")
            let start = Date()
            let full = try ChildProcess.run(worker, ["migration-open", driver, store.path], killAfter: nil)
            span = min(span, max(0.05, Date().timeIntervalSince(start)))
            try #require(full.lines == ["migrated"], "the migration works when not killed: \(full.errors)")
            try #require(
                try Self.check(worker, driver, store.path, people: people) == "new",
                "the migrated store holds every row")
        }
        print(
            "kill test \(driver) migration: an unkilled migration of \(people) people takes about \(Int(span * 1_000)) ms"
        )
        var problems: [String] = []
        var killed = 0
        var sawOld = 0
        var sawNew = 0
        var state = "new"
        // On a loaded machine a migration can finish before its kill lands: the window then
        // shrinks (and grows back after kills), so the count of kills is reached; counts decide.
        var scale = 1.0
        for round in 0..<kills * 6 where killed < kills {
            if state == "new" { try restore() }
            let backup = round % 3 == 0 ? directory.file("backup-\(round).\(driver)") : nil
            // Every other kill near the end, where the new store is committed or swapped in.
            let reach = span * scale
            let window = round % 2 == 0 ? 0...reach : (reach * 0.7)...(reach * 1.1)
            let delay = UInt32(Double.random(in: window, using: &random) * 1_000_000)
            let run = try ChildProcess.run(
                worker, ["migration-open", driver, store.path] + (backup.map { [$0.path] } ?? []), killAfter: delay)
            let label = "seed \(seed), round \(round) (killed after \(delay) µs, \(run.killed ? "killed" : "finished"))"
            scale = run.killed ? min(1, scale * 1.05) : max(0.05, scale * 0.85)
            if run.killed {
                killed += 1
            } else if run.lines != ["migrated"] {
                problems.append("\(label): the migration failed after earlier kills: \(run.errors)")
            }
            state = try Self.check(worker, driver, store.path, people: people)
            switch state {
            case "old" where run.killed: sawOld += 1
            case "new":
                sawNew += 1
                // strata validate too, on every store a killed migration left new and every fifth other.
                if run.killed || sawNew % 5 == 1 {
                    try KillTests.validate(
                        StoreLocation(scheme: KnownDriver(rawValue: driver) ?? .sqlite, url: store), label)
                }
            default:
                problems.append("\(label): \(state == "old" ? "the migration finished but the store is old" : state)")
            }
            // A backup that is there is a whole copy of the old store.
            if let backup, FileManager.default.fileExists(atPath: backup.path) {
                let kept = try Self.check(worker, driver, backup.path, people: people)
                if kept != "old" { problems.append("\(label): the backup is not the whole old store: \(kept)") }
            }
            if problems.count > 5 { break }
        }
        // Whatever the kills left, a later open with migration completes it (or, when the last
        // kill came after the new store was in place, finds nothing to migrate) and clears the
        // temporaries.
        let last = try ChildProcess.run(worker, ["migration-open", driver, store.path], killAfter: nil)
        #expect(last.lines == ["migrated"], "the open with migration after the kills failed: \(last.errors)")
        #expect(try Self.check(worker, driver, store.path, people: people) == "new")
        let hidden = try Self.leftovers(in: directory)
        let left = hidden.filter { $0.hasPrefix(".store.") }
        // Backups killed while being copied leave their hidden temporaries beside the backup path
        // (nothing removes them); they are named after the backup, so no store open looks at them.
        print(
            "kill test \(driver) migration: \(hidden.count - left.count) hidden temporaries of killed backup copies left"
        )
        #expect(
            left.isEmpty,
            "temporary stores the killed migrations left beside the store remain after a later one: \(left)")
        #expect(problems.isEmpty, "\(problems.count) problems: \(problems.joined(separator: "\n"))")
        #expect(killed == kills, "the migration was killed \(killed) times")
        print(
            "kill test \(driver) migration: \(killed) kills, \(sawOld) left the old store, \(sawNew) the new one, \(problems.count) problems"
        )
    }

    @Test(
        "a backup copy killed half-way leaves a hidden temporary that the next copy to the same place removes",
        arguments: KillTests.drivers)
    func staleBackupTemporariesAreRemoved(_ driver: String) throws {
        let (directory, url, type) = try Self.version1Store(driver, people: 5)
        let backup = directory.file("backup.\(driver)")
        // What a copy killed between creating its temporary and renaming it leaves, named with
        // the pid of a process that no longer runs.
        let stale = directory.file(".backup.copying-\(try Self.deadProcess())-1a2b.\(driver)")
        try Data(repeating: 7, count: 4_096).write(to: stale)
        try type.factory.copyStore(from: url, to: backup, options: StoreOptions())
        let hidden = try Self.leftovers(in: directory)
        #expect(!FileManager.default.fileExists(atPath: stale.path), "the stale temporary is still there: \(hidden)")
        #expect(FileManager.default.fileExists(atPath: backup.path))
    }

    /// The pid of a process that has exited and been reaped.
    static func deadProcess() throws -> Int32 {
        let pid = try StrataTesting.ChildProcess.start(["/bin/true"], output: nil)
        _ = try StrataTesting.ChildProcess.termination(of: pid)
        return pid
    }

    /// The bytes of every file in `directory` that holds data, by name: not lock files (LMDB's
    /// reader table, XML's lock) nor SQLite's shared-memory index, which every open rewrites, nor
    /// an empty write-ahead log, which a read-only open of a SQLite store leaves.
    static func snapshot(_ directory: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        where !name.hasSuffix("-lock") && !name.hasSuffix(".lock") && !name.hasSuffix("-shm") {
            let data = try Data(contentsOf: directory.file(name))
            if name.hasSuffix("-wal") && data.isEmpty { continue }
            files[name] = data
        }
        return files
    }

    /// A store of version 1 with `people` people in a directory of its own, closed.
    static func version1Store(_ driver: String, people: Int) throws -> (TemporaryDirectory, URL, StoreType) {
        KnownDriver.registerAll()
        let type = try #require(StoreType.named(KnownDriver(rawValue: driver)?.driverName ?? driver))
        let directory = try TemporaryDirectory(prefix: "migration-failure")
        let url = directory.file("store.\(driver)")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version1)
        let store = try coordinator.addPersistentStore(type: type, at: url)
        try MigrationModels.seed(ManagedObjectContext(coordinator: coordinator), people: people)
        try coordinator.remove(store)
        return (directory, url, type)
    }

    @Test(
        "a migration refused by a new uniqueness constraint leaves every file of the store byte for byte as it was, and nothing beside it",
        arguments: KillTests.drivers)
    func constraintFailureLeavesBytes(_ driver: String) throws {
        let (directory, url, type) = try Self.version1Store(driver, people: 40)
        let before = try Self.snapshot(directory)
        let model = try ManagedObjectModel(
            entities: MigrationModels.version2.entities.map { entity in
                EntityDescription(
                    entity.name, parent: entity.superentityName, properties: entity.ownProperties,
                    uniquenessConstraints: entity.name == "Member" ? [["town"]] : [],
                    renamingIdentifier: entity.renamingIdentifier)
            })
        let migration = try #require(try StoreMigration.plan(storeAt: url, type: type, to: model))
        #expect {
            try migration.run()
        } throws: { error in
            (error as? MigrationError)?.code == .constraintViolation
        }
        let after = try Self.snapshot(directory)
        #expect(
            after == before,
            "the files beside the store changed: \(after.keys.sorted()) (before: \(before.keys.sorted()))")
    }

    @Test(
        "a copying migration whose new store fills the disk leaves the old store byte for byte as it was and removes the new one",
        arguments: KillTests.drivers)
    func diskFullLeavesBytes(_ driver: String) throws {
        let (directory, url, type) = try Self.version1Store(driver, people: 40)
        let before = try Self.snapshot(directory)
        // The real drivers under RecordingDrivers; the first write to the new store fails as a full disk would.
        let failing = StoreType(name: type.name, factory: FailingNewStoreFactory(wrapped: type.factory))
        let migration = try #require(try StoreMigration.plan(storeAt: url, type: failing, to: MigrationModels.version2))
        #expect {
            try migration.run()
        } throws: { error in
            (error as? StoreError)?.code == .full
        }
        let after = try Self.snapshot(directory)
        #expect(
            after == before,
            "the files beside the store changed: \(after.keys.sorted()) (before: \(before.keys.sorted()))")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version2)
        var options = StoreOptions()
        options.shouldMigrateStoreAutomatically = true
        options.shouldInferMappingModelAutomatically = true
        let store = try coordinator.addPersistentStore(type: type, at: url, options: options)
        #expect(try MigrationModels.differences(ManagedObjectContext(coordinator: coordinator), people: 40).isEmpty)
        try coordinator.remove(store)
    }
}

/// A real driver's factory whose drivers are ``RecordingDriver``s (so SQLite, too, migrates by
/// copying), the first write (`apply`) to a migration's new store failing with `.full`.
struct FailingNewStoreFactory: StoreDriverFactory {
    let wrapped: any StoreDriverFactory

    func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
        let driver = RecordingDriver(wrapping: try wrapped.makeDriver(request))
        if request.url?.lastPathComponent.contains(".migrating-") == true {
            driver.failNext(
                .apply, with: StoreError(.full, "no space left on the device (injected)", store: request.url?.path))
        }
        return driver
    }

    func metadata(at url: URL, options: StoreOptions) throws -> StoreMetadata? {
        try wrapped.metadata(at: url, options: options)
    }
    func recoverModel(at url: URL, options: StoreOptions) throws -> RecoveredModel? {
        try wrapped.recoverModel(at: url, options: options)
    }
    func storeFiles(at url: URL, options: StoreOptions) -> [URL] { wrapped.storeFiles(at: url, options: options) }
    func replaceStore(at destination: URL, withStoreFrom source: URL, options: StoreOptions) throws {
        try wrapped.replaceStore(at: destination, withStoreFrom: source, options: options)
    }
    func destroyStore(at url: URL, options: StoreOptions) throws { try wrapped.destroyStore(at: url, options: options) }
    func copyStore(from source: URL, to destination: URL, options: StoreOptions) throws {
        try wrapped.copyStore(from: source, to: destination, options: options)
    }
}
