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
}
