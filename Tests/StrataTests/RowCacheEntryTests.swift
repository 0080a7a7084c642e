import Foundation
import Testing

@testable import Strata

/// The row cache's 24-byte entry: pins counted in 8 bits with the rest counted by key, the use
/// clock in 24 bits, and the size estimate taken again rather than kept.
@Suite("Row cache entry")
struct RowCacheEntryTests: RowCacheFixture {
    let anchor = NSObject()

    @Test("an entry is 24 bytes: 100,000 cached rows take 2.4 MB of entries")
    func entrySize() {
        #expect(MemoryLayout<RowCacheEntry>.stride == 24)
        #expect(MemoryLayout<RowCacheEntry?>.stride == 24, "the table's optional slots cost nothing more")
    }

    @Test("a row pinned by more contexts than the entry counts stays pinned until the last pin goes")
    func pinsPastTheEntrysCount() {
        let cache = RowCache(limit: 0)
        let pins = Int(RowCacheEntry.inlinePinLimit) + 45  // 300
        cache.store([row(1)], in: store, pin: true)
        // Every other way of pinning: a hit that pins, and pins of resident rows.
        for _ in 1..<100 { #expect(cache.snapshot(for: key(1), pin: true) != nil) }
        #expect(cache.pinResident(Array(repeating: key(1), count: pins - 100)).allSatisfy { $0 })
        #expect(cache.statistics.pinned == 1)
        // All but one pin released: the row is still pinned, so eviction (limit 0) keeps it.
        cache.unpin(Array(repeating: key(1), count: pins - 1))
        cache.store((2...40).map { row($0) }, in: store)
        #expect(cache.statistics.pinned == 1)
        #expect(cache.snapshot(for: key(1)) == row(1), "a row with one pin left was evicted")
        // The last pin: the row becomes evictable and goes with the next pass.
        cache.unpin([key(1)])
        #expect(cache.statistics.pinned == 0)
        cache.store((41...80).map { row($0) }, in: store)
        #expect(cache.snapshot(for: key(1)) == nil, "an unpinned row over the limit stayed")
    }

    @Test("pins counted by key go with their row when it is removed")
    func widePinsRemoved() {
        let cache = RowCache(limit: 0)
        let pins = Int(RowCacheEntry.inlinePinLimit) + 10
        cache.store(Array(repeating: row(1), count: pins), in: store, pin: true)
        #expect(cache.statistics.pinned == 1)
        cache.remove([key(1)])
        #expect(cache.statistics.pinned == 0 && cache.statistics.count == 0)
        // Stored again, the row starts with no pins: one unpin makes it evictable.
        cache.store([row(1)], in: store, pin: true)
        cache.unpin([key(1)])
        cache.store((2...40).map { row($0) }, in: store)
        #expect(cache.snapshot(for: key(1)) == nil, "a pin counted by key outlived its row")
    }

    @Test("the byte total stays exact as rows are replaced, copied and removed")
    func byteTotal() {
        let cache = RowCache(limit: 100)
        func text(_ pk: Int64, _ version: RowVersion, _ s: String) -> RowSnapshot {
            RowSnapshot(id: RowID(entity: 1, primaryKey: pk), version: version, values: [.string(s)])
        }
        let small = RowCache.estimatedBytes([.string("a")])
        cache.store([text(1, 1, "a"), text(2, 1, "a")], in: store)
        #expect(cache.statistics.bytes == 2 * small)
        // A newer version, larger; an older one is ignored (C2).
        cache.store([text(1, 2, String(repeating: "b", count: 1_000))], in: store)
        cache.store([text(1, 1, "a")], in: store)
        let large = RowCache.estimatedBytes([.string(String(repeating: "b", count: 1_000))])
        #expect(cache.statistics.bytes == large + small)
        // A copy of the same version that differs (a driver's copy): the total follows it.
        cache.store([text(2, 1, String(repeating: "c", count: 500))], in: store)
        #expect(
            cache.statistics.bytes == large + RowCache.estimatedBytes([.string(String(repeating: "c", count: 500))]))
        cache.remove([key(1), key(2)])
        #expect(cache.statistics.bytes == 0 && cache.statistics.count == 0)
    }

    @Test("the use clock keeps 24 bits; the pins above it are not disturbed by its updates")
    func useClock() {
        var entry = RowCacheEntry(row(1))
        let added = [entry.addPin(), entry.addPin()]
        #expect(added == [true, true])
        entry.lastUse = 0x1234_5678
        #expect(entry.lastUse == 0x34_5678 && entry.inlinePins == 2)
        #expect(entry.age(at: 0x1_0034_5680) == 8)
        #expect(entry.age(at: 0x34_5677) == RowCacheEntry.useMask, "a wrapped age reads as the oldest")
        let removed = [entry.removePin(), entry.removePin(), entry.removePin()]
        #expect(removed == [false, true, false], "true only when the last pin goes")
        #expect(!entry.isPinned && entry.lastUse == 0x34_5678)
        var accepted = 0
        for _ in 0..<RowCacheEntry.inlinePinLimit where entry.addPin() { accepted += 1 }
        #expect(accepted == Int(RowCacheEntry.inlinePinLimit))
        let extra = entry.addPin()
        #expect(!extra, "the 256th pin is the caller's to count")
        #expect(entry.lastUse == 0x34_5678)
    }
}
