import CSQLite
import Foundation
import StrataTesting

/// Format-aware damage to a SQLite store in Core Data's layout, made with the SQLite C API on a
/// copy: interesting integers in `Z_PK`, `Z_ENT`, `Z_OPT`, `Z_MAX`, foreign-key and join-table
/// columns; values of the wrong type in attribute columns; rows deleted or duplicated; damaged
/// `Z_METADATA` and `Z_MODELCACHE` blobs; dropped tables; and raw damage to the file's pages.
enum SQLiteDamage {
    /// Damages the store at `url` one or more ways and describes what was done.
    static func damage(_ url: URL, _ random: inout SeededGenerator) throws -> String {
        var done: [String] = []
        for _ in 0..<(Int.random(in: 0..<4, using: &random) == 0 ? 2 : 1) {
            if Int.random(in: 0..<4, using: &random) == 0 {
                done.append("raw " + (try raw(url, &random)))
            } else {
                done.append(try structured(url, &random))
            }
        }
        return done.joined(separator: "; ")
    }

    /// Damages only `Z_METADATA` (its plist, or its UUID and version columns).
    static func metadata(_ url: URL, _ random: inout SeededGenerator) throws -> String {
        let database = try Connection(url)
        defer { database.close() }
        if Int.random(in: 0..<5, using: &random) > 0,
            let edit = try blobEdit(database, table: "Z_METADATA", column: "Z_PLIST", &random)
        {
            return edit
        }
        let column = ["Z_UUID", "Z_VERSION", "Z_PLIST"].randomElement(using: &random)!  // non-empty literal
        let sql = "UPDATE Z_METADATA SET \(column) = \(wrongValue(&random))"
        try database.execute(sql)
        return sql
    }

    /// Raw damage near the header and page starts.
    static func raw(_ url: URL, _ random: inout SeededGenerator) throws -> String {
        var bytes = Array(try Data(contentsOf: url))
        let pageSize = bytes.count > 17 ? max(512, Int(bytes[16]) << 8 | Int(bytes[17])) : 4_096
        var offsets = [0, 16, 18, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 92, 96, 100]
        for page in stride(from: pageSize, to: bytes.count, by: pageSize) {
            offsets += [page, page + 3, page + 5, page + 8]
        }
        let what = ByteDamage.damage(&bytes, using: &random, near: offsets)
        try Data(bytes).write(to: url)
        return what
    }

    /// One edit through SQL.
    static func structured(_ url: URL, _ random: inout SeededGenerator) throws -> String {
        let database = try Connection(url)
        defer { database.close() }
        let tables = try database.strings(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        guard !tables.isEmpty else { return "no tables" }
        let table = tables[Int.random(in: 0..<tables.count, using: &random)]
        let columns = try database.strings("SELECT name FROM pragma_table_info('\(table)')")
        guard !columns.isEmpty else { return "no columns in \(table)" }
        let rowids = try database.integers("SELECT rowid FROM \"\(table)\" LIMIT 200")
        let row = rowids.isEmpty ? 1 : rowids[Int.random(in: 0..<rowids.count, using: &random)]
        let key =
            ["Z_PK", "Z_ENT", "Z_OPT", "Z_MAX", "Z_SUPER", "Z_VERSION"].filter(columns.contains)
            + columns.filter {
                $0.hasPrefix("Z") && !$0.hasPrefix("Z_") && $0.count > 1
                    && $0.dropFirst().allSatisfy(\.isNumber) == false
            }
        let sql: String
        switch Int.random(in: 0..<12, using: &random) {
        case 0, 1, 2:
            // An interesting integer in a key, version, counter, entity or reference column.
            let pool = key.isEmpty ? columns : key
            let column = pool[Int.random(in: 0..<pool.count, using: &random)]
            sql =
                "UPDATE \"\(table)\" SET \"\(column)\" = \(ByteDamage.interestingInteger(using: &random)) WHERE rowid = \(row)"
        case 3:
            let column = columns[Int.random(in: 0..<columns.count, using: &random)]
            sql =
                "UPDATE \"\(table)\" SET \"\(column)\" = \(wrongValue(&random))"
                + (Bool.random(using: &random) ? " WHERE rowid = \(row)" : "")
        case 4:
            let column = columns[Int.random(in: 0..<columns.count, using: &random)]
            sql = "UPDATE \"\(table)\" SET \"\(column)\" = NULL WHERE rowid = \(row)"
        case 5:
            sql = "DELETE FROM \"\(table)\" WHERE rowid = \(row)"
        case 6:
            // A duplicate of a row (same Z_PK when the table allows it), or of its key under another rowid.
            let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
            sql = "INSERT INTO \"\(table)\" (\(list)) SELECT \(list) FROM \"\(table)\" WHERE rowid = \(row)"
        case 7:
            if let metadata = try blobEdit(database, table: "Z_METADATA", column: "Z_PLIST", &random) {
                return metadata
            }
            sql = "UPDATE Z_METADATA SET Z_UUID = \(wrongValue(&random))"
        case 8:
            if let cache = try modelCacheEdit(database, &random) { return cache }
            let column = columns[Int.random(in: 0..<columns.count, using: &random)]
            sql = "UPDATE \"\(table)\" SET \"\(column)\" = \(ByteDamage.interestingInteger(using: &random))"
        case 9:
            sql = Bool.random(using: &random) ? "DROP TABLE \"\(table)\"" : "DELETE FROM \"\(table)\""
        case 10:
            // Every reference column at once: swap in a value off by an interesting amount.
            let pool = key.isEmpty ? columns : key
            let column = pool[Int.random(in: 0..<pool.count, using: &random)]
            sql =
                "UPDATE \"\(table)\" SET \"\(column)\" = \"\(column)\" + \(ByteDamage.interestingInteger(using: &random) / 2)"
        default:
            let column = columns[Int.random(in: 0..<columns.count, using: &random)]
            sql =
                "UPDATE \"\(table)\" SET \"\(column)\" = \(ByteDamage.interestingInteger(using: &random)) WHERE rowid = \(row)"
        }
        try database.execute(sql)
        return sql
    }

    /// A value of a surprising type or size, as SQL.
    static func wrongValue(_ random: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return "'x'"
        case 1: return "X'00FF'"
        case 2: return "1e308"
        case 3: return "-0.5"
        case 4: return "''"
        case 5: return "zeroblob(\(Int.random(in: 0...70_000, using: &random)))"
        case 6: return "'\(String(repeating: "é", count: Int.random(in: 1...5_000, using: &random)))'"
        default: return "\(ByteDamage.interestingInteger(using: &random))"
        }
    }

    /// Damages the bytes of one blob (a binary property list); `nil` when there is none.
    static func blobEdit(_ database: Connection, table: String, column: String, _ random: inout SeededGenerator) throws
        -> String?
    {
        guard var bytes = try database.blob("SELECT \"\(column)\" FROM \"\(table)\" LIMIT 1") else { return nil }
        let what: String
        if Bool.random(using: &random), let edited = PlistDamage.structured(bytes, &random) {
            bytes = edited.bytes
            what = edited.what
        } else {
            // Header, offset table and trailer are where binary property lists keep their numbers.
            let trailer = max(0, bytes.count - 32)
            what = ByteDamage.damage(
                &bytes, using: &random, near: [0, 6, 8, trailer, trailer + 6, trailer + 8, trailer + 16, trailer + 24])
        }
        try database.setBlob("UPDATE \"\(table)\" SET \"\(column)\" = ?", bytes)
        return "\(table).\(column): \(what)"
    }

    /// Damages `Z_MODELCACHE` (raw DEFLATE of a keyed archive): the archive inside, recompressed,
    /// or the compressed bytes; `nil` when the store has none.
    static func modelCacheEdit(_ database: Connection, _ random: inout SeededGenerator) throws -> String? {
        guard try database.integers("SELECT count(*) FROM sqlite_master WHERE name = 'Z_MODELCACHE'").first == 1,
            let compressed = try database.blob("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1")
        else { return nil }
        var bytes: [UInt8]
        let what: String
        if Int.random(in: 0..<4, using: &random) > 0, let plist = Deflate.decompress(compressed) {
            if Bool.random(using: &random), let edited = PlistDamage.structured(plist, &random) {
                bytes = Deflate.compress(edited.bytes)
                what = "archive: \(edited.what)"
            } else {
                var archive = plist
                let trailer = max(0, archive.count - 32)
                what =
                    "archive: "
                    + ByteDamage.damage(&archive, using: &random, near: [0, 8, trailer, trailer + 6, trailer + 8])
                bytes = Deflate.compress(archive)
            }
        } else {
            bytes = compressed
            what = "compressed: " + ByteDamage.damage(&bytes, using: &random, near: [0])
        }
        try database.setBlob("UPDATE Z_MODELCACHE SET Z_CONTENT = ?", bytes)
        return "Z_MODELCACHE \(what)"
    }

    /// A small wrapper of the C API for editing copies.
    final class Connection {
        private var handle: OpaquePointer?

        init(_ url: URL) throws {
            guard sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
                defer { sqlite3_close(handle) }
                throw CaseFailure("cannot open the copy \(url.path): \(String(cString: sqlite3_errmsg(handle)))")
            }
        }

        func close() {
            sqlite3_close_v2(handle)
            handle = nil
        }

        /// Runs `sql`; an error is part of the damage (a table that is gone), not a failure.
        func execute(_ sql: String) throws {
            _ = sqlite3_exec(handle, sql, nil, nil, nil)
        }

        private func query(_ sql: String, bind: [UInt8]? = nil, _ row: (OpaquePointer) -> Void) throws {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                return  // a damaged schema may refuse the statement; nothing to read then
            }
            defer { sqlite3_finalize(statement) }
            if let bind {
                _ = bind.withUnsafeBytes {
                    sqlite3_bind_blob(
                        statement, 1, $0.baseAddress, Int32($0.count),
                        unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                }
            }
            while sqlite3_step(statement) == SQLITE_ROW { row(statement) }
        }

        func strings(_ sql: String) throws -> [String] {
            var result: [String] = []
            try query(sql) { statement in
                if let text = sqlite3_column_text(statement, 0) { result.append(String(cString: text)) }
            }
            return result
        }

        func integers(_ sql: String) throws -> [Int64] {
            var result: [Int64] = []
            try query(sql) { result.append(sqlite3_column_int64($0, 0)) }
            return result
        }

        func blob(_ sql: String) throws -> [UInt8]? {
            var result: [UInt8]?
            try query(sql) { statement in
                guard result == nil else { return }
                let count = Int(sqlite3_column_bytes(statement, 0))
                if let pointer = sqlite3_column_blob(statement, 0) {
                    result = Array(UnsafeRawBufferPointer(start: pointer, count: count))
                } else {
                    result = []
                }
            }
            return result
        }

        func setBlob(_ sql: String, _ bytes: [UInt8]) throws {
            try query(sql, bind: bytes) { _ in }
        }
    }
}

/// Raw DEFLATE through zlib, for rewriting `Z_MODELCACHE`.
enum Deflate {
    static func decompress(_ input: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var source = input
        var chunk = [UInt8](repeating: 0, count: 65_536)
        return source.withUnsafeMutableBufferPointer { inputBuffer -> [UInt8]? in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputBuffer.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    return CSQLite.inflate(&stream, Z_NO_FLUSH)
                }
                output += chunk[0..<(chunk.count - Int(stream.avail_out))]
                if status == Z_STREAM_END { return output }
                if status != Z_OK || output.count > 64 << 20 { return nil }
            }
        }
    }

    static func compress(_ input: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
                == Z_OK
        else { return input }
        defer { deflateEnd(&stream) }
        var source = input
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 64)
        let written = source.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { out -> Int in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = UInt32(inputBuffer.count)
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(out.count)
                _ = CSQLite.deflate(&stream, Z_FINISH)
                return out.count - Int(stream.avail_out)
            }
        }
        return Array(output[0..<written])
    }
}
