/// What the row cache already holds of one store, handed to a driver with each fetch
/// (``StoreFetch/cachedRows``).
///
/// A row's version changes with every change to the row (driver rule 3), so a cached row of the
/// version a driver is about to decode holds the values it would decode. A driver that reads a
/// row's key and version before its values (SQLite's `Z_PK` and `Z_OPT`) asks here first and
/// takes the cached values instead of building them again: a fetch of rows the coordinator
/// already knows allocates no new values, and its objects share the cached ones.
///
/// The trust is the one the row cache already places in versions: a program that changes a row
/// behind the driver's back without changing its version (raw SQL that leaves `Z_OPT` alone) is
/// not seen until the row leaves the cache, as with Core Data's row cache.
///
/// Thread safety: `Sendable`; each call takes the row cache's read lock once (a ``Probe`` reading
/// ahead takes it once for many rows).
public struct CachedRows: Sendable {
    @usableFromInline let cache: RowCache
    @usableFromInline let store: ObjectIdentifier

    /// The rows `cache` holds for `store`.
    public init(_ cache: RowCache, store: ObjectIdentifier) {
        self.cache = cache
        self.store = store
    }

    /// The cached values of `id` when the cache holds exactly `version` of it; `nil` otherwise,
    /// and the driver decodes the row itself.
    ///
    /// - Complexity: O(1) on average, one lock.
    @inlinable public func values(of id: RowID, version: RowVersion) -> [StoreValue]? {
        cache.values(for: RowCache.Key(store: store, row: id), version: version)
    }
}

extension CachedRows {
    /// A row as the cache held it when a ``Probe`` read ahead.
    struct Row {
        let version: RowVersion
        let values: [StoreValue]
    }

    /// Asks ``CachedRows`` row by row during one fetch, and stops asking for most rows while few
    /// are found: a fetch of rows scattered over a large store (10% of it sorted by name, say)
    /// mostly misses, and each miss costs a lock and a cache miss on the row cache's table,
    /// about as much as decoding the row. Asked rows are counted in windows of ``window``; a
    /// window that found fewer than one in ``minimumShare`` skips the next
    /// ``window`` × (``minimumShare`` − 1) rows, then asks again, so a fetch that reaches rows the
    /// cache holds starts taking them again within a few windows.
    ///
    /// Rows asked for in key order (each key the one after the last, ``runBeforeReadingAhead``
    /// times in a row, as a fetch of a whole table asks) are read ahead ``readAhead`` keys at a
    /// time under one lock of the row cache instead of one lock per row. A row read ahead counts
    /// only at the version the driver then reads, as a row asked for alone does.
    ///
    /// Skipping only costs work: a row not asked for is decoded, as it would be on a miss.
    public struct Probe {
        let cached: CachedRows
        private var asked = 0
        private var found = 0
        private var skipping = 0
        /// Rows read ahead, from `blockStart` on; each is let go once asked for.
        private var block: [Row?] = []
        private var blockStart = RowID(entity: -1, primaryKey: 0)
        /// The key after the last one asked for, and how many keys in a row followed the one before.
        private var next = RowID(entity: -1, primaryKey: 0)
        private var run = 0

        /// Rows asked for before a window is judged.
        public static var window: Int { 64 }
        /// A window must find at least one row in this many for the next rows to be asked for.
        public static var minimumShare: Int { 8 }
        /// Keys asked for in order, each following the last, before the probe reads ahead.
        public static var runBeforeReadingAhead: Int { 4 }
        /// Keys read ahead at once.
        public static var readAhead: Int { 64 }

        /// A probe of `cached`, asking for every row until a window finds too few.
        public init(_ cached: CachedRows) { self.cached = cached }

        /// The cached values of `id` at `version`, or `nil` when the cache does not hold them or
        /// this row was not asked for.
        public mutating func values(of id: RowID, version: RowVersion) -> [StoreValue]? {
            run = id == next ? run + 1 : 0
            next = RowID(entity: id.entity, primaryKey: id.primaryKey &+ 1)
            if skipping > 0 {
                skipping -= 1
                return nil
            }
            let values: [StoreValue]?
            let offset = id.entity == blockStart.entity ? id.primaryKey &- blockStart.primaryKey : -1
            if offset >= 0 && offset < Int64(block.count) {
                values = take(Int(offset), at: version)
            } else if run >= Self.runBeforeReadingAhead {
                block.removeAll(keepingCapacity: true)
                blockStart = id
                cached.cache.laneRows(
                    from: RowCache.Key(store: cached.store, row: id), count: Self.readAhead, into: &block)
                if block.isEmpty {
                    // No lane holds the key (the cache keeps scattered keys apart): ask for this
                    // one alone, and for the next ones too until they make a run again.
                    run = -Self.readAhead
                    values = cached.values(of: id, version: version)
                } else {
                    values = take(0, at: version)
                }
            } else {
                values = cached.values(of: id, version: version)
            }
            asked += 1
            if values != nil { found += 1 }
            if asked == Self.window {
                if found * Self.minimumShare < asked { skipping = Self.window * (Self.minimumShare - 1) }
                asked = 0
                found = 0
            }
            return values
        }

        /// The values of the row read ahead at `index` when it is at `version`; the block lets
        /// go of the row either way (the object made for it holds the values from now on).
        private mutating func take(_ index: Int, at version: RowVersion) -> [StoreValue]? {
            // Moved out, not copied: no reference count changes here.
            var taken: Row? = nil
            swap(&taken, &block[index])
            guard let row = taken, row.version == version else { return nil }
            return row.values
        }
    }
}
