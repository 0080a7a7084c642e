import Foundation
import Strata

/// Reading some fields of a row body without decoding the rest: scans (predicates over a few
/// attributes) and batch updates (patching fixed-width fields where they lie).
///
/// The walk checks the same structure as ``RowCodec/decode(_:id:layout:)`` (version byte, slot
/// count, presence bits only on stored slots, every field inside the buffer, no trailing bytes);
/// fields not asked for are skipped by their width or length prefix, so their bytes (string
/// contents, blobs) are not validated or copied.
extension RowCodec {
    /// Where the fields of one row body are, and the values of the slots asked for.
    ///
    /// Reuse one instance across rows of an entity: its arrays are overwritten, not reallocated.
    struct Fields {
        /// The row version.
        var version: RowVersion = 0
        /// One value per slot: decoded for wanted slots (`.null` when absent), ``StoreValue/unfetched``
        /// for the others.
        var values: [StoreValue]
        /// The byte offset of each slot's field, or -1 when the slot holds no value.
        var offsets: [Int]
        /// The slots to decode.
        let wanted: [Bool]

        /// Prepares a reader of `slotCount` slots that decodes `wanted`.
        init(slotCount: Int, wanted: [Int]) {
            values = Array(repeating: .unfetched, count: slotCount)
            offsets = Array(repeating: -1, count: slotCount)
            var mask = Array(repeating: false, count: slotCount)
            for slot in wanted where slot >= 0 && slot < slotCount { mask[slot] = true }
            self.wanted = mask
        }
    }

    /// The width of a fixed-width field, or `nil` for length-prefixed and unstored slots.
    static func fixedWidth(_ slot: StoreLayout.Slot) -> Int? {
        switch slot {
        case .toOne: return 12
        case .attribute(let type):
            switch type {
            case .integer16: return 2
            case .integer32: return 4
            case .integer64, .double, .float, .date: return 8
            case .boolean: return 1
            case .uuid: return 16
            default: return nil
            }
        default: return nil
        }
    }

    /// Walks `buffer`, recording every field's offset and decoding the wanted slots into `fields`.
    ///
    /// - Throws: ``FormatError`` for malformed bytes, as ``decode(_:id:layout:)`` does.
    static func read(_ buffer: UnsafeRawBufferPointer, layout: [StoreLayout.Slot], into fields: inout Fields) throws {
        var reader = ByteReader(buffer)
        let format = try reader.byte()
        guard format == encodingVersion else { throw FormatError("unknown row encoding version \(format)") }
        fields.version = Int64(bitPattern: try reader.littleEndian(UInt64.self))
        let count = Int(try reader.littleEndian(UInt16.self))
        guard count == layout.count, count == fields.offsets.count else {
            throw FormatError("the row has \(count) slots; its entity has \(layout.count) properties")
        }
        let bitmap = try reader.bytes((count + 7) / 8)
        for slot in 0..<count {
            let present = bitmap[slot / 8] & (1 << UInt8(slot % 8)) != 0
            let kind = layout[slot]
            guard present else {
                fields.offsets[slot] = -1
                if fields.wanted[slot] {
                    if case .transient = kind { fields.values[slot] = .null } else if case .attribute = kind {
                        fields.values[slot] = .null
                    } else if case .toOne = kind { fields.values[slot] = .null }
                }
                continue
            }
            fields.offsets[slot] = reader.offset
            switch kind {
            case .reverse, .links: throw FormatError("slot \(slot) is a to-many relationship but is marked present")
            case .transient: throw FormatError("slot \(slot) is transient but is marked present")
            case .toOne:
                if fields.wanted[slot] { fields.values[slot] = .reference(try Keys.rowID(&reader)) } else { _ = try reader.bytes(12) }
            case .attribute(let type):
                if fields.wanted[slot] {
                    fields.values[slot] = try decode(type, slot: slot, from: &reader)
                } else if let width = fixedWidth(kind) {
                    _ = try reader.bytes(width)
                } else {
                    _ = try reader.lengthPrefixed()
                }
            }
        }
        guard reader.isAtEnd else { throw FormatError("\(reader.remaining) bytes follow the last field") }
    }

    /// Overwrites the fixed-width field of `slot` at `offset` in an encoded row with `value`.
    ///
    /// - Returns: `false` when the value's case does not fit the slot's fixed-width form (the
    ///   caller then re-encodes the whole row).
    static func patch(
        _ bytes: UnsafeMutableRawBufferPointer, slot kind: StoreLayout.Slot, at offset: Int, with value: StoreValue
    ) -> Bool {
        guard case .attribute(let type) = kind, let width = fixedWidth(kind), offset >= 0, offset + width <= bytes.count else {
            return false
        }
        switch (type, value) {
        case (.integer16, .integer(let n)):
            guard let narrow = Int16(exactly: n) else { return false }
            bytes.storeBytes(of: narrow.littleEndian, toByteOffset: offset, as: Int16.self)
        case (.integer32, .integer(let n)):
            guard let narrow = Int32(exactly: n) else { return false }
            bytes.storeBytes(of: narrow.littleEndian, toByteOffset: offset, as: Int32.self)
        case (.integer64, .integer(let n)): bytes.storeBytes(of: n.littleEndian, toByteOffset: offset, as: Int64.self)
        case (.double, .double(let d)), (.float, .double(let d)):
            bytes.storeBytes(of: d.bitPattern.littleEndian, toByteOffset: offset, as: UInt64.self)
        case (.date, .date(let date)):
            bytes.storeBytes(of: date.timeIntervalSinceReferenceDate.bitPattern.littleEndian, toByteOffset: offset, as: UInt64.self)
        case (.boolean, .bool(let b)): bytes.storeBytes(of: b ? 1 : 0, toByteOffset: offset, as: UInt8.self)
        default: return false
        }
        return true
    }

    /// Overwrites the row version of an encoded row.
    static func patchVersion(_ bytes: UnsafeMutableRawBufferPointer, _ version: RowVersion) {
        bytes.storeBytes(of: UInt64(bitPattern: version).littleEndian, toByteOffset: 1, as: UInt64.self)
    }
}
