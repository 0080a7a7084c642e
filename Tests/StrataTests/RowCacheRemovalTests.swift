import Foundation
import Testing

@testable import Strata

/// Invariant C5 of the row cache: a row removed by a committed delete is never stored again by a
/// read that began before the removal, while the remover's own read needs no tombstones.
@Suite("Row cache removals and reads in flight")
struct RowCacheRemovalTests: RowCacheFixture {
    let anchor = NSObject()

    @Test("a read begun before a removal does not store the removed rows again; a read begun after does")
    func earlierReadsStoreNoRemovedRow() {
        let cache = RowCache()
        cache.store((1...4).map { row($0) }, in: store)
        let before = cache.beginRead()
        let remover = cache.beginRead()
        cache.remove([key(1), key(2)], by: remover)
        cache.endRead(remover)
        // `before` read rows 1-3 from the store before the delete committed.
        cache.store((1...3).map { row($0) }, in: store, since: before)
        #expect(cache.snapshot(for: key(1)) == nil)
        #expect(cache.snapshot(for: key(2)) == nil)
        #expect(cache.snapshot(for: key(3)) == row(3))
        let after = cache.beginRead()
        cache.store([row(1, version: 2)], in: store, since: after)
        #expect(
            cache.snapshot(for: key(1)) == row(1, version: 2), "a read begun after the removal sees the store as it is")
        cache.endRead(after)
        cache.endRead(before)
        // Every read ended: the tombstones went with them.
        let late = cache.beginRead()
        cache.store([row(2, version: 3)], in: store, since: late)
        #expect(cache.snapshot(for: key(2)) == row(2, version: 3))
        cache.endRead(late)
    }

    @Test("a removal without a read of its own keeps tombstones for every read in flight")
    func removalWithoutOwnRead() {
        let cache = RowCache()
        cache.store([row(1)], in: store)
        let inFlight = cache.beginRead()
        cache.remove([key(1)])
        cache.store([row(1)], in: store, since: inFlight)
        #expect(cache.snapshot(for: key(1)) == nil)
        cache.endRead(inFlight)
    }

    @Test("the remover's own read is the only one in flight: no tombstone is kept, so nothing is left to filter")
    func ownReadAloneKeepsNoTombstone() {
        let cache = RowCache()
        cache.store((1...1_000).map { row($0) }, in: store)
        let own = cache.beginRead()
        cache.remove((1...1_000).map { key($0) }, by: own)
        #expect(cache.statistics.count == 0)
        // The remover stores none of its removed rows by contract; were one stored, nothing
        // would stop it, which shows no tombstone was written for this read's sake.
        cache.store([row(7, version: 2)], in: store, since: own)
        #expect(cache.snapshot(for: key(7)) == row(7, version: 2))
        cache.endRead(own)
    }

    @Test("two reads begun at the same removal count: the remover's own ticket does not hide the other")
    func sameTicketTwice() {
        let cache = RowCache()
        cache.store([row(1)], in: store)
        let other = cache.beginRead()
        let own = cache.beginRead()
        #expect(other.removals == own.removals)
        cache.remove([key(1)], by: own)
        cache.store([row(1)], in: store, since: other)
        #expect(cache.snapshot(for: key(1)) == nil)
        cache.endRead(own)
        cache.endRead(other)
    }

    @Test("a lookup begins a read only on a miss; storing its row pins it and ends the read under one lock")
    func lookupThenStoreEnding() {
        let cache = RowCache()
        cache.store([row(1)], in: store)
        guard case .cached(let hit) = cache.snapshotOrRead(for: key(1), pin: true) else {
            Issue.record("row 1 is cached")
            return
        }
        #expect(hit == row(1) && cache.statistics.pinned == 1 && cache.readsInFlight == 0)
        guard case .read(let second) = cache.snapshotOrRead(for: key(2), pin: true),
            case .read(let third) = cache.snapshotOrRead(for: key(3), pin: true)
        else {
            Issue.record("rows 2 and 3 are not cached")
            return
        }
        #expect(cache.readsInFlight == 2)
        // Row 2 is deleted while its read is in flight: the read neither stores nor pins it.
        cache.remove([key(2)])
        #expect(!cache.store([row(2)], in: store, pinning: key(2), ending: second))
        #expect(cache.snapshot(for: key(2)) == nil && cache.readsInFlight == 1)
        #expect(cache.store([row(3)], in: store, pinning: key(3), ending: third))
        #expect(cache.snapshot(for: key(3)) == row(3) && cache.readsInFlight == 0)
        #expect(cache.statistics.pinned == 2)
        // No read in flight keeps a tombstone: a new read stores row 2 again.
        guard case .read(let late) = cache.snapshotOrRead(for: key(2), pin: false) else {
            Issue.record("row 2 is not cached")
            return
        }
        #expect(!cache.store([row(2, version: 2)], in: store, pinning: nil, ending: late))
        #expect(cache.snapshot(for: key(2)) == row(2, version: 2) && cache.statistics.pinned == 2)
    }

    @Test("a lookup's row is pinned as it is stored, so the store's own eviction pass cannot drop it")
    func lookupRowPinnedBeforeEviction() {
        // A limit of 0 with the slack of 16: a pass runs once more than 16 rows are resident and
        // more than 16 of them unpinned, and then drops every unpinned row.
        let cache = RowCache(limit: 0)
        cache.store((1...16).map { row($0) }, in: store)
        #expect(cache.statistics.count == 16 && cache.statistics.evictions == 0)
        guard case .read(let read) = cache.snapshotOrRead(for: key(100), pin: true) else {
            Issue.record("row 100 is not cached")
            return
        }
        // Pinned after the pass, the 17th row would have gone with the 16 others.
        #expect(cache.store([row(100)], in: store, pinning: key(100), ending: read))
        #expect(cache.snapshot(for: key(100)) == row(100))
        #expect(cache.statistics.pinned == 1 && cache.readsInFlight == 0)
    }
}
