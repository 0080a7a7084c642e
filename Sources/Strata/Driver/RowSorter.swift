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
        // Sorted: small (prefix, position) pairs; the texts and flags stay put, read by position.
        var texts: [String?] = []
        var ascii: [Bool] = []
        var keys: [(prefix: UInt64, index: Int32)] = []
        guard rows.count < Int(Int32.max) else { return nil }
        texts.reserveCapacity(rows.count)
        ascii.reserveCapacity(rows.count)
        keys.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() {
            switch row.values[slot] {
            case .string(var text):
                let (prefix, isASCII) = asciiPrefix(&text)
                texts.append(text)
                ascii.append(isASCII)
                keys.append((prefix, Int32(index)))
            case .null:
                texts.append(nil)
                ascii.append(false)
                keys.append((0, Int32(index)))
            default: return nil
            }
        }
        keys.sort { a, b in
            let i = Int(a.index)
            let j = Int(b.index)
            // ASCII text orders as its bytes do, so different first eight bytes decide at once.
            if ascii[i] && ascii[j] && a.prefix != b.prefix {
                return ascending ? a.prefix < b.prefix : b.prefix < a.prefix
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

    /// The first eight UTF-8 bytes of `text` as a big-endian number (zero-padded) and whether the
    /// whole text is ASCII. For two ASCII texts a smaller prefix means a smaller text under
    /// `String`'s `<` (ASCII compares byte by byte, and padding with the smallest byte keeps a
    /// prefix of a text below it).
    private static func asciiPrefix(_ text: inout String) -> (UInt64, Bool) {
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
            var prefix: UInt64 = 0
            if raw.count >= 8 {
                prefix = UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
            } else {
                for position in 0..<raw.count { prefix |= UInt64(raw[position]) << UInt64(56 - 8 * position) }
            }
            return (prefix, isASCII)
        }
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
