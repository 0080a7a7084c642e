internal import CStrataPrefetch
import Dispatch
import Synchronization

// ROW CACHE INVARIANTS
// C1. At most one resident snapshot per (store, row).
// C2. A resident version never decreases: storing an older version than the resident one is ignored.
// C3. A snapshot pinned by a live context (pin count > 0) is never evicted.
// C4. `count` never exceeds `limit`, and `bytes` never exceeds `byteLimit`, except by pinned entries
//     (eviction runs in bulk once 1/8 over, so either may briefly exceed by that slack).
// C5. A row removed by a committed delete is never stored again by a read or save that began
//     before the removal: reads and saves hold a ``Read`` ticket, and while any read other than
//     the remover's own (a save stores none of the rows it deleted) is in flight, each removed
//     key keeps a tombstone with the removal's sequence number; a read stores no row whose
//     tombstone is newer than its ticket. Tombstones older than every read in flight are dropped.
// States: absent -> resident [store] -> pinned [pin] -> resident [unpin] -> absent [evict/remove]

/// The coordinator's row cache: the last known snapshot of each row, with its version, shared by
/// every context of a coordinator.
///
/// Fetches and fault fulfilment put rows here; saves replace them; contexts pin the rows their
/// registered objects hold so those are never evicted. Bounded by a row count; the least recently
/// used unpinned rows go first. Bound it by rows (`limit`) and, optionally, by an estimate of the
/// bytes its values hold (`byteLimit`).
///
/// Thread safety: `Sendable`; one reader–writer lock guards all state (``ReadWriteLocked``): the
/// per-row lookups of fetches (``values(for:version:)``) share it, everything else takes it alone.
public final class RowCache: Sendable {
    private typealias Entry = RowCacheEntry

    private struct State {
        var entries = RowTable<Entry>()
        var clock: UInt64 = 0
        /// Ticks for the entries' ``RowCacheEntry/storedAt``.
        var ticks = RowCacheClock(now: RowCache.now())
        var statistics = Statistics()
        var limit: Int
        var byteLimit: Int?
        var bytes = 0
        /// Rows with at least one pin (kept exactly), so eviction runs only when there are rows
        /// it may drop.
        var pinnedRows = 0
        /// What the last eviction pass left in bytes when pinned rows kept it above the byte
        /// bound: the next pass waits until the cache grows a slack beyond it, instead of
        /// scanning every row on every store. Cleared when pins are released or rows removed.
        var bytesFloor = 0
        /// Pins past the ``RowCacheEntry/inlinePinLimit`` an entry counts itself, by key: only
        /// rows held by objects of more than 255 live contexts at once have one.
        var widePins: [Key: Int] = [:]
        /// Removals counted up (C5).
        var removals: UInt64 = 0
        /// Keys removed while reads were in flight, with the removal's number (C5).
        var tombstones: [Key: UInt64] = [:]
        /// Reads in flight, by the removal number at their start (C5).
        var reads = ReadsInFlight()
    }

    /// Read-locked by ``values(for:version:)``, which every fetch calls once per row from every
    /// thread fetching; write-locked by everything else.
    private let state: ReadWriteLocked<State>

    /// Creates a cache holding at most `limit` unpinned rows and, when given, about `byteLimit`
    /// bytes of values.
    public init(limit: Int = 100_000, byteLimit: Int? = nil) {
        state = ReadWriteLocked(State(limit: max(limit, 0), byteLimit: byteLimit.map { max($0, 0) }))
    }

    /// The most rows kept (pinned rows may exceed it).
    public var limit: Int {
        get { state.withLock { $0.limit } }
        set {
            state.withLock { s in
                s.limit = max(newValue, 0)
                s.bytesFloor = 0
                Self.evictIfNeeded(&s)
            }
        }
    }

    /// Current counters.
    public var statistics: Statistics {
        state.withLock { s in
            var stats = s.statistics
            stats.count = s.entries.count
            stats.bytes = s.bytes
            stats.pinned = s.pinnedRows
            return stats
        }
    }

    /// Returns the snapshot of `key` if it is at least as new as `minimumVersion`.
    ///
    /// - Returns: The snapshot, or `nil` when the caller must ask the driver.
    /// - Complexity: O(1) on average.
    /// - Parameters:
    ///   - maxAge: When not negative, a row stored longer ago than this many seconds counts as a
    ///     miss (Core Data's `stalenessInterval`).
    ///   - pin: Whether a hit also adds a pin to the row (C3), under the same lock and with the
    ///     entry already at hand; the caller owns the pin when a snapshot is returned.
    public func snapshot(
        for key: Key, atLeast minimumVersion: RowVersion = 0, maxAge: Double = -1, pin: Bool = false
    ) -> RowSnapshot? {
        let now = maxAge >= 0 ? Self.now() : 0
        let maxAgeNanoseconds = maxAge >= 0 ? UInt64(min(maxAge, 1e9) * 1e9) : 0
        return state.withLock { s in
            let nowTick = maxAge >= 0 ? Self.tick(now, &s) : 0
            return Self.snapshot(
                for: key, atLeast: minimumVersion, maxAge: maxAge, maxAgeNanoseconds: maxAgeNanoseconds,
                nowTick: nowTick, pin: pin, &s)
        }
    }

    /// ``snapshot(for:atLeast:maxAge:pin:)`` and, on a miss, ``beginRead()``, under one lock: a
    /// lookup by ID that misses goes on to the driver with its read already begun.
    func snapshotOrRead(for key: Key, pin: Bool) -> Lookup {
        state.withLock { s in
            if let found = Self.snapshot(
                for: key, atLeast: 0, maxAge: -1, maxAgeNanoseconds: 0, nowTick: 0, pin: pin, &s)
            {
                return .cached(found)
            }
            s.reads.begin(at: s.removals)
            return .read(Read(removals: s.removals))
        }
    }

    private static func snapshot(
        for key: Key, atLeast minimumVersion: RowVersion, maxAge: Double, maxAgeNanoseconds: UInt64, nowTick: UInt32,
        pin: Bool, _ s: inout State
    ) -> RowSnapshot? {
        s.clock &+= 1
        let clock = UInt32(truncatingIfNeeded: s.clock)
        var newlyPinned = false
        var widePin = false
        let found = s.entries.withExistingValue(forKey: key) { entry -> RowSnapshot? in
            guard entry.version >= minimumVersion,
                maxAge < 0 || entry.isFresh(now: nowTick, maxAge: maxAgeNanoseconds)
            else {
                return nil
            }
            entry.lastUse = clock
            if pin {
                newlyPinned = !entry.isPinned
                widePin = !entry.addPin()
            }
            return entry.snapshot(key.row)
        }
        guard let snapshot = found ?? nil else {
            s.statistics.misses += 1
            return nil
        }
        s.statistics.hits += 1
        if newlyPinned { s.pinnedRows += 1 }
        if widePin { s.widePins[key, default: 0] += 1 }
        return snapshot
    }

    /// The values of `key` when the cache holds exactly `version` of it (see ``CachedRows``).
    ///
    /// Counted neither as a hit nor as a miss, and the row's last use is not moved: the fetch
    /// that asks stores its rows right after, which does both.
    public func values(for key: Key, version: RowVersion) -> [StoreValue]? {
        // A read lock: two threads fetching the same rows look them up at once (with one lock for
        // everything, the two readers of the parallel-readers workload slept on it 100,000 times
        // per fetch).
        state.withReadLock { s in
            let found = s.entries.withExistingValueReading(forKey: key) { entry in
                entry.version == version ? entry.values : nil
            }
            // Fetches of runs of keys ask in key order: start loading the values a few keys on,
            // whose reference count the object made for that row will change (a cache miss per
            // row otherwise). Only a lane is asked: keys in the overflow table are scattered, so
            // the next key is rarely the one asked for next, and a hashed lookup costs a miss of
            // its own.
            let ahead = Key(
                store: key.store,
                row: RowID(entity: key.row.entity, primaryKey: key.row.primaryKey &+ Self.prefetchDistance))
            s.entries.withLaneValueReading(forKey: ahead) { strata_prefetch_for_write($0.values.storageAddress) }
            return found ?? nil
        }
    }

    /// The version and values the cache holds of each of up to `count` keys from `key` on that
    /// `key`'s lane covers, appended to `rows` in key order (`nil` for a key it does not hold),
    /// under one read lock: for ``CachedRows/Probe`` reading ahead of a fetch that asks for keys
    /// in order, where a lock per row had two threads fetching at once trade the lock's memory
    /// between their cores at every row. Keys past the lane's end are left out (none at all when
    /// no lane holds `key`). Counted neither as hits nor as misses, like ``values(for:version:)``.
    func laneRows(from key: Key, count: Int, into rows: inout [CachedRows.Row?]) {
        state.withReadLock { s in
            _ = s.entries.withLaneSlotsReading(from: key, count: count) { slots in
                var index = slots.startIndex
                while index < slots.endIndex {
                    // The objects made for these rows change their values' reference counts:
                    // start loading a few rows ahead, as for one row.
                    let ahead = index + Int(Self.prefetchDistance)
                    if ahead < slots.endIndex, let storage = slots[ahead]?.values.storageAddress {
                        strata_prefetch_for_write(storage)
                    }
                    rows.append(slots[index].map { CachedRows.Row(version: $0.version, values: $0.values) })
                    index += 1
                }
            }
        }
    }

    /// Nanoseconds on the monotonic clock: one reading per batch stored, for staleness.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// The staleness tick of `now` (``RowCacheClock``); when the clock moves its epoch, every
    /// entry's stored tick moves back with it, or becomes ``RowCacheEntry/ancient``.
    private static func tick(_ now: UInt64, _ s: inout State) -> UInt32 {
        var clock = s.ticks
        var shift: UInt32 = 0
        let tick = clock.tick(now) { shift &+= $0 }
        s.ticks = clock
        if shift > 0 {
            // A row stored before the new epoch cannot be counted from it: it is marked older than
            // any interval (``RowCacheEntry/ancient``), stale at every staleness check.
            s.entries.mutateAll { _, entry in
                entry.storedAt =
                    entry.storedAt >= shift && entry.storedAt != RowCacheEntry.ancient
                    ? entry.storedAt - shift : RowCacheEntry.ancient
            }
        }
        return tick
    }

    /// Moves the staleness clock's epoch `ticks` back, as if the cache were that much older
    /// (for tests of the epoch's move, ``RowCacheClock``).
    func ageClock(byTicks ticks: UInt64) {
        state.withLock { s in s.ticks = RowCacheClock(now: s.ticks.epoch &- (ticks << RowCacheEntry.tickShift)) }
    }

    /// The pins of a store of one row that pins it.
    private static let onePin = [true]

    /// Reads begun and not yet ended (for tests).
    var readsInFlight: Int { state.withLock { $0.reads.total } }

    /// The stored tick of `key`'s row and the clock's tick now (for tests).
    func storedTick(of key: Key) -> (stored: UInt32, now: UInt32)? {
        state.withLock { s in
            let now = Self.tick(Self.now(), &s)
            return s.entries.withExistingValue(forKey: key) { $0.storedAt }.map { ($0, now) }
        }
    }

    /// How many keys ahead ``values(for:version:)`` prefetches.
    static let prefetchDistance: Int64 = 2

    /// Stores snapshots of one store, keeping the newer version where one is resident (C2), and
    /// optionally pins them.
    ///
    /// - Complexity: O(n) for n snapshots, amortized.
    package func store(_ snapshots: [RowSnapshot], in store: ObjectIdentifier, pin: Bool = false) {
        self.store(snapshots, in: store, pins: pin ? Array(repeating: true, count: snapshots.count) : nil)
    }

    /// Stores snapshots of one store like ``store(_:in:pin:)``, pinning the rows whose flag in
    /// `pins` is set (one lock and one lookup per row).
    package func store(_ snapshots: [RowSnapshot], in store: ObjectIdentifier, pins: [Bool]?) {
        state.withLock { s in
            // Room for a batch of one entity at once, rather than growing its lane while adding it.
            if let span = RowTable<Entry>.span(of: snapshots) {
                s.entries.reserve(store: store, entity: span.entity, keys: span.keys, count: snapshots.count)
            }
            Self.store(snapshots[...], in: store, pins: pins?[...], since: nil, &s)
        }
    }

    /// Starts a read (C5): call before asking a driver for rows, and ``endRead(_:)`` after
    /// storing them.
    ///
    /// - Complexity: O(1).
    func beginRead() -> Read {
        state.withLock { s in
            s.reads.begin(at: s.removals)
            return Read(removals: s.removals)
        }
    }

    /// Ends a read begun with ``beginRead()``, dropping tombstones no read in flight needs.
    ///
    /// - Complexity: O(r) for r distinct reads in flight, plus O(t) for t tombstones when some go.
    func endRead(_ read: Read) {
        state.withLock { s in Self.endRead(read, &s) }
    }

    private static func endRead(_ read: Read, _ s: inout State) {
        s.reads.end(at: read.removals)
        guard !s.tombstones.isEmpty else { return }
        if let oldest = s.reads.oldest {
            s.tombstones = s.tombstones.filter { $0.value > oldest }
        } else {
            s.tombstones.removeAll()
        }
    }

    /// Stores the rows returned by `read` like ``store(_:in:pin:since:)``, pins `key`'s row when
    /// one is given, and ends the read (``endRead(_:)``), under one lock. An answer of that row
    /// alone (the usual one) is pinned as it is stored, before the eviction check; any other
    /// answer pins the row if it is resident afterwards. A row removed since the read began is
    /// neither stored nor pinned (C5).
    ///
    /// - Returns: Whether `key`'s row was pinned; the caller owns that pin.
    func store(_ snapshots: [RowSnapshot], in store: ObjectIdentifier, pinning key: Key?, ending read: Read) -> Bool {
        state.withLock { s in
            if let span = RowTable<Entry>.span(of: snapshots) {
                s.entries.reserve(store: store, entity: span.entity, keys: span.keys, count: snapshots.count)
            }
            // The common answer, the asked row alone, is pinned as it is stored.
            let pinsStored = key.map { snapshots.count == 1 && snapshots[0].id == $0.row } ?? false
            var pinned =
                Self.store(snapshots[...], in: store, pins: pinsStored ? Self.onePin[...] : nil, since: read, &s) > 0
            if let key, !pinsStored {
                var newlyPinned = false
                var widePin = false
                let found: Void? = s.entries.withExistingValue(forKey: key) { entry in
                    newlyPinned = !entry.isPinned
                    widePin = !entry.addPin()
                }
                pinned = found != nil
                if newlyPinned { s.pinnedRows += 1 }
                if widePin { s.widePins[key, default: 0] += 1 }
            }
            Self.endRead(read, &s)
            return pinned
        }
    }

    /// Stores rows returned by `read` like ``store(_:in:pin:)``, leaving out rows removed since
    /// the read began (C5): those are neither stored nor pinned.
    ///
    /// A save's own rows go through here too, with a ticket taken before the driver wrote them:
    /// another context may read a saved row from the driver and delete it before the saving thread
    /// gets to store it.
    func store(_ snapshots: [RowSnapshot], in store: ObjectIdentifier, pin: Bool = false, since read: Read) {
        state.withLock { s in
            if let span = RowTable<Entry>.span(of: snapshots) {
                s.entries.reserve(store: store, entity: span.entity, keys: span.keys, count: snapshots.count)
            }
            let pins = pin ? Array(repeating: true, count: snapshots.count)[...] : nil
            Self.store(snapshots[...], in: store, pins: pins, since: read, &s)
        }
    }

    /// Stores part of the rows returned by `read` like ``store(_:in:pins:)-(ArraySlice<RowSnapshot>,_,_)``,
    /// leaving out rows removed since the read began (C5): those are neither stored nor pinned.
    func store(
        _ snapshots: ArraySlice<RowSnapshot>, in store: ObjectIdentifier, pins: ArraySlice<Bool>?, since read: Read
    ) {
        state.withLock { s in _ = Self.store(snapshots, in: store, pins: pins, since: read, &s) }
    }

    /// Makes room for `snapshots` of one store at once, for a caller that then stores them in
    /// parts with ``store(_:in:pins:)-(ArraySlice<RowSnapshot>,_,_)``; or, for rows too scattered
    /// to share a lane, sends them to the table's overflow (``RowTable`` T4).
    ///
    /// - Parameter doubling: Whether a lane that grows at least doubles: for each further part of
    ///   an answer that comes in parts.
    package func reserve(for snapshots: [RowSnapshot], in store: ObjectIdentifier, doubling: Bool = false) {
        guard let span = RowTable<Entry>.span(of: snapshots, minimum: 2) else { return }
        state.withLock { s in
            s.entries.reserve(
                store: store, entity: span.entity, keys: span.keys, count: snapshots.count, doubling: doubling)
        }
    }

    /// Stores part of a batch of snapshots of one store, pinning the rows whose flag in `pins`
    /// is set; `pins`, when given, has the same indices as `snapshots` (slices of arrays of the
    /// same length). One lock. Reserves nothing: lanes grow by doubling, so parts of a batch
    /// whose size is not known yet cost amortized O(1) per row; call
    /// ``reserve(for:in:)`` first when the whole batch is at hand.
    package func store(_ snapshots: ArraySlice<RowSnapshot>, in store: ObjectIdentifier, pins: ArraySlice<Bool>?) {
        state.withLock { s in _ = Self.store(snapshots, in: store, pins: pins, since: nil, &s) }
    }

    /// Stores snapshots under the lock; returns how many rows it pinned (those asked for in `pins`
    /// and not left out as removed since `read` began). Pins are taken before the eviction check, so
    /// a row stored pinned is never evicted by its own store.
    @discardableResult
    private static func store(
        _ snapshots: ArraySlice<RowSnapshot>, in store: ObjectIdentifier, pins: ArraySlice<Bool>?,
        since read: Read? = nil,
        _ s: inout State
    ) -> Int {
        s.clock &+= 1
        let clock = s.clock
        let storedAt = tick(now(), &s)
        var bytes = 0
        var newlyPinned = 0
        var pinnedHere = 0
        var widePins: [Key] = []
        let checksRemovals = !s.tombstones.isEmpty && read != nil
        for index in snapshots.indices {
            let snapshot = snapshots[index]
            if checksRemovals, let removal = s.tombstones[Key(store: store, row: snapshot.id)], removal > read!.removals
            {  // checksRemovals implies read
                continue
            }
            let pin = pins?[index] ?? false
            let key = Key(store: store, row: snapshot.id)
            // One lookup per row: a new row is added in place of the empty entry.
            bytes += s.entries.withValue(forKey: key, default: Entry(snapshot)) { entry, isNew in
                if pin {
                    pinnedHere += 1
                    if !entry.isPinned { newlyPinned += 1 }
                    if !entry.addPin() { widePins.append(key) }
                }
                entry.storedAt = storedAt
                return entry.merge(snapshot, isNew: isNew, clock: clock)
            }
        }
        s.bytes += bytes
        s.pinnedRows += newlyPinned
        for key in widePins { s.widePins[key, default: 0] += 1 }
        evictIfNeeded(&s)
        #if STRATA_CHECKS
            if s.clock % 64 == 0 { assert(checkInvariants(s), "row cache invariants C1-C4 broken") }
        #endif
        return pinnedHere
    }

    /// Adds one pin to each resident key (C3) and returns, per key, whether it was pinned.
    ///
    /// - Complexity: O(n) for n keys, one lock.
    package func pinResident(_ keys: [Key]) -> [Bool] {
        state.withLock { s in
            var newlyPinned = 0
            var widePins: [Key] = []
            let pinned = keys.map { key -> Bool in
                let found: Void? = s.entries.withExistingValue(forKey: key) { entry in
                    if !entry.isPinned { newlyPinned += 1 }
                    if !entry.addPin() { widePins.append(key) }
                }
                return found != nil
            }
            s.pinnedRows += newlyPinned
            for key in widePins { s.widePins[key, default: 0] += 1 }
            return pinned
        }
    }

    /// Adds one pin to each resident key (C3) and returns the keys it pinned; a key not resident
    /// is not pinned, and the caller must not unpin it later.
    @discardableResult
    package func pin(_ keys: [Key]) -> [Key] {
        zip(keys, pinResident(keys)).filter(\.1).map(\.0)
    }

    /// Removes one pin from each key; unpinned rows become evictable.
    ///
    /// - Parameter evicting: Whether to evict now if the cache is over a bound; a caller releasing
    ///   many pins in batches passes `false` for all but the last, so a cache far over its bound
    ///   is scanned once, not once per batch.
    package func unpin(_ keys: [Key], evicting: Bool = true) {
        state.withLock { s in
            for key in keys {
                // Pins counted by key go first: there are some only while the entry's count is full.
                if !s.widePins.isEmpty, let wide = s.widePins[key] {
                    s.widePins[key] = wide > 1 ? wide - 1 : nil
                    continue
                }
                let released: Bool? = s.entries.withExistingValue(forKey: key) { $0.removePin() }
                if released == true { s.pinnedRows -= 1 }
            }
            // Rows may have become evictable: the next check looks at the byte bound itself.
            s.bytesFloor = 0
            if evicting { Self.evictIfNeeded(&s) }
        }
    }

    /// Drops rows (deleted by a save), pinned or not; reads in flight will not store them again (C5).
    package func remove(_ keys: [Key]) { remove(keys, by: nil) }

    /// Drops rows like ``remove(_:)``.
    ///
    /// - Parameter own: the ticket of the caller's own read, when it holds one and stores none of
    ///   these rows after removing them (a save dropping the rows it deleted). Only the other
    ///   reads in flight need tombstones; with none, a large delete writes none.
    func remove(_ keys: [Key], by own: Read?) {
        state.withLock { s in
            s.removals &+= 1
            let removal = s.removals
            let inFlight = s.reads.total > (own == nil ? 0 : 1)
            if inFlight { s.tombstones.reserveCapacity(s.tombstones.count + keys.count) }
            for key in keys {
                if inFlight { s.tombstones[key] = removal }
                guard let entry = s.entries.removeValue(forKey: key) else { continue }
                s.bytes -= entry.bytes
                if entry.isPinned { s.pinnedRows -= 1 }
                if !s.widePins.isEmpty { s.widePins[key] = nil }
            }
            s.bytesFloor = 0
        }
    }

    /// Drops every row of a store (when it is removed from the coordinator).
    public func removeAll(in store: ObjectIdentifier) {
        state.withLock { s in
            s.entries.removeAll(in: store)
            var bytes = 0
            var pinned = 0
            s.entries.forEachValue { entry in
                bytes += entry.bytes
                if entry.isPinned { pinned += 1 }
            }
            s.bytes = bytes
            s.pinnedRows = pinned
            if !s.widePins.isEmpty { s.widePins = s.widePins.filter { $0.key.store != store } }
            s.bytesFloor = 0
        }
    }

    private static func evictIfNeeded(_ s: inout State) {
        // Evict in bulk once 1/8 over a bound and a slack of rows may go, so each pass, a scan of
        // every row, is amortized over many inserts. Rows over the limit that are all pinned
        // (a context holding a large fetch) start no pass.
        let slack = max(s.limit / 8, 16)
        let unpinned = s.entries.count - s.pinnedRows
        let overCount = s.entries.count > s.limit + slack && unpinned > slack
        let overBytes = unpinned > 0 && (s.byteLimit.map { s.bytes > max($0, s.bytesFloor) + $0 / 8 } ?? false)
        guard overCount || overBytes else { return }
        s.statistics.evictionPasses += 1
        defer { s.bytesFloor = s.byteLimit.map { s.bytes > $0 ? s.bytes : 0 } ?? 0 }
        // Ages in uses of the cache (see RowCacheEntry.lastUse), the oldest first.
        let clock = s.clock
        var victims: [(key: Key, age: UInt32)] = []
        victims.reserveCapacity(unpinned)
        s.entries.forEachEntry { key, entry in
            if !entry.isPinned { victims.append((key, entry.age(at: clock))) }
        }
        victims.sort { $0.age > $1.age }
        for (key, _) in victims {
            let countOK = s.entries.count <= s.limit
            let bytesOK = s.byteLimit.map { s.bytes <= $0 } ?? true
            if countOK && bytesOK { break }
            guard let entry = s.entries.removeValue(forKey: key) else { continue }
            s.bytes -= entry.bytes
            s.statistics.evictions += 1
        }
    }

    #if STRATA_CHECKS
        /// Checks C1–C4 (debug builds only); sampled from `store` so debug runs stay linear.
        private static func checkInvariants(_ s: State) -> Bool {
            var unpinned = 0
            var bytes = 0
            s.entries.forEachValue { entry in
                if !entry.isPinned { unpinned += 1 }
                bytes += entry.bytes
            }
            // Pins are counted by key only past a full count in the entry.
            let pinsValid = s.widePins.allSatisfy { key, count in
                count > 0 && s.entries[key].map { $0.inlinePins == RowCacheEntry.inlinePinLimit } == true
            }
            let pinnedCounted = s.entries.count - unpinned == s.pinnedRows
            return unpinned <= s.limit + max(s.limit / 8, 16) && pinsValid && bytes == s.bytes && pinnedCounted
        }
    #endif
}
