import Foundation

/// The ids of an interchange document's objects, packed for a file of millions of objects.
///
/// An id is split at its last `/` into a prefix and the rest: the object URIs `strata export`
/// writes (`x-coredata://<store UUID>/<Entity>/p<key>`) share a few prefixes, kept once each (up to
/// 4,096 of them), so an id costs the bytes after its prefix (`p12345`), a 2-byte prefix number and
/// an 8-byte end, plus its slot in an open-addressing table of positions: about 30 bytes for an
/// exported URI, where a `[String: Int]` costs a 64-byte string of its own plus its entry. An id
/// without `/`, or whose prefix came after the 4,096th, is kept whole (prefix 0, the empty one).
struct InterchangeIDTable {
    /// The rest of every id after its prefix, one after another.
    private var bytes: [UInt8] = []
    /// Where each id's rest ends in `bytes`, by position.
    private var ends = ChunkedArray<Int>()
    /// Each id's prefix, by position: an index into `prefixes`.
    private var prefixOf = ChunkedArray<UInt16>()
    /// The prefixes kept, the empty one first, and their numbers.
    private var prefixes: [[UInt8]] = [[]]
    private var prefixNumbers: [[UInt8]: UInt16] = [:]
    private static let maximumPrefixes = 4_096
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
        return String(decoding: prefixes[Int(prefixOf[position])] + bytes[start..<ends[position]], as: UTF8.self)
    }

    /// The position of `id`, or `nil` when the table does not hold it.
    func position(of id: String) -> Int? {
        var id = id
        return id.withUTF8 { utf8 in
            let (prefix, rest, _) = split(utf8, mayKeep: false)
            return find(prefix, rest).position
        }
    }

    /// Adds `id` at position ``count`` and returns `nil`; or, when the table holds it already,
    /// returns its position and adds nothing.
    mutating func insert(_ id: String) -> Int? {
        var id = id
        return id.withUTF8 { utf8 in
            let (prefix, rest, new) = split(utf8, mayKeep: true)
            let (found, slot, tag) = find(prefix, rest)
            if let found { return found }
            if let new {
                prefixNumbers[new] = prefix
                prefixes.append(new)
            }
            bytes.append(contentsOf: rest)
            ends.append(bytes.count)
            prefixOf.append(prefix)
            slots[slot] = tag | ends.count
            if ends.count * 4 >= slots.count * 3 { grow() }
            return nil
        }
    }

    /// The id's prefix number and the rest of its bytes. A prefix not kept yet gets the next
    /// number when `mayKeep` and there is room, and comes back as `new` for the caller to keep;
    /// otherwise the id is whole, with prefix 0. A prefix is kept from the first id that has it,
    /// before any id with it is stored, so every id with a kept prefix is stored split.
    private func split(_ utf8: UnsafeBufferPointer<UInt8>, mayKeep: Bool)
        -> (prefix: UInt16, rest: UnsafeBufferPointer<UInt8>, new: [UInt8]?)
    {
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")), slash > 0 else { return (0, utf8, nil) }
        let rest = UnsafeBufferPointer(rebasing: utf8[(slash + 1)...])
        // Ids come in runs sharing a prefix: the previous id's is tried before the dictionary.
        if let last = prefixOf.last, last != 0, prefixes[Int(last)].elementsEqual(utf8[...slash]) {
            return (last, rest, nil)
        }
        let prefix = Array(utf8[...slash])
        if let number = prefixNumbers[prefix] { return (number, rest, nil) }
        guard mayKeep, prefixes.count < Self.maximumPrefixes else { return (0, utf8, nil) }
        return (UInt16(prefixes.count), rest, prefix)
    }

    /// The position of the id whose prefix and rest are given, or the empty slot where it would
    /// go; and the id's hash tag.
    private func find(_ prefix: UInt16, _ rest: UnsafeBufferPointer<UInt8>) -> (position: Int?, slot: Int, tag: Int) {
        let mask = slots.count - 1
        let hash = Self.hash(prefix, rest)
        let tag = Self.tag(hash)
        var slot = hash & mask
        while true {
            let stored = slots[slot]
            if stored == 0 { return (nil, slot, tag) }
            let position = (stored & Self.positionMask) - 1
            if stored & ~Self.positionMask == tag, prefixOf[position] == prefix, matches(position, rest) {
                return (position, slot, tag)
            }
            slot = (slot + 1) & mask
        }
    }

    /// The top 24 bits of `hash`, where they are: above the position bits.
    private static func tag(_ hash: Int) -> Int { hash & ~positionMask }

    private func matches(_ position: Int, _ rest: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = position == 0 ? 0 : ends[position - 1]
        guard ends[position] - start == rest.count else { return false }
        return bytes.withUnsafeBufferPointer { all in
            rest.isEmpty || memcmp(all.baseAddress! + start, rest.baseAddress!, rest.count) == 0  // both non-empty here
        }
    }

    /// Doubles the slots and places every id again.
    private mutating func grow() {
        var grown = Array(repeating: 0, count: slots.count * 2)
        let mask = grown.count - 1
        bytes.withUnsafeBufferPointer { all in
            var start = 0
            for (position, end) in ends.enumerated() {
                let hash = Self.hash(prefixOf[position], UnsafeBufferPointer(rebasing: all[start..<end]))
                var slot = hash & mask
                while grown[slot] != 0 { slot = (slot + 1) & mask }
                grown[slot] = Self.tag(hash) | (position + 1)
                start = end
            }
        }
        slots = grown
    }

    private static func hash(_ prefix: UInt16, _ rest: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(prefix)
        hasher.combine(bytes: UnsafeRawBufferPointer(rest))
        return hasher.finalize()
    }
}
