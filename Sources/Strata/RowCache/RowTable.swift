internal import CStrataPrefetch

// ROW TABLE INVARIANTS
// T1. A key lives in exactly one place: its lane's slot when the lane's range holds its key,
//     otherwise the overflow table (growing a lane moves the overflow keys it now covers).
// T2. `count` is the number of keys present; each lane's `live` counts its non-nil slots.
// T3. A lane grows to take a key only when the range it needs is at most `density` times the
//     lane's keys (live and overflowed, plus those a reservation announces) plus `minimumSpan`,
//     and then at most doubles that range;
//     keys spread far apart go to the overflow table instead of growing a mostly empty array.
//     (Removals do not shrink a lane; it is dropped when its last key goes.)
// T4. After a reservation T3 refused (a batch too scattered for the lane), the lane does not grow
//     for that batch's keys (`hold` counts them down): they go to the overflow table instead of
//     growing the lane step by step and moving overflow keys back at every step. An accepted
//     reservation ends the hold.

/// Values by row key (a store and a row ID), kept in arrays indexed by primary key.
///
/// Stores hand out primary keys from a counter, and fetches return rows in key order, so the row
/// cache and every context see long runs of neighbouring keys. A hashed table puts neighbours at
/// random places and pays a cache miss for each; here each (store, entity) pair has a *lane*, an
/// array covering a range of keys, so a run of keys touches memory in order. Keys far outside a
/// lane's range (T3) go to an ordinary dictionary.
///
/// Iteration visits lanes in entity order and each lane in key order, then the overflow table.
struct RowTable<Value> {
    typealias Key = RowCache.Key

    private struct Lane {
        let store: ObjectIdentifier
        /// The key of `slots[0]`.
        var base: Int64
        var slots: [Value?]
        /// Non-nil slots (T2).
        var live: Int
        /// Keys of this lane held in the overflow table, so growing knows whether to look there.
        var overflowed: Int
        /// Keys still to come of a batch whose reservation T3 refused; the lane does not grow for
        /// them (T4).
        var hold = 0

        func index(of key: Int64) -> Int? {
            let offset = key &- base
            return offset >= 0 && offset < Int64(slots.count) && key > Int64.min / 2 ? Int(offset) : nil
        }
    }

    /// Lanes by entity number, then by store (usually one).
    private var lanes: [[Lane]] = []
    private var overflow: [Key: Value] = [:]
    /// Keys present (T2).
    private(set) var count = 0

    /// A lane may span this many times its live keys, plus ``minimumSpan`` (T3).
    private static var density: Int { 4 }
    private static var minimumSpan: Int { 1_024 }

    var isEmpty: Bool { count == 0 }

    /// Keys held in the overflow table rather than a lane (for tests of where keys live).
    var overflowCount: Int { overflow.count }

    /// Slots in every lane, used or empty (for tests of how lanes grow).
    var laneSlotCount: Int { lanes.reduce(0) { $0 + $1.reduce(0) { $0 + $1.slots.count } } }

    private func laneIndex(_ key: Key) -> Int? {
        let entity = Int(key.row.entity)
        guard entity >= 0, entity < lanes.count else { return nil }
        var i = 0
        while i < lanes[entity].count {
            if lanes[entity][i].store == key.store { return i }
            i += 1
        }
        return nil
    }

    /// The value of `key`, or `nil`.
    subscript(key: Key) -> Value? {
        if let lane = laneIndex(key) {
            let entity = Int(key.row.entity)
            if let index = lanes[entity][lane].index(of: key.row.primaryKey) { return lanes[entity][lane].slots[index] }
            if lanes[entity][lane].overflowed == 0 { return nil }
        }
        return overflow.isEmpty ? nil : overflow[key]
    }

    /// Sets the value of `key` and returns the value it replaced.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        withValue(forKey: key, default: value) { slot, isNew in
            // A new key already holds `value`; an old one trades places with it (no copies).
            guard !isNew else { return nil }
            var replaced = value
            swap(&slot, &replaced)
            return replaced
        }
    }

    /// Sets the values of many keys of one store and entity, as ``updateValue(_:forKey:)`` would
    /// one by one, calling `replaced` with each value a key held before: the lane is found and
    /// grown once for the span of `keys`, and its slots are written in one pass. Keys the lane
    /// cannot cover (T3) go through ``updateValue(_:forKey:)``.
    ///
    /// - Parameters:
    ///   - keys: The keys' primary keys, as many as `values` hold, in the same order.
    mutating func updateValues(
        store: ObjectIdentifier, entity: Int32, keys: [Int64], values: [Value], replaced: (Value) -> Void
    ) {
        // callers pass parallel arrays
        precondition(keys.count == values.count, "updateValues(store:entity:keys:values:) of unequal lengths")
        guard let first = keys.first else { return }
        var low = first
        var high = first
        for key in keys {
            low = min(low, key)
            high = max(high, key)
        }
        reserve(store: store, entity: entity, keys: low...high, count: keys.count)
        let probe = Key(store: store, row: RowID(entity: entity, primaryKey: first))
        var leftover: [Int] = []
        if let lane = laneIndex(probe) {
            let row = Int(entity)
            // Out of the table while it is written, so the writes need no uniqueness checks.
            var slots = lanes[row][lane].slots
            lanes[row][lane].slots = []
            let base = lanes[row][lane].base
            var added = 0
            for position in keys.indices {
                let offset = keys[position] &- base
                // As Lane.index(of:) decides.
                guard offset >= 0, offset < Int64(slots.count), keys[position] > Int64.min / 2 else {
                    leftover.append(position)
                    continue
                }
                if let old = slots[Int(offset)] { replaced(old) } else { added += 1 }
                slots[Int(offset)] = values[position]
            }
            lanes[row][lane].slots = slots
            lanes[row][lane].live += added
            count += added
        } else {
            leftover = Array(keys.indices)
        }
        for position in leftover {
            let key = Key(store: store, row: RowID(entity: entity, primaryKey: keys[position]))
            if let old = updateValue(values[position], forKey: key) { replaced(old) }
        }
        // The batch is in: its hold, if the reservation set one, ends here (T4).
        if let lane = laneIndex(probe) { lanes[Int(entity)][lane].hold = 0 }
    }

    /// Calls `body` with the value of `key` in place, adding `make()` first when the key is
    /// absent (`isNew` tells which). One lookup for both.
    @inline(__always)
    mutating func withValue<R>(
        forKey key: Key, default make: @autoclosure () -> Value, _ body: (inout Value, _ isNew: Bool) -> R
    ) -> R {
        let entity = Int(key.row.entity)
        let pk = key.row.primaryKey
        if let lane = laneIndex(key) ?? makeLane(key), let index = slotIndex(entity, lane, pk) {
            if lanes[entity][lane].slots[index] == nil {
                lanes[entity][lane].slots[index] = make()
                lanes[entity][lane].live += 1
                count += 1
                return body(&lanes[entity][lane].slots[index]!, true)
            }
            return body(&lanes[entity][lane].slots[index]!, false)
        }
        // One hashed lookup for a key present, two for a new one (made and changed before it goes in).
        if let index = overflow.index(forKey: key) { return body(&overflow.values[index], false) }
        var value = make()
        let result = body(&value, true)
        overflow[key] = value
        count += 1
        if let lane = laneIndex(key) { lanes[entity][lane].overflowed += 1 }
        return result
    }

    /// Calls `body` with the value of `key` in place when the key is present; `nil` otherwise.
    @inline(__always)
    mutating func withExistingValue<R>(forKey key: Key, _ body: (inout Value) -> R) -> R? {
        let entity = Int(key.row.entity)
        if let lane = laneIndex(key) {
            if let index = lanes[entity][lane].index(of: key.row.primaryKey) {
                guard lanes[entity][lane].slots[index] != nil else { return nil }
                return body(&lanes[entity][lane].slots[index]!)
            }
            if lanes[entity][lane].overflowed == 0 { return nil }
        }
        guard !overflow.isEmpty, let index = overflow.index(forKey: key) else { return nil }
        return body(&overflow.values[index])
    }

    /// Calls `body` with the value of `key` when the key is present, to read; `nil` otherwise.
    @inline(__always)
    func withExistingValueReading<R>(forKey key: Key, _ body: (borrowing Value) -> R) -> R? {
        let entity = Int(key.row.entity)
        if let lane = laneIndex(key) {
            if let index = lanes[entity][lane].index(of: key.row.primaryKey) {
                guard let value = lanes[entity][lane].slots[index] else { return nil }
                return body(value)
            }
            if lanes[entity][lane].overflowed == 0 { return nil }
        }
        guard !overflow.isEmpty, let value = overflow[key] else { return nil }
        return body(value)
    }

    /// Calls `body` with the value of `key` when a lane holds it; keys in the overflow table are
    /// not looked up. For prefetch hints: a key that is not in a lane was not stored in a run.
    @inline(__always)
    func withLaneValueReading(forKey key: Key, _ body: (borrowing Value) -> Void) {
        guard let lane = laneIndex(key) else { return }
        let entity = Int(key.row.entity)
        guard let index = lanes[entity][lane].index(of: key.row.primaryKey),
            let value = lanes[entity][lane].slots[index]
        else { return }
        body(value)
    }

    /// Calls `body` with the lane slots of up to `count` keys from `key` on (`nil` where a key has
    /// no value), to read; keys past the lane's end, and keys in the overflow table, are left
    /// out. Returns how many slots `body` got: 0, without calling it, when no lane holds `key`.
    @inline(__always)
    func withLaneSlotsReading(from key: Key, count: Int, _ body: (ArraySlice<Value?>) -> Void) -> Int {
        guard let lane = laneIndex(key) else { return 0 }
        let entity = Int(key.row.entity)
        guard let start = lanes[entity][lane].index(of: key.row.primaryKey) else { return 0 }
        let end = min(start + max(count, 0), lanes[entity][lane].slots.count)
        body(lanes[entity][lane].slots[start..<end])
        return end - start
    }

    /// Removes `key` and returns its value.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        let entity = Int(key.row.entity)
        if let lane = laneIndex(key) {
            if let index = lanes[entity][lane].index(of: key.row.primaryKey) {
                guard let old = lanes[entity][lane].slots[index] else { return nil }
                lanes[entity][lane].slots[index] = nil
                lanes[entity][lane].live -= 1
                count -= 1
                if lanes[entity][lane].live == 0 && lanes[entity][lane].overflowed == 0 {
                    lanes[entity].remove(at: lane)
                }
                return old
            }
            guard lanes[entity][lane].overflowed > 0, let old = overflow.removeValue(forKey: key) else { return nil }
            lanes[entity][lane].overflowed -= 1
            count -= 1
            return old
        }
        guard let old = overflow.removeValue(forKey: key) else { return nil }
        count -= 1
        return old
    }

    /// Changes every value in place.
    mutating func mutateAll(_ body: (Key, inout Value) -> Void) {
        for entity in lanes.indices {
            for lane in lanes[entity].indices {
                let store = lanes[entity][lane].store
                let base = lanes[entity][lane].base
                for index in lanes[entity][lane].slots.indices where lanes[entity][lane].slots[index] != nil {
                    let key = Key(store: store, row: RowID(entity: Int32(entity), primaryKey: base + Int64(index)))
                    body(key, &lanes[entity][lane].slots[index]!)
                }
            }
        }
        for key in Array(overflow.keys) { body(key, &overflow[key]!) }
    }

    /// Removes every value for which `shouldRemove`, given the value in place, returns true;
    /// returns how many went. Lanes left empty are dropped.
    ///
    /// - Complexity: O(n) for n keys.
    @discardableResult
    mutating func removeValues(where shouldRemove: (inout Value) -> Bool) -> Int {
        var removed = 0
        for entity in lanes.indices {
            for lane in lanes[entity].indices {
                for index in lanes[entity][lane].slots.indices where lanes[entity][lane].slots[index] != nil {
                    guard shouldRemove(&lanes[entity][lane].slots[index]!) else { continue }
                    lanes[entity][lane].slots[index] = nil
                    lanes[entity][lane].live -= 1
                    removed += 1
                }
            }
            lanes[entity].removeAll { $0.live == 0 && $0.overflowed == 0 }
        }
        for key in Array(overflow.keys) {
            guard shouldRemove(&overflow[key]!) else { continue }
            overflow[key] = nil
            if let lane = laneIndex(key) { lanes[Int(key.row.entity)][lane].overflowed -= 1 }
            removed += 1
        }
        count -= removed
        return removed
    }

    /// Calls `body` with every key and value.
    func forEachEntry(_ body: (Key, Value) throws -> Void) rethrows {
        for (entity, row) in lanes.enumerated() {
            for lane in row {
                for (index, value) in lane.slots.enumerated() {
                    guard let value else { continue }
                    try body(
                        Key(store: lane.store, row: RowID(entity: Int32(entity), primaryKey: lane.base + Int64(index))),
                        value)
                }
            }
        }
        for (key, value) in overflow { try body(key, value) }
    }

    /// Calls `body` with every value, without building keys.
    func forEachValue(_ body: (Value) throws -> Void) rethrows {
        for row in lanes {
            for lane in row {
                for value in lane.slots { if let value { try body(value) } }
            }
        }
        for value in overflow.values { try body(value) }
    }

    /// Removes every key, calling `body` with each value as it goes, so a value whose last
    /// reference the table held is released while it is still in the processor's caches.
    mutating func drain(_ body: (Value) -> Void) {
        for entity in lanes.indices {
            for lane in lanes[entity].indices {
                for index in lanes[entity][lane].slots.indices {
                    guard let value = lanes[entity][lane].slots[index].take() else { continue }
                    body(value)
                }
            }
        }
        for value in overflow.values { body(value) }
        removeAll()
    }

    /// Removes every key of `store`.
    mutating func removeAll(in store: ObjectIdentifier) {
        for entity in lanes.indices {
            for lane in lanes[entity] where lane.store == store { count -= lane.live }
            lanes[entity].removeAll { $0.store == store }
        }
        let before = overflow.count
        overflow = overflow.filter { $0.key.store != store }
        count -= before - overflow.count
    }

    /// Removes every key like ``drain(_:)``, asking the processor for the object a few slots on
    /// while `body` works on one: the objects of a large table are not in its caches, and each
    /// `body` call touches its object. `body` must not use the table.
    mutating func drainPrefetching(_ body: (Value) -> Void) where Value: AnyObject {
        let distance = Self.prefetchDistance
        for entity in lanes.indices {
            for lane in lanes[entity].indices {
                lanes[entity][lane].slots.withUnsafeMutableBufferPointer { slots in
                    for index in slots.indices {
                        if index + distance < slots.count {
                            // An optional reference is one word, zero for nil; its bits only go to a hint.
                            // The buffer has a base address: the loop runs only over a non-empty lane.
                            let bits = UnsafeRawPointer(slots.baseAddress! + index + distance).load(as: UInt.self)
                            if let address = UnsafeRawPointer(bitPattern: bits) {
                                strata_prefetch_range_for_write(address, Self.prefetchBytes)
                            }
                        }
                        if let value = slots[index].take() { body(value) }
                    }
                }
            }
        }
        for value in overflow.values { body(value) }
        removeAll()
    }

    /// How many slots ahead ``drainPrefetching(_:)`` asks for an object.
    private static var prefetchDistance: Int { 4 }
    /// How much of each object ``drainPrefetching(_:)`` asks for: a ``ManagedObject`` is about
    /// 110 bytes, and draining reads its ID and flags and changes its reference count.
    private static var prefetchBytes: UInt { 112 }

    /// Removes every key.
    mutating func removeAll() {
        lanes = []
        overflow = [:]
        count = 0
    }

    // MARK: Lanes

    /// A new empty lane for `key`'s store and entity, starting at its key; `nil` for keys no lane
    /// should hold (negative entity numbers, keys near the ends of `Int64`).
    private mutating func makeLane(_ key: Key) -> Int? {
        let entity = Int(key.row.entity)
        let pk = key.row.primaryKey
        guard entity >= 0, entity < 1 << 20, pk > Int64.min / 2, pk < Int64.max / 2 else { return nil }
        if lanes.count <= entity { lanes += Array(repeating: [], count: entity + 1 - lanes.count) }
        // Keys no lane could hold (near the ends of Int64) may already be in the overflow table
        // for this store and entity: the lane counts them, so lookups know to look there (T1).
        let overflowed =
            overflow.isEmpty
            ? 0 : overflow.keys.reduce(0) { $0 + ($1.store == key.store && Int($1.row.entity) == entity ? 1 : 0) }
        lanes[entity].append(Lane(store: key.store, base: pk, slots: [], live: 0, overflowed: overflowed))
        return lanes[entity].count - 1
    }

    /// Makes room at once for `count` keys of `store` and `entity` within `keys`, so adding a
    /// batch does not grow the lane step by step. Does nothing where T3 does not allow the lane
    /// to cover them: then the next `count` keys added to the lane that it does not cover go to
    /// the overflow table without growing it (T4).
    ///
    /// - Parameter doubling: Whether a lane that grows at least doubles, for a batch that comes in
    ///   parts (growing by exactly each part would copy the lane each time it grows downward).
    mutating func reserve(
        store: ObjectIdentifier, entity: Int32, keys: ClosedRange<Int64>, count: Int, doubling: Bool = false
    ) {
        let key = Key(store: store, row: RowID(entity: entity, primaryKey: keys.lowerBound))
        guard keys.lowerBound > Int64.min / 2, keys.upperBound < Int64.max / 2,
            let lane = laneIndex(key) ?? makeLane(key)
        else { return }
        let row = Int(entity)
        grow(row, lane, covering: keys.lowerBound, keys.upperBound + 1, expecting: count, doubling: doubling)
        let covered =
            lanes[row][lane].index(of: keys.lowerBound) != nil && lanes[row][lane].index(of: keys.upperBound) != nil
        lanes[row][lane].hold = covered ? 0 : count
    }

    /// The entity and key range of `rows` when they are all of one entity (a fetch's or a save's
    /// usual batch) and at least `minimum`, for ``reserve(store:entity:keys:count:doubling:)``;
    /// one pass over the contiguous rows.
    static func span(
        of rows: some Collection<RowSnapshot>, minimum: Int = 65
    ) -> (entity: Int32, keys: ClosedRange<Int64>)? {
        guard rows.count >= max(minimum, 1), let first = rows.first else { return nil }
        var low = first.id.primaryKey
        var high = low
        for row in rows {
            guard row.id.entity == first.id.entity else { return nil }
            low = min(low, row.id.primaryKey)
            high = max(high, row.id.primaryKey)
        }
        return (first.id.entity, low...high)
    }

    /// The slot of `pk` in a lane, growing the lane to cover it when T3 allows; `nil` when the key
    /// belongs in the overflow table. While a hold lasts (T4), each call counts one key of it
    /// down and grows nothing.
    private mutating func slotIndex(_ entity: Int, _ lane: Int, _ pk: Int64) -> Int? {
        if lanes[entity][lane].hold > 0 {
            lanes[entity][lane].hold -= 1
            return lanes[entity][lane].index(of: pk)
        }
        if let index = lanes[entity][lane].index(of: pk) { return index }
        guard pk > Int64.min / 2, pk < Int64.max / 2 else { return nil }
        grow(entity, lane, covering: pk, pk + 1, expecting: 1, doubling: true)
        return lanes[entity][lane].index(of: pk)
    }

    /// Grows a lane to cover the keys `low..<high` when T3 allows, counting `expected` keys
    /// about to be added; with `doubling`, at least doubles it toward them.
    private mutating func grow(
        _ entity: Int, _ lane: Int, covering low: Int64, _ high: Int64, expecting expected: Int, doubling: Bool
    ) {
        // Scalars only: a copy of the lane would share its array and make growing copy it.
        let (base, length) = (lanes[entity][lane].base, lanes[entity][lane].slots.count)
        let (live, overflowed) = (lanes[entity][lane].live, lanes[entity][lane].overflowed)
        let newLow = min(base, low)
        let newHigh = max(base + Int64(length), high)
        guard newLow < base || newHigh > base + Int64(length) else { return }
        let limit = Int64(Self.density * (live + overflowed + expected) + Self.minimumSpan)
        guard newHigh - newLow <= limit else { return }
        // Grow at least by doubling toward a single new key, so keys arriving in random order
        // cause few growths (each may scan the overflow table); the span is at most twice T3's bound.
        // Past 4,096 slots a lane grows by half instead: each growth copies the lane, but the
        // empty slots left behind a batch's last key are at most a third of the lane, not half
        // (100,000 rows in order: 104,976 slots, not 131,072; 32 bytes each in the row cache).
        let span = max(newHigh - newLow, doubling ? Int64(Self.grownLength(length)) : 0, 16)
        let newBase = low < base ? newHigh - span : newLow
        let below = Int(base - newBase)
        let above = Int(span) - below - length
        if below == 0 {
            // In place: the array moves its elements when it grows, without retaining them again.
            // Appended one by one after reserving: `append(contentsOf: repeatElement(nil, …))`
            // went through the generic sequence copy, slot by slot (1.5% of inserting 100,000 rows).
            // Out of the table meanwhile, so each append needs no uniqueness check of the lanes.
            var slots = lanes[entity][lane].slots
            lanes[entity][lane].slots = []
            slots.reserveCapacity(length + above)
            for _ in 0..<above { slots.append(nil) }
            lanes[entity][lane].slots = slots
        } else {
            let grown = Self.moved(from: &lanes[entity][lane].slots, below: below, above: max(above, 0))
            lanes[entity][lane].slots = grown
        }
        lanes[entity][lane].base = newBase
        if overflowed > 0 { adoptOverflow(entity, lane) }
    }

    /// The length a lane of `length` slots grows to at least: doubled while small, half again
    /// past 4,096 slots.
    static func grownLength(_ length: Int) -> Int { length < 4_096 ? length * 2 : length + length / 2 }

    /// A new array of `below` empty slots, then the values of `slots`, then `above` empty slots.
    /// The values are moved, not copied (no reference counting per value), and `slots` is left
    /// with empty slots. Growing a lane downward this way costs one pass over each array, where
    /// inserting at the front went through the generic collection path one slot at a time.
    private static func moved(from slots: inout [Value?], below: Int, above: Int) -> [Value?] {
        let length = slots.count
        return [Value?](unsafeUninitializedCapacity: below + length + above) { grown, initialized in
            // The capacity asked for is at least `below + length + above`, so every range below is in bounds.
            guard let start = grown.baseAddress else { return }
            start.initialize(repeating: nil, count: below)
            slots.withUnsafeMutableBufferPointer { old in
                guard let source = old.baseAddress else { return }
                (start + below).moveInitialize(from: source, count: length)
                // The moved-from slots are uninitialized now; the old array must end up holding values.
                source.initialize(repeating: nil, count: length)
            }
            (start + below + length).initialize(repeating: nil, count: above)
            initialized = below + length + above
        }
    }

    /// Moves the overflow keys a grown lane now covers into its slots (T1).
    private mutating func adoptOverflow(_ entity: Int, _ lane: Int) {
        let store = lanes[entity][lane].store
        let covered = overflow.keys.filter {
            $0.store == store && Int($0.row.entity) == entity && lanes[entity][lane].index(of: $0.row.primaryKey) != nil
        }
        for key in covered {
            // `covered` holds keys present in `overflow`, in the lane's range.
            let index = lanes[entity][lane].index(of: key.row.primaryKey)!
            lanes[entity][lane].slots[index] = overflow.removeValue(forKey: key)
            lanes[entity][lane].live += 1
            lanes[entity][lane].overflowed -= 1
        }
    }
}
