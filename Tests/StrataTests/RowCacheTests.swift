import Foundation
import Strata
import Testing

@Suite("Row cache")
struct RowCacheTests: RowCacheFixture {
    let anchor = NSObject()

    @Test("a stored row is a hit; an absent one a miss; counters say so")
    func hitsAndMisses() {
        let cache = RowCache(limit: 10)
        cache.store([row(1)], in: store)
        #expect(cache.snapshot(for: key(1)) == row(1))
        #expect(cache.snapshot(for: key(2)) == nil)
        let stats = cache.statistics
        #expect(stats.hits == 1 && stats.misses == 1 && stats.count == 1)
    }

    @Test("a resident version never goes back, and a minimum version is honoured")
    func versionsOnlyGrow() {
        let cache = RowCache()
        cache.store([row(1, version: 3)], in: store)
        cache.store([row(1, version: 2)], in: store)
        #expect(cache.snapshot(for: key(1))?.version == 3)
        #expect(cache.snapshot(for: key(1), atLeast: 4) == nil)
    }

    @Test("values of a row are given only for the exact version resident")
    func valuesOfExactVersion() {
        let cache = RowCache()
        cache.store([row(1, version: 3)], in: store)
        #expect(cache.values(for: key(1), version: 3) == [.integer(1)])
        #expect(cache.values(for: key(1), version: 2) == nil)
        #expect(cache.values(for: key(1), version: 4) == nil)
        #expect(cache.values(for: key(2), version: 1) == nil)
        let otherStore = NSObject()
        let other = RowCache.Key(store: ObjectIdentifier(otherStore), row: RowID(entity: 1, primaryKey: 1))
        #expect(cache.values(for: other, version: 3) == nil)
        let stats = cache.statistics
        #expect(stats.hits == 0 && stats.misses == 0, "a driver's version check is not a lookup by the app")
    }

    @Test("a batch stored in parts after one reservation is the batch stored at once, pins included")
    func partsAfterReservation() {
        let whole = RowCache(limit: 10_000)
        let parts = RowCache(limit: 10_000)
        let rows = (1...1_000).map { row($0, version: $0 % 3 + 1) }
        let pins = rows.map { $0.id.primaryKey % 2 == 0 }
        whole.store(rows, in: store, pins: pins)
        parts.reserve(for: rows, in: store)
        for start in stride(from: 0, to: rows.count, by: 256) {
            let end = min(start + 256, rows.count)
            parts.store(rows[start..<end], in: store, pins: pins[start..<end])
        }
        #expect(parts.statistics == whole.statistics)
        #expect(parts.statistics.pinned == 500)
        for pk in Int64(1)...1_000 { #expect(parts.snapshot(for: key(pk)) == whole.snapshot(for: key(pk))) }
    }

    @Test("the cache stays bounded, evicting least recently used rows first")
    func bounded() {
        let cache = RowCache(limit: 100)
        cache.store((1...100).map { row($0) }, in: store)
        _ = cache.snapshot(for: key(1))
        cache.store((101...300).map { row($0) }, in: store)
        let stats = cache.statistics
        #expect(stats.count <= 100 + 16)
        #expect(stats.evictions >= 184)
        #expect(cache.snapshot(for: key(2)) == nil)
    }

    @Test("pinned rows over the limit start no eviction pass; unpinned ones stay bounded; unpinning evicts at once")
    func pinnedOverLimit() {
        let cache = RowCache(limit: 10_000)
        let rows = (1...40_000).map { row($0) }
        let pins = [Bool](repeating: true, count: rows.count)
        for start in stride(from: 0, to: rows.count, by: 256) {
            let end = min(start + 256, rows.count)
            cache.store(rows[start..<end], in: store, pins: pins[start..<end])
        }
        var stats = cache.statistics
        #expect(stats.count == 40_000 && stats.pinned == 40_000 && stats.evictions == 0)
        // Rows over the limit that are all pinned start no pass (each would scan every row; about
        // 120 of the parts of 256 were over the limit).
        #expect(stats.evictionPasses == 0, "\(stats.evictionPasses) passes")
        // Unpinned rows stored meanwhile stay bounded: a pass drops them once a slack accumulates.
        cache.store((40_001...42_000).map { row($0) }, in: store)
        stats = cache.statistics
        #expect(stats.count - stats.pinned <= 1_250 + 16)
        cache.unpin((1...40_000).map { key($0) })
        stats = cache.statistics
        #expect(stats.pinned == 0)
        #expect(stats.count <= 10_000, "unpinning lets the next pass run at once")
    }

    @Test(
        "a context holding more pinned rows than the cache's limit releases every pin when it goes, and one pass evicts"
    )
    func contextReleasesPinsInBatches() throws {
        let stack = try TestStack()
        let count = 10_000  // more than twice the batch a going context unpins at a time
        #expect(count > 2 * 4_096)
        for index in 0..<count {
            let tag = try stack.context.insertNewObject(forEntityName: "Tag")
            tag["name"] = "tag \(index)"
        }
        try stack.context.save()
        stack.context.reset()
        let cache = stack.coordinator.rowCache
        cache.limit = 1_000
        let passesBefore: Int
        do {
            let reader = ManagedObjectContext(coordinator: stack.coordinator)
            var request = FetchRequest(entityName: "Tag")
            request.returnsObjectsAsFaults = false
            let tags = try reader.fetch(request)
            #expect(tags.count == count)
            let held = cache.statistics
            #expect(held.pinned == count, "every fetched row is pinned while its object is registered")
            passesBefore = held.evictionPasses
            withExtendedLifetime((reader, tags)) {}
        }
        let after = cache.statistics
        #expect(after.pinned == 0, "\(after.pinned) pins left behind")
        #expect(after.count <= 1_000, "the rows became evictable and were evicted")
        // Evicting after each batch would scan every row once per batch: three passes here.
        #expect(after.evictionPasses - passesBefore == 1, "\(after.evictionPasses - passesBefore) passes")
    }

    @Test("a byte bound evicts large rows to stay near the limit")
    func byteBound() {
        let cache = RowCache(limit: 1_000, byteLimit: 50_000)
        let big = (1...20).map {
            RowSnapshot(id: RowID(entity: 1, primaryKey: $0), version: 1, values: [.binary(Data(count: 10_000))])
        }
        cache.store(big, in: store)
        let stats = cache.statistics
        #expect(stats.bytes <= 50_000 + 50_000 / 8)
        #expect(stats.count < 20)
        #expect(stats.evictions > 0)
    }

    @Test("pinned rows are never evicted, and become evictable when unpinned")
    func pinning() {
        let cache = RowCache(limit: 10)
        cache.store((1...5).map { row($0) }, in: store, pin: true)
        cache.store((6...200).map { row($0) }, in: store)
        for pk in 1...5 { #expect(cache.snapshot(for: key(Int64(pk))) != nil) }
        #expect(cache.statistics.pinned == 5)
        cache.unpin((1...5).map { key(Int64($0)) })
        cache.store((201...400).map { row($0) }, in: store)
        #expect(cache.statistics.pinned == 0)
        #expect(cache.statistics.count <= 10 + 16)
    }

    @Test("a second context reads rows another context fetched from the cache")
    func sharedBetweenContexts() throws {
        let stack = try TestStack(seeded: true)
        let ids = try stack.newContext().fetchObjectIDs(FetchRequest(entityName: "Tag"))
        let first = stack.newContext()
        for id in ids { _ = try first.existingObject(with: id) }
        let before = stack.coordinator.rowCache.statistics.hits
        let second = stack.newContext()
        for id in ids { _ = try second.existingObject(with: id) }
        #expect(stack.coordinator.rowCache.statistics.hits - before == ids.count)
    }
}
