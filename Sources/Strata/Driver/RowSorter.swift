/// Sorts rows by sort keys with the core's comparison semantics (shared by atomic drivers and the
/// coordinator when a driver did not sort).
public enum RowSorter {
    /// Returns `rows` sorted by `keys`, ties kept in row-ID order.
    public static func sort(
        _ rows: [RowSnapshot], by keys: [SortKey], model: ManagedObjectModel,
        lookup: @escaping (RowID) throws -> RowSnapshot?
    ) throws -> [RowSnapshot] {
        if let slots = attributeSlots(keys, rows, model) { return try sort(rows, by: keys, slots: slots) }
        let views = rows.map { RowView($0, model: model, lookup: lookup) }
        var failure: (any Error)?
        let sorted = views.sorted { a, b in
            if failure != nil { return false }
            do {
                switch try SortKey.compare(a, b, by: keys) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: return a.row.id < b.row.id
                }
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return sorted.map(\.row)
    }

    /// The value slots of the sort keys when every key is a plain attribute, the same slot in
    /// every row's entity; `nil` otherwise.
    private static func attributeSlots(_ keys: [SortKey], _ rows: [RowSnapshot], _ model: ManagedObjectModel) -> [Int]?
    {
        guard let first = rows.first, let entity = model.entity(number: first.id.entity) else { return [] }
        var slots: [Int] = []
        for key in keys {
            guard let slot = entity.index(ofProperty: key.keyPath), case .attribute = entity.slotKinds[slot] else {
                return nil
            }
            slots.append(slot)
        }
        // Rows of other entities (subentities) share inherited slots only when the key is inherited.
        let numbers = Set(rows.lazy.map(\.id.entity))
        for number in numbers where number != first.id.entity {
            guard let other = model.entity(number: number),
                zip(keys, slots).allSatisfy({ other.index(ofProperty: $0.0.keyPath) == $0.1 })
            else { return nil }
        }
        return slots
    }

    /// One key of default string comparison over a slot holding only strings and `nil`s: the
    /// strings are taken out once and sorted with the same order (`nil` first, then `String`'s
    /// `<`, ties by row ID); `nil` when a row holds anything else.
    private static func sortByString(_ rows: [RowSnapshot], slot: Int, ascending: Bool) -> [RowSnapshot]? {
        // Sorted: small keys (the first 16 bytes, length, position); the texts and flags stay put,
        // read by position.
        var texts: [String?] = []
        var ascii: [Bool] = []
        var keys: [(high: UInt64, low: UInt64, length: Int32, index: Int32)] = []
        guard rows.count < Int(Int32.max) else { return nil }
        texts.reserveCapacity(rows.count)
        ascii.reserveCapacity(rows.count)
        keys.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() {
            switch row.values[slot] {
            case .string(var text):
                let prefix = asciiPrefix(&text)
                texts.append(text)
                ascii.append(prefix.isASCII)
                keys.append((prefix.high, prefix.low, prefix.length, Int32(index)))
            case .null:
                texts.append(nil)
                ascii.append(false)
                keys.append((0, 0, 0, Int32(index)))
            default: return nil
            }
        }
        if !ascii.contains(false), !keys.contains(where: { $0.length > 16 }),
            rows.indices.dropFirst().allSatisfy({ rows[$0 - 1].id < rows[$0].id })
        {
            // Every text ASCII and at most sixteen bytes, rows in row-ID order: the keys alone
            // decide (as below), ties by position, which is row-ID order.
            if ascending {
                keys.sort { a, b in (a.high, a.low, a.length, a.index) < (b.high, b.low, b.length, b.index) }
            } else {
                keys.sort { a, b in (b.high, b.low, b.length, a.index) < (a.high, a.low, a.length, b.index) }
            }
            return keys.map { rows[Int($0.index)] }
        }
        keys.sort { a, b in
            let i = Int(a.index)
            let j = Int(b.index)
            // ASCII text orders as its bytes do, so different first sixteen bytes decide at once;
            // for texts of at most sixteen bytes equal there, the shorter is the other's prefix
            // followed by NULs, so it comes first, and texts of one length are equal.
            if ascii[i] && ascii[j] {
                if a.high != b.high { return ascending ? a.high < b.high : b.high < a.high }
                if a.low != b.low { return ascending ? a.low < b.low : b.low < a.low }
                if a.length <= 16 && b.length <= 16 {
                    if a.length != b.length { return ascending ? a.length < b.length : b.length < a.length }
                    return rows[i].id < rows[j].id
                }
            }
            switch (texts[i], texts[j]) {
            case (nil, nil): break
            case (nil, _): return ascending
            case (_, nil): return !ascending
            case (let x?, let y?):
                // As `SortKey.compare` decides: less, else equal, else greater (Swift's `<` on
                // some non-ASCII text is neither way round for unequal strings).
                if x < y { return ascending }
                if x != y { return !ascending }
            }
            return rows[i].id < rows[j].id
        }
        return keys.map { rows[Int($0.index)] }
    }

    /// The first sixteen UTF-8 bytes of `text` as two big-endian numbers (zero-padded), its length
    /// in bytes (capped at `Int32.max`) and whether the whole text is ASCII. For two ASCII texts a
    /// smaller prefix means a smaller text under `String`'s `<` (ASCII compares byte by byte, and
    /// padding with the smallest byte keeps a prefix of a text below it).
    private static func asciiPrefix(_ text: inout String) -> (high: UInt64, low: UInt64, length: Int32, isASCII: Bool) {
        text.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            var bits: UInt64 = 0
            var index = 0
            while index + 8 <= raw.count {
                bits |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                index += 8
            }
            while index < raw.count {
                bits |= UInt64(raw[index])
                index += 1
            }
            let isASCII = bits & 0x8080_8080_8080_8080 == 0
            return (
                word(raw, from: 0), word(raw, from: 8), Int32(clamping: raw.count), isASCII
            )
        }
    }

    /// Bytes `start..<start + 8` of `raw` as a big-endian number, zero-padded past the end.
    @inline(__always)
    private static func word(_ raw: UnsafeRawBufferPointer, from start: Int) -> UInt64 {
        if raw.count >= start + 8 {
            return UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt64.self))
        }
        var word: UInt64 = 0
        var position = start
        while position < raw.count {
            word |= UInt64(raw[position]) << UInt64(56 - 8 * (position - start))
            position += 1
        }
        return word
    }

    /// Sorts by reading slots directly, comparing with the sort keys' own value comparison.
    private static func sort(_ rows: [RowSnapshot], by keys: [SortKey], slots: [Int]) throws -> [RowSnapshot] {
        if keys.count == 1, slots.count == 1, keys[0].comparison == .default,
            let sorted = sortByString(rows, slot: slots[0], ascending: keys[0].ascending)
        {
            return sorted
        }
        var failure: (any Error)?
        let sorted = rows.sorted { a, b in
            if failure != nil { return false }
            do {
                for (key, slot) in zip(keys, slots) {
                    switch try key.compareValues(a.values[slot], b.values[slot]) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return a.id < b.id
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return sorted
    }
}
