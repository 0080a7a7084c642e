/// One resident row of the ``RowCache``: 32 bytes, so a table of 100,000 rows costs 3.2 MB (the
/// row's ID is its key's, not kept twice; the two clocks are 32 bits each, see below).
struct RowCacheEntry {
    var values: [StoreValue]
    var version: RowVersion
    /// When the row was last stored, in ticks of ``RowCacheEntry/tickShift`` (2^20 ns, about
    /// 1 ms) since the cache's epoch, for staleness. The cache moves its epoch forward before the
    /// count passes 2^31 (``RowCacheClock``), so it never wraps; a row stored before the epoch
    /// holds ``ancient``.
    var storedAt: UInt32 = 0
    /// The low 32 bits of the cache's use clock at the row's last use. Eviction orders rows by
    /// their age (the clock's low bits minus this, wrapping), exact for rows used in the last
    /// 2^32 uses of the cache; an older row may look younger, which changes only which
    /// unpinned row goes first.
    var lastUse: UInt32 = 0
    /// Contexts' pins (C3). 32 bits: a pin stands for an object registered in a live context,
    /// and no process holds 2^31 objects of one row.
    var pins: Int32 = 0
    /// ``RowCache/estimatedBytes(_:)`` of the values, at most `UInt32.max` (the same clamped
    /// figure is added to and taken from the cache's total, so the total stays exact).
    var bytes: UInt32 = 0

    /// The size of a tick of ``storedAt``: 2^20 nanoseconds.
    static let tickShift: UInt64 = 20

    /// ``storedAt`` of a row stored before the clock's epoch: stale for every interval. (The
    /// clock's ticks stay below 2^31, so no row stored since the epoch holds it.)
    static let ancient = UInt32.max

    init(_ snapshot: RowSnapshot) {
        values = snapshot.values
        version = snapshot.version
    }

    /// The row as a snapshot of `id` (the key's row).
    func snapshot(_ id: RowID) -> RowSnapshot { RowSnapshot(id: id, version: version, values: values) }

    /// Takes `snapshot` unless the entry holds a newer version (C2), or everything when the
    /// entry was just added (zero bytes); returns the change in bytes. A row of the version
    /// already held keeps its size estimate (same version, same values).
    mutating func merge(_ new: RowSnapshot, pin: Bool, clock: UInt32) -> Int {
        var delta = 0
        if bytes == 0 {
            let size = RowCache.clampedBytes(new)
            delta = Int(size)
            bytes = size
        } else if new.version > version {
            let size = RowCache.clampedBytes(new)
            delta = Int(size) - Int(bytes)
            values = new.values
            version = new.version
            bytes = size
        } else if new.version == version, !values.sharesStorage(with: new.values) {
            // The newer copy of the same values: objects made from it hold it, so keep it
            // and let the older one go.
            values = new.values
        }
        lastUse = clock
        if pin { pins += 1 }
        return delta
    }

    /// Whether the row was stored at most `maxAge` nanoseconds before tick `now`. Counted in
    /// whole ticks and on the safe side: a row is fresh only when even the longest age its ticks
    /// allow is within `maxAge` (so an interval under two ticks always reads from the store).
    func isFresh(now: UInt32, maxAge: UInt64) -> Bool {
        guard now >= storedAt else { return false }  // ancient (ticks since the epoch only grow)
        return (UInt64(now - storedAt) + 1) << Self.tickShift <= maxAge
    }
}

/// The row cache's staleness clock: ticks of 2^20 ns since an epoch, kept in 32 bits by moving
/// the epoch forward 2^30 ticks (about 13 days) whenever the count reaches 2^31.
struct RowCacheClock {
    /// Nanoseconds on the monotonic clock at tick 0.
    private(set) var epoch: UInt64

    init(now: UInt64) { epoch = now }

    /// The tick of `now` (nanoseconds on the monotonic clock); when it reached 2^31, moves the
    /// epoch first and calls `shift` with the ticks every stored tick must lose (the caller
    /// marks entries older than the new epoch ``RowCacheEntry/ancient``).
    mutating func tick(_ now: UInt64, shift: (UInt32) -> Void) -> UInt32 {
        var ticks = (now &- epoch) >> RowCacheEntry.tickShift
        while ticks >= 1 << 31 {
            let step: UInt64 = 1 << 30
            epoch &+= step << RowCacheEntry.tickShift
            ticks -= step
            shift(UInt32(step))
        }
        return UInt32(ticks)
    }
}
