import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataPostgreSQL

/// Fetches given the row cache's rows read keys and versions first and take cached values where the
/// versions agree (PostgreSQLDriver+CachedFetch.swift). A large one without bound values hands
/// cached rows over while the keys arrive, inside a read-only transaction; a small one reads
/// without. Either way the rows are those of whole-row reads, in the same order.
@Suite("PostgreSQL driver: cached rows")
struct PostgreSQLCachedRowsTests {
    /// The fetch of every `Item` handing its parts to `body`, with `cache`'s rows.
    static func itemFetch(_ cache: RowCache, _ store: PersistentStore) throws -> StoreFetch {
        var fetch = StoreFetch(entity: try #require(ConformanceModel.model.entity(named: "Item")))
        fetch.cachedRows = CachedRows(cache, store: ObjectIdentifier(store))
        return fetch
    }

    @Test(
        "a large fetch hands cached rows over as the keys arrive and reads the missing ones by key in the same snapshot"
    )
    func streamedThroughCache() throws {
        let count = 1_500
        let (_, store, url) = try PostgreSQLStreamTests.seededStore("cached-stream", count: count, seed: 0xCA_C4ED)
        let plain = try store.driver.fetch(
            StoreFetch(entity: try #require(ConformanceModel.model.entity(named: "Item")))
        )
        .rows
        #expect(plain.count == count)
        // Rows 900–909 absent, 1,200 held at another version: everything before 900 is cached.
        let absent = Set(900..<910)
        let stale: Set<Int> = [1_200]
        let marked = plain[0].values.map { _ in StoreValue.string("marked") }
        let cache = RowCache(limit: count * 2)
        let capture = LogCapture()
        let reader = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let logged = try reader.addPersistentStore(
            type: .postgreSQL, at: url, options: StoreOptions(log: capture.storeLog(.statements)))
        cache.store(
            plain.enumerated().filter { !absent.contains($0.offset) }.map { position, row in
                RowSnapshot(
                    id: row.id, version: stale.contains(position) ? row.version + 7 : row.version, values: marked)
            }, in: ObjectIdentifier(logged))
        let driver = try #require(logged.driver as? PostgreSQLDriver)
        let pids = driver.pool.idleBackendPIDs

        var rows: [RowSnapshot] = []
        var lookupLoggedAtFirstPart: Bool?
        try driver.fetch(try Self.itemFetch(cache, logged)) { part in
            if lookupLoggedAtFirstPart == nil, !part.rows.isEmpty {
                lookupLoggedAtFirstPart = capture.lines.contains { $0.text.contains("ANY($1") }
            }
            rows += part.rows
        }
        #expect(rows.map(\.id) == plain.map(\.id), "every row once, in key order")
        for (position, row) in rows.enumerated() {
            let fromCache = !absent.contains(position) && !stale.contains(position)
            if fromCache {
                #expect(row.values == marked && row.version == plain[position].version, "row \(position)")
            } else {
                #expect(row == plain[position], "row \(position) read from the server")
            }
        }
        #expect(lookupLoggedAtFirstPart == false, "the first part was handed over before the missing rows were read")
        let texts = capture.lines.map(\.text)
        #expect(texts.contains { $0.hasPrefix("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; COPY (SELECT") })
        #expect(texts.last?.contains("ROLLBACK") == true, "\(texts.suffix(2))")
        #expect(driver.pool.idleBackendPIDs == pids, "the connection went back idle")
    }

    @Test("a small fetch reads keys without a transaction and gives the same rows")
    func smallFetchWithoutTransaction() throws {
        let (_, store, url) = try PostgreSQLStreamTests.seededStore("cached-small", count: 120, seed: 0x5A11)
        let item = try #require(ConformanceModel.model.entity(named: "Item"))
        let plain = try store.driver.fetch(StoreFetch(entity: item)).rows
        let capture = LogCapture()
        let reader = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let logged = try reader.addPersistentStore(
            type: .postgreSQL, at: url, options: StoreOptions(log: capture.storeLog(.statements)))
        let cache = RowCache()
        cache.store(
            plain.enumerated().filter { $0.offset != 60 }.map(\.element), in: ObjectIdentifier(logged))
        // The first fetch of the entity expects many rows; the second knows it read 120.
        let first = try logged.driver.fetch(try Self.itemFetch(cache, logged)).rows
        let second = try logged.driver.fetch(try Self.itemFetch(cache, logged)).rows
        #expect(first == plain)
        #expect(second == plain)
        let copies = capture.lines.map(\.text).filter { $0.contains("COPY (SELECT") }
        #expect(copies.count == 2)
        #expect(copies.first?.hasPrefix("BEGIN") == true)
        #expect(copies.last?.hasPrefix("COPY") == true, "\(copies)")
    }

    @Test("a streamed fetch stopped by its limit ends its transaction; the one connection serves on")
    func stoppedEarly() throws {
        let (_, store, url) = try PostgreSQLStreamTests.seededStore("cached-stop", count: 1_000, seed: 0x570B)
        let item = try #require(ConformanceModel.model.entity(named: "Item"))
        let plain = try store.driver.fetch(StoreFetch(entity: item)).rows
        let (coordinator, driver) = try PostgreSQLStreamTests.singleConnection(url)
        let logged = coordinator.persistentStores[0]
        let pids = driver.pool.idleBackendPIDs
        let cache = RowCache()
        cache.store(plain, in: ObjectIdentifier(logged))
        // MATCHES is left to the driver, which pages itself and stops reading at the third match.
        var fetch = try Self.itemFetch(cache, logged)
        fetch.predicate = try FetchPredicate(format: "string MATCHES %@", ".*a.*")
        fetch.sort = [SortKey("int32")]
        fetch.limit = 3
        let page = try driver.fetch(fetch)
        #expect(page.appliedPage)
        let expected = try plain.filter {
            try fetch.predicate!.evaluate(with: RowView($0, model: ConformanceModel.model, lookup: { _ in nil }))
        }
        .prefix(3)
        #expect(expected.count == 3)
        #expect(page.rows == Array(expected))
        #expect(driver.pool.idleBackendPIDs == pids, "the transaction ended and the connection is idle")
        #expect(try driver.fetch(try Self.itemFetch(cache, logged)).rows == plain)
        #expect(driver.pool.idleBackendPIDs == pids)
    }

    @Test("a connection lost after rows were handed over is an error, never rows handed over twice")
    func connectionLostAfterParts() throws {
        let server = try PostgreSQLServer.shared()
        let (_, store, url) = try PostgreSQLStreamTests.seededStore("cached-lost", count: 1_200, seed: 0x1057)
        let item = try #require(ConformanceModel.model.entity(named: "Item"))
        let plain = try store.driver.fetch(StoreFetch(entity: item)).rows
        let (coordinator, driver) = try PostgreSQLStreamTests.singleConnection(url)
        let logged = coordinator.persistentStores[0]
        let pid = try #require(driver.pool.idleBackendPIDs.first)
        // The last rows are missing from the cache, so a statement follows the stream.
        let cache = RowCache()
        cache.store(Array(plain.prefix(1_000)), in: ObjectIdentifier(logged))
        var handed: [RowID] = []
        #expect {
            try driver.fetch(try Self.itemFetch(cache, logged)) { part in
                if handed.isEmpty {
                    try PostgreSQLAdmin.execute(["SELECT pg_terminate_backend(\(pid))"], on: server)
                }
                handed += part.rows.map(\.id)
            }
        } throws: { error in
            (error as? StoreError)?.code == .io
        }
        #expect(!handed.isEmpty)
        #expect(Set(handed).count == handed.count, "no row handed over twice")
        #expect(handed == Array(plain.prefix(handed.count)).map(\.id))
        // The pool drops the dead connection and the store reads again.
        #expect(try driver.fetch(try Self.itemFetch(cache, logged)).rows.map(\.id) == plain.map(\.id))
    }
}
