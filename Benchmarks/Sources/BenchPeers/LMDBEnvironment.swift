import CLMDBBench
import Foundation
import StrataTools

/// A thin wrapper over an LMDB environment for the raw-LMDB contender.
///
/// Thread safety: not `Sendable`; one thread at a time (the benchmark runner's).
final class RawLMDB {
    let env: OpaquePointer

    init(directory: URL, mapSize: Int = 1 << 36) throws {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw BenchError("mdb_env_create returned no environment") }
        self.env = env
        try check(mdb_env_set_maxdbs(env, 8), "mdb_env_set_maxdbs")
        try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
        // Flags 0: LMDB's default durability, sync on commit (the same as Strata's LMDB driver).
        try check(mdb_env_open(env, directory.path, 0, 0o644), "mdb_env_open")
    }

    deinit { mdb_env_close(env) }

    func begin(readOnly: Bool) throws -> OpaquePointer {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn), "mdb_txn_begin")
        return txn!  // mdb_txn_begin succeeded, so it set txn
    }

    func openDatabase(_ name: String, flags: Int32, in txn: OpaquePointer) throws -> MDB_dbi {
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(txn, name, UInt32(flags | MDB_CREATE), &dbi), "mdb_dbi_open(\(name))")
        return dbi
    }

    /// Runs `body` in a write transaction and commits it; aborts on error.
    func write(_ body: (OpaquePointer) throws -> Void) throws {
        let txn = try begin(readOnly: false)
        do {
            try body(txn)
            try check(mdb_txn_commit(txn), "mdb_txn_commit")
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }

    /// Runs `body` in a read transaction.
    func read<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        let txn = try begin(readOnly: true)
        defer { mdb_txn_abort(txn) }
        return try body(txn)
    }
}

func check(_ rc: Int32, _ what: String) throws {
    if rc != 0 { throw BenchError("\(what): \(String(cString: mdb_strerror(rc)))") }
}

/// An MDB_val over a native-endian integer key (MDB_INTEGERKEY).
func withKey<T>(_ key: UInt64, _ body: (inout MDB_val) throws -> T) rethrows -> T {
    var k = key
    return try withUnsafeMutableBytes(of: &k) { raw in
        var val = MDB_val(mv_size: 8, mv_data: raw.baseAddress)
        return try body(&val)
    }
}

func keyValue(_ val: MDB_val) -> UInt64 { val.mv_data.loadUnaligned(as: UInt64.self) }

/// The compact row encoding of the raw-LMDB contender (the id is the key):
/// `age i32 | score f64 | created f64 | nameLength u16 | name | emailLength u16 | email`, little-endian.
enum RowCodec {
    static func encode(_ r: BenchRow, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        append(r.age.littleEndian, &buffer)
        append(r.score.bitPattern.littleEndian, &buffer)
        append(r.created.timeIntervalSinceReferenceDate.bitPattern.littleEndian, &buffer)
        for text in [r.name, r.email] {
            let count = text.utf8.count
            append(UInt16(count).littleEndian, &buffer)
            buffer.append(contentsOf: text.utf8)
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, _ buffer: inout [UInt8]) {
        withUnsafeBytes(of: value) { buffer.append(contentsOf: $0) }
    }

    static func decode(id: Int64, _ val: MDB_val) throws -> BenchRow {
        let bytes = UnsafeRawBufferPointer(start: val.mv_data, count: val.mv_size)
        guard bytes.count >= 24 else { throw BenchError("lmdb-c: row \(id) is \(bytes.count) bytes, too short") }
        let age = Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: Int32.self))
        let score = Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt64.self)))
        let created = Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt64.self)))
        var offset = 20
        func string() throws -> String {
            guard offset + 2 <= bytes.count else { throw BenchError("lmdb-c: row \(id) is truncated") }
            let count = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
            offset += 2
            guard offset + count <= bytes.count else { throw BenchError("lmdb-c: row \(id) is truncated") }
            defer { offset += count }
            return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
        }
        let name = try string()
        let email = try string()
        return BenchRow(
            id: id, name: name, email: email, age: age, score: score,
            created: Date(timeIntervalSinceReferenceDate: created))
    }

    /// Rewrites the fixed-width fields of an encoded row in place (same length).
    static func patch(_ val: MDB_val, age: Int32? = nil, score: Double? = nil) -> [UInt8] {
        var bytes = [UInt8](UnsafeRawBufferPointer(start: val.mv_data, count: val.mv_size))
        bytes.withUnsafeMutableBytes { raw in
            if let age { raw.storeBytes(of: age.littleEndian, toByteOffset: 0, as: Int32.self) }
            if let score { raw.storeBytes(of: score.bitPattern.littleEndian, toByteOffset: 4, as: UInt64.self) }
        }
        return bytes
    }
}
