import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Synchronization
import Testing

/// `PersistentContainer.loadPersistentStores` and the migration flags of
/// `PersistentStoreDescription`, on a real SQLite file.
@Suite("Container migration")
struct ContainerMigrationTests {
    /// A store of `people` seeded with version 1 and migrated to version 2 by a container.
    static func migratedStore(_ directory: TemporaryDirectory, people: Int) throws -> URL {
        let url = try SQLiteMigrationTests.seededStore(directory, people: people)
        try container(MigrationModels.version2, at: url).loadPersistentStores()
        return url
    }

    static func container(
        _ model: ManagedObjectModel, at url: URL, _ change: (inout PersistentStoreDescription) -> Void = { _ in }
    ) -> PersistentContainer {
        let container = PersistentContainer(name: "People", managedObjectModel: model)
        var description = PersistentStoreDescription(type: .sqlite, url: url)
        change(&description)
        container.persistentStoreDescriptions = [description]
        return container
    }

    @Test(
        "a description migrates and infers by default, as Core Data's does, and its flags are the options the store is added with"
    )
    func defaults() {
        var description = PersistentStoreDescription(
            type: .sqlite, url: URL(fileURLWithPath: "/tmp/strata-defaults.sqlite"))
        #expect(description.shouldMigrateStoreAutomatically)
        #expect(description.shouldInferMappingModelAutomatically)
        #expect(description.options.shouldMigrateStoreAutomatically)
        #expect(description.options.shouldInferMappingModelAutomatically)
        description.shouldInferMappingModelAutomatically = false
        #expect(!description.options.shouldInferMappingModelAutomatically)
        description.options.shouldMigrateStoreAutomatically = false
        #expect(!description.shouldMigrateStoreAutomatically)
        #expect(
            PersistentStoreDescription(url: URL(fileURLWithPath: "/tmp/strata-defaults.sqlite")).options
                .shouldMigrateStoreAutomatically)
    }

    @Test(
        "loadPersistentStores migrates a version-1 store to the container's version-2 model by default, keeping every row"
    )
    func migratesByDefault() throws {
        let directory = try TemporaryDirectory(prefix: "container-migration")
        let url = try SQLiteMigrationTests.seededStore(directory, people: 25)
        let container = Self.container(MigrationModels.version2, at: url)
        try container.loadPersistentStores()
        let problems = try MigrationModels.differences(container.newBackgroundContext(), people: 25)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
    }

    @Test(
        "an open with nothing to migrate removes what a migration killed after its swap left (a dead process's temporary companions), and nothing else"
    )
    func openClearsStaleTemporaries() throws {
        let directory = try TemporaryDirectory(prefix: "container-migration")
        // At version 2, so the opens below have nothing to migrate.
        let url = try Self.migratedStore(directory, people: 5)
        let folder = url.deletingLastPathComponent()
        let base = url.deletingPathExtension().lastPathComponent
        // Above any pid_max Linux allows (2^22), so no process has it; kill(pid, 0) says ESRCH.
        let dead = Int32(1 << 29)
        let stale = [
            ".\(base).migrating-\(dead)-5eed.sqlite-wal", ".\(base).migrating-\(dead)-5eed.sqlite-shm",
        ]
        // A temporary of this live process, and a file that only looks alike: both stay.
        let kept = [".\(base).migrating-\(getpid())-5eed.sqlite-wal", ".\(base).migrated-\(dead)-5eed.sqlite-wal"]
        func plant() throws {
            for name in stale + kept { try Data("x".utf8).write(to: folder.appendingPathComponent(name)) }
        }
        func present() -> Set<String> {
            Set((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).intersection(stale + kept)
        }
        try plant()
        try Self.container(MigrationModels.version2, at: url) { $0.shouldMigrateStoreAutomatically = false }
            .loadPersistentStores()
        #expect(present() == Set(stale + kept), "without automatic migration an open looks at nothing beside the store")
        try Self.container(MigrationModels.version2, at: url).loadPersistentStores()
        #expect(present() == Set(kept), "the dead process's temporaries are gone, the rest stay")
        let reopened = Self.container(MigrationModels.version2, at: url)
        try reopened.loadPersistentStores()
        let problems = try MigrationModels.differences(reopened.newBackgroundContext(), people: 5)
        #expect(problems.isEmpty, "\(problems.prefix(3))")
    }

    @Test("with shouldMigrateStoreAutomatically off, a changed model is refused and the store is left as it was")
    func migrationOff() throws {
        let directory = try TemporaryDirectory(prefix: "container-migration")
        let url = try SQLiteMigrationTests.seededStore(directory, people: 5)
        let before = try Data(contentsOf: url)
        let container = Self.container(MigrationModels.version2, at: url) { $0.shouldMigrateStoreAutomatically = false }
        #expect { try container.loadPersistentStores() } throws: { error in
            (error as? StoreError)?.code == .modelMismatch && "\(error)".contains(url.lastPathComponent)
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test(
        "with shouldInferMappingModelAutomatically off and no mapping model, loading fails with mappingModelNotFound naming the way out"
    )
    func inferenceOff() throws {
        let directory = try TemporaryDirectory(prefix: "container-migration")
        let url = try SQLiteMigrationTests.seededStore(directory, people: 5)
        let container = Self.container(MigrationModels.version2, at: url) {
            $0.shouldInferMappingModelAutomatically = false
        }
        #expect { try container.loadPersistentStores() } throws: { error in
            (error as? MigrationError)?.code == .mappingModelNotFound
                && "\(error)".contains("shouldInferMappingModelAutomatically")
        }
        let completed = Mutex<[String]>([])
        container.loadPersistentStores { _, error in
            completed.withLock { $0.append(error.map { "\($0)" } ?? "ok") }
        }
        let reports = completed.withLock { $0 }
        #expect(reports.count == 1 && reports[0].contains("mapping"))
    }

    @Test(
        "opening a store migrated to version 2 with the version-1 model is olderModel, naming the store, migrating or not"
    )
    func olderModel() throws {
        let directory = try TemporaryDirectory(prefix: "container-migration")
        let url = try Self.migratedStore(directory, people: 5)
        for migrates in [true, false] {
            let container = Self.container(MigrationModels.version1, at: url) {
                $0.shouldMigrateStoreAutomatically = migrates
            }
            #expect { try container.loadPersistentStores() } throws: { error in
                (error as? MigrationError)?.code == .olderModel && "\(error)".contains(url.path)
            }
        }
    }
}
