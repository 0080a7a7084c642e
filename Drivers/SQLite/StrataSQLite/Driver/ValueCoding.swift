import CSQLite
import Foundation
import Strata

/// Converts between ``StoreValue`` and what Core Data's layout stores in a column.
///
/// Dates are seconds since 2001-01-01 as REAL, UUIDs 16-byte blobs, Booleans 0/1, URIs their
/// absolute string. Two exceptions keep values exact where a REAL column would not: `-0.0` and NaN
/// are stored as 8-byte big-endian blobs (SQLite turns `-0.0` into `0` and NaN into NULL), and a
/// Decimal that does not survive a round trip through `Double` is stored as a blob of its decimal
/// text (a DECIMAL column would round it to 15 digits).
enum ValueCoding {
    /// The bytes of `-0.0`, as stored.
    static let negativeZero = Data([0x80, 0, 0, 0, 0, 0, 0, 0])

    /// The column value for a store value.
    @inline(__always)
    static func sqliteValue(_ value: StoreValue) -> SQLiteValue {
        switch value {
        case .null, .unfetched, .references: .null
        case .integer(let n): .integer(n)
        case .bool(let b): .integer(b ? 1 : 0)
        case .double(let d): encode(double: d)
        case .decimal(let d): encode(decimal: d)
        case .string(let s): .text(s)
        case .date(let d): .real(d.timeIntervalSinceReferenceDate)
        case .binary(let data): .blob(data)
        case .uuid(let u): .blob(withUnsafeBytes(of: u.uuid) { Data($0) })
        case .uri(let url): .text(url.absoluteString)
        case .reference(let id): .integer(id.primaryKey)
        }
    }

    /// Binds `value` as ``sqliteValue(_:)`` encodes it, binding the common kinds directly.
    @inline(__always)
    static func bind(_ value: StoreValue, to statement: SQLiteStatement, at index: Int32) throws {
        switch value {
        case .integer(let n): try statement.bindDirect(n, at: index)
        case .string(let s): try statement.bindDirect(s, at: index)
        case .date(let d): try statement.bindDirect(d.timeIntervalSinceReferenceDate, at: index)
        case .bool(let b): try statement.bindDirect(Int64(b ? 1 : 0), at: index)
        case .double(let d) where !d.isNaN && !(d == 0 && d.sign == .minus): try statement.bindDirect(d, at: index)
        case .null, .unfetched, .references: try statement.bindDirectNull(at: index)
        case .reference(let id): try statement.bindDirect(id.primaryKey, at: index)
        default: try statement.bind(sqliteValue(value), at: index)
        }
    }

    static func encode(double d: Double) -> SQLiteValue {
        if d.isNaN || (d == 0 && d.sign == .minus) {
            return .blob(withUnsafeBytes(of: d.bitPattern.bigEndian) { Data($0) })
        }
        return .real(d)
    }

    static func encode(decimal d: Decimal) -> SQLiteValue {
        let text = d.description
        if let double = Double(text), Decimal(string: "\(double)") == d { return .real(double) }
        return .blob(Data(text.utf8))
    }

    /// Reads column `index` of the statement's current row as an attribute of `type`.
    @inline(__always)
    static func attribute(_ statement: SQLiteStatement, _ index: Int32, _ type: AttributeType) -> StoreValue {
        let storage = statement.columnType(at: index)
        if storage == SQLITE_NULL { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            return .integer(
                storage == SQLITE_FLOAT
                    ? Int64(exactly: statement.double(at: index).rounded(.towardZero)) ?? 0 : statement.int64(at: index)
            )
        case .boolean:
            return .bool(statement.int64(at: index) != 0)
        case .double, .float:
            if storage == SQLITE_BLOB, let data = statement.data(at: index), data.count == 8 {
                let bits = data.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                return .double(Double(bitPattern: bits))
            }
            return .double(statement.double(at: index))
        case .decimal:
            switch storage {
            case SQLITE_INTEGER: return .decimal(Decimal(statement.int64(at: index)))
            case SQLITE_FLOAT: return .decimal(Decimal(string: "\(statement.double(at: index))") ?? 0)
            default:
                let text =
                    storage == SQLITE_BLOB
                    ? statement.data(at: index).map { String(decoding: $0, as: UTF8.self) }
                    : statement.string(at: index)
                return text.flatMap { Decimal(string: $0) }.map(StoreValue.decimal) ?? .null
            }
        case .string:
            return statement.string(at: index).map(StoreValue.string) ?? .null
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: statement.double(at: index)))
        case .uuid:
            if storage == SQLITE_BLOB, let data = statement.data(at: index), data.count == 16 {
                return .uuid(UUID(uuid: data.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }))
            }
            return statement.string(at: index).flatMap(UUID.init(uuidString:)).map(StoreValue.uuid) ?? .null
        case .uri:
            return statement.string(at: index).flatMap(URL.init(string:)).map(StoreValue.uri) ?? .null
        case .binaryData, .transformable:
            return statement.data(at: index).map(StoreValue.binary) ?? .null
        case .undefined, .objectID, .composite:
            return .null  // no column holds these (a composite's elements have columns of their own)
        }
    }
}
