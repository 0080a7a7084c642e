import Foundation

/// The ids of an interchange document's objects, packed for a file of millions of objects: every
/// id's UTF-8 bytes in one array, where each ends, and an open-addressing table of positions.
///
/// An id costs its bytes plus about 24 bytes, where a `[String: Int]` costs a string of its own
/// (a heap allocation for ids longer than 15 bytes, such as exported object URIs) plus its entry.
struct InterchangeIDTable {
    /// Every id's bytes, one after another.
    private var bytes: [UInt8] = []
    /// Where each id ends in `bytes`, by position.
    private var ends = ChunkedArray<Int>()
    /// For the id hashed to each slot (linear probing): its position + 1 in the low 40 bits and
    /// the top 24 bits of its hash above them, so most ids that only share a slot are told apart
    /// without comparing bytes; 0 for an empty slot. The count is a power of two, at least a third
    /// larger than the number of ids.
    private var slots: [Int] = Array(repeating: 0, count: 16)
    private static let positionBits = 40
    private static let positionMask = (1 << positionBits) - 1

    /// How many ids the table holds.
    var count: Int { ends.count }

    /// The id at `position` (below ``count``).
    subscript(position: Int) -> String {
        let start = position == 0 ? 0 : ends[position - 1]
        return String(decoding: bytes[start..<ends[position]], as: UTF8.self)
    }

    /// The position of `id`, or `nil` when the table does not hold it.
    func position(of id: String) -> Int? {
        var id = id
        return id.withUTF8 { find($0).position }
    }

    /// Adds `id` at position ``count`` and returns `nil`; or, when the table holds it already,
    /// returns its position and adds nothing.
    mutating func insert(_ id: String) -> Int? {
        var id = id
        return id.withUTF8 { utf8 in
            let (found, slot, tag) = find(utf8)
            if let found { return found }
            bytes.append(contentsOf: utf8)
            ends.append(bytes.count)
            slots[slot] = tag | ends.count
            if ends.count * 4 >= slots.count * 3 { grow() }
            return nil
        }
    }

    /// The position of the id whose bytes are `utf8`, or the empty slot where it would go; and
    /// the id's hash tag.
    private func find(_ utf8: UnsafeBufferPointer<UInt8>) -> (position: Int?, slot: Int, tag: Int) {
        let mask = slots.count - 1
        let hash = Self.hash(utf8)
        let tag = Self.tag(hash)
        var slot = hash & mask
        while true {
            let stored = slots[slot]
            if stored == 0 { return (nil, slot, tag) }
            let position = (stored & Self.positionMask) - 1
            if stored & ~Self.positionMask == tag, matches(position, utf8) { return (position, slot, tag) }
            slot = (slot + 1) & mask
        }
    }

    /// The top 24 bits of `hash`, where they are: above the position bits.
    private static func tag(_ hash: Int) -> Int { hash & ~positionMask }

    private func matches(_ position: Int, _ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = position == 0 ? 0 : ends[position - 1]
        guard ends[position] - start == utf8.count else { return false }
        return bytes.withUnsafeBufferPointer { all in
            utf8.isEmpty || memcmp(all.baseAddress! + start, utf8.baseAddress!, utf8.count) == 0  // both non-empty here
        }
    }

    /// Doubles the slots and places every id again.
    private mutating func grow() {
        var grown = Array(repeating: 0, count: slots.count * 2)
        let mask = grown.count - 1
        bytes.withUnsafeBufferPointer { all in
            var start = 0
            for (position, end) in ends.enumerated() {
                let hash = Self.hash(UnsafeBufferPointer(rebasing: all[start..<end]))
                var slot = hash & mask
                while grown[slot] != 0 { slot = (slot + 1) & mask }
                grown[slot] = Self.tag(hash) | (position + 1)
                start = end
            }
        }
        slots = grown
    }

    private static func hash(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(utf8))
        return hasher.finalize()
    }
}
