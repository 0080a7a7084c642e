import CLibPQ
import Foundation

/// Type OIDs of the PostgreSQL types the driver sends and reads (`pg_type.oid`, fixed by the
/// server's catalog since PostgreSQL 7).
enum PGType {
    static let bool: Oid = 16
    static let bytea: Oid = 17
    static let int8: Oid = 20
    static let int4: Oid = 23
    static let text: Oid = 25
    static let float8: Oid = 701
    static let numeric: Oid = 1700
    static let uuid: Oid = 2950
    static let boolArray: Oid = 1000
    static let byteaArray: Oid = 1001
    static let int4Array: Oid = 1007
    static let textArray: Oid = 1009
    static let int8Array: Oid = 1016
    static let float8Array: Oid = 1022
    static let uuidArray: Oid = 2951
}

/// Parameters of one statement, each bound in PostgreSQL's binary format (numeric values in
/// text format), kept in one byte buffer so a statement with 100,000 values allocates a few
/// arrays, not one object per value.
///
/// Values never reach SQL text: every constant, key and attribute value a statement uses is a
/// parameter here.
struct PGParameters {
    private(set) var types: [Oid] = []
    private(set) var formats: [Int32] = []
    private(set) var lengths: [Int32] = []
    /// Offset of each value in `bytes`; -1 for NULL.
    private(set) var offsets: [Int] = []
    /// The values' bytes, after one byte of padding: a zero-length value then still has a
    /// non-null address (a null pointer would mean SQL NULL).
    private(set) var bytes: [UInt8] = [0]

    var count: Int { types.count }

    init() {}

    private mutating func begin(_ type: Oid, format: Int32 = 1) {
        types.append(type)
        formats.append(format)
        offsets.append(bytes.count)
    }

    private mutating func end() {
        lengths.append(Int32(bytes.count - offsets[offsets.count - 1]))
    }

    mutating func appendNull(_ type: Oid) {
        types.append(type)
        formats.append(1)
        offsets.append(-1)
        lengths.append(0)
    }

    mutating func append(_ value: Int64) {
        begin(PGType.int8)
        Self.write(value, into: &bytes)
        end()
    }

    mutating func append(int32 value: Int32) {
        begin(PGType.int4)
        Self.write(value, into: &bytes)
        end()
    }

    mutating func append(_ value: Double) {
        begin(PGType.float8)
        Self.write(value, into: &bytes)
        end()
    }

    mutating func append(_ value: Bool) {
        begin(PGType.bool)
        bytes.append(value ? 1 : 0)
        end()
    }

    /// A `text` value, escaped (``TextEscaping``) so that U+0000 survives.
    mutating func append(text value: String) {
        begin(PGType.text)
        TextEscaping.appendEscaped(value, to: &bytes)
        end()
    }

    /// A `text` value sent as it is (names, channel names, payloads that hold no U+0000).
    mutating func append(rawText value: String) {
        begin(PGType.text)
        bytes.append(contentsOf: value.utf8)
        end()
    }

    mutating func append(bytes value: Data) {
        begin(PGType.bytea)
        bytes.append(contentsOf: value)
        end()
    }

    mutating func append(uuid value: UUID) {
        begin(PGType.uuid)
        withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
        end()
    }

    /// A `numeric` value in its text form (`12.5`, `-1e-27` written out, `NaN`).
    mutating func append(numeric text: String) {
        begin(PGType.numeric, format: 0)
        bytes.append(contentsOf: text.utf8)
        end()
    }

    /// A one-dimensional array of `count` elements of `elementType`; `element(i, &writer)` writes
    /// element `i` (or nothing, for NULL) and returns whether it wrote one.
    mutating func appendArray(
        _ arrayType: Oid, elementType: Oid, count: Int, _ element: (Int, inout [UInt8]) -> Bool
    ) {
        begin(arrayType)
        Self.write(Int32(count == 0 ? 0 : 1), into: &bytes)  // dimensions
        let flagsAt = bytes.count
        Self.write(Int32(0), into: &bytes)  // has nulls
        Self.write(Int32(bitPattern: elementType), into: &bytes)
        if count > 0 {
            Self.write(Int32(count), into: &bytes)
            Self.write(Int32(1), into: &bytes)  // lower bound
        }
        var hasNull = false
        for index in 0..<count {
            let lengthAt = bytes.count
            Self.write(Int32(0), into: &bytes)
            if element(index, &bytes) {
                let length = Int32(bytes.count - lengthAt - 4)
                Self.patch(length, at: lengthAt, in: &bytes)
            } else {
                Self.patch(-1, at: lengthAt, in: &bytes)
                hasNull = true
            }
        }
        if hasNull { Self.patch(1, at: flagsAt, in: &bytes) }
        end()
    }

    static func write(_ value: Int64, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    static func write(_ value: Int32, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    static func write(_ value: Double, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bitPattern.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private static func patch(_ value: Int32, at offset: Int, in bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { raw in
            for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
        }
    }

    /// Calls `body` with the C arrays libpq takes; the pointers are valid only inside `body`.
    func withPointers<T>(
        _ body: (
            Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) throws -> T
    ) rethrows -> T {
        try bytes.withUnsafeBufferPointer { buffer in
            // `bytes` is never empty (the padding byte), so the base address exists; an empty value
            // at the end points one past the last byte and libpq reads none of it.
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset < 0 ? nil : (base + offset).assumingMemoryBound(to: CChar.self)
            }
            return try values.withUnsafeBufferPointer { values in
                try types.withUnsafeBufferPointer { types in
                    try lengths.withUnsafeBufferPointer { lengths in
                        try formats.withUnsafeBufferPointer { formats in
                            try body(
                                Int32(types.count), types.baseAddress, values.baseAddress, lengths.baseAddress,
                                formats.baseAddress)
                        }
                    }
                }
            }
        }
    }
}
