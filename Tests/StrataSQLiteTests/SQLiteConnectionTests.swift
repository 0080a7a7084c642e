import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataSQLite

@Suite("SQLiteConnection")
struct SQLiteConnectionTests {
    @Test("values bound to a statement read back with their storage classes")
    func bindAndRead() throws {
        let directory = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.path("t.sqlite"), mode: .readWriteCreate)
        try connection.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n)")
        let insert = try connection.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
        try insert.bind(Int64.max, at: 1)
        try insert.bind(2.5, at: 2)
        try insert.bind("héllo", at: 3)
        try insert.bind(Data([0, 1, 2]), at: 4)
        try insert.bindNull(at: 5)
        #expect(try insert.step() == false)
        let rows = try connection.rows("SELECT i, r, s, b, n FROM t")
        #expect(rows == [[.integer(Int64.max), .real(2.5), .text("héllo"), .blob(Data([0, 1, 2])), .null]])
        #expect(try connection.scalar("SELECT count(*) FROM t WHERE s = ?", [.text("héllo")]) == .integer(1))
    }

    @Test("binding a store value directly stores what binding its encoded SQLite value stores")
    func directBindsMatchEncoding() throws {
        let directory = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.path("t.sqlite"), mode: .readWriteCreate)
        try connection.execute("CREATE TABLE t (path INTEGER, k INTEGER, v)")
        let values: [StoreValue] = [
            .integer(Int64.min), .integer(42), .string(""), .string("a\u{0}b héllo"),
            .date(Date(timeIntervalSinceReferenceDate: -1.5)),
            .bool(true), .bool(false), .double(2.25), .double(-0.0), .double(.nan), .double(.infinity), .null,
            .unfetched, .references([]), .reference(RowID(entity: 2, primaryKey: 77)), .binary(Data([0, 255])),
            .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
            .decimal(Decimal(string: "1.25")!),
            .uri(URL(string: "https://example.com/a?b")!),
        ]
        let insert = try connection.prepare("INSERT INTO t VALUES (?, ?, ?)")
        for (key, value) in values.enumerated() {
            for path in Int64(0)...1 {
                try insert.reset()
                try insert.bind(path, at: 1)
                try insert.bind(Int64(key), at: 2)
                if path == 0 {
                    try insert.bind(ValueCoding.sqliteValue(value), at: 3)
                } else {
                    try ValueCoding.bind(value, to: insert, at: 3)
                }
                #expect(try insert.step() == false)
            }
        }
        let encoded = try connection.rows("SELECT k, typeof(v), quote(v) FROM t WHERE path = 0 ORDER BY k")
        let direct = try connection.rows("SELECT k, typeof(v), quote(v) FROM t WHERE path = 1 ORDER BY k")
        #expect(encoded.count == values.count)
        #expect(direct == encoded)
    }

    @Test("statements kept by slot are prepared once, reset on reuse, and kept apart by slot")
    func slots() throws {
        let directory = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.path("t.sqlite"), mode: .readWriteCreate)
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
        for (slot, sql) in [(0, "INSERT INTO t VALUES (?, ?)"), (3, "SELECT v FROM t WHERE k = ?")] {
            _ = try connection.cached(sql, slot: slot)
        }
        for key in Int64(1)...3 {
            let insert = try connection.cached("INSERT INTO t VALUES (?, ?)", slot: 0)
            try insert.bind(key, at: 1)
            try insert.bind("v\(key)", at: 2)
            #expect(try insert.step() == false)
        }
        let first = try connection.cached("SELECT v FROM t WHERE k = ?", slot: 3)
        try first.bind(Int64(2), at: 1)
        #expect(try first.step())
        #expect(first.string(at: 0) == "v2")
        // Reused while a row was still pending: reset, then bound again.
        let again = try connection.cached("SELECT v FROM t WHERE k = ?", slot: 3)
        #expect(again === first)
        try again.bind(Int64(3), at: 1)
        #expect(try again.step())
        #expect(again.string(at: 0) == "v3")
        #expect(try connection.scalar("SELECT count(*) FROM t") == .integer(3))
        connection.close()
        #expect(throws: SQLiteError.self) { _ = try connection.cached("SELECT v FROM t WHERE k = ?", slot: 3) }
    }

    @Test("opening a missing file read-only fails with an error naming the file")
    func missingFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("absent.sqlite")
        do {
            _ = try SQLiteConnection(path: path)
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.code == .cannotOpen)
            #expect(error.description.contains(path))
        }
    }

    @Test("a file that is not a database fails to open with a typed error")
    func notADatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("junk.sqlite")
        try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect(throws: SQLiteError.self) { try SQLiteConnection(path: path) }
    }

    @Test("bad SQL throws an engine error and a closed connection refuses work")
    func errors() throws {
        let directory = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.path("e.sqlite"), mode: .readWriteCreate)
        do {
            _ = try connection.prepare("SELEKT 1")
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.code == .engine)
        }
        connection.close()
        connection.close()
        #expect(connection.isClosed)
        #expect(throws: SQLiteError.self) { try connection.prepare("SELECT 1") }
    }

    @Test("a read-only connection cannot write")
    func readOnly() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ro.sqlite")
        try SQLiteConnection(path: path, mode: .readWriteCreate).execute("CREATE TABLE t (x)")
        let connection = try SQLiteConnection(path: path)
        #expect(throws: SQLiteError.self) { try connection.execute("INSERT INTO t VALUES (1)") }
    }

    @Test("a file that is not a Core Data store is reported as such")
    func notAStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("plain.sqlite")
        try SQLiteConnection(path: path, mode: .readWriteCreate).execute("CREATE TABLE t (x)")
        do {
            _ = try StoreModelRecovery.recoverModel(fromStoreAt: path)
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.code == .notFound)
            #expect(error.file == path)
        }
    }
}
