import CLMDB
import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

/// The store file on disk: one environment per file whatever the path, checks before LMDB maps a
/// file, and the umask.
@Suite("LMDB files and paths")
struct LMDBFileTests {
    static let model = LMDBHostileFileTests.model

    static func open(_ url: URL, readOnly: Bool = false) throws -> LMDBDriver {
        try LMDBDriverFactory().open(url: url, model: model, options: StoreOptions(isReadOnly: readOnly))
    }

    static func insertTeam(_ driver: LMDBDriver, named name: String) throws {
        let team = try #require(model.entity(named: "Team"))
        let keys = try driver.allocatePrimaryKeys(forEntity: team.entityNumber, count: 1)
        var batch = ChangeBatch()
        batch.inserts = [
            RowSnapshot(
                id: RowID(entity: team.entityNumber, primaryKey: keys.lowerBound), version: 1,
                values: [.string(name), .references([])])
        ]
        _ = try driver.apply(batch)
    }

    static func teamNames(_ driver: LMDBDriver) throws -> Set<String> {
        let team = try #require(model.entity(named: "Team"))
        return Set(
            try driver.fetch(StoreFetch(entity: team)).rows.compactMap { row -> String? in
                if case .string(let name) = row.values[0] { return name }
                return nil
            })
    }

    @Test("a driver dropped without close releases its environment (a later writer is not refused by a leaked reader)")
    func droppedDriverReleases() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-dropped")
        let url = try LMDBHostileFileTests.seeded(in: directory)
        do {
            let reader = try Self.open(url, readOnly: true)
            _ = try Self.teamNames(reader)
        }
        let writer = try Self.open(url)
        try Self.insertTeam(writer, named: "after the reader went")
        #expect(try Self.teamNames(writer).contains("after the reader went"))
        try writer.close()
    }

    @Test("a store opened through a symbolic link, a hard link and another spelling shares one environment")
    func oneEnvironmentPerFile() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-links")
        let url = try LMDBHostileFileTests.seeded(in: directory)
        let symbolic = directory.file("symbolic.lmdb")
        let hard = directory.file("hard.lmdb")
        try #require(symlink("people.lmdb", symbolic.path) == 0)
        try #require(link(url.path, hard.path) == 0)
        try FileManager.default.createDirectory(at: directory.file("sub"), withIntermediateDirectories: true)
        let spelled = URL(fileURLWithPath: directory.url.path + "/sub/../people.lmdb")
        // Counted per file: other suites open environments of their own in parallel.
        #expect(EnvironmentRegistry.userCount(ofDataFile: url.path) == 0)
        let real = try Self.open(url)
        let viaSymbolic = try Self.open(symbolic)
        let viaHard = try Self.open(hard)
        let viaSpelling = try Self.open(spelled)
        #expect(viaSymbolic.environment === real.environment)
        #expect(viaHard.environment === real.environment)
        #expect(viaSpelling.environment === real.environment)
        #expect(EnvironmentRegistry.userCount(ofDataFile: url.path) == 4, "four drivers on one environment")
        try Self.insertTeam(viaSymbolic, named: "written through the link")
        #expect(try Self.teamNames(viaHard).contains("written through the link"))
        for driver in [viaSymbolic, viaHard, viaSpelling] { try driver.close() }
        #expect(
            try Self.teamNames(real).contains("written through the link"), "the others closing leaves the first open")
        try real.close()
        #expect(EnvironmentRegistry.userCount(ofDataFile: url.path) == 0)
        #expect(!FileManager.default.fileExists(atPath: symbolic.path + "-lock"), "LMDB was handed the real path")
        #expect(
            !FileManager.default.fileExists(atPath: hard.path + "-lock"),
            "the hard link was never opened as a second file")
        // Reopened by the link alone, LMDB still gets the real path and its lock file.
        let again = try Self.open(symbolic)
        #expect(again.environment.path == url.path)
        try again.close()
        #expect(!FileManager.default.fileExists(atPath: symbolic.path + "-lock"))
    }

    @Test("a store created through a dangling symbolic link is created at its target, the link kept")
    func createThroughDanglingLink() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-dangling")
        let link = directory.file("link.lmdb")
        try #require(symlink("target.lmdb", link.path) == 0)
        let driver = try Self.open(link)
        try Self.insertTeam(driver, named: "new")
        try driver.close()
        var status = stat()
        try #require(lstat(link.path, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFLNK)
        #expect(FileManager.default.fileExists(atPath: directory.file("target.lmdb").path))
        #expect(FileManager.default.fileExists(atPath: directory.file("target.lmdb-lock").path))
    }

    /// Reads, changes and writes back the store file's bytes.
    static func damage(_ url: URL, _ change: (inout [UInt8], Int) -> Void) throws {
        var bytes = [UInt8](try Data(contentsOf: url))
        let pageSize = Int(bytes[40]) | Int(bytes[41]) << 8 | Int(bytes[42]) << 16 | Int(bytes[43]) << 24
        change(&bytes, pageSize)
        try Data(bytes).write(to: url)
    }

    static func get64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }

    static func put64(_ value: UInt64, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }

    /// A store with enough rows to span many pages.
    static func largeStore(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("large.lmdb")
        let driver = try open(url)
        let team = try #require(model.entity(named: "Team"))
        let keys = try driver.allocatePrimaryKeys(forEntity: team.entityNumber, count: 2_000)
        var batch = ChangeBatch()
        batch.inserts = keys.map {
            RowSnapshot(
                id: RowID(entity: team.entityNumber, primaryKey: $0), version: 1,
                values: [.string(String(repeating: "team \($0) ", count: 20)), .references([])])
        }
        _ = try driver.apply(batch)
        try driver.close()
        return url
    }

    @Test(
        "damaged files are refused as corrupt before LMDB maps them",
        arguments: [
            "truncated", "second meta page", "page size", "second page size", "main root", "last page", "depth",
        ])
    func damagedFile(_ damage: String) throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-damaged")
        let url = try Self.largeStore(in: directory)
        let words: String
        switch damage {
        case "truncated":
            try Self.damage(url) { bytes, pageSize in bytes.removeLast(bytes.count / 2 / pageSize * pageSize) }
            words = "truncated"
        case "second meta page":
            try Self.damage(url) { bytes, pageSize in bytes[pageSize + 16] ^= 0xFF }
            words = "meta page 1 is damaged"
        case "page size":
            try Self.damage(url) { bytes, _ in
                bytes[40] = 0xB8
                bytes[41] = 0x0B
            }  // 3000
            words = "page size is 3000"
        case "second page size":
            // The newer meta page with a page size of 0: liblmdb divided by it (SIGFPE), found by
            // the reliability suite's lmdb case 487260161/1536.
            try Self.damage(url) { bytes, pageSize in
                let newest = max(Self.get64(bytes, at: 144), Self.get64(bytes, at: pageSize + 144))
                Self.put64(newest + 1, into: &bytes, at: pageSize + 144)
                for index in 40..<44 { bytes[pageSize + index] = 0 }
            }
            words = "meta page 1 has page size 0"
        case "main root":
            try Self.damage(url) { bytes, pageSize in
                for meta in [0, pageSize] { Self.put64(1 << 40, into: &bytes, at: meta + 128) }
            }
            words = "root of its main tree"
        case "last page":
            try Self.damage(url) { bytes, pageSize in
                for meta in [0, pageSize] { Self.put64(1 << 40, into: &bytes, at: meta + 136) }
            }
            words = "truncated"
        default:
            try Self.damage(url) { bytes, pageSize in
                for meta in [0, pageSize] { bytes[meta + 94] = 200 }
            }
            words = "depth of 200"
        }
        for readOnly in [false, true] {
            do {
                _ = try Self.open(url, readOnly: readOnly)
                Issue.record("\(damage): opened")
            } catch let error as StoreError {
                #expect(error.code == .corrupt, "\(damage): \(error)")
                #expect(error.store == url.path)
                #expect(error.message.contains(words), "\(damage): \(error.message)")
            }
        }
    }

    @Test("a store path that is a pipe is refused as corrupt, not waited on")
    func notARegularFile() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-fifo")
        let pipe = directory.file("pipe.lmdb")
        try #require(mkfifo(pipe.path, 0o600) == 0)
        let error = try #require(throws: StoreError.self) { _ = try Self.open(pipe) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains("not a regular file"))
    }

    @Test("a store created by a process follows its umask, data and lock file alike")
    func umaskDecidesMode() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-umask")
        let url = directory.file("private.lmdb")
        let run = try ChildProcess.capture(
            ["/bin/sh", "-c", "umask 002 && exec \"$0\" \"$1\" once", LMDBKillTests.helper.path, url.path])
        let failure = String(decoding: run.errors, as: UTF8.self)
        try #require(run.termination.succeeded, "helper failed: \(failure)")
        for path in [url.path, url.path + "-lock"] {
            var status = stat()
            try #require(stat(path, &status) == 0)
            #expect(status.st_mode & 0o777 == 0o664, "\(path): mode \(String(status.st_mode & 0o777, radix: 8))")
        }
    }
}
