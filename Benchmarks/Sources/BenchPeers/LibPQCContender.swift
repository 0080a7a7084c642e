import CLibPQBench
import Foundation
import StrataTools

/// Raw PostgreSQL through libpq: prepared statements executed one row at a time, one transaction
/// per save, rows read in binary format and decoded into plain Swift structs (``BenchRow``). The
/// server is the one the Strata PostgreSQL contenders use (``KnownDriver/postgresServer``), with its
/// defaults (`fsync=on`, `synchronous_commit=on`); each store is a schema of its own.
///
/// Thread safety: not `Sendable`; the runner uses it from one thread.
public final class LibPQCContender: BenchContender {
    private var connection: RawPQ?
    private var schema: String?
    private var loaded: [BenchRow] = []

    /// Creates the contender.
    public init() {}

    public var id: String { "libpq-c" }
    public var engine: String { "postgres" }
    public var settings: String {
        "libpq \(PQlibVersion() / 10000).\(PQlibVersion() % 100): prepared statements one row at a time, binary rows, one transaction per save; fsync=on, synchronous_commit=on (the run's server also has autovacuum off)"
    }

    static let columns = "id, name, email, age, score, created"

    public func open(in directory: URL) throws {
        guard let server = KnownDriver.postgresServer else {
            throw BenchError("libpq-c: no PostgreSQL server; set \(KnownDriver.postgresServerVariable)")
        }
        let connection = try RawPQ(url: server)
        let schema = "libpqc_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        try connection.exec("CREATE SCHEMA \(schema); SET search_path TO \(schema)")
        try connection.exec(
            """
            CREATE TABLE item(id bigint PRIMARY KEY, name text NOT NULL, email text NOT NULL, age integer NOT NULL,
                score double precision NOT NULL, created double precision NOT NULL);
            CREATE TABLE parent(id bigint PRIMARY KEY, number bigint NOT NULL, name text NOT NULL);
            CREATE TABLE child(id bigint PRIMARY KEY, value bigint NOT NULL, name text NOT NULL, parent_id bigint);
            CREATE INDEX child_parent ON child(parent_id);
            """)
        self.connection = connection
        self.schema = schema
    }

    public func close() throws {
        if let connection, let schema { try connection.exec("DROP SCHEMA \(schema) CASCADE") }
        connection = nil
        schema = nil
        loaded = []
    }

    private func db() throws -> RawPQ {
        guard let connection else { throw BenchError("libpq-c: no store is open") }
        return connection
    }

    private func transaction(_ body: (RawPQ) throws -> Void) throws {
        let db = try db()
        try db.exec("BEGIN")
        do {
            try body(db)
            try db.exec("COMMIT")
        } catch {
            try? db.exec("ROLLBACK")
            throw error
        }
    }

    private static func row(_ r: RawPQ.Result, _ i: Int) -> BenchRow {
        BenchRow(
            id: r.int64(i, 0), name: r.text(i, 1), email: r.text(i, 2), age: Int32(truncatingIfNeeded: r.int64(i, 3)),
            score: r.double(i, 4), created: Date(timeIntervalSinceReferenceDate: r.double(i, 5)))
    }

    private func rows(_ result: RawPQ.Result) -> [BenchRow] { (0..<result.count).map { Self.row(result, $0) } }

    public func insert(_ rows: ArraySlice<BenchRow>) throws -> BenchOutcome {
        try transaction { db in
            let insert = try db.prepare(
                "INSERT INTO item(\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6)",
                [.int8, .text, .text, .int4, .float8, .float8])
            for r in rows {
                try insert.run([
                    .int8(r.id), .text(r.name), .text(r.email), .int4(r.age), .float8(r.score),
                    .float8(r.created.timeIntervalSinceReferenceDate),
                ])
            }
        }
        return BenchOutcome(rows: rows.count)
    }

    public func fetchAll() throws -> BenchOutcome {
        let rows = rows(try db().query("SELECT \(Self.columns) FROM item"))
        return BenchOutcome(rows: rows.count, checksum: rows.reduce(0) { $0 &+ BenchChecksum.row($1) })
    }

    public func lookUp(_ ids: [Int64], warm: Bool) throws -> BenchOutcome {
        let select = try db().prepare("SELECT \(Self.columns) FROM item WHERE id = $1", [.int8])
        var sum: Int64 = 0
        for id in ids {
            let result = try select.run([.int8(id)])
            guard result.count == 1 else { throw BenchError("libpq-c: row \(id) is missing") }
            sum = sum &+ BenchChecksum.row(Self.row(result, 0))
        }
        return BenchOutcome(rows: ids.count, checksum: sum)
    }

    public func fetchFiltered(ages: ClosedRange<Int32>) throws -> BenchOutcome {
        let select = try db().prepare(
            "SELECT \(Self.columns) FROM item WHERE age BETWEEN $1 AND $2 ORDER BY name COLLATE \"C\"", [.int4, .int4])
        let rows = rows(try select.run([.int4(ages.lowerBound), .int4(ages.upperBound)]))
        var sum: Int64 = 0
        for (i, r) in rows.enumerated() {
            sum = sum &+ BenchChecksum.row(r) &+ BenchChecksum.ordered(position: i, id: r.id)
        }
        return BenchOutcome(rows: rows.count, checksum: sum)
    }

    public func updateAll() throws -> BenchOutcome {
        var count = 0
        try transaction { db in
            let read = try db.query("SELECT id, score FROM item")
            let update = try db.prepare("UPDATE item SET score = $1 WHERE id = $2", [.float8, .int8])
            for i in 0..<read.count { try update.run([.float8(read.double(i, 1) + 1), .int8(read.int64(i, 0))]) }
            count = read.count
        }
        return BenchOutcome(rows: count)
    }

    public func deleteAll() throws -> BenchOutcome {
        var count = 0
        try transaction { db in
            let read = try db.query("SELECT id FROM item")
            let delete = try db.prepare("DELETE FROM item WHERE id = $1", [.int8])
            for i in 0..<read.count { try delete.run([.int8(read.int64(i, 0))]) }
            count = read.count
        }
        return BenchOutcome(rows: count)
    }

    public func loadForChange(_ ids: [Int64]) throws {
        let select = try db().prepare("SELECT \(Self.columns) FROM item WHERE id = $1", [.int8])
        loaded = try ids.map { id in
            let result = try select.run([.int8(id)])
            guard result.count == 1 else { throw BenchError("libpq-c: row \(id) is missing") }
            return Self.row(result, 0)
        }
    }

    public func saveChanged() throws -> BenchOutcome {
        try transaction { db in
            let update = try db.prepare("UPDATE item SET age = $1 WHERE id = $2", [.int4, .int8])
            for i in loaded.indices {
                loaded[i].age += 1
                try update.run([.int4(loaded[i].age), .int8(loaded[i].id)])
            }
        }
        return BenchOutcome(rows: loaded.count)
    }

    public func insertGraph(_ dataset: BenchDataset) throws {
        try transaction { db in
            let parent = try db.prepare(
                "INSERT INTO parent(id, number, name) VALUES ($1, $2, $3)", [.int8, .int8, .text])
            let child = try db.prepare(
                "INSERT INTO child(id, value, name, parent_id) VALUES ($1, $2, $3, $4)", [.int8, .int8, .text, .int8])
            var value: Int64 = 0
            for p in 0..<dataset.parents {
                let number = Int64(p + 1)
                try parent.run([.int8(number), .int8(number), .text("parent-\(number)")])
                for _ in 0..<dataset.childrenPerParent {
                    value += 1
                    try child.run([.int8(value), .int8(value), .text("child-\(value)"), .int8(number)])
                }
            }
        }
    }

    public func walkGraph(prefetch: Bool) throws -> BenchOutcome {
        let db = try db()
        let parents = try db.query("SELECT id, number, name FROM parent ORDER BY id")
        var sum: Int64 = 0
        var count = 0
        if prefetch {
            let children = try db.query(
                "SELECT parent_id, id, value, name FROM child WHERE parent_id IN (SELECT id FROM parent)")
            var byParent: [Int64: [Int64]] = [:]
            for i in 0..<children.count {
                _ = children.text(i, 3)
                byParent[children.int64(i, 0), default: []].append(children.int64(i, 2))
            }
            for p in 0..<parents.count {
                for value in byParent[parents.int64(p, 0)] ?? [] {
                    sum = sum &+ BenchChecksum.child(parent: parents.int64(p, 1), value: value)
                    count += 1
                }
            }
        } else {
            let children = try db.prepare("SELECT id, value, name FROM child WHERE parent_id = $1", [.int8])
            for p in 0..<parents.count {
                let result = try children.run([.int8(parents.int64(p, 0))])
                for i in 0..<result.count {
                    _ = result.text(i, 2)
                    sum = sum &+ BenchChecksum.child(parent: parents.int64(p, 1), value: result.int64(i, 1))
                    count += 1
                }
            }
        }
        return BenchOutcome(rows: count, checksum: sum)
    }
}
