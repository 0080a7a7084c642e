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
        /// Per slot: the width of a fixed-width field, -1 for a length-prefixed one, 0 for a slot
        /// that is never stored.
        let widths: [Int]
        /// With ``read(_:layout:into:complete:)``'s `complete: false`, the walk stops after this slot.
        let lastWanted: Int

        /// Prepares a reader of the slots of `layout` that decodes `wanted`.
        init(layout: [DatabaseLayout.Slot], wanted: [Int]) {
            let slotCount = layout.count
            values = Array(repeating: .unfetched, count: slotCount)
            offsets = Array(repeating: -1, count: slotCount)
            var mask = Array(repeating: false, count: slotCount)
            for slot in wanted where slot >= 0 && slot < slotCount { mask[slot] = true }
            self.wanted = mask
            lastWanted = mask.lastIndex(of: true) ?? -1
            widths = layout.map { kind in
                switch kind {
                case .transient, .reverse, .links: 0
                case .toOne, .attribute: RowCodec.fixedWidth(kind) ?? -1
                }
            }
        }
    }

    /// The width of a fixed-width field, or `nil` for length-prefixed and unstored slots.
    static func fixedWidth(_ slot: DatabaseLayout.Slot) -> Int? {
        switch slot {
        case .toOne: return Keys.rowIDSize
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

    /// Walks `buffer`, recording field offsets and decoding the wanted slots into `fields`.
    ///
    /// - Parameter complete: `true` walks every field and checks that no bytes follow (every offset
    ///   is then known); `false` stops after the last wanted slot, for scans that only test a few
    ///   fields (a row that is then used whole is decoded, and checked, by ``decode(_:id:layout:)``).
    /// - Throws: ``FormatError`` for malformed bytes in the part walked, as ``decode(_:id:layout:)`` does.
    static func read(
        _ buffer: UnsafeRawBufferPointer, layout: [DatabaseLayout.Slot], into fields: inout Fields,
        complete: Bool = true
    ) throws {
        var reader = ByteReader(buffer)
        let format = try reader.byte()
        guard format == encodingVersion else { throw FormatError("unknown row encoding version \(format)") }
        fields.version = Int64(bitPattern: try reader.littleEndian(UInt64.self))
        let count = Int(try reader.littleEndian(UInt16.self))
        guard count == layout.count, count == fields.offsets.count else {
            throw FormatError("the row has \(count) slots; its entity has \(layout.count) properties")
        }
        let bitmap = try reader.bytes(RowCodec.bitmapSize(count))
        let end = complete ? count : fields.lastWanted + 1
        for slot in 0..<end {
            let present = bitmap[RowCodec.presenceBit(slot).byte] & RowCodec.presenceBit(slot).mask != 0
            let width = fields.widths[slot]
            guard present else {
                fields.offsets[slot] = -1
                if fields.wanted[slot] && width != 0 { fields.values[slot] = .null }
                if fields.wanted[slot], case .transient = layout[slot] { fields.values[slot] = .null }
                continue
            }
            guard width != 0 else {
                if case .transient = layout[slot] {
                    throw FormatError("slot \(slot) is transient but is marked present")
                }
                throw FormatError("slot \(slot) is a to-many relationship but is marked present")
            }
            fields.offsets[slot] = reader.offset
            if fields.wanted[slot] {
                switch layout[slot] {
                case .toOne: fields.values[slot] = .reference(try Keys.rowID(&reader))
                case .attribute(let type): fields.values[slot] = try decode(type, slot: slot, from: &reader)
                default: break  // width != 0: only to-one and attribute slots get here
                }
            } else if width > 0 {
                _ = try reader.bytes(width)
            } else {
                _ = try reader.lengthPrefixed()
            }
        }
        if complete, !reader.isAtEnd { throw FormatError("\(reader.remaining) bytes follow the last field") }
    }

    /// Overwrites the fixed-width field of `slot` at `offset` in an encoded row with `value`.
    ///
    /// - Returns: `false` when the value's case does not fit the slot's fixed-width form (the
    ///   caller then re-encodes the whole row).
    static func patch(
        _ bytes: UnsafeMutableRawBufferPointer, slot kind: DatabaseLayout.Slot, at offset: Int, with value: StoreValue
    ) -> Bool {
        guard case .attribute(let type) = kind, let width = fixedWidth(kind), offset >= 0, offset + width <= bytes.count
        else {
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
            bytes.storeBytes(
                of: date.timeIntervalSinceReferenceDate.bitPattern.littleEndian, toByteOffset: offset, as: UInt64.self)
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
