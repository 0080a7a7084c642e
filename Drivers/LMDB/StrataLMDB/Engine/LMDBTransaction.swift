import CLMDB
import Foundation
import Strata

/// One LMDB transaction (read-only or read-write) and the database operations the driver uses.
///
/// Lifetime: valid only inside the closure of ``LMDBEnvironment/read(_:)`` or
/// ``LMDBEnvironment/write(_:)`` that produced it; every buffer it hands out points into the map
/// and is valid only until that closure returns.
struct LMDBTransaction {
    let handle: OpaquePointer
    let environment: LMDBEnvironment
    /// Whether this is a read-only transaction (``LMDBEnvironment/read(commit:_:)``): every value
    /// it returns lies in the memory map.
    var isReadOnly = false
    /// Where a read-only transaction notes the map pages its values lay on, for the environment's
    /// residency limit (``MapResidency``); `nil` in write transactions and without a limit. It
    /// points to the read's own record, which outlives the transaction.
    var reads: UnsafeMutablePointer<MapReads>? = nil

    /// Notes a value read through the map, reporting to the environment every few windows.
    @inline(__always)
    func noteRead(_ value: UnsafeRawBufferPointer) {
        guard let reads, reads.pointee.note(value) else { return }
        environment.residency?.report(&reads.pointee)
    }

    /// The value stored under `key`, borrowed from the map, or `nil`.
    func get(_ dbi: MDB_dbi, _ key: [UInt8]) throws -> UnsafeRawBufferPointer? {
        try key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val()
            let rc = mdb_get(handle, dbi, &k, &v)
            if rc == MDB_NOTFOUND { return nil }
            try environment.check(rc, "reading")
            let value = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
            noteRead(value)
            return value
        }
    }

    /// The value stored under the row key of `id` (``Keys/row(_:)``), the key built on the stack.
    func get(_ dbi: MDB_dbi, row id: RowID) throws -> UnsafeRawBufferPointer? {
        try withUnsafeTemporaryAllocation(byteCount: Keys.rowIDSize, alignment: 8) { key in
            Keys.storeRowID(id, into: key, at: 0)
            var k = MDB_val(mv_size: Keys.rowIDSize, mv_data: key.baseAddress)
            var v = MDB_val()
            let rc = mdb_get(handle, dbi, &k, &v)
            if rc == MDB_NOTFOUND { return nil }
            try environment.check(rc, "reading")
            let value = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
            noteRead(value)
            return value
        }
    }

    /// Stores `value` under `key`.
    func put(_ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8], flags: UInt32 = 0) throws {
        try value.withUnsafeBytes { try put(dbi, key, $0, flags: flags) }
    }

    /// ``put(_:_:_:flags:)`` with the value in borrowed memory.
    func put(_ dbi: MDB_dbi, _ key: [UInt8], _ valueBytes: UnsafeRawBufferPointer, flags: UInt32 = 0) throws {
        try key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val(
                mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
            let rc = mdb_put(handle, dbi, &k, &v, flags)
            if rc == MDB_KEYEXIST, flags & UInt32(MDB_NODUPDATA) != 0 { return }
            try environment.check(rc, "writing")
        }
    }

    /// Stores `value` under a key not yet present; `false` (and nothing written) when it is.
    ///
    /// - Parameter append: Try `MDB_APPEND` first: when the key sorts after every key of the
    ///   database LMDB adds it at the end without searching and fills pages completely (bulk
    ///   inserts of new rows); otherwise it falls back to an ordinary insert.
    func insert(_ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8], append: Bool = false) throws -> Bool {
        try value.withUnsafeBytes { try insert(dbi, key, $0, append: append) }
    }

    /// ``insert(_:_:_:append:)`` with the value in borrowed memory.
    func insert(_ dbi: MDB_dbi, _ key: [UInt8], _ valueBytes: UnsafeRawBufferPointer, append: Bool = false) throws
        -> Bool
    {
        try key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val(
                mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
            if append {
                let rc = mdb_put(handle, dbi, &k, &v, UInt32(MDB_APPEND))
                if rc != MDB_KEYEXIST {
                    try environment.check(rc, "writing")
                    return true
                }
            }
            let rc = mdb_put(handle, dbi, &k, &v, UInt32(MDB_NOOVERWRITE))
            if rc == MDB_KEYEXIST { return false }
            try environment.check(rc, "writing")
            return true
        }
    }

    /// Deletes `key` (with `value`: only that duplicate). Missing entries are not an error.
    func delete(_ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8]? = nil) throws {
        try key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            let rc: Int32
            if let value {
                rc = value.withUnsafeBytes { valueBytes in
                    var v = MDB_val(
                        mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                    return mdb_del(handle, dbi, &k, &v)
                }
            } else {
                rc = mdb_del(handle, dbi, &k, nil)
            }
            if rc == MDB_NOTFOUND { return }
            try environment.check(rc, "deleting")
        }
    }

    /// Number of entries of a database.
    func count(_ dbi: MDB_dbi) throws -> Int {
        var stat = MDB_stat()
        try environment.check(mdb_stat(handle, dbi, &stat), "counting")
        return stat.ms_entries
    }

    /// Empties a database.
    func drop(_ dbi: MDB_dbi) throws { try environment.check(mdb_drop(handle, dbi, 0), "clearing") }

    /// Runs `body` with a cursor on `dbi`, closing it afterwards.
    func withCursor<T>(_ dbi: MDB_dbi, _ body: (inout LMDBCursor) throws -> T) throws -> T {
        var cursor: OpaquePointer?
        try environment.check(mdb_cursor_open(handle, dbi, &cursor), "opening a cursor")
        // mdb_cursor_open succeeded, so the cursor exists.
        var wrapper = LMDBCursor(handle: cursor!, transaction: self)
        defer { mdb_cursor_close(cursor) }
        return try body(&wrapper)
    }
}

/// A cursor over one database; positions are read as borrowed (key, value) buffers.
struct LMDBCursor {
    let handle: OpaquePointer
    let transaction: LMDBTransaction
    var environment: LMDBEnvironment { transaction.environment }
    private var key = [UInt8]()

    init(handle: OpaquePointer, transaction: LMDBTransaction) {
        self.handle = handle
        self.transaction = transaction
    }

    typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    /// Moves the cursor; `nil` when there is no such entry.
    mutating func move(_ op: MDB_cursor_op, to seek: [UInt8]? = nil, value seekValue: [UInt8]? = nil) throws -> Entry? {
        var k = MDB_val()
        var v = MDB_val()
        let rc: Int32
        if let seek {
            // The seek key must stay alive across the call; keep a copy in the cursor.
            key = seek
            rc = key.withUnsafeMutableBytes { keyBytes in
                k = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
                if let seekValue {
                    return seekValue.withUnsafeBytes { valueBytes in
                        v = MDB_val(
                            mv_size: valueBytes.count,
                            mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                        return mdb_cursor_get(handle, &k, &v, op)
                    }
                }
                return mdb_cursor_get(handle, &k, &v, op)
            }
        } else {
            rc = mdb_cursor_get(handle, &k, &v, op)
        }
        if rc == MDB_NOTFOUND || rc == EINVAL && seek == nil { return nil }
        try environment.check(rc, "reading")
        let value = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
        transaction.noteRead(value)
        return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size), value)
    }

    /// Replaces the value at the cursor's position (`MDB_CURRENT`). Buffers read before the call
    /// are invalid after it.
    func replaceCurrent(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try environment.check(mdb_cursor_put(handle, &k, &v, UInt32(MDB_CURRENT)), "writing")
    }

    /// Deletes the entry at the cursor's position; the next `MDB_NEXT` returns the entry after it.
    func deleteCurrent() throws {
        try environment.check(mdb_cursor_del(handle, 0), "deleting")
    }

    /// Number of duplicates at the current key.
    func duplicateCount() throws -> Int {
        var count = 0
        try environment.check(mdb_cursor_count(handle, &count), "counting")
        return count
    }
}

extension UnsafeRawBufferPointer {
    /// Whether the bytes start with `prefix`.
    func hasPrefix(_ prefix: [UInt8]) -> Bool {
        guard count >= prefix.count else { return false }
        for index in 0..<prefix.count where self[index] != prefix[index] { return false }
        return true
    }

    /// Byte-wise comparison with `other` (LMDB's default key order).
    func compare(_ other: [UInt8]) -> Int {
        let shared = Swift.min(count, other.count)
        for index in 0..<shared where self[index] != other[index] { return self[index] < other[index] ? -1 : 1 }
        return count == other.count ? 0 : (count < other.count ? -1 : 1)
    }
}
