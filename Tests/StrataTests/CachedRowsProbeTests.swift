import Foundation
import Testing

@testable import Strata

/// `CachedRows.Probe` asks the row cache for every row until a window of asked rows finds too
/// few, then skips a stretch and asks again.
@Suite("Cached rows: probe")
struct CachedRowsProbeTests {
    final class StoreToken {}

    /// Asks for keys 1...`last` in order at version 1; true where cached values came back.
    func probe(_ cache: RowCache, _ store: ObjectIdentifier, through last: Int64) -> [Bool] {
        var probe = CachedRows.Probe(CachedRows(cache, store: store))
        return (1...last).map { probe.values(of: RowID(entity: 1, primaryKey: $0), version: 1) != nil }
    }

    func rows(_ keys: ClosedRange<Int64>, version: RowVersion = 1) -> [RowSnapshot] {
        keys.map { RowSnapshot(id: RowID(entity: 1, primaryKey: $0), version: version, values: [.integer($0)]) }
    }

    @Test("a window that finds nothing skips the next seven windows' rows, then rows are asked for again")
    func skipsAfterAPoorWindow() {
        let token = StoreToken()
        let store = ObjectIdentifier(token)
        let cache = RowCache()
        let window = CachedRows.Probe.window
        let skipped = window * (CachedRows.Probe.minimumShare - 1)
        // Rows after the first window are cached; the first window misses every row.
        cache.store(rows(Int64(window + 1)...1_000), in: store)
        let found = probe(cache, store, through: 1_000)
        #expect(found[0..<window].allSatisfy { !$0 }, "the first window: not cached")
        #expect(found[window..<(window + skipped)].allSatisfy { !$0 }, "skipped, although cached")
        #expect(found[(window + skipped)...].allSatisfy { $0 }, "asked again, and found")
        withExtendedLifetime(token) {}
    }

    @Test("windows that find one row in eight or more keep asking; a wrong version counts as not found")
    func keepsAskingWhileFinding() {
        let token = StoreToken()
        let store = ObjectIdentifier(token)
        let cache = RowCache()
        // Every eighth key cached: exactly the share a window needs.
        cache.store(stride(from: Int64(8), through: 2_000, by: 8).flatMap { rows($0...$0) }, in: store)
        let found = probe(cache, store, through: 2_000)
        #expect(found.enumerated().allSatisfy { $0.element == (($0.offset + 1) % 8 == 0) })

        // The same keys at another version: nothing found, so the probe starts skipping.
        let other = RowCache()
        other.store(stride(from: Int64(8), through: 2_000, by: 8).flatMap { rows($0...$0, version: 2) }, in: store)
        #expect(probe(other, store, through: 2_000).allSatisfy { !$0 })
        withExtendedLifetime(token) {}
    }

    @Test(
        "keys asked in order are read ahead under one lock: a row taken then comes back only at the version asked for")
    func readsAheadForKeysInOrder() {
        let token = StoreToken()
        let store = ObjectIdentifier(token)
        let cache = RowCache()
        cache.store(rows(1...300), in: store)
        var probe = CachedRows.Probe(CachedRows(cache, store: store))
        let ahead = CachedRows.Probe.readAhead
        let start = Int64(CachedRows.Probe.runBeforeReadingAhead) + 1
        // Keys 1...start: the last of them, following a run, reads keys start..<start+ahead at once.
        for key in 1...start {
            #expect(probe.values(of: RowID(entity: 1, primaryKey: key), version: 1) == [.integer(key)])
        }
        // Changed behind the read-ahead: rows dropped from the cache, one stored at a newer version.
        let dropped = (start + 5)...(start + 9)
        cache.remove(dropped.map { RowCache.Key(store: store, row: RowID(entity: 1, primaryKey: $0)) })
        let changed = start + 12
        cache.store(rows(changed...changed, version: 2), in: store)
        for key in (start + 1)..<(start + Int64(ahead)) {
            let found = probe.values(of: RowID(entity: 1, primaryKey: key), version: key == changed ? 2 : 1)
            if key == changed {
                // Read ahead at version 1: never handed out for version 2.
                #expect(found == nil, "row \(key) at version 2")
            } else {
                // Read ahead before they left the cache: the values of the version asked for.
                #expect(found == [.integer(key)], "row \(key)")
            }
        }
        // Past the read-ahead: the next keys are read from the cache as it is now.
        #expect(probe.values(of: RowID(entity: 1, primaryKey: start + Int64(ahead)), version: 1) != nil)
        #expect(probe.values(of: RowID(entity: 1, primaryKey: 300), version: 1) != nil)
        withExtendedLifetime(token) {}
    }

    @Test("keys in order that no lane holds (kept apart as scattered) are still found, one at a time")
    func findsKeysOutsideLanes() {
        let token = StoreToken()
        let store = ObjectIdentifier(token)
        let cache = RowCache()
        // A lane near key 1, and a run far beyond anything it may grow to cover (RowTable T3).
        cache.store(rows(1...10), in: store)
        let far: ClosedRange<Int64> = 50_000_000...50_000_200
        cache.store(rows(far), in: store)
        var probe = CachedRows.Probe(CachedRows(cache, store: store))
        let found = far.map { probe.values(of: RowID(entity: 1, primaryKey: $0), version: 1) == [.integer($0)] }
        #expect(found.allSatisfy { $0 })
        #expect(probe.values(of: RowID(entity: 1, primaryKey: 3), version: 1) == [.integer(3)])
        withExtendedLifetime(token) {}
    }
}
