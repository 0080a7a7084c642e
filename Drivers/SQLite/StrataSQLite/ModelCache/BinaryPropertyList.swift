import Foundation

/// A strict reader of binary property lists (`bplist00`), the form of `Z_MODELCACHE`'s keyed
/// archive and of `Z_METADATA`.
///
/// Foundation's `PropertyListSerialization` trusts the file: a damaged offset table or object
/// reference there can build an object graph that crashes while it is bridged to Swift (found by
/// the reliability suite, `model-cache` case 819855363/393). This reader checks every size, offset,
/// length and reference against the data, refuses cycles and nesting deeper than
/// ``maximumNesting``, and reads each object once however often it is referenced, so a damaged
/// list is a ``SQLiteError`` (`.corrupt`), never a crash, a hang or unbounded memory.
///
/// Values come back as ``KeyedArchive/Value``s: sets and ordered sets as arrays, `CF$UID`
/// references as ``KeyedArchive/Value/uid(_:)``. A dictionary key must be a string.
enum BinaryPropertyList {
    /// The deepest nesting of arrays and dictionaries accepted.
    static let maximumNesting = KeyedArchive.maximumNesting + 4

    /// Whether `data` starts like a binary property list.
    static func isBinary(_ data: Data) -> Bool { data.starts(with: Array("bplist00".utf8)) }

    /// Reads the list's top object.
    ///
    /// - Throws: ``SQLiteError`` `.corrupt` naming what is wrong, with `what` (for example
    ///   "Z_METADATA.Z_PLIST") at the start of the message.
    static func parse(_ data: Data, what: String) throws -> KeyedArchive.Value {
        var reader = Reader(bytes: Array(data), what: what)
        return try reader.readTop()
    }

    private struct Reader {
        let bytes: [UInt8]
        let what: String
        var offsets: [Int] = []
        var referenceSize = 1
        /// The end of the object area (the start of the offset table).
        var objectsEnd = 0
        var done: [Int: KeyedArchive.Value] = [:]
        var visiting: Set<Int> = []

        init(bytes: [UInt8], what: String) {
            self.bytes = bytes
            self.what = what
        }

        func corrupt(_ message: String) -> SQLiteError {
            SQLiteError(.corrupt, "\(what) is not a valid binary property list: \(message)")
        }

        /// A big-endian unsigned integer of `size` bytes at `offset`, inside `limit`.
        func unsigned(at offset: Int, size: Int, limit: Int) throws -> UInt64 {
            guard size >= 1, size <= 8, offset >= 0, offset <= limit - size else {
                throw corrupt("a \(size)-byte number at offset \(offset) runs past its area")
            }
            var value: UInt64 = 0
            for index in offset..<offset + size { value = value << 8 | UInt64(bytes[index]) }
            return value
        }

        mutating func readTop() throws -> KeyedArchive.Value {
            let count = bytes.count
            guard count >= 8 + 32, isBinary(Data(bytes.prefix(8))) else {
                throw corrupt("no bplist00 header and trailer")
            }
            let trailer = count - 32
            let offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            guard [1, 2, 4, 8].contains(offsetSize), [1, 2, 4, 8].contains(referenceSize) else {
                throw corrupt("offset size \(offsetSize) or reference size \(referenceSize) is not 1, 2, 4 or 8")
            }
            let objectCount = try unsigned(at: trailer + 8, size: 8, limit: count)
            let topObject = try unsigned(at: trailer + 16, size: 8, limit: count)
            let tableOffset = try unsigned(at: trailer + 24, size: 8, limit: count)
            // Each object takes at least one byte between the header and the offset table.
            guard objectCount >= 1, objectCount <= UInt64(count), topObject < objectCount, tableOffset >= 8,
                tableOffset <= UInt64(trailer), (UInt64(trailer) - tableOffset) / UInt64(offsetSize) >= objectCount,
                objectCount <= tableOffset - 8
            else {
                throw corrupt(
                    "\(objectCount) objects, top object \(topObject), offset table at \(tableOffset) do not fit \(count) bytes"
                )
            }
            objectsEnd = Int(tableOffset)
            offsets.reserveCapacity(Int(objectCount))
            for index in 0..<Int(objectCount) {
                let offset = try unsigned(at: objectsEnd + index * offsetSize, size: offsetSize, limit: trailer)
                guard offset >= 8, offset < tableOffset else {
                    throw corrupt("object \(index) is at offset \(offset), outside the objects")
                }
                offsets.append(Int(offset))
            }
            return try object(Int(topObject), depth: 0)
        }

        /// Object `index`, read once and remembered.
        mutating func object(_ index: Int, depth: Int) throws -> KeyedArchive.Value {
            if let value = done[index] { return value }
            guard index >= 0, index < offsets.count else {
                throw corrupt("a reference to object \(index) of \(offsets.count)")
            }
            guard depth <= maximumNesting else { throw corrupt("values nest deeper than \(maximumNesting) levels") }
            guard visiting.insert(index).inserted else { throw corrupt("object \(index) contains itself") }
            defer { visiting.remove(index) }
            let value = try read(at: offsets[index], depth: depth)
            done[index] = value
            return value
        }

        /// The count after a marker byte: its low nibble, or an integer object after it (0xF).
        func length(_ marker: UInt8, at offset: Int) throws -> (count: Int, start: Int) {
            let info = Int(marker & 0x0F)
            guard info == 0x0F else { return (info, offset + 1) }
            guard offset + 1 < objectsEnd else { throw corrupt("a length at offset \(offset) runs past the objects") }
            let intMarker = bytes[offset + 1]
            let size = 1 << Int(intMarker & 0x0F)
            guard intMarker & 0xF0 == 0x10, size <= 8 else {
                throw corrupt("a length at offset \(offset) is not an integer")
            }
            let value = try unsigned(at: offset + 2, size: size, limit: objectsEnd)
            guard value <= UInt64(objectsEnd) else {
                throw corrupt("a length of \(value) at offset \(offset) exceeds the data")
            }
            return (Int(value), offset + 2 + size)
        }

        /// The bytes `start..<start + count * width`, checked against the object area.
        func span(_ start: Int, _ count: Int, width: Int) throws -> Range<Int> {
            let (size, overflow) = count.multipliedReportingOverflow(by: width)
            guard !overflow, start <= objectsEnd, size <= objectsEnd - start else {
                throw corrupt("\(count) items of \(width) bytes at offset \(start) run past the objects")
            }
            return start..<start + size
        }

        mutating func references(_ range: Range<Int>) throws -> [Int] {
            try stride(from: range.lowerBound, to: range.upperBound, by: referenceSize).map {
                Int(try unsigned(at: $0, size: referenceSize, limit: objectsEnd))
            }
        }

        mutating func read(at offset: Int, depth: Int) throws -> KeyedArchive.Value {
            let marker = bytes[offset]
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default:
                    throw corrupt(
                        "marker 0x\(String(marker, radix: 16)) at offset \(offset) is not a value Strata reads")
                }
            case 0x1:
                let size = 1 << Int(marker & 0x0F)
                if size == 16 {
                    // 128-bit integers: only values that fit 64 bits (the high half zero).
                    let high = try unsigned(at: offset + 1, size: 8, limit: objectsEnd)
                    let low = try unsigned(at: offset + 9, size: 8, limit: objectsEnd)
                    guard high == 0, low <= UInt64(Int64.max) else {
                        throw corrupt("an integer at offset \(offset) is larger than 64 bits")
                    }
                    return .integer(Int64(low))
                }
                guard size <= 8 else { throw corrupt("an integer of \(size) bytes at offset \(offset)") }
                let raw = try unsigned(at: offset + 1, size: size, limit: objectsEnd)
                // 8-byte integers are signed; shorter ones unsigned.
                return .integer(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
            case 0x2:
                switch marker & 0x0F {
                case 2:
                    return .real(
                        Double(Float(bitPattern: UInt32(try unsigned(at: offset + 1, size: 4, limit: objectsEnd)))))
                case 3: return .real(Double(bitPattern: try unsigned(at: offset + 1, size: 8, limit: objectsEnd)))
                default: throw corrupt("a real of unknown size at offset \(offset)")
                }
            case 0x3:
                guard marker == 0x33 else { throw corrupt("a date of unknown size at offset \(offset)") }
                let seconds = Double(bitPattern: try unsigned(at: offset + 1, size: 8, limit: objectsEnd))
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case 0x4:
                let (count, start) = try length(marker, at: offset)
                return .data(Data(bytes[try span(start, count, width: 1)]))
            case 0x5, 0x7:
                let (count, start) = try length(marker, at: offset)
                return .string(String(decoding: bytes[try span(start, count, width: 1)], as: UTF8.self))
            case 0x6:
                let (count, start) = try length(marker, at: offset)
                let range = try span(start, count, width: 2)
                let units = stride(from: range.lowerBound, to: range.upperBound, by: 2).map {
                    UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1])
                }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                let size = Int(marker & 0x0F) + 1
                guard size <= 8 else { throw corrupt("a reference of \(size) bytes at offset \(offset)") }
                let value = try unsigned(at: offset + 1, size: size, limit: objectsEnd)
                guard value <= UInt64(Int32.max) else { throw corrupt("a reference to object \(value)") }
                return .uid(Int(value))
            case 0xA, 0xB, 0xC:
                let (count, start) = try length(marker, at: offset)
                let elements = try references(try span(start, count, width: referenceSize))
                return .array(try elements.map { try object($0, depth: depth + 1) })
            case 0xD:
                let (count, start) = try length(marker, at: offset)
                let keys = try references(try span(start, count, width: referenceSize))
                let values = try references(try span(start + count * referenceSize, count, width: referenceSize))
                var entries: [String: KeyedArchive.Value] = [:]
                entries.reserveCapacity(count)
                for (key, value) in zip(keys, values) {
                    guard case .string(let name) = try object(key, depth: depth + 1) else {
                        throw corrupt("a dictionary key at offset \(offset) is not a string")
                    }
                    entries[name] = try object(value, depth: depth + 1)
                }
                return .dictionary(entries)
            default:
                throw corrupt("marker 0x\(String(marker, radix: 16)) at offset \(offset) is not a property-list value")
            }
        }
    }
}
