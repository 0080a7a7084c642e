import CLibPQBench
import Foundation
import StrataTools

/// A minimal libpq connection for the raw baseline: statements with binary parameters and binary
/// results, nothing else. Not `Sendable`: one thread uses it.
final class RawPQ {
    private let handle: OpaquePointer
    private var statements = 0

    /// A parameter value, sent in binary format.
    enum Value {
        case int8(Int64)
        case int4(Int32)
        case float8(Double)
        case text(String)
    }

    /// A parameter type.
    enum Kind {
        case int8, int4, float8, text
        var oid: Oid {
            switch self {
            case .int8: 20
            case .int4: 23
            case .float8: 701
            case .text: 25
            }
        }
    }

    /// Connects to the server of a store URL (its query, such as `schema=`, is not libpq's and is
    /// left out).
    init(url: URL) throws {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw BenchError("libpq-c: not a PostgreSQL URL")
        }
        components.query = nil
        components.scheme = "postgresql"
        guard let conninfo = components.string, let connection = PQconnectdb(conninfo) else {
            throw BenchError("libpq-c: cannot connect")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw BenchError("libpq-c: cannot connect: \(message)")
        }
        strata_bench_pq_silence(connection)
        handle = connection
    }

    deinit { PQfinish(handle) }

    private func check(_ result: OpaquePointer?, _ sql: String) throws -> OpaquePointer {
        guard let result else { throw BenchError("libpq-c: \(String(cString: PQerrorMessage(handle)))") }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = String(cString: PQresultErrorMessage(result))
            PQclear(result)
            throw BenchError("libpq-c: \(sql.prefix(60)): \(message)")
        }
        return result
    }

    /// Runs statements without parameters.
    func exec(_ sql: String) throws { PQclear(try check(PQexec(handle, sql), sql)) }

    /// Runs a query without parameters; rows in binary format.
    func query(_ sql: String) throws -> Result {
        Result(try check(PQexecParams(handle, sql, 0, nil, nil, nil, nil, 1), sql))
    }

    /// Prepares a statement with parameters of `kinds`.
    func prepare(_ sql: String, _ kinds: [Kind]) throws -> Statement {
        statements += 1
        let name = "s\(statements)"
        let oids = kinds.map(\.oid)
        PQclear(try check(PQprepare(handle, name, sql, Int32(oids.count), oids), sql))
        return Statement(connection: self, name: name, sql: sql)
    }

    /// A prepared statement.
    struct Statement {
        let connection: RawPQ
        let name: String
        let sql: String

        /// Runs it with `values` (binary format); rows in binary format.
        @discardableResult
        func run(_ values: [Value]) throws -> Result {
            // One buffer for every value (and a padding byte, so an empty text has an address).
            var bytes: [UInt8] = [0]
            var offsets: [Int] = []
            var lengths: [Int32] = []
            for value in values {
                offsets.append(bytes.count)
                switch value {
                case .int8(let n): withUnsafeBytes(of: n.bigEndian) { bytes.append(contentsOf: $0) }
                case .int4(let n): withUnsafeBytes(of: n.bigEndian) { bytes.append(contentsOf: $0) }
                case .float8(let d): withUnsafeBytes(of: d.bitPattern.bigEndian) { bytes.append(contentsOf: $0) }
                case .text(let s): bytes.append(contentsOf: s.utf8)
                }
                lengths.append(Int32(bytes.count - offsets[offsets.count - 1]))
            }
            let formats = [Int32](repeating: 1, count: values.count)
            let result: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
                // The buffer holds the padding byte, so it has an address.
                let base = UnsafeRawPointer(buffer.baseAddress!)
                let pointers: [UnsafePointer<CChar>?] = offsets.map { (base + $0).assumingMemoryBound(to: CChar.self) }
                return PQexecPrepared(connection.handle, name, Int32(values.count), pointers, lengths, formats, 1)
            }
            return Result(try connection.check(result, sql))
        }
    }

    /// Rows in binary format; freed with the object.
    final class Result {
        let handle: OpaquePointer
        init(_ handle: OpaquePointer) { self.handle = handle }
        deinit { PQclear(handle) }

        var count: Int { Int(PQntuples(handle)) }

        private func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(
                start: PQgetvalue(handle, Int32(row), Int32(column)),
                count: Int(PQgetlength(handle, Int32(row), Int32(column))))
        }

        func int64(_ row: Int, _ column: Int) -> Int64 {
            let raw = bytes(row, column)
            switch raw.count {
            case 8: return Int64(bigEndian: raw.loadUnaligned(as: Int64.self))
            case 4: return Int64(Int32(bigEndian: raw.loadUnaligned(as: Int32.self)))
            default: return 0
            }
        }

        func double(_ row: Int, _ column: Int) -> Double {
            Double(bitPattern: UInt64(bigEndian: bytes(row, column).loadUnaligned(as: UInt64.self)))
        }

        func text(_ row: Int, _ column: Int) -> String { String(decoding: bytes(row, column), as: UTF8.self) }
    }
}
