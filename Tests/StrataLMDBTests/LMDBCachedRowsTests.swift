import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

/// A scan takes the values of rows the row cache holds at the version in the row's header, and
/// decodes every other row (as the SQLite driver does with `Z_OPT`).
@Suite("LMDB driver: cached rows")
struct LMDBCachedRowsTests {
    @Test("scans take cached values where the version agrees, with and without a predicate, and decode the rest")
    func scansTakeAgreeingVersions() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-cached")
        let (coordinator, driver, _) = try LMDBQueryTests.seeded(directory)
        let person = try #require(coordinator.managedObjectModel.entity(named: "Person"))
        let plain = try driver.fetch(StoreFetch(entity: person)).rows.sorted { $0.id < $1.id }
        #expect(plain.count == 300)

        // A separate cache holding marked values for two rows: one at the stored version, one not.
        let cache = RowCache()
        let key = ObjectIdentifier(coordinator.persistentStores[0])
        let score = try #require(person.index(ofProperty: "score"))
        var marked = plain[0].values
        marked[score] = .double(1_000)
        cache.store(
            [
                RowSnapshot(id: plain[0].id, version: plain[0].version, values: marked),
                RowSnapshot(id: plain[1].id, version: plain[1].version + 5, values: marked),
            ], in: key)
        var fetch = StoreFetch(entity: person)
        fetch.cachedRows = CachedRows(cache, store: key)
        let rows = try driver.fetch(fetch).rows.sorted { $0.id < $1.id }
        #expect(rows.count == 300)
        #expect(rows[0].values == marked, "same version: the cached values, not decoded")
        #expect(rows[1] == plain[1], "another version: decoded from the file")
        #expect(Array(rows[2...]) == Array(plain[2...]))

        // A predicate no index answers (case-insensitive) scans and is tested on the stored fields;
        // the matching row's values still come from the cache when its version agrees.
        fetch.predicate = try FetchPredicate(format: "code ==[c] %@", "C0")
        let matched = try driver.fetch(fetch).rows
        #expect(matched.count == 1)
        #expect(matched.first?.id == plain[0].id && matched.first?.values == marked)
    }

    @Test("a scan that finds few cached rows stops asking for a stretch and decodes it, then asks again")
    func fewFoundSkipsAStretch() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-cached")
        let (coordinator, driver, _) = try LMDBQueryTests.seeded(directory, people: 700)
        let person = try #require(coordinator.managedObjectModel.entity(named: "Person"))
        let plain = try driver.fetch(StoreFetch(entity: person)).rows
        #expect(plain.map(\.id) == plain.map(\.id).sorted(), "a scan answers in key order")
        // Every row but the first window's is cached with a marked score at the stored version.
        let window = CachedRows.Probe.window
        let skipped = window * (CachedRows.Probe.minimumShare - 1)
        #expect(plain.count > window + skipped)
        let score = try #require(person.index(ofProperty: "score"))
        let cache = RowCache()
        let key = ObjectIdentifier(coordinator.persistentStores[0])
        cache.store(
            plain[window...].map { row in
                var values = row.values
                values[score] = .double(-1)
                return RowSnapshot(id: row.id, version: row.version, values: values)
            }, in: key)
        var fetch = StoreFetch(entity: person)
        fetch.cachedRows = CachedRows(cache, store: key)
        let rows = try driver.fetch(fetch).rows
        #expect(rows.map(\.id) == plain.map(\.id))
        #expect(Array(rows[..<(window + skipped)]) == Array(plain[..<(window + skipped)]), "decoded from the file")
        #expect(rows[(window + skipped)...].allSatisfy { $0.values[score] == .double(-1) }, "from the cache again")
    }
}
