/// One resident row of the ``RowCache``: 24 bytes, so a table of 100,000 rows costs 2.4 MB (the
/// row's ID is its key's, not kept twice; its size estimate is computed again when it goes, not
/// kept; the staleness clock is 32 bits, the use clock and the pins share the other 32, see below).
struct RowCacheEntry {
    var values: [StoreValue]
    var version: RowVersion
    /// When the row was last stored, in ticks of ``RowCacheEntry/tickShift`` (2^20 ns, about
    /// 1 ms) since the cache's epoch, for staleness. The cache moves its epoch forward before the
    /// count passes 2^31 (``RowCacheClock``), so it never wraps; a row stored before the epoch
    /// holds ``ancient``.
    var storedAt: UInt32 = 0
    /// The row's last use in the low 24 bits, its pins in the high 8 (see ``lastUse`` and
    /// ``addPin()``).
    private var useAndPins: UInt32 = 0

    /// The size of a tick of ``storedAt``: 2^20 nanoseconds.
    static let tickShift: UInt64 = 20

    /// ``storedAt`` of a row stored before the clock's epoch: stale for every interval. (The
    /// clock's ticks stay below 2^31, so no row stored since the epoch holds it.)
    static let ancient = UInt32.max

    /// The bits of ``lastUse``.
    static let useMask: UInt32 = 1 << 24 - 1
    /// The most pins the entry counts itself; the cache counts the rest (``RowCache``'s wide pins).
    static let inlinePinLimit: UInt32 = 255

    init(_ snapshot: RowSnapshot) {
        values = snapshot.values
        version = snapshot.version
    }

    /// The low 24 bits of the cache's use clock at the row's last use. Eviction orders rows by
    /// their age (the clock's low 24 bits minus this, wrapping), exact for rows used in the last
    /// 2^24 uses of the cache (a use is a lookup or a batch stored, not a row); an older row may
    /// look younger, which changes only which unpinned row goes first.
    var lastUse: UInt32 {
        get { useAndPins & Self.useMask }
        set { useAndPins = useAndPins & ~Self.useMask | newValue & Self.useMask }
    }

    /// The age of the row's last use at use clock `clock`, in uses (modulo 2^24).
    func age(at clock: UInt64) -> UInt32 { (UInt32(truncatingIfNeeded: clock) &- useAndPins) & Self.useMask }

    /// Contexts' pins counted here (C3), at most ``inlinePinLimit``: a pin stands for an object
    /// registered in a live context. Past the limit the cache counts the others by key.
    var inlinePins: UInt32 { useAndPins >> 24 }

    /// Whether any pin holds the row (the cache's count by key is used only once this one is full).
    var isPinned: Bool { useAndPins > Self.useMask }

    /// Adds a pin here and returns true, or returns false when ``inlinePinLimit`` pins are counted
    /// here already: the caller counts that pin by the row's key.
    mutating func addPin() -> Bool {
        guard inlinePins < Self.inlinePinLimit else { return false }
        useAndPins &+= 1 << 24
        return true
    }

    /// Removes a pin counted here; returns whether none is left. The caller removes those it
    /// counts by key first.
    mutating func removePin() -> Bool {
        guard isPinned else { return false }
        useAndPins &-= 1 << 24
        return !isPinned
    }

    /// The row as a snapshot of `id` (the key's row).
    func snapshot(_ id: RowID) -> RowSnapshot { RowSnapshot(id: id, version: version, values: values) }

    /// ``RowCache/estimatedBytes(_:)`` of the values held.
    var bytes: Int { RowCache.estimatedBytes(values) }

    /// Takes `snapshot` unless the entry holds a newer version (C2), or everything when the
    /// entry was just added (`isNew`); marks the use and returns the change in estimated bytes.
    mutating func merge(_ new: RowSnapshot, isNew: Bool, clock: UInt64) -> Int {
        var delta = 0
        if isNew {
            delta = RowCache.estimatedBytes(new.values)
        } else if new.version > version {
            delta = RowCache.estimatedBytes(new.values) - bytes
            values = new.values
            version = new.version
        } else if new.version == version, !values.sharesStorage(with: new.values) {
            // The newer copy of the same values: objects made from it hold it, so keep it
            // and let the older one go. (Same version, same values, as a rule; the estimate is
            // taken again in case a driver's copy differs, so the cache's total stays exact.)
            delta = RowCache.estimatedBytes(new.values) - bytes
            values = new.values
        }
        lastUse = UInt32(truncatingIfNeeded: clock)
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
