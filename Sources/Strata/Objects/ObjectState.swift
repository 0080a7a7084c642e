/// A managed object's flags and changed slots, in one word.
///
/// Six flags, the context's list bits and a ``SlotSet`` took 22 bytes of every object and made it
/// 86 bytes, a 96-byte chunk of malloc's; in one word the object is 72 bytes and takes an 80-byte
/// chunk (100,000 objects at rest: 1.6 MB less; docs/benchmarks.md, Memory).
///
/// Bits 0–53 are the changed slots 0–53. An object with a changed slot past 53 (an entity of more
/// than 54 properties) sets ``wideBit`` and keeps its whole set in ``WideSlots``, keyed by the
/// object, until the set is cleared or the object is freed.
struct ObjectState {
    /// The word.
    var raw: UInt64 = 0

    /// How many slots the word holds.
    static let inlineSlots = 54
    /// The bits of slots 0–53.
    static let slotMask: UInt64 = (1 << 54) - 1
    /// The object's changed slots are in ``WideSlots`` (the slot bits are then unused).
    static let wideBit: UInt64 = 1 << 54
    static let faultedBit: UInt64 = 1 << 55
    static let insertedBit: UInt64 = 1 << 56
    static let deletedBit: UInt64 = 1 << 57
    static let inaccessibleBit: UInt64 = 1 << 58
    static let pinnedBit: UInt64 = 1 << 59
    /// ``ManagedObject/listMembership``'s four bits start here.
    static let listShift: UInt64 = 60

    @inline(__always) func has(_ bit: UInt64) -> Bool { raw & bit != 0 }

    /// One of the object's flags.
    struct Flag {
        let bit: UInt64
        static let faulted = Flag(bit: faultedBit)
        static let inserted = Flag(bit: insertedBit)
        static let deleted = Flag(bit: deletedBit)
        static let inaccessible = Flag(bit: inaccessibleBit)
        static let pinned = Flag(bit: pinnedBit)
    }

    /// Whether `flag` is set.
    subscript(_ flag: Flag) -> Bool {
        @inline(__always) get { raw & flag.bit != 0 }
        @inline(__always) set { raw = newValue ? raw | flag.bit : raw & ~flag.bit }
    }

    /// ``ManagedObject/listMembership``'s bits (``ObjectList``).
    var listMembership: UInt8 {
        @inline(__always) get { UInt8(truncatingIfNeeded: raw >> Self.listShift) }
        @inline(__always) set { raw = raw & ~(0xF << Self.listShift) | UInt64(newValue & 0xF) << Self.listShift }
    }

    /// Whether no slot is marked changed.
    @inline(__always) var hasNoChangedSlots: Bool { raw & (Self.slotMask | Self.wideBit) == 0 }
}

/// The changed slots of objects with a changed slot past 53 (``ObjectState``), by object.
///
/// Thread safety: objects of different contexts change on different threads, and an object may be
/// freed on any thread, so the table is behind a lock. Only entities of more than 54 properties
/// reach it; a change there costs one lock and a bit set in place (no set copied or allocated
/// after the object's first).
enum WideSlots {
    /// An object's slots as bits, 64 to a word; changed in place under the table's lock.
    private final class Bits {
        var words: [UInt64]

        /// The slots `inline` holds (bits of slots 0–63) and `slots`.
        init(inline: UInt64 = 0, _ slots: SlotSet = SlotSet()) {
            words = [inline]
            for slot in slots { insert(slot) }
        }

        func insert(_ slot: Int) {
            let word = slot / 64
            if words.count <= word { words += repeatElement(0, count: word + 1 - words.count) }
            words[word] |= 1 << UInt64(slot % 64)
        }

        func contains(_ slot: Int) -> Bool {
            slot / 64 < words.count && words[slot / 64] & 1 << UInt64(slot % 64) != 0
        }

        var slots: SlotSet {
            var set = SlotSet(bits: words[0])
            for word in words.indices.dropFirst() {
                var bits = words[word]
                while bits != 0 {
                    set.insert(word * 64 + bits.trailingZeroBitCount)
                    bits &= bits - 1
                }
            }
            return set
        }
    }

    private static let table = Locked<[ObjectIdentifier: Bits]>([:])

    static func slots(of object: ObjectIdentifier) -> SlotSet {
        table.withLock { $0[object]?.slots ?? SlotSet() }
    }

    static func set(_ slots: SlotSet, of object: ObjectIdentifier) {
        table.withLock { $0[object] = Bits(slots) }
    }

    /// Adds `slot` to `object`'s entry, making the entry with the slots `inline` holds (bits of
    /// slots 0–63) when it has none.
    static func insert(_ slot: Int, of object: ObjectIdentifier, inline: UInt64) {
        table.withLock { table in
            if let bits = table[object] {
                bits.insert(slot)
            } else {
                let bits = Bits(inline: inline)
                bits.insert(slot)
                table[object] = bits
            }
        }
    }

    static func contains(_ slot: Int, of object: ObjectIdentifier) -> Bool {
        table.withLock { $0[object]?.contains(slot) ?? false }
    }

    static func remove(_ object: ObjectIdentifier) {
        table.withLock { _ = $0.removeValue(forKey: object) }
    }

    /// Whether `object` has an entry (for tests: an entry outliving its object would be given to
    /// the next object allocated at the same address).
    static func holds(_ object: ObjectIdentifier) -> Bool { table.withLock { $0[object] != nil } }
}
