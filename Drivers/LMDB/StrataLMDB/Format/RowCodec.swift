import Foundation
import Strata

/// The binary row encoding, version 1 (docs/formats/lmdb.md, "Row body"):
///
/// ```
/// u8 encoding version (1) | u64 LE row version | u16 LE slot count | presence bitmap | fields…
/// ```
/// Bit `i` of the bitmap (byte `i / 8`, bit `i % 8`) is set when slot `i` holds a value; fields
/// follow in slot order, each in the fixed-width or length-prefixed form of its attribute type.
/// To-many slots and transient slots are never present.
enum RowCodec {
    static let encodingVersion: UInt8 = 1

    /// The fixed header before the presence bitmap (docs/formats/lmdb.md, "Row body").
    enum Header {
        /// The encoding version byte.
        static let encodingVersionOffset = 0
        /// The row version, u64 little-endian.
        static let rowVersionOffset = 1
        /// The slot count, u16 little-endian.
        static let slotCountOffset = 9
        /// The header's size: the presence bitmap starts here.
        static let size = 11
    }

    /// The size of the presence bitmap of a row of `slotCount` slots (one bit per slot).
    @inline(__always) static func bitmapSize(_ slotCount: Int) -> Int { (slotCount + 7) >> 3 }

    /// Where slot `slot`'s presence bit lies: its byte from the bitmap's start, and its mask.
    @inline(__always) static func presenceBit(_ slot: Int) -> (byte: Int, mask: UInt8) {
        (slot >> 3, 1 << UInt8(slot & 7))
    }

    /// Whether slot `slot` holds a value in the row `buffer` (whose header was checked).
    @inline(__always) static func isPresent(_ slot: Int, in buffer: UnsafeRawBufferPointer) -> Bool {
        let bit = presenceBit(slot)
        return buffer[Header.size + bit.byte] & bit.mask != 0
    }

    /// Encodes `values` of a row of an entity whose slots are `layout`.
    ///
    /// - Throws: ``FormatError`` when a value's case does not fit its attribute type.
    static func encode(version: RowVersion, values: [StoreValue], layout: [DatabaseLayout.Slot]) throws -> [UInt8] {
        var writer = ByteWriter(capacity: 16 + values.count * 9)
        try encode(version: version, values: values, layout: layout, into: &writer)
        return writer.bytes
    }

    /// Encodes a row into `writer`, replacing what it held (reuse one writer across rows).
    static func encode(
        version: RowVersion, values: [StoreValue], layout: [DatabaseLayout.Slot], into writer: inout ByteWriter
    ) throws {
        guard values.count == layout.count else {
            throw FormatError("the row has \(values.count) values; its entity has \(layout.count) properties")
        }
        writer.bytes.removeAll(keepingCapacity: true)
        writer.append(encodingVersion)
        writer.appendLittleEndian(UInt64(bitPattern: version))
        writer.appendLittleEndian(UInt16(layout.count))
        let bitmapStart = writer.bytes.count
        writer.appendZeros(bitmapSize(layout.count))
        for slot in 0..<layout.count {
            let value = values[slot]
            if value.isNull { continue }
            switch layout[slot] {
            case .transient, .reverse, .links: continue
            case .toOne:
                guard case .reference(let id) = value else { throw mismatch(value, slot, "an object reference") }
                Keys.appendRowID(id, to: &writer)
            case .attribute(let type):
                try encode(value, type: type, slot: slot, into: &writer)
            }
            let bit = presenceBit(slot)
            writer.bytes[bitmapStart + bit.byte] |= bit.mask
        }
    }

    private static func encode(_ value: StoreValue, type: AttributeType, slot: Int, into writer: inout ByteWriter)
        throws
    {
        switch (type, value) {
        case (.integer16, .integer(let n)):
            guard let narrow = Int16(exactly: n) else {
                throw FormatError("slot \(slot): \(n) does not fit Integer 16")
            }
            writer.appendLittleEndian(narrow)
        case (.integer32, .integer(let n)):
            guard let narrow = Int32(exactly: n) else {
                throw FormatError("slot \(slot): \(n) does not fit Integer 32")
            }
            writer.appendLittleEndian(narrow)
        case (.integer64, .integer(let n)): writer.appendLittleEndian(n)
        case (.double, .double(let d)), (.float, .double(let d)): writer.appendLittleEndian(d.bitPattern)
        case (.boolean, .bool(let b)): writer.append(b ? 1 : 0)
        case (.date, .date(let date)): writer.appendLittleEndian(date.timeIntervalSinceReferenceDate.bitPattern)
        case (.decimal, .decimal(let decimal)): writer.appendLengthPrefixed(decimal.description)
        case (.string, .string(let s)): writer.appendLengthPrefixed(s)
        case (.binaryData, .binary(let data)), (.transformable, .binary(let data)), (.objectID, .binary(let data)),
            (.undefined, .binary(let data)):
            writer.appendLengthPrefixed(data)
        case (.uuid, .uuid(let uuid)): withUnsafeBytes(of: uuid.uuid) { writer.append(contentsOf: $0) }
        case (.uri, .uri(let url)): writer.appendLengthPrefixed(url.absoluteString)
        default: throw mismatch(value, slot, type.xcodeName)
        }
    }

    private static func mismatch(_ value: StoreValue, _ slot: Int, _ expected: String) -> FormatError {
        FormatError(
            "slot \(slot) holds \(value.kindName.withIndefiniteArticle), which a \(expected) property cannot store")
    }

    /// The row version alone, without decoding fields.
    static func version(of buffer: UnsafeRawBufferPointer) throws -> RowVersion {
        var reader = ByteReader(buffer)
        let format = try reader.byte()
        guard format == encodingVersion else { throw FormatError("unknown row encoding version \(format)") }
        return Int64(bitPattern: try reader.littleEndian(UInt64.self))
    }

    /// Decodes a row body straight from borrowed memory.
    ///
    /// - Throws: ``FormatError`` for any malformed byte: a wrong version, a slot count that does
    ///   not fit the entity, a set bit on a slot that cannot hold a value, a truncated field,
    ///   invalid UTF-8, an invalid decimal or URI, or trailing bytes.
    static func decode(_ buffer: UnsafeRawBufferPointer, id: RowID, layout: [DatabaseLayout.Slot]) throws -> RowSnapshot
    {
        var reader = ByteReader(buffer)
        let format = try reader.byte()
        guard format == encodingVersion else { throw FormatError("unknown row encoding version \(format)") }
        let version = Int64(bitPattern: try reader.littleEndian(UInt64.self))
        let count = Int(try reader.littleEndian(UInt16.self))
        guard count == layout.count else {
            throw FormatError("the row has \(count) slots; its entity has \(layout.count) properties")
        }
        let bitmap = try reader.bytes(bitmapSize(count))
        var values = [StoreValue]()
        values.reserveCapacity(count)
        for slot in 0..<count {
            let present = bitmap[presenceBit(slot).byte] & presenceBit(slot).mask != 0
            switch layout[slot] {
            case .reverse, .links:
                if present { throw FormatError("slot \(slot) is a to-many relationship but is marked present") }
                values.append(.unfetched)
            case .transient:
                if present { throw FormatError("slot \(slot) is transient but is marked present") }
                values.append(.null)
            case .toOne:
                values.append(present ? .reference(try Keys.rowID(&reader)) : .null)
            case .attribute(let type):
                values.append(present ? try decode(type, slot: slot, from: &reader) : .null)
            }
        }
        guard reader.isAtEnd else { throw FormatError("\(reader.remaining) bytes follow the last field") }
        return RowSnapshot(id: id, version: version, values: values)
    }

    static func decode(_ type: AttributeType, slot: Int, from reader: inout ByteReader) throws -> StoreValue {
        switch type {
        case .integer16: return .integer(Int64(try reader.littleEndian(Int16.self)))
        case .integer32: return .integer(Int64(try reader.littleEndian(Int32.self)))
        case .integer64: return .integer(try reader.littleEndian(Int64.self))
        case .double, .float: return .double(try reader.double())
        case .boolean:
            let byte = try reader.byte()
            guard byte <= 1 else { throw FormatError("slot \(slot): a Boolean byte is \(byte)") }
            return .bool(byte == 1)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try reader.double()))
        case .decimal:
            let text = try reader.string()
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw FormatError("slot \(slot): '\(text.prefix(40))' is not a decimal")
            }
            return .decimal(decimal)
        case .string: return .string(try reader.string())
        case .binaryData, .transformable, .objectID, .undefined, .composite: return .binary(try reader.data())
        case .uuid:
            let raw = try reader.bytes(16)
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
            return .uuid(UUID(uuid: uuid))
        case .uri:
            let text = try reader.string()
            guard let url = URL(string: text) else {
                throw FormatError("slot \(slot): '\(text.prefix(40))' is not a URI")
            }
            return .uri(url)
        }
    }
}

extension String {
    /// "a string", "an integer".
    var withIndefiniteArticle: String {
        guard let first = first else { return self }
        return ("aeiou".contains(first.lowercased()) ? "an " : "a ") + self
    }
}
