import Foundation
import Strata

/// The fast row decoder: each slot's field kind worked out once per entity (``RowCodec/Plan``),
/// fixed-width fields loaded straight from the buffer.
///
/// ``RowCodec/decode(_:id:layout:)`` stays the reference: whenever the fast path meets anything
/// it does not expect it hands the row to the reference decoder, so both accept and reject
/// exactly the same bytes with the same errors (the format tests fuzz the two side by side).
extension RowCodec {
    /// How the fields of one entity's rows are read.
    struct Plan: Sendable {
        enum Kind: Sendable {
            case int16, int32, int64, double, boolean, date, string, other, toOne, transient, toMany

            /// The width of a fixed-width field of this kind, `nil` for the others.
            var fixedWidth: Int? {
                switch self {
                case .int16: 2
                case .int32: 4
                case .int64, .double, .date: 8
                case .boolean: 1
                case .toOne: 12
                case .string, .other, .transient, .toMany: nil
                }
            }
        }

        /// The width of the present field of `kind` at `offset` (a string's length prefix read),
        /// or `nil` when the walk cannot step over it (a kind the fast paths leave to the general
        /// reader, or a length prefix past the end).
        @inline(__always)
        func presentWidth(_ kind: Kind, in buffer: UnsafeRawBufferPointer, at offset: Int) -> Int? {
            if let width = kind.fixedWidth { return width }
            guard kind == .string, 4 <= buffer.count - offset else { return nil }
            return 4 + Int(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        }

        /// The slots, as the reference decoder takes them.
        let layout: [DatabaseLayout.Slot]
        let kinds: [Kind]

        init(_ layout: [DatabaseLayout.Slot]) {
            self.layout = layout
            kinds = layout.map { slot in
                switch slot {
                case .transient: .transient
                case .reverse, .links: .toMany
                case .toOne: .toOne
                case .attribute(let type):
                    switch type {
                    case .integer16: .int16
                    case .integer32: .int32
                    case .integer64: .int64
                    case .double, .float: .double
                    case .boolean: .boolean
                    case .date: .date
                    case .string: .string
                    default: .other
                    }
                }
            }
        }
    }

    /// Decodes a row body as ``decode(_:id:layout:)`` does, faster.
    static func decode(_ buffer: UnsafeRawBufferPointer, id: RowID, plan: Plan) throws -> RowSnapshot {
        if let row = fastDecode(buffer, id: id, plan: plan) { return row }
        return try decode(buffer, id: id, layout: plan.layout)
    }

    /// The row, or `nil` for anything the fast path leaves to the reference decoder (a kind it
    /// does not read, or bytes it does not expect). Not an error thrown: throwing allocates, and
    /// a row of such a kind met it every time.
    static func fastDecode(_ buffer: UnsafeRawBufferPointer, id: RowID, plan: Plan) -> RowSnapshot? {
        let count = plan.kinds.count
        let header = RowCodec.Header.size + RowCodec.bitmapSize(count)
        guard buffer.count >= header, buffer[RowCodec.Header.encodingVersionOffset] == encodingVersion,
            Int(
                UInt16(
                    littleEndian: buffer.loadUnaligned(fromByteOffset: RowCodec.Header.slotCountOffset, as: UInt16.self)
                )) == count
        else { return nil }
        let version = Int64(
            littleEndian: buffer.loadUnaligned(fromByteOffset: RowCodec.Header.rowVersionOffset, as: Int64.self))
        let end = buffer.count
        var offset = header
        // Appended to a reserved array: `Array(unsafeUninitializedCapacity:)` calls the standard
        // library's unspecialized buffer initializer, which looks up the storage class's generic
        // metadata on every call (a hash lookup per row), while `reserveCapacity` is specialized
        // here. On anything unexpected the array is dropped and the reference decoder takes over.
        var values = [StoreValue]()
        values.reserveCapacity(count)
        for slot in 0..<count {
            let kind = plan.kinds[slot]
            let value: StoreValue
            if !RowCodec.isPresent(slot, in: buffer) {
                value = kind == .toMany ? .unfetched : .null
            } else {
                // A string's 4-byte length prefix first.
                let width = kind == .string ? 4 : kind.fixedWidth ?? -1
                guard width >= 0, width <= end - offset else { return nil }
                let at = offset
                offset += width
                switch kind {
                case .int16:
                    value = .integer(
                        Int64(Int16(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: Int16.self))))
                case .int32:
                    value = .integer(
                        Int64(Int32(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: Int32.self))))
                case .int64:
                    value = .integer(Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: Int64.self)))
                case .double:
                    value = .double(
                        Double(
                            bitPattern: UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
                    )
                case .date:
                    let seconds = Double(
                        bitPattern: UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
                    value = .date(Date(timeIntervalSinceReferenceDate: seconds))
                case .boolean:
                    guard buffer[at] <= 1 else { return nil }
                    value = .bool(buffer[at] == 1)
                case .toOne:
                    // `width` is Keys.rowIDSize, and the bytes are there.
                    value = .reference(Keys.rowID(in: buffer, at: at))
                default:  // .string: a length, then the bytes
                    let length = Int(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
                    guard length <= end - offset else { return nil }
                    let raw = UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + length)])
                    offset += length
                    guard ByteReader.isASCII(raw) else { return nil }
                    value = .string(String(decoding: raw, as: UTF8.self))
                }
            }
            values.append(value)
        }
        guard offset == end else { return nil }
        return RowSnapshot(id: id, version: version, values: values)
    }
}

extension RowCodec.Plan {
    /// Reads the values of `wanted` slots into `values` (other slots untouched), walking the
    /// fields before them by width and length alone. `false` when the row holds anything the fast
    /// path does not expect; the caller then uses ``RowCodec/read(_:layout:into:complete:)``,
    /// which reports the problem precisely.
    func probe(_ buffer: UnsafeRawBufferPointer, wanted: [Bool], last: Int, into values: inout [StoreValue]) -> Bool {
        let count = kinds.count
        let header = RowCodec.Header.size + RowCodec.bitmapSize(count)
        guard last < count, buffer.count >= header,
            buffer[RowCodec.Header.encodingVersionOffset] == RowCodec.encodingVersion,
            Int(
                UInt16(
                    littleEndian: buffer.loadUnaligned(fromByteOffset: RowCodec.Header.slotCountOffset, as: UInt16.self)
                )) == count
        else { return false }
        let end = buffer.count
        var offset = header
        var slot = 0
        while slot <= last {
            let kind = kinds[slot]
            let present = RowCodec.isPresent(slot, in: buffer)
            if !present {
                if kind == .other { return false }
                if wanted[slot] { values[slot] = kind == .toMany ? .unfetched : .null }
                slot += 1
                continue
            }
            guard let width = presentWidth(kind, in: buffer, at: offset), width <= end - offset else { return false }
            if wanted[slot] {
                switch kind {
                case .int16:
                    values[slot] = .integer(
                        Int64(Int16(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Int16.self))))
                case .int32:
                    values[slot] = .integer(
                        Int64(Int32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self))))
                case .int64:
                    values[slot] = .integer(
                        Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Int64.self)))
                case .double:
                    values[slot] = .double(
                        Double(
                            bitPattern: UInt64(
                                littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))))
                case .date:
                    let seconds = Double(
                        bitPattern: UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                    values[slot] = .date(Date(timeIntervalSinceReferenceDate: seconds))
                case .boolean:
                    guard buffer[offset] <= 1 else { return false }
                    values[slot] = .bool(buffer[offset] == 1)
                default: return false  // strings and references are decoded by the full reader
                }
            }
            offset += width
            slot += 1
        }
        return true
    }
}

extension RowCodec.Plan {
    /// The integer stored in `slot` (an Integer 16, 32 or 64 attribute), found by walking the
    /// fields before it by width and length alone; `nil` when the slot holds no value or the row
    /// holds anything the fast path does not expect (the caller then takes the general path).
    func integer(at slot: Int, in buffer: UnsafeRawBufferPointer) -> Int64? {
        let count = kinds.count
        let header = RowCodec.Header.size + RowCodec.bitmapSize(count)
        guard slot < count, buffer.count >= header,
            buffer[RowCodec.Header.encodingVersionOffset] == RowCodec.encodingVersion,
            Int(
                UInt16(
                    littleEndian: buffer.loadUnaligned(fromByteOffset: RowCodec.Header.slotCountOffset, as: UInt16.self)
                )) == count
        else { return nil }
        let end = buffer.count
        var offset = header
        for current in 0...slot {
            guard RowCodec.isPresent(current, in: buffer) else {
                if current == slot { return nil }
                continue
            }
            guard let width = presentWidth(kinds[current], in: buffer, at: offset), width <= end - offset else {
                return nil
            }
            if current == slot {
                switch kinds[slot] {
                case .int16:
                    return Int64(Int16(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Int16.self)))
                case .int32:
                    return Int64(Int32(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
                case .int64: return Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Int64.self))
                default: return nil
                }
            }
            offset += width
        }
        return nil
    }
}

extension RowCodec {
    /// Encodes a row whose present values are all of plain kinds (integers, doubles, dates,
    /// Booleans, strings, references) into the front of `buffer` (grown when too small), sizing
    /// the row first and then storing each field in place; the bytes are those
    /// ``encode(version:values:layout:)`` writes. `nil` when a value is of another kind or does not
    /// fit its slot: the caller then uses the general encoder, which reports the problem.
    static func encode(version: RowVersion, values: [StoreValue], plan: Plan, into buffer: inout [UInt8]) -> Int? {
        let count = plan.kinds.count
        guard values.count == count else { return nil }
        let header = RowCodec.Header.size + RowCodec.bitmapSize(count)
        var size = header
        for slot in 0..<count {
            switch (plan.kinds[slot], values[slot]) {
            case (_, .null), (.transient, _), (.toMany, _): continue
            case (.int16, .integer(let n)) where Int16(exactly: n) != nil: size += 2
            case (.int32, .integer(let n)) where Int32(exactly: n) != nil: size += 4
            case (.int64, .integer), (.double, .double), (.date, .date): size += 8
            case (.boolean, .bool): size += 1
            case (.toOne, .reference): size += Keys.rowIDSize
            case (.string, .string(let text)): size += 4 + text.utf8.count
            default: return nil
            }
        }
        if buffer.count < size { buffer = [UInt8](repeating: 0, count: max(size, buffer.count * 2)) }
        buffer.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: encodingVersion, toByteOffset: Header.encodingVersionOffset, as: UInt8.self)
            bytes.storeBytes(
                of: UInt64(bitPattern: version).littleEndian, toByteOffset: Header.rowVersionOffset, as: UInt64.self)
            bytes.storeBytes(of: UInt16(count).littleEndian, toByteOffset: Header.slotCountOffset, as: UInt16.self)
            for index in Header.size..<header { bytes[index] = 0 }
            var offset = header
            for slot in 0..<count {
                let present: Bool
                switch (plan.kinds[slot], values[slot]) {
                case (_, .null), (.transient, _), (.toMany, _): present = false
                case (.int16, .integer(let n)):
                    bytes.storeBytes(
                        of: Int16(truncatingIfNeeded: n).littleEndian, toByteOffset: offset, as: Int16.self)
                    offset += 2
                    present = true
                case (.int32, .integer(let n)):
                    bytes.storeBytes(
                        of: Int32(truncatingIfNeeded: n).littleEndian, toByteOffset: offset, as: Int32.self)
                    offset += 4
                    present = true
                case (.int64, .integer(let n)):
                    bytes.storeBytes(of: n.littleEndian, toByteOffset: offset, as: Int64.self)
                    offset += 8
                    present = true
                case (.double, .double(let d)):
                    bytes.storeBytes(of: d.bitPattern.littleEndian, toByteOffset: offset, as: UInt64.self)
                    offset += 8
                    present = true
                case (.date, .date(let date)):
                    bytes.storeBytes(
                        of: date.timeIntervalSinceReferenceDate.bitPattern.littleEndian, toByteOffset: offset,
                        as: UInt64.self)
                    offset += 8
                    present = true
                case (.boolean, .bool(let flag)):
                    bytes[offset] = flag ? 1 : 0
                    offset += 1
                    present = true
                case (.toOne, .reference(let id)):
                    Keys.storeRowID(id, into: bytes, at: offset)
                    offset += Keys.rowIDSize
                    present = true
                case (.string, .string(var text)):
                    text.withUTF8 { utf8 in
                        bytes.storeBytes(of: UInt32(utf8.count).littleEndian, toByteOffset: offset, as: UInt32.self)
                        if let base = utf8.baseAddress {
                            (bytes.baseAddress! + offset + 4).copyMemory(from: base, byteCount: utf8.count)
                        }
                        offset += 4 + utf8.count
                    }
                    present = true
                default: present = false  // the sizing pass accepted only the cases above
                }
                if present {
                    let bit = presenceBit(slot)
                    bytes[Header.size + bit.byte] |= bit.mask
                }
            }
        }
        return size
    }
}
