import CSQLite
import Foundation

/// A prepared SQL statement of a ``SQLiteConnection``: bind parameters, step through rows, read
/// columns. Finalized when released.
///
/// Thread safety: not `Sendable`; use it on its connection's thread only. Column accessors read
/// the current row and are valid until the next ``step()`` or ``reset()``.
public final class SQLiteStatement {
    /// The connection the statement belongs to (kept open while the statement lives).
    public let connection: SQLiteConnection
    /// The statement's SQL text.
    public let sql: String
    private let handle: OpaquePointer

    init(connection: SQLiteConnection, handle: OpaquePointer, sql: String) {
        self.connection = connection
        self.handle = handle
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// SQLITE_TRANSIENT: SQLite copies bound text and blobs before `bind` returns, so Swift's
    /// temporary buffers may go away. The C macro is `((sqlite3_destructor_type)-1)`, which Swift
    /// cannot import; the bit pattern -1 is exactly that value.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    /// A non-null pointer for zero-length text; SQLite reads no byte of it. Bit pattern 1 is never null.
    private static var emptyText: UnsafePointer<CChar> { UnsafePointer(bitPattern: 1)! }

    /// Binds `value` to the 1-based parameter `index`.
    ///
    /// - Throws: ``SQLiteError`` (misuse) for an index out of range or a closed connection.
    public func bind(_ value: SQLiteValue, at index: Int32) throws {
        _ = try connection.openHandle()
        let status: Int32
        switch value {
        case .null: status = sqlite3_bind_null(handle, index)
        case .integer(let number): status = sqlite3_bind_int64(handle, index, number)
        case .real(let number): status = sqlite3_bind_double(handle, index, number)
        case .text(let text):
            // An explicit byte count keeps NUL characters inside the string; an empty string still
            // needs a non-null pointer, or SQLite stores NULL.
            var copy = text
            status = copy.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    sqlite3_bind_text64(
                        handle, index, chars.baseAddress ?? Self.emptyText, sqlite3_uint64(chars.count),
                        Self.transient, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let bytes):
            status = bytes.withUnsafeBytes { buffer in
                // A zero-length blob needs a non-null pointer to be stored as a blob, not NULL.
                sqlite3_bind_blob64(
                    handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                    sqlite3_uint64(buffer.count), Self.transient)
            }
        }
        guard status == SQLITE_OK else {
            throw SQLiteError(
                .misuse, "cannot bind parameter \(index) of '\(sql)'", file: connection.path,
                resultCode: status)
        }
    }

    // MARK: Direct binds
    // For per-row work (inserts, updates): no ``SQLiteValue`` is built and the connection is not
    // checked per parameter. That check can never fail here: the statement holds its connection,
    // and a connection closes its handle only in its deinit (with `sqlite3_close_v2`).

    /// Binds an integer directly.
    func bindDirect(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, value), index)
    }

    /// Binds a double directly.
    func bindDirect(_ value: Double, at index: Int32) throws {
        try check(sqlite3_bind_double(handle, index, value), index)
    }

    /// Binds NULL directly.
    func bindDirectNull(at index: Int32) throws {
        try check(sqlite3_bind_null(handle, index), index)
    }

    /// Binds text directly (copied by SQLite, NUL characters kept).
    func bindDirect(_ text: String, at index: Int32) throws {
        var copy = text
        let status = copy.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                // SQLITE_TRANSIENT, spelled out: see `transient`.
                sqlite3_bind_text64(
                    handle, index, chars.baseAddress ?? Self.emptyText, sqlite3_uint64(chars.count),
                    unsafeBitCast(-1, to: sqlite3_destructor_type.self), UInt8(SQLITE_UTF8))
            }
        }
        try check(status, index)
    }

    /// Binds text without SQLite copying it (`SQLITE_STATIC`, a null destructor).
    ///
    /// SQLite keeps the pointer until the parameter is bound again, so `bytes` must outlive every
    /// use of the statement until then: bind inside the scope of the string's storage, run the
    /// statement there, and ``unbind(at:)`` before the scope ends.
    func bindDirectStatic(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) throws {
        let status = bytes.withMemoryRebound(to: CChar.self) { chars in
            sqlite3_bind_text64(
                handle, index, chars.baseAddress ?? Self.emptyText, sqlite3_uint64(chars.count), nil,
                UInt8(SQLITE_UTF8))
        }
        try check(status, index)
    }

    /// Binds NULL to a parameter bound just before (after ``bindDirectStatic(_:at:)``), so the
    /// statement holds no pointer to text that is about to go away.
    func unbind(at index: Int32) {
        // The status is not checked: binding NULL fails only for a parameter index out of range
        // or a statement that is running, and this index was bound a moment ago on a statement
        // that has finished its step.
        _ = sqlite3_bind_null(handle, index)
    }

    @inline(__always)
    private func check(_ status: Int32, _ index: Int32) throws {
        guard status == SQLITE_OK else {
            throw SQLiteError(
                .misuse, "cannot bind parameter \(index) of '\(sql)'", file: connection.path, resultCode: status)
        }
    }

    /// Binds values to parameters 1, 2, … in order.
    public func bind(_ values: [SQLiteValue]) throws {
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    /// Binds an integer. Shorthand for ``bind(_:at:)`` with ``SQLiteValue/integer(_:)``.
    public func bind(_ value: Int64, at index: Int32) throws { try bind(.integer(value), at: index) }
    /// Binds a double.
    public func bind(_ value: Double, at index: Int32) throws { try bind(.real(value), at: index) }
    /// Binds text.
    public func bind(_ value: String, at index: Int32) throws { try bind(.text(value), at: index) }
    /// Binds bytes.
    public func bind(_ value: Data, at index: Int32) throws { try bind(.blob(value), at: index) }
    /// Binds NULL.
    public func bindNull(at index: Int32) throws { try bind(.null, at: index) }

    /// Advances to the next row.
    ///
    /// - Returns: `true` when a row is available, `false` when the statement is done.
    /// - Throws: ``SQLiteError`` with SQLite's message (corrupt for a damaged file).
    @discardableResult
    public func step() throws -> Bool {
        _ = try connection.openHandle()
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.engineError(status, "cannot run '\(sql)'")
        }
    }

    /// Rewinds the statement so it can run again; bindings are kept.
    public func reset() throws {
        _ = try connection.openHandle()
        sqlite3_reset(handle)
    }

    /// Sets every parameter back to NULL.
    public func clearBindings() { sqlite3_clear_bindings(handle) }

    /// The number of columns in a result row.
    public var columnCount: Int32 { sqlite3_column_count(handle) }

    /// The name of result column `index` (0-based).
    public func columnName(_ index: Int32) -> String {
        sqlite3_column_name(handle, index).map { String(cString: $0) } ?? ""
    }

    /// Whether column `index` of the current row is NULL.
    public func isNull(at index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Column `index` as an integer (SQLite's conversion rules apply; NULL is 0).
    public func int64(at index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Column `index` as a double (NULL is 0).
    public func double(at index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// Column `index` as text, or `nil` when NULL.
    public func string(at index: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, index) else { return nil }
        // Read by byte count, not up to the first NUL: strings may contain NUL characters.
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The storage class of column `index` of the current row (`SQLITE_INTEGER`, … `SQLITE_NULL`).
    public func columnType(at index: Int32) -> Int32 { sqlite3_column_type(handle, index) }

    /// Column `index` as bytes, or `nil` when NULL.
    public func data(at index: Int32) -> Data? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// Column `index` in its stored storage class.
    public func value(at index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer(int64(at: index))
        case SQLITE_FLOAT: .real(double(at: index))
        case SQLITE_TEXT: string(at: index).map { .text($0) } ?? .null
        case SQLITE_BLOB: .blob(data(at: index) ?? Data())
        default: .null
        }
    }
}
