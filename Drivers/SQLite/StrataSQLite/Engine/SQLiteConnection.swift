import CSQLite
import Foundation

/// One connection to a SQLite database file: the thin layer over libsqlite3 the driver builds on.
///
/// Opens read-only by default (a store recovered for inspection is never written). Statements are
/// prepared with ``prepare(_:)`` and finalized when released; the connection stays open while a
/// statement of it lives, and closes on ``close()`` or when the last reference goes.
///
/// Thread safety: not `Sendable`. A connection and its statements must be used from one thread
/// (or one serial executor) at a time, as SQLite's multi-thread mode requires.
public final class SQLiteConnection {
    /// How a connection opens its file.
    public enum OpenMode: Sendable {
        /// Read only; the file must exist (`SQLITE_OPEN_READONLY`).
        case readOnly
        /// Read and write; the file must exist.
        case readWrite
        /// Read and write, creating the file when missing.
        case readWriteCreate
    }

    /// The database file's path.
    public let path: String
    // `@exclusivity(unchecked)` on the handle and the slots, read for every row saved or loaded:
    // a connection is used from one thread at a time (above), and no access to either overlaps
    // another (none is passed `inout` or held across a call that could reach the connection).
    @exclusivity(unchecked) private(set) var handle: OpaquePointer?
    private var cache: [String: SQLiteStatement] = [:]
    /// Statements the caller names by a small number instead of their text (``cached(_:slot:)``).
    @exclusivity(unchecked) private var slots: [SQLiteStatement?] = []
    /// What ``trace(to:)`` logs to, kept alive as long as SQLite may call back with it.
    var traceSink: SQLiteTraceSink?
    /// The most statements ``cached(_:)`` keeps; past it the cache is emptied and refilled.
    static let cacheLimit = 256

    /// Opens a database file.
    ///
    /// - Parameters:
    ///   - path: The file to open.
    ///   - mode: ``OpenMode/readOnly`` unless the caller will write.
    /// - Throws: ``SQLiteError`` with code ``SQLiteError/Code/cannotOpen`` naming the file.
    public init(path: String, mode: OpenMode = .readOnly) throws {
        self.path = path
        var flags: Int32 = SQLITE_OPEN_NOMUTEX
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        if mode == .readWriteCreate { Self.createFollowingUmask(path) }
        var db: OpaquePointer?
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(.cannotOpen, "cannot open: \(message)", file: path, resultCode: status)
        }
        sqlite3_extended_result_codes(db, 1)
        handle = db
        // Opening is lazy in SQLite: read the schema now so a non-database file fails here, by name.
        do {
            _ = try scalar("SELECT count(*) FROM sqlite_master")
        } catch let error as SQLiteError {
            sqlite3_close_v2(db)
            handle = nil
            throw SQLiteError(
                .cannotOpen, "not a readable SQLite database: \(error.message)", file: path,
                resultCode: error.resultCode)
        }
    }

    /// Creates a missing database file with mode 0666 less the process's umask (SQLite's own
    /// default is 0644 less the umask, so a umask of 002 would not give the group write access);
    /// its journal and WAL files take the database file's mode. An existing file is left alone, and
    /// a failure here is reported by the open that follows (ignored on purpose).
    private static func createFollowingUmask(_ path: String) {
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o666)
        if descriptor >= 0 { closeDescriptor(descriptor) }
    }

    deinit {
        // close_v2 defers the close until outstanding statements finalize; none can be left, since
        // each statement keeps its connection alive.
        sqlite3_close_v2(handle)
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { handle == nil }

    /// Closes the connection; later calls do nothing.
    ///
    /// Statements still alive become unusable (their calls throw ``SQLiteError/Code/misuse``).
    public func close() {
        guard let db = handle else { return }
        cache.removeAll()
        slots.removeAll()
        handle = nil
        sqlite3_close_v2(db)
    }

    /// A prepared statement for `sql` from this connection's cache, reset and with cleared
    /// bindings; prepared on first use.
    ///
    /// - Complexity: O(1) on a cache hit.
    public func cached(_ sql: String) throws -> SQLiteStatement {
        if let statement = cache[sql] {
            try statement.reset()
            statement.clearBindings()
            return statement
        }
        let statement = try prepare(sql)
        if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
        cache[sql] = statement
        return statement
    }

    /// A prepared statement for `sql`, kept under `slot`, reset; prepared on first use. For
    /// statements run very often: no hashing of their text. The caller gives each distinct `sql`
    /// its own slot (a small number) and keeps to it; bindings are left as they were, so the
    /// caller binds every parameter.
    public func cached(_ sql: String, slot: Int) throws -> SQLiteStatement {
        if slot < slots.count, let statement = slots[slot] {
            try statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        if slot >= slots.count { slots.append(contentsOf: repeatElement(nil, count: slot + 1 - slots.count)) }
        slots[slot] = statement
        return statement
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    public var changes: Int { handle.map { Int(sqlite3_changes64($0)) } ?? 0 }

    /// The most `?` parameters one statement may have (`SQLITE_LIMIT_VARIABLE_NUMBER`; 0 when closed).
    public var parameterLimit: Int {
        handle.map { Int(sqlite3_limit($0, SQLITE_LIMIT_VARIABLE_NUMBER, -1)) } ?? 0
    }

    /// Makes the connection wait up to `seconds` for a lock another connection holds.
    public func setBusyTimeout(_ seconds: Double) {
        guard let handle else { return }
        sqlite3_busy_timeout(handle, Int32(clamping: Int((seconds * 1000).rounded())))
    }

    /// Compiles one SQL statement.
    ///
    /// `sql` must hold exactly one statement: text after it (a second statement, or anything after
    /// a NUL character) is refused, so SQL text can never run more than the statement its builder
    /// wrote. Names in it are quoted by ``SQLIdentifier``; values are bound, never written in.
    ///
    /// - Throws: ``SQLiteError`` (engine) with SQLite's message and the SQL text; (misuse) for
    ///   text holding no statement or more than one.
    public func prepare(_ sql: String) throws -> SQLiteStatement {
        let db = try openHandle()
        var statement: OpaquePointer?
        var text = sql
        var trailing = false
        let status = text.withUTF8 { bytes -> Int32 in
            guard bytes.count < Int(Int32.max) else { return SQLITE_TOOBIG }
            return bytes.withMemoryRebound(to: CChar.self) { chars -> Int32 in
                // A non-null pointer even for empty text; SQLite reads no byte of it then.
                let start = chars.baseAddress ?? UnsafePointer(bitPattern: 1)!
                var tail: UnsafePointer<CChar>?
                let status = sqlite3_prepare_v2(db, start, Int32(chars.count), &statement, &tail)
                if let tail {
                    let consumed = min(chars.baseAddress.map { tail - $0 } ?? 0, chars.count)
                    trailing = chars[consumed...].contains { !Self.isSpace($0) }
                }
                return status
            }
        }
        guard status == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            if status == SQLITE_OK {
                throw SQLiteError(.misuse, "cannot prepare '\(sql)': it holds no SQL statement", file: path)
            }
            throw engineError(status, "cannot prepare '\(sql)'")
        }
        guard !trailing else {
            sqlite3_finalize(statement)
            throw SQLiteError(
                .misuse,
                "cannot prepare '\(sql)': it holds text after its first statement; run one statement at a time",
                file: path)
        }
        return SQLiteStatement(connection: self, handle: statement, sql: sql)
    }

    private static func isSpace(_ char: CChar) -> Bool {
        char == 0x20 || char == 0x09 || char == 0x0A || char == 0x0D || char == 0x0C
    }

    /// Runs one SQL statement to its end, ignoring any rows it returns.
    ///
    /// Like ``prepare(_:)``, refuses text holding more than one statement (the driver never runs
    /// several statements from one string, so no text built from names can add one).
    public func execute(_ sql: String) throws {
        let statement = try prepare(sql)
        while try statement.step() {}
    }

    /// Runs a query and returns every row.
    ///
    /// - Parameters:
    ///   - sql: One statement, with `?` placeholders.
    ///   - bindings: One value per placeholder.
    /// - Complexity: O(rows × columns); for large results step a statement instead.
    public func rows(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        let statement = try prepare(sql)
        try statement.bind(bindings)
        var result: [[SQLiteValue]] = []
        while try statement.step() {
            result.append((0..<statement.columnCount).map { statement.value(at: $0) })
        }
        return result
    }

    /// The first column of the first row of a query, or `nil` when it returns no rows.
    public func scalar(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> SQLiteValue? {
        let statement = try prepare(sql)
        try statement.bind(bindings)
        return try statement.step() ? statement.value(at: 0) : nil
    }

    /// Whether a table named `name` exists.
    public func tableExists(_ name: String) throws -> Bool {
        try scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]) != nil
    }

    func openHandle() throws -> OpaquePointer {
        guard let handle else { throw SQLiteError(.misuse, "the connection is closed", file: path) }
        return handle
    }

    func engineError(_ status: Int32, _ context: String) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "connection closed"
        let code: SQLiteError.Code =
            (status & 0xFF) == SQLITE_CORRUPT || (status & 0xFF) == SQLITE_NOTADB
            ? .corrupt : .engine
        return SQLiteError(code, "\(context): \(message)", file: path, resultCode: status)
    }
}

/// A value as SQLite stores it in a column (its storage class).
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The integer, or `nil` for other storage classes.
    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The double, or `nil` for other storage classes.
    public var real: Double? {
        if case .real(let value) = self { return value }
        return nil
    }

    /// The text, or `nil` for other storage classes.
    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The bytes, or `nil` for other storage classes.
    public var blob: Data? {
        if case .blob(let value) = self { return value }
        return nil
    }
}

/// `close(2)`, out of reach of ``SQLiteConnection/close()`` inside the type.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
