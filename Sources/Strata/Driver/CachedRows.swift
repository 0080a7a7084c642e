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
/// Thread safety: `Sendable`; each call takes the row cache's lock once.
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
