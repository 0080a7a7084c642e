import Foundation
import Strata

/// Encodes metadata values and the small records of the `meta` database (docs/formats/lmdb.md,
/// "Metadata values"). A value is a tag byte then its body:
///
/// ```
/// 0x01 string  u32 length, UTF-8     0x05 data   u32 length, bytes
/// 0x02 integer i64 LE                0x06 date   f64 LE seconds since 2001
/// 0x03 double  f64 LE                0x07 array  u32 count, values
/// 0x04 bool    u8 0/1                0x08 dict   u32 count, (string key, value) pairs sorted by key
/// ```
enum MetadataCodec {
    static func encode(_ value: MetadataValue, into writer: inout ByteWriter) {
        switch value {
        case .string(let s):
            writer.append(0x01)
            writer.appendLengthPrefixed(s)
        case .integer(let n):
            writer.append(0x02)
            writer.appendLittleEndian(n)
        case .double(let d):
            writer.append(0x03)
            writer.appendLittleEndian(d.bitPattern)
        case .bool(let b):
            writer.append(0x04)
            writer.append(b ? 1 : 0)
        case .data(let d):
            writer.append(0x05)
            writer.appendLengthPrefixed(d)
        case .date(let date):
            writer.append(0x06)
            writer.appendLittleEndian(date.timeIntervalSinceReferenceDate.bitPattern)
        case .array(let items):
            writer.append(0x07)
            writer.appendLittleEndian(UInt32(items.count))
            for item in items { encode(item, into: &writer) }
        case .dictionary(let entries):
            writer.append(0x08)
            writer.appendLittleEndian(UInt32(entries.count))
            for key in entries.keys.sorted() {
                writer.appendLengthPrefixed(key)
                // The key comes from the dictionary itself.
                encode(entries[key]!, into: &writer)
            }
        }
    }

    static func decode(_ reader: inout ByteReader, depth: Int = 0) throws -> MetadataValue {
        guard depth < 64 else { throw FormatError("metadata values nest more than 64 levels deep") }
        let tag = try reader.byte()
        switch tag {
        case 0x01: return .string(try reader.string())
        case 0x02: return .integer(try reader.littleEndian(Int64.self))
        case 0x03: return .double(try reader.double())
        case 0x04:
            let byte = try reader.byte()
            guard byte <= 1 else { throw FormatError("a metadata Boolean byte is \(byte)") }
            return .bool(byte == 1)
        case 0x05: return .data(try reader.data())
        case 0x06: return .date(Date(timeIntervalSinceReferenceDate: try reader.double()))
        case 0x07:
            let count = Int(try reader.littleEndian(UInt32.self))
            guard count <= reader.remaining else { throw FormatError("a metadata array claims \(count) items") }
            var items: [MetadataValue] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try decode(&reader, depth: depth + 1)) }
            return .array(items)
        case 0x08:
            let count = Int(try reader.littleEndian(UInt32.self))
            guard count <= reader.remaining else { throw FormatError("a metadata dictionary claims \(count) entries") }
            var entries: [String: MetadataValue] = [:]
            for _ in 0..<count {
                let key = try reader.string()
                entries[key] = try decode(&reader, depth: depth + 1)
            }
            return .dictionary(entries)
        default:
            throw FormatError("unknown metadata value tag 0x\(String(tag, radix: 16))")
        }
    }

    static func encode(_ value: MetadataValue) -> [UInt8] {
        var writer = ByteWriter()
        encode(value, into: &writer)
        return writer.bytes
    }

    static func decode(_ buffer: UnsafeRawBufferPointer) throws -> MetadataValue {
        var reader = ByteReader(buffer)
        let value = try decode(&reader)
        guard reader.isAtEnd else { throw FormatError("\(reader.remaining) bytes follow a metadata value") }
        return value
    }

    /// The version hashes as a dictionary value.
    static func hashes(_ hashes: [String: Data]) -> MetadataValue { .dictionary(hashes.mapValues { .data($0) }) }

    static func hashes(from value: MetadataValue) throws -> [String: Data] {
        guard case .dictionary(let entries) = value else { throw FormatError("version hashes are not a dictionary") }
        return try entries.mapValues {
            guard let data = $0.dataValue else { throw FormatError("a version hash is not data") }
            return data
        }
    }
}
