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
    func int64(_ row: Int, _ column: Int) -> Int64 { PGValue.int64(bytes(row, column)) }

    /// A `double precision` column (a `real` one widened).
    @inline(__always)
    func double(_ row: Int, _ column: Int) -> Double { PGValue.double(bytes(row, column)) }

    /// A `boolean` column.
    @inline(__always)
    func bool(_ row: Int, _ column: Int) -> Bool { PGValue.bool(bytes(row, column)) }

    /// A `text` column in its stored form, unescaped (``TextEscaping``).
    @inline(__always)
    func string(_ row: Int, _ column: Int) -> String { TextEscaping.decode(bytes(row, column)) }

    /// A `text` column as it is stored.
    func rawString(_ row: Int, _ column: Int) -> String { String(decoding: bytes(row, column), as: UTF8.self) }

    /// A `bytea` column.
    func data(_ row: Int, _ column: Int) -> Data { Data(bytes(row, column)) }

    /// One row of the answer, read through ``PGRow``.
    struct Row: PGRow {
        let result: PGResult
        let row: Int

        @inline(__always)
        func isNull(_ column: Int) -> Bool { result.isNull(row, column) }

        @inline(__always)
        func bytes(_ column: Int) -> UnsafeRawBufferPointer { result.bytes(row, column) }
    }
}
