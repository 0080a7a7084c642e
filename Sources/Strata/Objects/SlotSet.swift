/// A set of property slots, as a bit mask: the first 64 slots in one word, others in a set.
///
/// Objects track their changed properties with it; inserting, testing and clearing cost no
/// allocation for entities of up to 64 properties.
struct SlotSet: Sequence, Equatable {
    private var low: UInt64 = 0
    private var high: Set<Int>? = nil

    init() {}

    /// The slots whose bits are set in `bits` (slots 0–63).
    init(bits: UInt64) { low = bits }

    /// The slots as bits when every one is below `limit` (at most 64), else `nil`.
    func bits(below limit: Int) -> UInt64? {
        guard high?.isEmpty ?? true else { return nil }
        return limit >= 64 || low >> UInt64(limit) == 0 ? low : nil
    }

    var isEmpty: Bool { low == 0 && (high?.isEmpty ?? true) }

    mutating func insert(_ slot: Int) {
        if slot < 64 {
            low |= 1 << UInt64(slot)
        } else {
            high = (high ?? []).union([slot])
        }
    }

    func contains(_ slot: Int) -> Bool {
        slot < 64 ? low & (1 << UInt64(slot)) != 0 : high?.contains(slot) ?? false
    }

    mutating func removeAll() {
        low = 0
        high = nil
    }

    /// The slots in ascending order.
    func makeIterator() -> IndexingIterator<[Int]> { ascending.makeIterator() }

    /// The slots in ascending order.
    var ascending: [Int] {
        var result: [Int] = []
        var bits = low
        while bits != 0 {
            result.append(bits.trailingZeroBitCount)
            bits &= bits - 1
        }
        if let high { result.append(contentsOf: high.sorted()) }
        return result
    }
}
