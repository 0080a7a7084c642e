import Foundation
import GRDB
import StrataTools

/// The benchmark row as a GRDB record (Codable, `FetchableRecord`, `PersistableRecord`). Dates are
/// stored as seconds since 2001 (REAL), like the other SQLite contenders, instead of GRDB's default
/// text format.
struct ItemRecord: Codable, Identifiable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
    static let databaseDateEncodingStrategy = DatabaseDateEncodingStrategy.timeIntervalSinceReferenceDate
    static let databaseDateDecodingStrategy = DatabaseDateDecodingStrategy.timeIntervalSinceReferenceDate
    var id: Int64
    var name: String
    var email: String
    var age: Int32
    var score: Double
    var created: Date

    init(_ r: BenchRow) {
        id = r.id
        name = r.name
        email = r.email
        age = r.age
        score = r.score
        created = r.created
    }

    var checksum: Int64 {
        BenchChecksum.row(
            id: id, nameBytes: name.utf8.count, emailBytes: email.utf8.count, age: Int64(age), score: score,
            created: created.timeIntervalSinceReferenceDate)
    }
}

struct ParentRecord: Codable, Identifiable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "parent"
    static let children = hasMany(ChildRecord.self, key: "children", using: ForeignKey(["parent_id"]))
    var id: Int64
    var number: Int64
    var name: String
}

struct ChildRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "child"
    var id: Int64
    var value: Int64
    var name: String
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The SQL column's name, which GRDB's Codable mapping takes from the property.
    var parent_id: Int64
}

/// A parent with its children, as GRDB's `including(all:)` returns it.
struct ParentWithChildren: Decodable, FetchableRecord {
    var parent: ParentRecord
    var children: [ChildRecord]

    enum CodingKeys: String, CodingKey {
        case parent
        case children
    }

    init(from decoder: any Decoder) throws {
        parent = try ParentRecord(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        children = try container.decode([ChildRecord].self, forKey: .children)
    }
}

/// groue/GRDB.swift records on a `DatabaseQueue`: one `write` transaction per save. WAL journal with
/// `synchronous=NORMAL`, the same as the raw SQLite contender.
///
/// Thread safety: not `Sendable`; the runner uses it from one thread.
public final class GRDBContender: BenchContender {
    private var queue: DatabaseQueue?
    private var loaded: [ItemRecord] = []

    /// Creates the contender.
    public init() {}

    public var id: String { "grdb" }
    public var engine: String { "sqlite" }
    public var settings: String {
        "GRDB 7.10 Codable records, DatabaseQueue: WAL, synchronous=NORMAL, one write transaction per save"
    }

    public func open(in directory: URL) throws {
        var config = Configuration()
        config.journalMode = .wal
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let queue = try DatabaseQueue(
            path: directory.appendingPathComponent("bench.sqlite").path, configuration: config)
        try queue.write { db in try db.execute(sql: SQLiteCContender.schemaTables) }
        let mode = try queue.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        guard mode == "wal" else { throw BenchError("grdb: journal_mode is \(mode ?? "?"), not wal") }
        self.queue = queue
    }

    public func close() throws {
        try queue?.close()
        queue = nil
        loaded = []
    }

    private func database() throws -> DatabaseQueue {
        guard let queue else { throw BenchError("grdb: no store is open") }
        return queue
    }

    public func insert(_ rows: ArraySlice<BenchRow>) throws -> BenchOutcome {
        try database().write { db in
            for r in rows { try ItemRecord(r).insert(db) }
        }
        return BenchOutcome(rows: rows.count)
    }

    public func fetchAll() throws -> BenchOutcome {
        let items = try database().read { db in try ItemRecord.fetchAll(db) }
        return BenchOutcome(rows: items.count, checksum: items.reduce(0) { $0 &+ $1.checksum })
    }

    public func lookUp(_ ids: [Int64], warm: Bool) throws -> BenchOutcome {
        // One read block around the loop, as a GRDB user writes it; each fetchOne is its own query.
        try database().read { db in
            var sum: Int64 = 0
            for id in ids {
                guard let item = try ItemRecord.fetchOne(db, id: id) else {
                    throw BenchError("grdb: row \(id) is missing")
                }
                sum = sum &+ item.checksum
            }
            return BenchOutcome(rows: ids.count, checksum: sum)
        }
    }

    public func fetchFiltered(ages: ClosedRange<Int32>) throws -> BenchOutcome {
        let items = try database().read { db in
            try ItemRecord.filter(ages.contains(Column("age"))).order(Column("name")).fetchAll(db)
        }
        var sum: Int64 = 0
        for (i, item) in items.enumerated() {
            sum = sum &+ item.checksum &+ BenchChecksum.ordered(position: i, id: item.id)
        }
        return BenchOutcome(rows: items.count, checksum: sum)
    }

    public func updateAll() throws -> BenchOutcome {
        try database().write { db in
            let items = try ItemRecord.fetchAll(db)
            for var item in items {
                item.score += 1
                try item.update(db)
            }
            return BenchOutcome(rows: items.count)
        }
    }

    public func deleteAll() throws -> BenchOutcome {
        try database().write { db in
            let items = try ItemRecord.fetchAll(db)
            for item in items { try item.delete(db) }
            return BenchOutcome(rows: items.count)
        }
    }

    public func loadForChange(_ ids: [Int64]) throws {
        loaded = try database().read { db in try ItemRecord.fetchAll(db, ids: ids) }
    }

    public func saveChanged() throws -> BenchOutcome {
        try database().write { db in
            for i in loaded.indices {
                loaded[i].age += 1
                try loaded[i].update(db)
            }
        }
        return BenchOutcome(rows: loaded.count)
    }

    public func insertGraph(_ dataset: BenchDataset) throws {
        try database().write { db in
            var value: Int64 = 0
            for p in 0..<dataset.parents {
                let number = Int64(p + 1)
                try ParentRecord(id: number, number: number, name: "parent-\(number)").insert(db)
                for _ in 0..<dataset.childrenPerParent {
                    value += 1
                    try ChildRecord(id: value, value: value, name: "child-\(value)", parent_id: number).insert(db)
                }
            }
        }
    }

    public func walkGraph(prefetch: Bool) throws -> BenchOutcome {
        try database().read { db in
            var sum: Int64 = 0
            var count = 0
            if prefetch {
                let graphs = try ParentWithChildren.fetchAll(db, ParentRecord.including(all: ParentRecord.children))
                for g in graphs {
                    for child in g.children {
                        sum = sum &+ BenchChecksum.child(parent: g.parent.number, value: child.value)
                        count += 1
                    }
                }
            } else {
                for parent in try ParentRecord.fetchAll(db) {
                    for child in try parent.request(for: ParentRecord.children).fetchAll(db) {
                        sum = sum &+ BenchChecksum.child(parent: parent.number, value: child.value)
                        count += 1
                    }
                }
            }
            return BenchOutcome(rows: count, checksum: sum)
        }
    }
}
