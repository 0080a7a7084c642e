import Foundation
import Testing

@testable import Strata

/// Staleness (Core Data's `stalenessInterval`, the row cache's `maxAge`) on the cache's 32-bit
/// clock of about-a-millisecond ticks, and the clock's epoch moving forward before it could wrap.
@Suite("Row cache staleness")
struct RowCacheStalenessTests: RowCacheFixture {
    let anchor = NSObject()

    @Test("a row is served within its staleness interval and read from the store after it")
    func interval() {
        let cache = RowCache(limit: 10)
        cache.store([row(1)], in: store)
        #expect(cache.snapshot(for: key(1), maxAge: 60) == row(1))
        #expect(cache.snapshot(for: key(1), maxAge: 0) == nil, "an interval of 0 always reads the store")
        #expect(cache.snapshot(for: key(1)) == row(1), "no interval: any age")
        // About 68 seconds later (2^16 ticks of 2^20 ns).
        cache.ageClock(byTicks: 1 << 16)
        #expect(cache.snapshot(for: key(1), maxAge: 60) == nil)
        #expect(cache.snapshot(for: key(1), maxAge: 3_600) == row(1))
        // Storing the row again makes it fresh again.
        cache.store([row(1)], in: store)
        #expect(cache.snapshot(for: key(1), maxAge: 60) == row(1))
    }

    @Test("the clock moves its epoch before 2^31 ticks; rows keep their age or count as older than any interval")
    func epochMoves() throws {
        let cache = RowCache(limit: 10)
        cache.store([row(1)], in: store)
        cache.ageClock(byTicks: (1 << 30) + (1 << 20))  // about 13 days
        cache.store([row(2)], in: store)
        let before = try #require(cache.storedTick(of: key(2)))
        #expect(before.stored >= (1 << 30) + (1 << 20) && before.now - before.stored < 1 << 10)
        // Past 2^31 ticks (about 26 days): the next reading moves the epoch 2^30 ticks on.
        cache.ageClock(byTicks: (1 << 30) - (1 << 20) + 5)
        let after = try #require(cache.storedTick(of: key(2)))
        #expect(after.now < 1 << 31 && after.now >= (1 << 30) + 5, "tick \(after.now) after the move")
        // Row 2, stored after the new epoch, keeps its age exactly: 2^30 - 2^20 + 5 ticks and
        // the few ticks before the first reading (about 13 days less 18 minutes).
        #expect(after.stored < after.now && after.now - after.stored >= (1 << 30) - (1 << 20) + 5)
        #expect(after.now - after.stored < (1 << 30) - (1 << 20) + 5 + (1 << 10))
        #expect(cache.snapshot(for: key(2), maxAge: 12 * 86_400) == nil)
        #expect(cache.snapshot(for: key(2), maxAge: 14 * 86_400) == row(2))
        // Row 1 was stored before the new epoch: stale for any interval, never counted younger.
        #expect(try #require(cache.storedTick(of: key(1))).stored == RowCacheEntry.ancient)
        #expect(cache.snapshot(for: key(1), maxAge: 1e9) == nil)
        #expect(cache.snapshot(for: key(1)) == row(1), "without an interval the row is still served")
        cache.store([row(3)], in: store)
        #expect(cache.snapshot(for: key(3), maxAge: 60) == row(3), "rows stored after the move are fresh")
        // A second move keeps an ancient row ancient.
        cache.ageClock(byTicks: 1 << 30)
        #expect(try #require(cache.storedTick(of: key(3))).now < 1 << 31)
        #expect(try #require(cache.storedTick(of: key(1))).stored == RowCacheEntry.ancient)
        #expect(cache.snapshot(for: key(1), maxAge: 1e9) == nil)
    }
}
