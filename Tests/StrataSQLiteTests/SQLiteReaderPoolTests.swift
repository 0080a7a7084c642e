import Dispatch
import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataSQLite

/// Reads of one SQLite store from several threads use connections of their own (ReaderPool).
@Suite("SQLite read connections")
struct SQLiteReaderPoolTests {
    static func driver(in directory: TemporaryDirectory) throws -> (PersistentStoreCoordinator, SQLiteDriver) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: directory.file("pool.sqlite"))
        try ConformanceModel.seed(ManagedObjectContext(coordinator: coordinator))
        return (coordinator, try #require(store.driver as? SQLiteDriver))
    }

    @Test("two reads on two threads run at once, each on a connection of its own")
    func readsRunTogether() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-pool")
        let (coordinator, driver) = try Self.driver(in: directory)
        defer { withExtendedLifetime(coordinator) {} }
        let firstInside = DispatchSemaphore(value: 0)
        let secondDone = DispatchSemaphore(value: 0)
        let seen = Locked<(first: ObjectIdentifier?, second: ObjectIdentifier?, waited: Bool)>((nil, nil, false))
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            _ = try? driver.read("first") { connection in
                seen.withLock { $0.first = ObjectIdentifier(connection) }
                firstInside.signal()
                // Held until the second read finished: with one shared connection it never could.
                let finished = secondDone.wait(timeout: .now() + 20) == .success
                seen.withLock { $0.waited = finished }
            }
        }
        #expect(firstInside.wait(timeout: .now() + 20) == .success)
        DispatchQueue.global().async(group: group) {
            _ = try? driver.read("second") { connection in seen.withLock { $0.second = ObjectIdentifier(connection) } }
            secondDone.signal()
        }
        #expect(group.wait(timeout: .now() + 40) == .success)
        let result = seen.withLock { $0 }
        #expect(result.waited, "the second read finished while the first still held its connection")
        #expect(result.first != nil && result.second != nil && result.first != result.second)
    }

    @Test("at most readerLimit reads run at once; the next waits for one of them")
    func limitIsKept() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-pool")
        let (coordinator, driver) = try Self.driver(in: directory)
        defer { withExtendedLifetime(coordinator) {} }
        let limit = SQLiteDriver.readerLimit
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // Reads inside their bodies now, and the most the extra read saw beside it.
        let holding = Locked<Int>(0)
        let seenByExtra = Locked<Int?>(nil)
        let group = DispatchGroup()
        // Threads of their own, not the global queue: a busy test run may start queued blocks late.
        func start(_ work: @escaping @Sendable () -> Void) {
            group.enter()
            Thread {
                work()
                group.leave()
            }.start()
        }
        for _ in 0..<limit {
            start {
                _ = try? driver.read("holding") { _ in  // a failed read never signals `inside`: the wait below fails
                    holding.withLock { $0 += 1 }
                    inside.signal()
                    _ = release.wait(timeout: .now() + 120)
                    holding.withLock { $0 -= 1 }
                }
            }
        }
        for _ in 0..<limit { #expect(inside.wait(timeout: .now() + 60) == .success) }
        let extraDone = DispatchSemaphore(value: 0)
        start {
            _ = try? driver.read("one more") { _ in  // a failed read leaves `seenByExtra` nil: checked below
                seenByExtra.withLock { $0 = holding.withLock { $0 } }
            }
            extraDone.signal()
        }
        let early = extraDone.wait(timeout: .now() + 0.5)
        #expect(early == .timedOut, "a read beyond the limit waits")
        release.signal()
        if early == .timedOut {
            #expect(extraDone.wait(timeout: .now() + 60) == .success, "and runs once one read is done")
        }
        // Whatever the timing, the extra read never ran while every connection was taken.
        let seen = try #require(seenByExtra.withLock { $0 }, "the extra read ran")
        #expect(seen < limit, "the extra read ran beside \(seen) holding reads")
        for _ in 1..<limit { release.signal() }
        #expect(group.wait(timeout: .now() + 60) == .success)
        // Every read got the rows: the pool's connections all read the store.
        let tags = try driver.fetch(StoreFetch(entity: try #require(ConformanceModel.model.entity(named: "Tag"))))
        #expect(!tags.rows.isEmpty)
    }

    @Test("closing waits for reads in flight, and later reads are refused as closed")
    func closeWaitsAndRefuses() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-pool")
        let (coordinator, driver) = try Self.driver(in: directory)
        defer { withExtendedLifetime(coordinator) {} }
        let inside = DispatchSemaphore(value: 0)
        let order = Locked<[String]>([])
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            _ = try? driver.read("slow") { _ in
                inside.signal()
                Thread.sleep(forTimeInterval: 0.3)
                order.withLock { $0.append("read ended") }
            }
        }
        #expect(inside.wait(timeout: .now() + 20) == .success)
        try driver.close()
        order.withLock { $0.append("closed") }
        #expect(group.wait(timeout: .now() + 20) == .success)
        #expect(order.withLock { $0 } == ["read ended", "closed"])
        #expect(throws: StoreError.self) { _ = try driver.read("after close") { _ in 1 } }
        do {
            _ = try driver.read("after close") { _ in 1 }
        } catch let error as StoreError {
            #expect(error.code == .closed)
        }
        try driver.close()  // idempotent
    }

    /// `cache_size` and `temp_store` as every read connection reports them, the first and one
    /// opened while the first is in use.
    static func readerPragmas(_ driver: SQLiteDriver) throws -> [[Int64?]] {
        try driver.read("outer") { outer in
            let inner = try driver.read("inner") { inner in
                #expect(inner !== outer, "a nested read takes a second connection")
                return [try inner.scalar("PRAGMA cache_size")?.integer, try inner.scalar("PRAGMA temp_store")?.integer]
            }
            return [
                [try outer.scalar("PRAGMA cache_size")?.integer, try outer.scalar("PRAGMA temp_store")?.integer], inner,
            ]
        }
    }

    @Test("read connections cache 512 KiB of pages by default and take cache_size and temp_store from the options")
    func readerPragmas() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-pool")
        let (coordinator, driver) = try Self.driver(in: directory)
        #expect(try Self.readerPragmas(driver) == [[-512, 0], [-512, 0]])
        let writerCache = try driver.writer.withLock { try $0?.scalar("PRAGMA cache_size")?.integer }
        #expect(writerCache == -2000, "the write connection keeps SQLite's default page cache")
        try coordinator.remove(try #require(coordinator.persistentStores.first))

        for readOnly in [false, true] {
            let other = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
            let store = try other.addPersistentStore(
                type: .sqlite, at: directory.file("pool.sqlite"),
                options: StoreOptions(isReadOnly: readOnly, values: ["cache_size": "-1000", "temp_store": "MEMORY"]))
            let configured = try #require(store.driver as? SQLiteDriver)
            #expect(try Self.readerPragmas(configured) == [[-1000, 2], [-1000, 2]], "read-only: \(readOnly)")
            try other.remove(store)
        }

        // A value that is not a single word or number is refused before any statement runs,
        // read-only opens included (they configure read connections only).
        for readOnly in [false, true] {
            let refused = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
            do {
                try refused.addPersistentStore(
                    type: .sqlite, at: directory.file("pool.sqlite"),
                    options: StoreOptions(isReadOnly: readOnly, values: ["cache_size": "1; DROP TABLE ZITEM"]))
                Issue.record("a cache_size of '1; DROP TABLE ZITEM' was accepted (read-only: \(readOnly))")
            } catch let error as StoreError {
                #expect(error.code == .invalidRequest)
                #expect(error.message.contains("cache_size"), "\(error.message)")
            }
        }
    }
}
