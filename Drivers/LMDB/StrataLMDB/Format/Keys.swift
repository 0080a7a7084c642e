import Foundation
import Strata

/// Key encodings of the LMDB layout. Every key is big-endian so LMDB's byte order is numeric
/// order (docs/formats/lmdb.md, "Keys").
enum Keys {
    /// A row key: entity number (u32 BE), then primary key (u64 BE with the sign bit flipped, so
    /// negative keys, never stored, would still sort first).
    static func row(_ id: RowID) -> [UInt8] {
        var writer = ByteWriter(capacity: Keys.rowIDSize)
        appendRowID(id, to: &writer)
        return writer.bytes
    }

    /// The size of a row key's entity number (u32 BE); its primary key follows.
    static let entityNumberSize = 4
    /// The size of an encoded row ID: the entity number (4) and the primary key (8).
    static let rowIDSize = entityNumberSize + 8

    /// The primary key as stored: its sign bit flipped, so the unsigned big-endian order of the
    /// bytes is the signed order of the keys.
    @inline(__always) private static func orderedKey(_ primaryKey: Int64) -> UInt64 {
        UInt64(bitPattern: primaryKey) ^ (1 << 63)
    }

    /// The primary key from its stored form (the inverse of ``orderedKey(_:)``).
    @inline(__always) private static func primaryKey(_ ordered: UInt64) -> Int64 {
        Int64(bitPattern: ordered ^ (1 << 63))
    }

    /// Appends the encoded row ID (``storeRowID(_:into:at:)``, the one encoder) to `writer`.
    static func appendRowID(_ id: RowID, to writer: inout ByteWriter) {
        let start = writer.bytes.count
        writer.appendZeros(rowIDSize)
        writer.bytes.withUnsafeMutableBytes { storeRowID(id, into: $0, at: start) }
    }

    /// Stores the encoded row ID at `offset` of `bytes`, which has room for ``rowIDSize`` bytes there.
    @inline(__always) static func storeRowID(_ id: RowID, into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        bytes.storeBytes(of: UInt32(bitPattern: id.entity).bigEndian, toByteOffset: offset, as: UInt32.self)
        bytes.storeBytes(
            of: orderedKey(id.primaryKey).bigEndian, toByteOffset: offset + entityNumberSize, as: UInt64.self)
    }

    /// Reads an encoded row ID (the buffer decoder below is the one decoder).
    static func rowID(_ reader: inout ByteReader) throws -> RowID {
        try rowID(try reader.take(rowIDSize))
    }

    /// Decodes a row ID of exactly ``rowIDSize`` bytes.
    static func rowID(_ buffer: UnsafeRawBufferPointer) throws -> RowID {
        guard buffer.count == rowIDSize else {
            throw FormatError("a row key has \(buffer.count) bytes, not \(rowIDSize)")
        }
        return rowID(in: buffer, at: 0)
    }

    /// Decodes the row ID at `offset` of `buffer`; the caller has checked that ``rowIDSize``
    /// bytes follow it.
    @inline(__always) static func rowID(in buffer: UnsafeRawBufferPointer, at offset: Int) -> RowID {
        let entity = Int32(
            bitPattern: UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        let key = primaryKey(
            UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: offset + entityNumberSize, as: UInt64.self)))
        return RowID(entity: entity, primaryKey: key)
    }

    /// The first key of an entity's rows (primary key Int64.min).
    static func entityStart(_ entity: Int32) -> [UInt8] { row(RowID(entity: entity, primaryKey: .min)) }

    /// The prefix every row key of an entity starts with: its entity number.
    static func entityPrefix(_ entity: Int32) -> [UInt8] { Array(entityStart(entity).prefix(entityNumberSize)) }

    /// A relationship key with a row: `rel` (u32 BE) then the row ID (refs, links and orders keys).
    static func relationship(_ rel: UInt32, _ id: RowID) -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + rowIDSize)
        writer.appendBigEndian(rel)
        appendRowID(id, to: &writer)
        return writer.bytes
    }

    /// The longest index key kept; longer encodings are cut here (entries then name a superset of
    /// rows, which the driver filters by evaluating the predicate on the rows).
    static let maximumIndexKey = 400

    /// An index key: the index id (u32 BE), then each value in an order-preserving encoding.
    static func index(_ id: UInt32, _ values: [StoreValue]) -> [UInt8] {
        var writer = ByteWriter(capacity: 32)
        writer.appendBigEndian(id)
        for value in values { appendOrdered(value, to: &writer) }
        if writer.bytes.count > maximumIndexKey { writer.bytes.removeLast(writer.bytes.count - maximumIndexKey) }
        return writer.bytes
    }

    /// The prefix every key of index `id` starts with.
    static func indexPrefix(_ id: UInt32) -> [UInt8] {
        var writer = ByteWriter(capacity: 4)
        writer.appendBigEndian(id)
        return writer.bytes
    }

    /// Order-preserving encoding of one value: a tag byte, then a body whose byte order is the
    /// predicate order of values of that kind (for strings: NFC scalars, as the core compares).
    static func appendOrdered(_ value: StoreValue, to writer: inout ByteWriter) {
        switch value {
        case .null, .unfetched, .references:
            writer.append(0x00)
        case .bool(let flag):
            writer.append(0x10)
            writer.appendBigEndian(UInt64(flag ? 1 : 0) ^ (1 << 63))
        case .integer(let number):
            writer.append(0x10)
            writer.appendBigEndian(UInt64(bitPattern: number) ^ (1 << 63))
        case .double(let number):
            writer.append(0x20)
            writer.appendBigEndian(orderedBits(number))
        case .date(let date):
            writer.append(0x20)
            writer.appendBigEndian(orderedBits(date.timeIntervalSinceReferenceDate))
        case .decimal(let decimal):
            writer.append(0x28)
            appendEscaped(Array(decimal.description.utf8), to: &writer)
        case .string(let string):
            writer.append(0x30)
            appendEscaped(Array(string.precomposedStringWithCanonicalMapping.utf8), to: &writer)
        case .uri(let url):
            writer.append(0x38)
            appendEscaped(Array(url.absoluteString.utf8), to: &writer)
        case .binary(let data):
            writer.append(0x40)
            appendEscaped(Array(data), to: &writer)
        case .uuid(let uuid):
            writer.append(0x48)
            withUnsafeBytes(of: uuid.uuid) { writer.append(contentsOf: $0) }
        case .reference(let id):
            writer.append(0x50)
            appendRowID(id, to: &writer)
        }
    }

    /// Doubles mapped to unsigned integers in numeric order (-0 and +0 alike; NaN last).
    static func orderedBits(_ value: Double) -> UInt64 {
        if value.isNaN { return .max }
        let bits = (value == 0 ? 0.0 : value).bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    /// Bytes with 0x00 written as 0x00 0x01, ended by 0x00 0x00: order-preserving and self-delimiting.
    private static func appendEscaped(_ bytes: [UInt8], to writer: inout ByteWriter) {
        for byte in bytes {
            writer.append(byte)
            if byte == 0 { writer.append(0x01) }
        }
        writer.append(0x00)
        writer.append(0x00)
    }
}
