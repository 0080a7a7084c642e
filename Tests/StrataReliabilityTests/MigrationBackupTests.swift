import Foundation
import StrataTesting
import StrataTools
import Testing

@testable import Strata

/// A fixed backup location (`MigrationOptions.backupURL`, as a `PersistentStoreDescription` keeps
/// it) meets the backup an earlier migration left there: one that was killed after taking it, or
/// one to an earlier version. That backup may be the only good copy, so it is moved aside, never
/// overwritten or removed, and the migration goes on; anything else there is refused.
@Suite("Migration backups left behind")
struct MigrationBackupTests {
    @Test(
        "a migration killed after taking its backup leaves it whole; the next automatic migration with the same backup location moves it aside, says where, and migrates",
        arguments: KillTests.drivers)
    func killedMigrationBackupIsMovedAside(_ driver: String) throws {
        let people = 60
        let (directory, url, _) = try MigrationKillTests.version1Store(driver, people: people)
        let worker = try FuzzHarness.worker()
        let backup = directory.file("backup.\(driver)")
        let marker = directory.file("backed-up")
        let killed = try ChildProcess.run(
            worker, ["migration-pause", driver, url.path, backup.path, marker.path], killWhenExists: marker)
        try #require(killed.killed, "the migration was not killed: \(killed.lines) \(killed.errors)")
        #expect(try MigrationKillTests.check(worker, driver, url.path, people: people) == "old")
        #expect(try MigrationKillTests.check(worker, driver, backup.path, people: people) == "old")
        let leftover = try Data(contentsOf: backup)

        // Before: "the backup location … already exists", and the store could not be opened.
        let again = try ChildProcess.run(worker, ["migration-open", driver, url.path, backup.path], killAfter: nil)
        #expect(again.lines.last == "migrated", "the next migration failed: \(again.lines) \(again.errors)")
        #expect(try MigrationKillTests.check(worker, driver, url.path, people: people) == "new")
        #expect(try MigrationKillTests.check(worker, driver, backup.path, people: people) == "old")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        let aside = names.filter { $0.hasPrefix("backup.taken-") && $0.hasSuffix(".\(driver)") }
        try #require(aside.count == 1, "\(names)")
        let moved = directory.file(aside[0])
        #expect(try Data(contentsOf: moved) == leftover, "the backup moved aside is the one the killed migration took")
        #expect(try MigrationKillTests.check(worker, driver, moved.path, people: people) == "old")
        #expect(
            (again.lines.joined(separator: "\n") + again.errors).contains(moved.path),
            "the warning names where the backup went: \(again.lines) \(again.errors)")
    }

    @Test(
        "a backup location holding another store or another file is refused with a typed error, and nothing changes",
        arguments: KillTests.drivers)
    func foreignBackupLocationIsRefused(_ driver: String) throws {
        let (directory, url, type) = try MigrationKillTests.version1Store(driver, people: 5)
        let (otherDirectory, other, _) = try MigrationKillTests.version1Store(driver, people: 3)
        defer { withExtendedLifetime(otherDirectory) {} }
        let backup = directory.file("backup.\(driver)")
        for content in ["another store", "a file"] {
            if content == "another store" {
                try type.factory.copyStore(from: other, to: backup, options: StoreOptions())
                try #require(FileManager.default.fileExists(atPath: backup.path))
            } else {
                try type.factory.destroyStore(at: backup, options: StoreOptions())
                try Data("notes".utf8).write(to: backup)
            }
            let before = try MigrationKillTests.snapshot(directory)
            var options = StoreOptions()
            options.migration.backupURL = backup
            let migration = try #require(
                try StoreMigration.plan(storeAt: url, type: type, to: MigrationModels.version2, options: options))
            #expect {
                try migration.run()
            } throws: { error in
                guard let error = error as? MigrationError, error.code == .backupLocationTaken else { return false }
                return "\(error)".contains(backup.path) && "\(error)".contains("choose another backup location")
            }
            let after = try MigrationKillTests.snapshot(directory)
            #expect(
                after == before, "\(content): files changed: \(after.keys.sorted()) (before \(before.keys.sorted()))")
        }
    }

    @Test(
        "copying a store that is not there is notFound and creates nothing (it once copied nothing, silently)",
        arguments: KillTests.drivers)
    func copyOfNothingIsRefused(_ driver: String) throws {
        KnownDriver.registerAll()
        let type = try #require(StoreType.named(KnownDriver(rawValue: driver)?.driverName ?? driver))
        let directory = try TemporaryDirectory(prefix: "copy-nothing")
        #expect {
            try type.factory.copyStore(
                from: directory.file("missing.\(driver)"), to: directory.file("copy.\(driver)"), options: StoreOptions()
            )
        } throws: { error in
            (error as? StoreError)?.code == .notFound
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test("the name a backup is moved aside to keeps its extension, carries its date, and is never taken")
    func setAsideNames() throws {
        let directory = try TemporaryDirectory(prefix: "backup-names")
        let backup = directory.file("backup.sqlite")
        try Data("one".utf8).write(to: backup)
        let written = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14T22:13:20Z
        try FileManager.default.setAttributes([.modificationDate: written], ofItemAtPath: backup.path)
        let first = StoreMigration.setAsidePath(for: backup.path)
        #expect(first == directory.file("backup.taken-20231114T221320Z.sqlite").path)
        try Data("two".utf8).write(to: URL(fileURLWithPath: first))
        try FileManager.default.setAttributes([.modificationDate: written], ofItemAtPath: backup.path)
        #expect(
            StoreMigration.setAsidePath(for: backup.path)
                == directory.file("backup.taken-20231114T221320Z-2.sqlite").path)
    }
}
