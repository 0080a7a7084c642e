import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataPostgreSQL

/// How many statements reads send: a to-many fault reads its members with their rows in one
/// statement, and a fetch chooses between keys first and whole rows by its own statement's history
/// (PostgreSQLDriver+RelatedRows.swift, PostgreSQLDriver+CachedFetch.swift).
@Suite("PostgreSQL read paths")
struct PostgreSQLReadPathTests {
    /// A second coordinator on the seeded store at `url`, logging its statements into `capture`.
    static func loggedReader(_ url: URL, _ capture: LogCapture) throws -> (ManagedObjectContext, PersistentStore) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(
            type: .postgreSQL, at: url, options: StoreOptions(log: capture.storeLog(.statements)))
        return (ManagedObjectContext(coordinator: coordinator), store)
    }

    /// The statements logged since `start`, the pool's own housekeeping left out.
    static func statements(_ capture: LogCapture, from start: Int) -> [String] {
        capture.lines.dropFirst(start).map(\.text).filter { $0.contains("SELECT") }
    }

    @Test(
        "firing a to-many fault reads the members and their rows in one statement: foreign key, many-to-many, ordered"
    )
    func toManyFaultInOneStatement() throws {
        let (coordinator, _, url) = try PostgreSQLStoreTests.store("fault-one-statement", seeded: true)
        let expected = ManagedObjectContext(coordinator: coordinator)
        let capture = LogCapture()
        let (context, _) = try Self.loggedReader(url, capture)
        for (entity, key, title, order) in [
            ("Department", "employees", "name", "name"), ("Tag", "items", "int16", "name"),
            ("Playlist", "tracks", "title", "title"),
        ] {
            var request = FetchRequest(entityName: entity, sortKeys: [SortKey(order)])
            request.returnsObjectsAsFaults = false
            let owners = try context.fetch(request)
            let reference = try expected.fetch(request)
            #expect(owners.count == reference.count && !owners.isEmpty, "\(entity)")
            for (owner, other) in zip(owners, reference) {
                let start = capture.lines.count
                // Reads every member's attribute: no member may be a fault left to fire later.
                let members = owner.objects(forKey: key).map { String(describing: $0.value(forKey: title) ?? "nil") }
                let statements = Self.statements(capture, from: start)
                #expect(statements.count == 1, "\(entity).\(key): \(statements)")
                #expect(statements.first?.contains("ANY($1::bigint[])") == true)
                let again = other.objects(forKey: key).map { String(describing: $0.value(forKey: title) ?? "nil") }
                #expect(members == again, "\(entity).\(key) members in order")
            }
        }
    }

    @Test(
        "a fetch with a predicate reads whole rows the first time, keys first once its rows were cached; an unfiltered fetch's history does not steer it"
    )
    func predicateFetchGuessesByItsOwnStatement() throws {
        let (_, store, url) = try PostgreSQLStreamTests.seededStore("guess-by-statement", count: 200, seed: 0x6E55)
        let item = try #require(ConformanceModel.model.entity(named: "Item"))
        var filtered = StoreFetch(entity: item)
        filtered.predicate = try FetchPredicate(format: "int32 < %d", 50)
        let expected = try store.driver.fetch(filtered).rows
        #expect(expected.count == 50)

        let capture = LogCapture()
        let (_, logged) = try Self.loggedReader(url, capture)
        let cache = RowCache()
        cache.store(try store.driver.fetch(StoreFetch(entity: item)).rows, in: ObjectIdentifier(logged))
        let cached = CachedRows(cache, store: ObjectIdentifier(logged))
        // Every row is cached, and the fetch of every row finds them all.
        var everything = StoreFetch(entity: item)
        everything.cachedRows = cached
        #expect(try logged.driver.fetch(everything).rows.count == 200)
        filtered.cachedRows = cached
        let keysOnly = "SELECT t0.\"Z_PK\", t0.\"Z_ENT\", t0.\"Z_OPT\" FROM"

        var start = capture.lines.count
        #expect(try logged.driver.fetch(filtered).rows == expected)
        var statements = Self.statements(capture, from: start)
        #expect(statements.count == 1, "\(statements)")
        #expect(statements.allSatisfy { !$0.contains(keysOnly) }, "the first time, whole rows: \(statements)")

        start = capture.lines.count
        #expect(try logged.driver.fetch(filtered).rows == expected)
        statements = Self.statements(capture, from: start)
        #expect(statements.count == 1, "\(statements)")
        #expect(statements.first?.contains(keysOnly) == true, "every row was cached last time: keys first")

        // Rows gone from the cache: keys first finds most missing and reads whole rows; the
        // statement after it remembers and reads whole rows at once.
        cache.removeAll(in: ObjectIdentifier(logged))
        start = capture.lines.count
        #expect(try logged.driver.fetch(filtered).rows == expected)
        #expect(Self.statements(capture, from: start).count == 2)
        start = capture.lines.count
        #expect(try logged.driver.fetch(filtered).rows == expected)
        statements = Self.statements(capture, from: start)
        #expect(statements.count == 1 && statements.allSatisfy { !$0.contains(keysOnly) }, "\(statements)")
    }

    @Test(
        "a large fetch that finds most rows missing from the row cache reads them in one scan of whole rows, a few missing by key, both in the keys' snapshot"
    )
    func mostlyMissingRowsInOneScan() throws {
        let (_, store, url) = try PostgreSQLStreamTests.seededStore("scan-missing", count: 600, seed: 0x5CA7)
        let item = try #require(ConformanceModel.model.entity(named: "Item"))
        let expected = try store.driver.fetch(StoreFetch(entity: item)).rows
        #expect(expected.count == 600)
        let keysOnly = "SELECT t0.\"Z_PK\", t0.\"Z_ENT\", t0.\"Z_OPT\" FROM"
        // The first rows cached, handed over while the keys arrive; the rest missing.
        for (label, cachedCount, byKey) in [("most missing", 100, false), ("few missing", 500, true)] {
            let capture = LogCapture()
            let (_, logged) = try Self.loggedReader(url, capture)
            let cache = RowCache()
            cache.store(Array(expected.prefix(cachedCount)), in: ObjectIdentifier(logged))
            var fetch = StoreFetch(entity: item)
            fetch.cachedRows = CachedRows(cache, store: ObjectIdentifier(logged))
            let start = capture.lines.count
            #expect(try logged.driver.fetch(fetch).rows == expected, "\(label)")
            let statements = Self.statements(capture, from: start)
            #expect(statements.count == 2, "\(label): \(statements)")
            #expect(statements.first?.contains(keysOnly) == true, "\(label), keys first: \(statements)")
            let second = statements.dropFirst().first ?? ""
            #expect(!second.contains(keysOnly) && second.contains("ANY($1::bigint[])") == byKey, "\(label): \(second)")
        }
    }
}
