import CSQLiteBench
import Foundation
import StrataTools

/// Raw SQLite through its C API: one transaction per save, prepared statements, rows decoded into
/// plain Swift structs (``BenchRow``). WAL journal with `synchronous=NORMAL`, SQLite's default page
/// cache; the same settings as GRDB's and Strata-SQLite's in the same run.
///
/// Thread safety: not `Sendable`; the runner uses it from one thread.
public final class SQLiteCContender: BenchContender {
    private var db: RawSQLite?
    private var loaded: [BenchRow] = []

    /// Creates the contender.
    public init() {}

    public var id: String { "sqlite-c" }
    public var engine: String { "sqlite" }
    public var settings: String {
        "sqlite3 C API \(String(cString: sqlite3_libversion())): WAL, synchronous=NORMAL, prepared statements, one transaction per save"
    }

    static let schema = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;" + schemaTables
    /// The tables and index, shared with the GRDB contender so both SQLite peers store the same schema.
    static let schemaTables = """
        CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, age INTEGER NOT NULL,
            score REAL NOT NULL, created REAL NOT NULL);
        CREATE TABLE parent(id INTEGER PRIMARY KEY, number INTEGER NOT NULL, name TEXT NOT NULL);
        CREATE TABLE child(id INTEGER PRIMARY KEY, value INTEGER NOT NULL, name TEXT NOT NULL,
            parent_id INTEGER REFERENCES parent(id));
        CREATE INDEX child_parent ON child(parent_id);
        """
    static let columns = "id, name, email, age, score, created"

    public func open(in directory: URL) throws {
        let db = try RawSQLite(path: directory.appendingPathComponent("bench.sqlite").path)
        try db.exec(Self.schema)
        let mode = try db.pragma("journal_mode")
        guard mode == "wal" else { throw BenchError("sqlite-c: journal_mode is \(mode), not wal") }
        self.db = db
    }

    public func close() throws {
        db = nil
        loaded = []
    }

    private func connection() throws -> RawSQLite {
        guard let db else { throw BenchError("sqlite-c: no store is open") }
        return db
    }

    private func transaction(_ body: (RawSQLite) throws -> Void) throws {
        let db = try connection()
        try db.exec("BEGIN IMMEDIATE")
        do {
            try body(db)
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    private static func row(_ s: RawStatement) -> BenchRow {
        BenchRow(
            id: s.int64(0), name: s.text(1), email: s.text(2), age: Int32(truncatingIfNeeded: s.int64(3)),
            score: s.double(4), created: Date(timeIntervalSinceReferenceDate: s.double(5)))
    }

    public func insert(_ rows: ArraySlice<BenchRow>) throws -> BenchOutcome {
        try transaction { db in try Self.insertItems(rows, into: db) }
        return BenchOutcome(rows: rows.count)
    }

    /// Inserts `rows` into `db`'s `item` table with one prepared statement bound and run per row
    /// (the caller holds the transaction); also the raw side of the batch insert figure.
    static func insertItems(_ rows: some Sequence<BenchRow>, into db: RawSQLite) throws {
        let insert = try db.prepare("INSERT INTO item(\(columns)) VALUES (?, ?, ?, ?, ?, ?)")
        for r in rows {
            insert.bind(1, r.id)
            insert.bind(2, r.name)
            insert.bind(3, r.email)
            insert.bind(4, Int64(r.age))
            insert.bind(5, r.score)
            insert.bind(6, r.created.timeIntervalSinceReferenceDate)
            try insert.run()
        }
    }

    private func select(_ sql: String, bind: (RawStatement) -> Void = { _ in }) throws -> [BenchRow] {
        let s = try connection().prepare(sql)
        bind(s)
        var rows: [BenchRow] = []
        while try s.step() { rows.append(Self.row(s)) }
        return rows
    }

    public func fetchAll() throws -> BenchOutcome {
        let rows = try select("SELECT \(Self.columns) FROM item")
        return BenchOutcome(rows: rows.count, checksum: rows.reduce(0) { $0 &+ BenchChecksum.row($1) })
    }

    public func lookUp(_ ids: [Int64], warm: Bool) throws -> BenchOutcome {
        let s = try connection().prepare("SELECT \(Self.columns) FROM item WHERE id = ?")
        var sum: Int64 = 0
        for id in ids {
            s.reset()
            s.bind(1, id)
            guard try s.step() else { throw BenchError("sqlite-c: row \(id) is missing") }
            sum = sum &+ BenchChecksum.row(Self.row(s))
        }
        return BenchOutcome(rows: ids.count, checksum: sum)
    }

    public func fetchFiltered(ages: ClosedRange<Int32>) throws -> BenchOutcome {
        let rows = try select("SELECT \(Self.columns) FROM item WHERE age BETWEEN ? AND ? ORDER BY name") {
            $0.bind(1, Int64(ages.lowerBound))
            $0.bind(2, Int64(ages.upperBound))
        }
        var sum: Int64 = 0
        for (i, r) in rows.enumerated() {
            sum = sum &+ BenchChecksum.row(r) &+ BenchChecksum.ordered(position: i, id: r.id)
        }
        return BenchOutcome(rows: rows.count, checksum: sum)
    }

    public func updateAll() throws -> BenchOutcome {
        var count = 0
        try transaction { db in
            let read = try db.prepare("SELECT id, score FROM item")
            var rows: [(Int64, Double)] = []
            while try read.step() { rows.append((read.int64(0), read.double(1))) }
            let update = try db.prepare("UPDATE item SET score = ? WHERE id = ?")
            for (id, score) in rows {
                update.bind(1, score + 1)
                update.bind(2, id)
                try update.run()
            }
            count = rows.count
        }
        return BenchOutcome(rows: count)
    }

    public func deleteAll() throws -> BenchOutcome {
        var count = 0
        try transaction { db in
            let read = try db.prepare("SELECT id FROM item")
            var ids: [Int64] = []
            while try read.step() { ids.append(read.int64(0)) }
            let delete = try db.prepare("DELETE FROM item WHERE id = ?")
            for id in ids {
                delete.bind(1, id)
                try delete.run()
            }
            count = ids.count
        }
        return BenchOutcome(rows: count)
    }

    public func loadForChange(_ ids: [Int64]) throws {
        let s = try connection().prepare("SELECT \(Self.columns) FROM item WHERE id = ?")
        loaded = try ids.map { id in
            s.reset()
            s.bind(1, id)
            guard try s.step() else { throw BenchError("sqlite-c: row \(id) is missing") }
            return Self.row(s)
        }
    }

    public func saveChanged() throws -> BenchOutcome {
        try transaction { db in
            let update = try db.prepare("UPDATE item SET age = ? WHERE id = ?")
            for i in loaded.indices {
                loaded[i].age += 1
                update.bind(1, Int64(loaded[i].age))
                update.bind(2, loaded[i].id)
                try update.run()
            }
        }
        return BenchOutcome(rows: loaded.count)
    }

    public func insertGraph(_ dataset: BenchDataset) throws {
        try transaction { db in
            let parent = try db.prepare("INSERT INTO parent(id, number, name) VALUES (?, ?, ?)")
            let child = try db.prepare("INSERT INTO child(id, value, name, parent_id) VALUES (?, ?, ?, ?)")
            var value: Int64 = 0
            for p in 0..<dataset.parents {
                let number = Int64(p + 1)
                parent.bind(1, number)
                parent.bind(2, number)
                parent.bind(3, "parent-\(number)")
                try parent.run()
                for _ in 0..<dataset.childrenPerParent {
                    value += 1
                    child.bind(1, value)
                    child.bind(2, value)
                    child.bind(3, "child-\(value)")
                    child.bind(4, number)
                    try child.run()
                }
            }
        }
    }

    public func walkGraph(prefetch: Bool) throws -> BenchOutcome {
        let db = try connection()
        let parents = try db.prepare("SELECT id, number, name FROM parent ORDER BY id")
        var list: [(id: Int64, number: Int64, name: String)] = []
        while try parents.step() { list.append((parents.int64(0), parents.int64(1), parents.text(2))) }
        var sum: Int64 = 0
        var count = 0
        if prefetch {
            // Every child of the fetched parents in one query, grouped by parent in memory.
            let children = try db.prepare(
                "SELECT parent_id, id, value, name FROM child WHERE parent_id IN (SELECT id FROM parent)")
            var byParent: [Int64: [(Int64, String)]] = [:]
            while try children.step() {
                byParent[children.int64(0), default: []].append((children.int64(2), children.text(3)))
            }
            for p in list {
                for (value, _) in byParent[p.id] ?? [] {
                    sum = sum &+ BenchChecksum.child(parent: p.number, value: value)
                    count += 1
                }
            }
        } else {
            let children = try db.prepare("SELECT id, value, name FROM child WHERE parent_id = ?")
            for p in list {
                children.reset()
                children.bind(1, p.id)
                while try children.step() {
                    _ = children.text(2)
                    sum = sum &+ BenchChecksum.child(parent: p.number, value: children.int64(1))
                    count += 1
                }
            }
        }
        return BenchOutcome(rows: count, checksum: sum)
    }
}
