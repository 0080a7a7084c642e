import CLMDBBench
import Foundation
import StrataTools

/// Raw LMDB through its C API with a compact row encoding (``RowCodec``): one write transaction per
/// save, a read transaction per read workload and per point lookup, native integer keys, a DUPSORT
/// index from parent to children for the graph. LMDB's default durability: sync on commit.
///
/// Thread safety: not `Sendable`; the runner uses it from one thread.
public final class LMDBCContender: BenchContender {
    private var env: RawLMDB?
    private var items: MDB_dbi = 0
    private var parents: MDB_dbi = 0
    private var children: MDB_dbi = 0
    private var childrenByParent: MDB_dbi = 0
    private var loaded: [Int64] = []

    /// Creates the contender.
    public init() {}

    public var id: String { "lmdb-c" }
    public var engine: String { "lmdb" }
    public var settings: String {
        "liblmdb C API \(String(cString: mdb_version(nil, nil, nil))): default flags (sync on commit), compact binary rows, one write transaction per save"
    }

    public func open(in directory: URL) throws {
        let env = try RawLMDB(directory: directory)
        try env.write { txn in
            items = try env.openDatabase("item", flags: MDB_INTEGERKEY, in: txn)
            parents = try env.openDatabase("parent", flags: MDB_INTEGERKEY, in: txn)
            children = try env.openDatabase("child", flags: MDB_INTEGERKEY, in: txn)
            childrenByParent = try env.openDatabase(
                "child_by_parent", flags: MDB_INTEGERKEY | MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP, in: txn)
        }
        self.env = env
    }

    public func close() throws {
        env = nil
        loaded = []
    }

    private func environment() throws -> RawLMDB {
        guard let env else { throw BenchError("lmdb-c: no store is open") }
        return env
    }

    private func put(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: UInt64, _ bytes: [UInt8], flags: Int32 = 0) throws {
        try withKey(key) { k in
            try bytes.withUnsafeBytes { raw in
                var v = MDB_val(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
                try check(mdb_put(txn, dbi, &k, &v, UInt32(flags)), "mdb_put")
            }
        }
    }

    private func get(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: UInt64) throws -> MDB_val {
        try withKey(key) { k in
            var v = MDB_val()
            try check(mdb_get(txn, dbi, &k, &v), "mdb_get(\(key))")
            return v
        }
    }

    /// Calls `body` with each key and value of `dbi`, in key order.
    private func scan(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ body: (UInt64, MDB_val) throws -> Void) throws {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        while rc == 0 {
            try body(keyValue(k), v)
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get") }
    }

    public func insert(_ rows: ArraySlice<BenchRow>) throws -> BenchOutcome {
        var buffer: [UInt8] = []
        try environment().write { txn in
            for r in rows {
                RowCodec.encode(r, into: &buffer)
                try put(txn, items, UInt64(r.id), buffer)
            }
        }
        return BenchOutcome(rows: rows.count)
    }

    private func allRows() throws -> [BenchRow] {
        try environment().read { txn in
            var rows: [BenchRow] = []
            try scan(txn, items) { key, value in rows.append(try RowCodec.decode(id: Int64(key), value)) }
            return rows
        }
    }

    public func fetchAll() throws -> BenchOutcome {
        let rows = try allRows()
        return BenchOutcome(rows: rows.count, checksum: rows.reduce(0) { $0 &+ BenchChecksum.row($1) })
    }

    public func lookUp(_ ids: [Int64], warm: Bool) throws -> BenchOutcome {
        let env = try environment()
        let txn = try env.begin(readOnly: true)
        defer { mdb_txn_abort(txn) }
        var sum: Int64 = 0
        for id in ids {
            // A fresh snapshot per lookup, as independent reads would have (reset/renew is LMDB's cheap way).
            mdb_txn_reset(txn)
            try check(mdb_txn_renew(txn), "mdb_txn_renew")
            sum = sum &+ BenchChecksum.row(try RowCodec.decode(id: id, try get(txn, items, UInt64(id))))
        }
        return BenchOutcome(rows: ids.count, checksum: sum)
    }

    public func fetchFiltered(ages: ClosedRange<Int32>) throws -> BenchOutcome {
        let rows = try environment().read { txn in
            var rows: [BenchRow] = []
            try scan(txn, items) { key, value in
                let age = value.mv_data.loadUnaligned(as: Int32.self)  // the encoding starts with age
                if ages.contains(Int32(littleEndian: age)) { rows.append(try RowCodec.decode(id: Int64(key), value)) }
            }
            return rows.sorted { $0.name < $1.name }
        }
        var sum: Int64 = 0
        for (i, r) in rows.enumerated() {
            sum = sum &+ BenchChecksum.row(r) &+ BenchChecksum.ordered(position: i, id: r.id)
        }
        return BenchOutcome(rows: rows.count, checksum: sum)
    }

    public func updateAll() throws -> BenchOutcome {
        var count = 0
        try environment().write { txn in
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, items, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val()
            var v = MDB_val()
            var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
            while rc == 0 {
                let row = try RowCodec.decode(id: Int64(keyValue(k)), v)
                let bytes = RowCodec.patch(v, score: row.score + 1)
                try bytes.withUnsafeBytes { raw in
                    var nv = MDB_val(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
                    try check(mdb_cursor_put(cursor, &k, &nv, UInt32(MDB_CURRENT)), "mdb_cursor_put")
                }
                count += 1
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get") }
        }
        return BenchOutcome(rows: count)
    }

    public func deleteAll() throws -> BenchOutcome {
        var count = 0
        try environment().write { txn in
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, items, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val()
            var v = MDB_val()
            var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
            while rc == 0 {
                try check(mdb_cursor_del(cursor, 0), "mdb_cursor_del")
                count += 1
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get") }
        }
        return BenchOutcome(rows: count)
    }

    public func loadForChange(_ ids: [Int64]) throws {
        loaded = ids
    }

    public func saveChanged() throws -> BenchOutcome {
        try environment().write { txn in
            for id in loaded {
                let value = try get(txn, items, UInt64(id))
                let row = try RowCodec.decode(id: id, value)
                try put(txn, items, UInt64(id), RowCodec.patch(value, age: row.age + 1))
            }
        }
        return BenchOutcome(rows: loaded.count)
    }

    public func insertGraph(_ dataset: BenchDataset) throws {
        try environment().write { txn in
            var value: Int64 = 0
            for p in 0..<dataset.parents {
                let number = UInt64(p + 1)
                try put(txn, parents, number, Array("parent-\(number)".utf8))
                for _ in 0..<dataset.childrenPerParent {
                    value += 1
                    var bytes: [UInt8] = []
                    withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) }
                    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
                    bytes.append(contentsOf: "child-\(value)".utf8)
                    try put(txn, children, UInt64(value), bytes)
                    var childKey = UInt64(value)
                    try withUnsafeBytes(of: &childKey) { raw in
                        try put(txn, childrenByParent, number, Array(raw))
                    }
                }
            }
        }
    }

    public func walkGraph(prefetch: Bool) throws -> BenchOutcome {
        try environment().read { txn in
            var list: [(number: UInt64, name: String)] = []
            try scan(txn, parents) { key, value in
                list.append(
                    (
                        key,
                        String(
                            decoding: UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size), as: UTF8.self)
                    ))
            }
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, childrenByParent, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            func childIDs(of parent: UInt64) throws -> [UInt64] {
                var ids: [UInt64] = []
                try withKey(parent) { k in
                    var v = MDB_val()
                    var rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_KEY)
                    while rc == 0 {
                        ids.append(keyValue(v))
                        rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT_DUP)
                    }
                    if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get") }
                }
                return ids
            }
            func child(_ id: UInt64) throws -> (parent: Int64, value: Int64, name: String) {
                let v = try get(txn, children, id)
                let raw = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
                return (
                    Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: Int64.self)),
                    Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: Int64.self)),
                    String(decoding: raw[16...], as: UTF8.self)
                )
            }
            var sum: Int64 = 0
            var count = 0
            if prefetch {
                // Every child ID first, then the children in key order, then the walk.
                var all: [(UInt64, [UInt64])] = []
                for p in list { all.append((p.number, try childIDs(of: p.number))) }
                var loaded: [UInt64: (parent: Int64, value: Int64, name: String)] = [:]
                for id in all.flatMap(\.1).sorted() { loaded[id] = try child(id) }
                for (number, ids) in all {
                    for id in ids {
                        sum = sum &+ BenchChecksum.child(parent: Int64(number), value: loaded[id]?.value ?? 0)
                        count += 1
                    }
                }
            } else {
                for p in list {
                    for id in try childIDs(of: p.number) {
                        sum = sum &+ BenchChecksum.child(parent: Int64(p.number), value: try child(id).value)
                        count += 1
                    }
                }
            }
            return BenchOutcome(rows: count, checksum: sum)
        }
    }
}
