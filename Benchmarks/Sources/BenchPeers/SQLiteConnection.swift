import CSQLiteBench
import Foundation
import StrataTools

/// A thin wrapper over one sqlite3 connection for the raw-SQLite contender: exec, prepare, step.
///
/// Thread safety: not `Sendable`; one thread at a time (the benchmark runner's).
final class RawSQLite {
    let db: OpaquePointer

    init(path: String) throws {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let handle else {
            sqlite3_close(handle)
            throw BenchError("sqlite3_open_v2(\(path)) failed with \(rc)")
        }
        db = handle
    }

    deinit { sqlite3_close_v2(db) }

    func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw BenchError("sqlite3_exec(\(sql)): \(text)")
        }
    }

    func prepare(_ sql: String) throws -> RawStatement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else { throw BenchError("prepare \(sql): \(String(cString: sqlite3_errmsg(db)))") }
        return RawStatement(statement, db)
    }

    /// A text pragma's value (`PRAGMA journal_mode`).
    func pragma(_ name: String) throws -> String {
        let s = try prepare("PRAGMA \(name)")
        return try s.step() ? s.text(0) : ""
    }
}

/// A prepared statement; `reset()` before rebinding.
final class RawStatement {
    let handle: OpaquePointer
    private let db: OpaquePointer
    /// SQLite copies bound text before `bind` returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ handle: OpaquePointer, _ db: OpaquePointer) {
        self.handle = handle
        self.db = db
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }
    func bind(_ index: Int32, _ value: String) { sqlite3_bind_text(handle, index, value, -1, Self.transient) }

    /// Steps; `true` when a row is available, `false` when done.
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc: throw BenchError("sqlite3_step: \(rc) \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        while try step() {}
        sqlite3_reset(handle)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
