import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

@Suite("XML deferred change sets")
struct XMLDeferredWriteTests {
    /// The file's inode, size and modification time: any rewrite (a new file renamed over it)
    /// changes the inode and the time.
    private static func identity(_ url: URL) -> [Int] {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return [] }
        return [Int(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
    }

    /// `count` new `Tag` rows with keys from `first`.
    private static func tags(from first: Int64, count: Int) -> [RowSnapshot] {
        let tag = ConformanceModel.model.entity(named: "Tag")!  // in the model
        return (0..<Int64(count)).map { offset in
            RowSnapshot(
                id: RowID(entity: tag.entityNumber, primaryKey: first + offset), version: 1,
                values: [.string("tag \(first + offset)"), .references([])])
        }
    }

    private static func tagCount(_ driver: some StoreDriver) throws -> Int {
        var fetch = StoreFetch(entity: ConformanceModel.model.entity(named: "Tag")!)  // in the model
        fetch.resultKind = .count
        return try driver.fetch(fetch).count ?? -1
    }

    @Test(
        "twenty deferred change sets leave the file alone; the empty immediate change set after them writes it once; close drops what was not written"
    )
    func deferredBatchesWriteOnce() throws {
        let directory = try TemporaryDirectory(prefix: "xml-deferred")
        let url = try XMLTestSupport.seededStore(in: directory)
        let capture = LogCapture()
        let driver = try XMLTestSupport.driver(at: url, options: StoreOptions(log: capture.storeLog(.statements)))
        let seeded = try Self.tagCount(driver)
        let before = Self.identity(url)
        try #require(!before.isEmpty)
        func writes() -> Int { capture.lines.filter { $0.text.hasPrefix("writing ") }.count }

        for batchNumber in 0..<20 {
            var batch = ChangeBatch()
            batch.inserts = Self.tags(from: 10_000 + Int64(batchNumber) * 50, count: 50)
            batch.durability = .deferred
            _ = try driver.apply(batch)
        }
        #expect(writes() == 0, "\(capture.lines.map(\.text))")
        #expect(Self.identity(url) == before, "the file was rewritten by a deferred change set")
        #expect(try Self.tagCount(driver) == seeded + 1_000, "deferred rows are seen at once")

        _ = try driver.apply(ChangeBatch())
        #expect(writes() == 1)
        #expect(Self.identity(url) != before)
        _ = try driver.apply(ChangeBatch())
        #expect(writes() == 1, "an empty immediate change set with nothing pending writes nothing")

        var late = ChangeBatch()
        late.inserts = Self.tags(from: 50_000, count: 3)
        late.durability = .deferred
        _ = try driver.apply(late)
        try driver.close()
        let reopened = try XMLTestSupport.driver(at: url, options: StoreOptions(isReadOnly: true))
        defer { try? reopened.close() }  // read-only: closing changes nothing
        #expect(try Self.tagCount(reopened) == seeded + 1_000, "the written rows, without the unwritten three")
    }

    @Test("an immediate change set after deferred ones writes them all, and a failed one leaves them pending")
    func immediateWritesPending() throws {
        let directory = try TemporaryDirectory(prefix: "xml-deferred-pending")
        let url = try XMLTestSupport.seededStore(in: directory)
        let driver = try XMLTestSupport.driver(at: url)
        let seeded = try Self.tagCount(driver)
        var deferred = ChangeBatch()
        deferred.inserts = Self.tags(from: 20_000, count: 10)
        deferred.durability = .deferred
        _ = try driver.apply(deferred)
        // A duplicate key fails the immediate change set; the deferred rows stay, still unwritten.
        var duplicate = ChangeBatch()
        duplicate.inserts = Self.tags(from: 20_000, count: 1)
        #expect(throws: StoreError.self) { _ = try driver.apply(duplicate) }
        #expect(try Self.tagCount(driver) == seeded + 10)
        var immediate = ChangeBatch()
        immediate.inserts = Self.tags(from: 30_000, count: 1)
        _ = try driver.apply(immediate)
        try driver.close()
        let reopened = try XMLTestSupport.driver(at: url, options: StoreOptions(isReadOnly: true))
        defer { try? reopened.close() }  // read-only: closing changes nothing
        #expect(try Self.tagCount(reopened) == seeded + 11)
    }
}
