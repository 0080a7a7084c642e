import Foundation
import Strata

extension RowCodec {
    /// Writes into the front of `buffer` (grown when too small) the stored row `stored` with its
    /// version set to `version` and the fields of the `changed` slots set from `values`, and
    /// returns its size; the other bytes are `stored`'s.
    ///
    /// These are the bytes ``encode(version:values:plan:into:)`` writes for `values` when `stored`
    /// holds `values` in every slot but the changed ones, as an update's row does: its expected
    /// version is the stored one, and a row's version changes with every change of its values.
    /// Only a change of a fixed-width field from a value to another value is patched; `nil` when a
    /// changed slot is empty before or after, is a string or another variable-width field, a
    /// value does not fit its field, or `stored` is not a row of this plan's shape as far as the
    /// walk reads it: the caller then encodes the whole row, which reports what is wrong.
    static func patch(
        _ stored: UnsafeRawBufferPointer, version: RowVersion, values: [StoreValue], changed: [Int], plan: Plan,
        into buffer: inout [UInt8]
    ) -> Int? {
        let count = plan.kinds.count
        let bitmapStart = Header.size
        guard values.count == count, !changed.isEmpty, stored.count >= bitmapStart + bitmapSize(count),
            stored.load(fromByteOffset: Header.encodingVersionOffset, as: UInt8.self) == encodingVersion,
            UInt16(littleEndian: stored.loadUnaligned(fromByteOffset: Header.slotCountOffset, as: UInt16.self))
                == count
        else { return nil }
        func present(_ slot: Int) -> Bool {
            let bit = presenceBit(slot)
            return stored[bitmapStart + bit.byte] & bit.mask != 0
        }
        var last = -1
        for slot in changed {
            guard slot >= 0, slot < count, present(slot), plan.kinds[slot].fixedWidth != nil, !values[slot].isNull
            else { return nil }
            last = max(last, slot)
        }
        if buffer.count < stored.count { buffer = [UInt8](repeating: 0, count: max(stored.count, buffer.count * 2)) }
        return buffer.withUnsafeMutableBytes { bytes -> Int? in
            // Both are at least a header long (checked above), so neither base address is nil.
            bytes.baseAddress!.copyMemory(from: stored.baseAddress!, byteCount: stored.count)
            bytes.storeBytes(
                of: UInt64(bitPattern: version).littleEndian, toByteOffset: Header.rowVersionOffset, as: UInt64.self)
            // Walk the present fields up to the last changed slot, writing each changed one.
            var offset = bitmapStart + bitmapSize(count)
            for slot in 0...last where present(slot) {
                let kind = plan.kinds[slot]
                guard let width = plan.presentWidth(kind, in: stored, at: offset), offset + width <= stored.count
                else { return nil }
                if changed.contains(slot) {
                    guard store(values[slot], kind, into: bytes, at: offset) else { return nil }
                }
                offset += width
            }
            return stored.count
        }
    }

    /// Stores `value` as a field of `kind` (fixed-width) at `offset`; `false` when it is not a
    /// value of that kind or does not fit it.
    private static func store(
        _ value: StoreValue, _ kind: Plan.Kind, into bytes: UnsafeMutableRawBufferPointer, at offset: Int
    ) -> Bool {
        switch (kind, value) {
        case (.int16, .integer(let n)):
            guard let narrow = Int16(exactly: n) else { return false }
            bytes.storeBytes(of: narrow.littleEndian, toByteOffset: offset, as: Int16.self)
        case (.int32, .integer(let n)):
            guard let narrow = Int32(exactly: n) else { return false }
            bytes.storeBytes(of: narrow.littleEndian, toByteOffset: offset, as: Int32.self)
        case (.int64, .integer(let n)):
            bytes.storeBytes(of: n.littleEndian, toByteOffset: offset, as: Int64.self)
        case (.double, .double(let d)):
            bytes.storeBytes(of: d.bitPattern.littleEndian, toByteOffset: offset, as: UInt64.self)
        case (.date, .date(let date)):
            bytes.storeBytes(
                of: date.timeIntervalSinceReferenceDate.bitPattern.littleEndian, toByteOffset: offset, as: UInt64.self)
        case (.boolean, .bool(let flag)):
            bytes[offset] = flag ? 1 : 0
        case (.toOne, .reference(let id)):
            Keys.storeRowID(id, into: bytes, at: offset)
        default:
            return false
        }
        return true
    }
}
