import CLMDB
import Foundation
import StrataTesting

/// Format-aware damage to a Strata LMDB store (docs/formats/lmdb.md), made with liblmdb on a copy:
/// row keys with other entity numbers or primary keys, row bodies with damaged versions, slot
/// counts, bitmaps and lengths, references to rows that do not exist, metadata (`format`,
/// `layout`, key counters `pk…`, `hashes`, `values`) with interesting values, deleted entries; and
/// raw damage to the file's pages.
enum LMDBDamage {
    /// Structured damage, plus raw damage where Strata can check it: the two meta pages (magic,
    /// version, map size, root pages, last page, transaction id) and the file's length.
    static func damage(_ url: URL, _ random: inout SeededGenerator) throws -> String {
        try damage(url, &random, anyPage: false)
    }

    /// Structured damage plus raw damage to any page. LMDB keeps no checksums and trusts the
    /// branch and leaf pages it reads, so some of this crashes liblmdb itself (docs/reliability.md,
    /// "Known limits"): the `lmdb-pages` target, for campaigns, not CI.
    static func damageAnyPage(_ url: URL, _ random: inout SeededGenerator) throws -> String {
        try damage(url, &random, anyPage: true)
    }

    static func damage(_ url: URL, _ random: inout SeededGenerator, anyPage: Bool) throws -> String {
        var done: [String] = []
        let raw = Int.random(in: 0..<5, using: &random) == 0
        if !raw || Bool.random(using: &random) {
            for _ in 0..<(Int.random(in: 0..<4, using: &random) == 0 ? 2 : 1) {
                done.append(try structured(url, &random))
            }
        }
        if raw {
            var bytes = Array(try Data(contentsOf: url))
            if anyPage {
                // Meta pages 0 and 1 keep the root page numbers, the last transaction id and the map size.
                var offsets = [0, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 136]
                offsets += offsets.map { $0 + 4_096 }
                for page in stride(from: 8_192, to: bytes.count, by: 4_096) {
                    offsets += [page, page + 8, page + 10, page + 12, page + 16]
                }
                done.append("raw " + ByteDamage.damage(&bytes, using: &random, near: offsets))
            } else {
                done.append("raw " + metaOrLength(&bytes, &random))
            }
            try Data(bytes).write(to: url)
        }
        return done.joined(separator: "; ")
    }

    /// A change to a meta page's fields, or to the file's length.
    static func metaOrLength(_ bytes: inout [UInt8], _ random: inout SeededGenerator) -> String {
        if Int.random(in: 0..<3, using: &random) == 0 {
            let length =
                [0, 1, 4_095, 4_096, 8_191, 8_192, bytes.count / 2, bytes.count - 4_096, bytes.count - 1]
                .filter { $0 >= 0 && $0 < bytes.count }.randomElement(using: &random) ?? 0
            bytes.removeSubrange(length...)
            return "truncate to \(length) bytes"
        }
        // The meta page: header (16 bytes), then magic, version, address, map size, two database
        // records (48 bytes each, root page at their end), last page, transaction id.
        let fields = [16, 20, 24, 32, 40, 44, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136]
        let page = Bool.random(using: &random) ? 0 : 4_096
        let at = page + fields[Int.random(in: 0..<fields.count, using: &random)]
        guard at < bytes.count else { return "file too short for a meta field" }
        if Bool.random(using: &random) {
            let bit = Int.random(in: 0..<64, using: &random)
            if at + bit / 8 < bytes.count { bytes[at + bit / 8] ^= UInt8(1 << (bit % 8)) }
            return "flip bit \(bit) of the meta field at 0x\(String(at, radix: 16))"
        }
        let value = ByteDamage.interestingInteger(using: &random)
        ByteDamage.write(value, width: 8, bigEndian: false, at: at, in: &bytes)
        return "write \(value) into the meta field at 0x\(String(at, radix: 16))"
    }

    /// One edit through liblmdb.
    static func structured(_ url: URL, _ random: inout SeededGenerator) throws -> String {
        let environment = try Environment(url)
        defer { environment.close() }
        return try environment.write { transaction in
            let names = try transaction.keys(of: transaction.database(nil)).map { String(decoding: $0, as: UTF8.self) }
            guard !names.isEmpty else { return "no databases" }
            let name = names[Int.random(in: 0..<names.count, using: &random)]
            let database = try transaction.database(name)
            let entries = try transaction.entries(of: database, limit: 400)
            guard !entries.isEmpty else { return "\(name): empty" }
            let (key, value) = entries[Int.random(in: 0..<entries.count, using: &random)]
            let label =
                name == "meta"
                ? "meta \(String(decoding: key.prefix(3), as: UTF8.self))\(key.count > 3 ? "+\(key.count - 3)" : "")"
                : "\(name)[\(hex(key))]"
            switch Int.random(in: 0..<6, using: &random) {
            case 0, 1:
                var bytes = value
                let what: String
                if name == "meta", String(decoding: key, as: UTF8.self) == "layout", Bool.random(using: &random) {
                    what = layoutEdit(&bytes, &random)
                } else if name == "meta",
                    key.starts(with: Array("pk".utf8)) || String(decoding: key, as: UTF8.self) == "format"
                {
                    let number = ByteDamage.interestingInteger(using: &random)
                    ByteDamage.write(number, width: bytes.count >= 8 ? 8 : 4, bigEndian: false, at: 0, in: &bytes)
                    what = "= \(number)"
                } else {
                    // Row bodies: version byte, row version (1...8), slot count (9...10), bitmap (11...); lengths follow.
                    what = ByteDamage.damage(&bytes, using: &random, near: [0, 1, 9, 11, 12, 13, 14, 15, 16, 20, 24])
                }
                try transaction.replace(database, key: key, old: value, new: bytes)
                return "\(label) value: \(what)"
            case 2:
                // Another entity number or primary key in a row key (or the first 12 bytes of any key).
                var newKey = key
                let number = ByteDamage.interestingInteger(using: &random)
                let inKey = newKey.count >= 16 && Bool.random(using: &random) ? 4 : 0
                if Bool.random(using: &random) || newKey.count < inKey + 12 {
                    ByteDamage.write(number, width: 4, bigEndian: true, at: inKey, in: &newKey)
                } else {
                    ByteDamage.write(number, width: 8, bigEndian: true, at: inKey + 4, in: &newKey)
                }
                try transaction.delete(database, key: key, value: value)
                try transaction.put(database, key: newKey, value: value)
                return "\(label) key → [\(hex(newKey))]"
            case 3:
                // A reference value (refs, links) or a to-one key inside a row pointing elsewhere.
                var bytes = value
                let at = value.count == 12 ? 0 : Int.random(in: 0..<max(1, value.count), using: &random)
                let number = ByteDamage.interestingInteger(using: &random)
                ByteDamage.write(
                    number, width: Bool.random(using: &random) ? 4 : 8, bigEndian: true, at: at, in: &bytes)
                try transaction.replace(database, key: key, old: value, new: bytes)
                return "\(label) value: \(number) at \(at)"
            case 4:
                try transaction.delete(database, key: key, value: value)
                return "\(label) deleted"
            default:
                // A value cut short or grown.
                var bytes = value
                if Bool.random(using: &random), !bytes.isEmpty {
                    bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
                } else {
                    bytes += Array(
                        repeating: UInt8.random(in: 0...255, using: &random),
                        count: Int.random(in: 1...9, using: &random))
                }
                try transaction.replace(database, key: key, old: value, new: bytes)
                return "\(label) value resized \(value.count) → \(bytes.count)"
            }
        }
    }

    /// Edits the `layout` text (`number=Entity;…;iN=Entity:kind:properties`).
    static func layoutEdit(_ bytes: inout [UInt8], _ random: inout SeededGenerator) -> String {
        var text = String(decoding: bytes, as: UTF8.self)
        var parts = text.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        guard !parts.isEmpty else { return "layout empty" }
        let index = Int.random(in: 0..<parts.count, using: &random)
        let old = parts[index]
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            let name = old.split(separator: "=").last.map(String.init) ?? ""
            parts[index] = "\(ByteDamage.interestingInteger(using: &random))=\(name)"
        case 1: parts.remove(at: index)
        case 2: parts.append(old)
        default: parts[index] = String(old.reversed())
        }
        text = parts.joined(separator: ";")
        bytes = Array(text.utf8)
        return "layout '\(old)' → '\(parts.indices.contains(index) ? parts[index] : "")'"
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// A liblmdb environment over a copy.
    final class Environment {
        private var handle: OpaquePointer?

        init(_ url: URL) throws {
            try check(mdb_env_create(&handle), "create")
            mdb_env_set_maxdbs(handle, 64)
            mdb_env_set_mapsize(handle, 1 << 30)
            do {
                try check(mdb_env_open(handle, url.path, UInt32(MDB_NOSUBDIR | MDB_NOLOCK), 0o644), "open \(url.path)")
            } catch {
                mdb_env_close(handle)
                handle = nil
                throw error
            }
        }

        func close() {
            if let handle { mdb_env_close(handle) }
            handle = nil
        }

        func write<T>(_ body: (Transaction) throws -> T) throws -> T {
            var transaction: OpaquePointer?
            try check(mdb_txn_begin(handle, nil, 0, &transaction), "begin")
            do {
                let result = try body(Transaction(handle: transaction))
                try check(mdb_txn_commit(transaction), "commit")
                return result
            } catch {
                mdb_txn_abort(transaction)
                throw error
            }
        }
    }

    struct Transaction {
        let handle: OpaquePointer?

        func database(_ name: String?) throws -> MDB_dbi {
            var dbi: MDB_dbi = 0
            try check(mdb_dbi_open(handle, name, 0, &dbi), "open database \(name ?? "main")")
            return dbi
        }

        func keys(of dbi: MDB_dbi) throws -> [[UInt8]] { try entries(of: dbi, limit: 1_000).map(\.0) }

        func entries(of dbi: MDB_dbi, limit: Int) throws -> [([UInt8], [UInt8])] {
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(handle, dbi, &cursor), "cursor")
            defer { mdb_cursor_close(cursor) }
            var result: [([UInt8], [UInt8])] = []
            var key = MDB_val()
            var value = MDB_val()
            var status = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
            while status == 0 && result.count < limit {
                result.append((bytes(key), bytes(value)))
                status = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            return result
        }

        func put(_ dbi: MDB_dbi, key: [UInt8], value: [UInt8]) throws {
            var key = key
            var value = value
            // An edit the database refuses (a DUPFIXED value of another size, an empty key) is no damage.
            _ = key.withUnsafeMutableBytes { k in
                value.withUnsafeMutableBytes { v in
                    var keyValue = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
                    var dataValue = MDB_val(mv_size: v.count, mv_data: v.baseAddress)
                    return mdb_put(handle, dbi, &keyValue, &dataValue, 0)
                }
            }
        }

        func delete(_ dbi: MDB_dbi, key: [UInt8], value: [UInt8]) throws {
            var key = key
            var value = value
            _ = key.withUnsafeMutableBytes { k in
                value.withUnsafeMutableBytes { v in
                    var keyValue = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
                    var dataValue = MDB_val(mv_size: v.count, mv_data: v.baseAddress)
                    return mdb_del(handle, dbi, &keyValue, &dataValue)
                }
            }
        }

        func replace(_ dbi: MDB_dbi, key: [UInt8], old: [UInt8], new: [UInt8]) throws {
            try delete(dbi, key: key, value: old)
            try put(dbi, key: key, value: new)
        }

        private func bytes(_ value: MDB_val) -> [UInt8] {
            guard let data = value.mv_data, value.mv_size > 0 else { return [] }
            return Array(UnsafeRawBufferPointer(start: data, count: value.mv_size))
        }
    }

    static func check(_ status: Int32, _ what: String) throws {
        guard status == 0 else { throw CaseFailure("liblmdb \(what): \(String(cString: mdb_strerror(status)))") }
    }
}
