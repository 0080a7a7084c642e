import CLibPQ
import Foundation

/// The rows of one statement's answer, in PostgreSQL's binary format; freed with the object.
///
/// Readers take a row and a column index. Integers are read by their length (2, 4 or 8 bytes),
/// so a column declared `smallint`, `integer` or `bigint` reads the same way.
///
/// Not `Sendable`: used by the thread that ran the statement.
final class PGResult {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }

    deinit { PQclear(handle) }

    /// The number of rows.
    var rowCount: Int { Int(PQntuples(handle)) }

    /// The number of columns.
    var columnCount: Int { Int(PQnfields(handle)) }

    /// Rows changed by an `INSERT`, `UPDATE` or `DELETE` (0 when the command reports none).
    var affectedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    @inline(__always)
    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) != 0 }

    @inline(__always)
    func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer {
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        // libpq returns a valid pointer (to an empty string for NULL and empty values).
        return UnsafeRawBufferPointer(start: PQgetvalue(handle, Int32(row), Int32(column)), count: length)
    }

    /// An integer column of any width; 0 for NULL or a value of another length.
    @inline(__always)
    func int64(_ row: Int, _ column: Int) -> Int64 {
        let raw = bytes(row, column)
        switch raw.count {
        case 8: return Int64(bigEndian: raw.loadUnaligned(as: Int64.self))
        case 4: return Int64(Int32(bigEndian: raw.loadUnaligned(as: Int32.self)))
        case 2: return Int64(Int16(bigEndian: raw.loadUnaligned(as: Int16.self)))
        default: return 0
        }
    }

    /// A `double precision` column (a `real` one widened).
    @inline(__always)
    func double(_ row: Int, _ column: Int) -> Double {
        let raw = bytes(row, column)
        switch raw.count {
        case 8: return Double(bitPattern: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)))
        case 4: return Double(Float(bitPattern: UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self))))
        default: return 0
        }
    }

    /// A `boolean` column.
    @inline(__always)
    func bool(_ row: Int, _ column: Int) -> Bool {
        let raw = bytes(row, column)
        return raw.count == 1 && raw[0] != 0
    }

    /// A `text` column in its stored form, unescaped (``TextEscaping``).
    @inline(__always)
    func string(_ row: Int, _ column: Int) -> String { TextEscaping.decode(bytes(row, column)) }

    /// A `text` column as it is stored.
    func rawString(_ row: Int, _ column: Int) -> String { String(decoding: bytes(row, column), as: UTF8.self) }

    /// A `bytea` column.
    func data(_ row: Int, _ column: Int) -> Data { Data(bytes(row, column)) }

    /// A `uuid` column; `nil` for a value that is not 16 bytes.
    func uuid(_ row: Int, _ column: Int) -> UUID? {
        let raw = bytes(row, column)
        guard raw.count == 16 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: raw) }
        return UUID(uuid: value)
    }
}
