import Foundation

/// One row of values in PostgreSQL's binary format, wherever it came from: a statement's answer
/// (``PGResult/Row``) or a binary `COPY` stream (``CopyRow``). Columns are indexed from 0.
protocol PGRow {
    /// Whether the value at `column` is SQL NULL.
    func isNull(_ column: Int) -> Bool
    /// The value's bytes (empty for NULL); valid while the row is.
    func bytes(_ column: Int) -> UnsafeRawBufferPointer
}

extension PGRow {
    /// An integer column of any width; 0 for NULL or a value of another length.
    @inline(__always)
    func int64(_ column: Int) -> Int64 { PGValue.int64(bytes(column)) }

    /// A `double precision` column (a `real` one widened).
    @inline(__always)
    func double(_ column: Int) -> Double { PGValue.double(bytes(column)) }

    /// A `boolean` column.
    @inline(__always)
    func bool(_ column: Int) -> Bool { PGValue.bool(bytes(column)) }

    /// A `text` column in its stored form, unescaped (``TextEscaping``).
    @inline(__always)
    func string(_ column: Int) -> String { TextEscaping.decode(bytes(column)) }

    /// A `text` column as it is stored.
    func rawString(_ column: Int) -> String { String(decoding: bytes(column), as: UTF8.self) }

    /// A `bytea` column.
    func data(_ column: Int) -> Data { Data(bytes(column)) }

    /// A `uuid` column; `nil` for a value that is not 16 bytes.
    func uuid(_ column: Int) -> UUID? { PGValue.uuid(bytes(column)) }
}

/// Reading single values in PostgreSQL's binary format (big-endian numbers).
enum PGValue {
    /// An integer of 2, 4 or 8 bytes; 0 for any other length (NULL is empty).
    @inline(__always)
    static func int64(_ raw: UnsafeRawBufferPointer) -> Int64 {
        switch raw.count {
        case 8: return Int64(bigEndian: raw.loadUnaligned(as: Int64.self))
        case 4: return Int64(Int32(bigEndian: raw.loadUnaligned(as: Int32.self)))
        case 2: return Int64(Int16(bigEndian: raw.loadUnaligned(as: Int16.self)))
        default: return 0
        }
    }

    /// A `double precision` (8 bytes) or `real` (4 bytes, widened); 0 for any other length.
    @inline(__always)
    static func double(_ raw: UnsafeRawBufferPointer) -> Double {
        switch raw.count {
        case 8: return Double(bitPattern: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)))
        case 4: return Double(Float(bitPattern: UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self))))
        default: return 0
        }
    }

    /// A `boolean` (one byte).
    @inline(__always)
    static func bool(_ raw: UnsafeRawBufferPointer) -> Bool { raw.count == 1 && raw[0] != 0 }

    /// A `uuid` (16 bytes); `nil` for any other length.
    static func uuid(_ raw: UnsafeRawBufferPointer) -> UUID? {
        guard raw.count == 16 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: raw) }
        return UUID(uuid: value)
    }
}
