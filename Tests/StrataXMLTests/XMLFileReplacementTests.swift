import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataXML

/// How a save replaces the store file: mode, owner, symbolic links, and what each failure leaves.
@Suite("XML store file replacement")
struct XMLFileReplacementTests {
    static func status(_ path: String, following: Bool = true) throws -> stat {
        var status = stat()
        let result = following ? stat(path, &status) : lstat(path, &status)
        try #require(result == 0, "stat \(path): \(String(cString: strerror(errno)))")
        return status
    }

    /// A batch renaming the first Tag of `driver`.
    static func renameFirstTag(_ driver: XMLDriver, to name: String) throws -> ChangeBatch {
        let model = ConformanceModel.model
        let tag = try #require(model.entity(named: "Tag"))
        let row = try #require(try driver.fetch(StoreFetch(entity: tag)).rows.first)
        var values = row.values
        values[0] = .string(name)
        var batch = ChangeBatch()
        batch.updates = [RowUpdate(id: row.id, expectedVersion: row.version, values: values, changedSlots: [0])]
        return batch
    }

    /// Files in `directory` whose names mark them as temporary files of a save.
    static func temporaryFiles(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".strata-tmp-") }
    }

    @Test("a save keeps the store file's permission bits")
    func keepsMode() throws {
        let directory = try TemporaryDirectory(prefix: "xml-mode")
        let url = try XMLTestSupport.seededStore(in: directory)
        try #require(chmod(url.path, 0o640) == 0)
        let driver = try XMLTestSupport.driver(at: url)
        _ = try driver.apply(try Self.renameFirstTag(driver, to: "renamed"))
        try driver.close()
        #expect(try Self.status(url.path).st_mode & 0o7777 == 0o640)
        #expect(try XMLTestSupport.text(url).contains("renamed"))
    }

    @Test("a save keeps the store file's owner and group")
    func keepsOwner() throws {
        let directory = try TemporaryDirectory(prefix: "xml-owner")
        let url = try XMLTestSupport.seededStore(in: directory)
        // Root can give the file away and the save must give it back; other users can at most
        // keep their own group, which the save must then also keep.
        let (uid, gid): (uid_t, gid_t) = geteuid() == 0 ? (65_534, 65_534) : (geteuid(), getegid())
        try #require(chown(url.path, uid, gid) == 0)
        let driver = try XMLTestSupport.driver(at: url)
        _ = try driver.apply(try Self.renameFirstTag(driver, to: "renamed"))
        try driver.close()
        let status = try Self.status(url.path)
        #expect(status.st_uid == uid)
        #expect(status.st_gid == gid)
    }

    @Test("a save through a symbolic link keeps the link and replaces the file it names")
    func symlinkStays() throws {
        let directory = try TemporaryDirectory(prefix: "xml-symlink")
        let real = try XMLTestSupport.seededStore(in: directory, name: "real.xml")
        let links = directory.file("links")
        try FileManager.default.createDirectory(at: links, withIntermediateDirectories: true)
        let link = links.appendingPathComponent("store.xml")
        try #require(symlink("../real.xml", link.path) == 0)
        let driver = try XMLTestSupport.driver(at: link)
        _ = try driver.apply(try Self.renameFirstTag(driver, to: "through the link"))
        // A second writer through the real path waits for the same lock.
        let second = storeErrorCode {
            _ = try XMLTestSupport.driver(at: real, options: StoreOptions(timeout: 0.05))
        }
        #expect(second == .locked, "both spellings of the store take one lock")
        try driver.close()
        #expect(try Self.status(link.path, following: false).st_mode & S_IFMT == S_IFLNK, "the link is still a link")
        #expect(try XMLTestSupport.text(real).contains("through the link"), "the file the link names holds the save")
        #expect(try Self.temporaryFiles(in: links).isEmpty)
        #expect(try Self.temporaryFiles(in: directory.url).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: link.path + ".lock"), "the lock is taken beside the real file")
    }

    @Test("a store created through a dangling symbolic link is created where the link points")
    func danglingSymlink() throws {
        let directory = try TemporaryDirectory(prefix: "xml-dangling")
        let link = directory.file("link.xml")
        try #require(symlink("target.xml", link.path) == 0)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: .xml, at: link)
        try ConformanceModel.seed(ManagedObjectContext(coordinator: coordinator))
        try coordinator.remove(store)
        #expect(try Self.status(link.path, following: false).st_mode & S_IFMT == S_IFLNK)
        #expect(FileManager.default.fileExists(atPath: directory.file("target.xml").path))
    }

    @Test(
        "a save that fails before the rename leaves the file, the open store and the message saying so",
        arguments: [
            XMLStoreFile.Step.write, .fileSync, .rename,
        ])
    func failureBeforeRename(_ step: XMLStoreFile.Step) throws {
        let directory = try TemporaryDirectory(prefix: "xml-fail-before")
        let url = try XMLTestSupport.seededStore(in: directory)
        let before = try Data(contentsOf: url)
        let driver = try XMLTestSupport.driver(at: url)
        let rowsBefore = try XMLTestSupport.allRows(driver, model: ConformanceModel.model)
        XMLStoreFile.injectedFailures.withLock { $0[url.path] = (step, EIO) }
        defer { _ = XMLStoreFile.injectedFailures.withLock { $0.removeValue(forKey: url.path) } }
        let batch = try Self.renameFirstTag(driver, to: "never saved")
        do {
            _ = try driver.apply(batch)
            Issue.record("the save succeeded")
        } catch let error as StoreError {
            #expect(error.code == .io)
            #expect(error.message.contains("the store file is unchanged"), "\(error.message)")
        }
        #expect(try Data(contentsOf: url) == before)
        #expect(try XMLTestSupport.allRows(driver, model: ConformanceModel.model) == rowsBefore)
        #expect(try Self.temporaryFiles(in: directory.url).isEmpty)
        XMLStoreFile.injectedFailures.withLock { _ = $0.removeValue(forKey: url.path) }
        _ = try driver.apply(batch)  // the same batch applies once the failure is gone
        try driver.close()
        #expect(try XMLTestSupport.text(url).contains("never saved"))
    }

    @Test("through a context, a save that is in place but not durable counts as saved and throws notDurable")
    func contextSaveNotDurable() throws {
        let directory = try TemporaryDirectory(prefix: "xml-context-dirsync")
        let url = try XMLTestSupport.seededStore(in: directory)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .xml, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        let tag = try #require(try context.fetch(FetchRequest(entityName: "Tag")).first)
        tag["name"] = "durable later"
        let added = try context.insertNewObject(forEntityName: "Tag")
        added["name"] = "added"
        // Keys first: a key reservation that is not durable is refused (nothing is handed out).
        XMLStoreFile.injectedFailures.withLock { $0[url.path] = (.directorySync, EIO) }
        #expect { try context.obtainPermanentIDs(for: [added]) } throws: { ($0 as? StoreError)?.code == .io }
        XMLStoreFile.injectedFailures.withLock { _ = $0.removeValue(forKey: url.path) }
        try context.obtainPermanentIDs(for: [added])
        XMLStoreFile.injectedFailures.withLock { $0[url.path] = (.directorySync, EIO) }
        #expect { try context.save() } throws: { ($0 as? StoreError)?.code == .notDurable }
        XMLStoreFile.injectedFailures.withLock { _ = $0.removeValue(forKey: url.path) }
        #expect(!context.hasChanges, "the changes reached the store and count as saved")
        #expect(!added.objectID.isTemporaryID)
        tag["name"] = "again"
        try context.save()
        let check = ManagedObjectContext(coordinator: coordinator)
        let names = Set(
            try check.fetch(FetchRequest(entityName: "Tag")).compactMap { $0.value(forKey: "name") as? String })
        #expect(names.contains("again") && names.contains("added"))
    }

    @Test("a save whose directory fsync fails says the new content is in place, and the open store holds it")
    func directorySyncFailure() throws {
        let directory = try TemporaryDirectory(prefix: "xml-fail-dirsync")
        let url = try XMLTestSupport.seededStore(in: directory)
        let driver = try XMLTestSupport.driver(at: url)
        XMLStoreFile.injectedFailures.withLock { $0[url.path] = (.directorySync, EIO) }
        defer { _ = XMLStoreFile.injectedFailures.withLock { $0.removeValue(forKey: url.path) } }
        let batch = try Self.renameFirstTag(driver, to: "in place")
        do {
            _ = try driver.apply(batch)
            Issue.record("the save reported success")
        } catch let error as StoreError {
            #expect(error.code == .notDurable)
            #expect(error.message.contains("the save is in the store file"), "\(error.message)")
            #expect(!error.message.contains("unchanged"), "\(error.message)")
        }
        #expect(try XMLTestSupport.text(url).contains("in place"), "the file holds the save")
        let rows = try XMLTestSupport.allRows(driver, model: ConformanceModel.model)
        let renamed = try #require(batch.updates.first)
        #expect(rows[renamed.id]?.values[0] == .string("in place"), "the open store holds what the file holds")
        #expect(rows[renamed.id]?.version == renamed.expectedVersion + 1)
        // The same batch is now stale: the store moved on with the file.
        #expect(storeErrorCode { _ = try driver.apply(batch) } == .conflict)
        XMLStoreFile.injectedFailures.withLock { _ = $0.removeValue(forKey: url.path) }
        try driver.close()
        let reopened = try XMLTestSupport.driver(at: url, options: StoreOptions(isReadOnly: true))
        #expect(
            try XMLTestSupport.allRows(reopened, model: ConformanceModel.model)[renamed.id]?.values[0]
                == .string("in place"))
        try reopened.close()
    }
}
