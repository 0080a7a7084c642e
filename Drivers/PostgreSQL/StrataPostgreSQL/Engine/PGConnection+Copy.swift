import CLibPQ
import Foundation

// Rows read as a binary COPY stream. `COPY (SELECT …) TO STDOUT (FORMAT binary)` sends each row as
// one message the moment the server has it, in the same binary value format as a statement's
// answer; libpq hands the messages over one at a time (PQgetCopyData). A statement's answer
// (PQexec) comes whole, after the server has sent its last row, and libpq stores every value of it
// separately first. So a large fetch read as a stream costs the client less per value, and the
// client turns rows into objects on one core while the server is still sending on the other.
// COPY takes no parameters: it reads statements whose values are all in the text (the driver's
// own, with identifiers quoted and no user value in them).

extension PGConnection {
    /// Runs `COPY (query) TO STDOUT (FORMAT binary)` and hands each row, of `columns` values, to
    /// `body` as it arrives, with `state` (passed through rather than captured, so the compiler
    /// checks its exclusive access once, not at run time per row). `body` returns whether it wants
    /// more rows: when it returns `false` or throws, the statement is cancelled and the rest of the
    /// stream read and dropped, so the connection is idle again when this returns or throws.
    ///
    /// - Parameters:
    ///   - query: A `SELECT` without parameters (no `$n`): never text holding a user value.
    ///   - beginning: A `BEGIN …` sent with the `COPY`, in the same message (no round trip of its
    ///     own); the transaction is left open for the caller to end.
    /// - Throws: ``PostgreSQLError`` for the server's or libpq's error, `body`'s error, or
    ///   ``PostgreSQLError`` naming the damage when the stream is not binary COPY of `columns`
    ///   values per row.
    func copyRows<State>(
        _ query: String, columns: Int, beginning: String? = nil, state: inout State,
        _ body: (CopyRow, inout State) throws -> Bool
    ) throws {
        let sql = (beginning.map { "\($0); " } ?? "") + "COPY (\(query)) TO STDOUT (FORMAT binary)"
        guard let started = logged(sql, nil, { PQexec(handle, sql) }) else { throw lastError() }
        guard PQresultStatus(started) == PGRES_COPY_OUT else {
            // An error (a missing table, a timeout, a lost connection), or not a COPY at all.
            _ = try checked(started)
            throw PostgreSQLError(message: "the server did not answer \(sql.prefix(120)) with a COPY stream")
        }
        PQclear(started)
        let reader = BinaryCopyReader(columns: columns)
        var wanted = true
        var stopped: Error?
        var last: Int32 = 0
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            last = PQgetCopyData(handle, &buffer, 0)
            guard last > 0, let buffer else { break }
            defer { PQfreemem(buffer) }
            guard wanted, stopped == nil else { continue }
            do {
                wanted = try reader.read(UnsafeRawBufferPointer(start: buffer, count: Int(last)), state: &state, body)
            } catch {
                stopped = error
            }
            if !wanted || stopped != nil { cancel() }
        }
        // -1: the stream ended, the statement's own result follows; -2: libpq failed to read.
        let readFailure = last == -2 ? lastError() : nil
        var failure: Error?
        while let result = PQgetResult(handle) {
            if failure == nil, wanted, stopped == nil {
                do { _ = try checked(result) } catch { failure = error }
            } else {
                // Cancelled on purpose: the server's "canceling statement" error is expected.
                PQclear(result)
            }
        }
        if let stopped { throw stopped }
        if let failure { throw failure }
        if let readFailure { throw readFailure }
        if wanted, !reader.finished {
            throw PostgreSQLError(message: "the COPY stream of \(query.prefix(120)) ended without its trailer")
        }
    }

    /// Asks the server to stop the statement running on this connection (best effort: the
    /// server may have finished it already; the caller reads what remains either way).
    private func cancel() {
        guard let request = PQgetCancel(handle) else { return }
        defer { PQfreeCancel(request) }
        var message = [CChar](repeating: 0, count: 256)
        _ = PQcancel(request, &message, Int32(message.count))
    }
}

/// One row of a binary COPY stream: where each of its values lies in the message that holds it.
/// Valid only inside the call it is handed to.
///
/// Columns are checked in debug builds only: the reader has checked that every row holds the
/// `columns` values it was made for, and the driver's decoding plans index the select list whose
/// length it passed as `columns` (``TableLayout/columnCount``), so a column past the end is a bug
/// in the driver, not bad data.
struct CopyRow: PGRow {
    fileprivate let base: UnsafeRawPointer
    fileprivate let fields: UnsafePointer<BinaryCopyReader.Field>
    fileprivate let count: Int

    @inline(__always)
    func isNull(_ column: Int) -> Bool {
        assert(column < count, "column \(column) of a row of \(count)")
        return fields[column].start < 0
    }

    @inline(__always)
    func bytes(_ column: Int) -> UnsafeRawBufferPointer {
        assert(column < count, "column \(column) of a row of \(count)")
        let field = fields[column]
        guard field.start >= 0 else { return UnsafeRawBufferPointer(start: base, count: 0) }
        return UnsafeRawBufferPointer(start: base + field.start, count: field.length)
    }
}

/// Splits the messages of a binary COPY stream into rows: the header (signature, flags, header
/// extension), then per row a 16-bit value count and each value as a 32-bit length (-1 for NULL)
/// followed by its bytes, then a count of -1 (the trailer). libpq hands over one message per row;
/// the header comes before the first row, in its message or one of its own.
final class BinaryCopyReader {
    struct Field {
        /// Offset in the message; -1 for NULL.
        var start: Int
        var length: Int
    }

    let columns: Int
    private(set) var finished = false
    private var sawHeader = false
    private let fields: UnsafeMutablePointer<Field>

    static let signature: [UInt8] = [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00]

    init(columns: Int) {
        self.columns = columns
        fields = .allocate(capacity: max(columns, 1))
        fields.initialize(repeating: Field(start: -1, length: 0), count: max(columns, 1))
    }

    deinit { fields.deallocate() }

    /// Reads the rows of one message, handing each to `body`; returns `false` as soon as `body` does.
    func read<State>(
        _ message: UnsafeRawBufferPointer, state: inout State, _ body: (CopyRow, inout State) throws -> Bool
    ) throws -> Bool {
        guard let base = message.baseAddress else { return true }
        var at = 0
        if !sawHeader {
            let fixed = Self.signature.count + 8
            guard message.count >= fixed, message.prefix(Self.signature.count).elementsEqual(Self.signature) else {
                throw Self.damaged("its header is not PostgreSQL's binary COPY signature")
            }
            let flags = UInt32(bigEndian: message.loadUnaligned(fromByteOffset: Self.signature.count, as: UInt32.self))
            // Bit 16: each row starts with an OID, which COPY of a query never sends.
            guard flags & (1 << 16) == 0 else { throw Self.damaged("its rows carry OIDs") }
            let extensionLength = Int(
                UInt32(bigEndian: message.loadUnaligned(fromByteOffset: Self.signature.count + 4, as: UInt32.self)))
            guard extensionLength <= message.count - fixed else { throw Self.damaged("its header is cut short") }
            at = fixed + extensionLength
            sawHeader = true
        }
        while at < message.count {
            guard !finished else { throw Self.damaged("data follows its trailer") }
            guard message.count - at >= 2 else { throw Self.damaged("a row is cut short") }
            let count = Int(Int16(bigEndian: message.loadUnaligned(fromByteOffset: at, as: Int16.self)))
            at += 2
            if count == -1 {
                finished = true
                continue
            }
            guard count == columns else { throw Self.damaged("a row has \(count) values, not \(columns)") }
            for column in 0..<columns {
                guard message.count - at >= 4 else { throw Self.damaged("a row is cut short") }
                let length = Int(Int32(bigEndian: message.loadUnaligned(fromByteOffset: at, as: Int32.self)))
                at += 4
                if length < 0 {
                    fields[column] = Field(start: -1, length: 0)
                } else {
                    guard length <= message.count - at else { throw Self.damaged("a value is cut short") }
                    fields[column] = Field(start: at, length: length)
                    at += length
                }
            }
            if try !body(CopyRow(base: base, fields: fields, count: columns), &state) { return false }
        }
        return true
    }

    private static func damaged(_ problem: String) -> PostgreSQLError {
        PostgreSQLError(message: "the server's COPY stream could not be read: \(problem)")
    }
}
