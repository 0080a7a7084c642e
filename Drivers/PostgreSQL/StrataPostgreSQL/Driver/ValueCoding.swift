import CLibPQ
import Foundation
import Strata

/// Converts between ``StoreValue`` and the columns of a PostgreSQL store (docs/formats/postgresql.md).
///
/// Integers are `smallint`/`integer`/`bigint`, Booleans `boolean`, Double `double precision` and
/// Float `real` (NaN, infinities and `-0.0` kept), Decimal `numeric` (exact), dates `double
/// precision` seconds since 2001-01-01 as Core Data stores them, strings and URIs `text` (escaped,
/// ``TextEscaping``), UUIDs `uuid`, binary and transformable values `bytea`.
enum ValueCoding {
    /// The array type and element type a column's values travel in (`unnest` parameters).
    static func arrayType(of kind: ColumnKind) -> (array: Oid, element: Oid, cast: String) {
        switch kind {
        case .key, .counter: (PGType.int8Array, PGType.int8, "bigint[]")
        case .entityNumber: (PGType.int4Array, PGType.int4, "integer[]")
        case .attribute(let type):
            switch type {
            case .integer16, .integer32, .integer64: (PGType.int8Array, PGType.int8, "bigint[]")
            case .boolean: (PGType.boolArray, PGType.bool, "boolean[]")
            case .double, .float, .date: (PGType.float8Array, PGType.float8, "double precision[]")
            case .decimal: (PGType.textArray, PGType.text, "text[]")
            case .string, .uri: (PGType.textArray, PGType.text, "text[]")
            case .uuid: (PGType.uuidArray, PGType.uuid, "uuid[]")
            default: (PGType.byteaArray, PGType.bytea, "bytea[]")
            }
        }
    }

    /// The SQL that turns an `unnest` column of `kind` into the column's type (`::numeric`), or "".
    static func elementCast(of kind: ColumnKind) -> String {
        if case .attribute(.decimal) = kind { return "::numeric" }
        return ""
    }

    /// Appends `value` as an array element of a column of `kind` in binary format; `false` for NULL.
    ///
    /// - Throws: ``StoreError`` `.invalidRequest` for a value that the column cannot hold.
    static func appendElement(
        _ value: StoreValue, kind: ColumnKind, to bytes: inout [UInt8], describe: () -> String
    ) throws -> Bool {
        switch (kind, value) {
        case (_, .null), (_, .unfetched), (_, .references): return false
        case (.key, .reference(let id)), (.counter, .reference(let id)):
            PGParameters.write(id.primaryKey, into: &bytes)
        case (.key, .integer(let n)), (.counter, .integer(let n)):
            PGParameters.write(n, into: &bytes)
        case (.entityNumber, .reference(let id)):
            PGParameters.write(id.entity, into: &bytes)
        case (.entityNumber, .integer(let n)):
            PGParameters.write(Int32(truncatingIfNeeded: n), into: &bytes)
        case (.attribute(let type), _):
            return try appendAttribute(value, type: type, to: &bytes, describe: describe)
        default:
            throw mismatch(value, describe())
        }
        return true
    }

    private static func appendAttribute(
        _ value: StoreValue, type: AttributeType, to bytes: inout [UInt8], describe: () -> String
    ) throws -> Bool {
        switch (type, value) {
        case (.integer16, .integer(let n)), (.integer32, .integer(let n)), (.integer64, .integer(let n)):
            PGParameters.write(n, into: &bytes)
        case (.integer16, .bool(let b)), (.integer32, .bool(let b)), (.integer64, .bool(let b)):
            PGParameters.write(Int64(b ? 1 : 0), into: &bytes)
        case (.boolean, .bool(let b)): bytes.append(b ? 1 : 0)
        case (.boolean, .integer(let n)): bytes.append(n != 0 ? 1 : 0)
        case (.double, .double(let d)), (.float, .double(let d)): PGParameters.write(d, into: &bytes)
        case (.double, .integer(let n)), (.float, .integer(let n)): PGParameters.write(Double(n), into: &bytes)
        case (.date, .date(let d)): PGParameters.write(d.timeIntervalSinceReferenceDate, into: &bytes)
        case (.decimal, .decimal(let d)): bytes.append(contentsOf: decimalText(d).utf8)
        case (.decimal, .integer(let n)): bytes.append(contentsOf: String(n).utf8)
        case (.string, .string(let s)): TextEscaping.appendEscaped(s, to: &bytes)
        case (.uri, .uri(let url)): TextEscaping.appendEscaped(url.absoluteString, to: &bytes)
        case (.uri, .string(let s)): TextEscaping.appendEscaped(s, to: &bytes)
        case (.uuid, .uuid(let u)): withUnsafeBytes(of: u.uuid) { bytes.append(contentsOf: $0) }
        case (.binaryData, .binary(let data)), (.transformable, .binary(let data)), (.objectID, .binary(let data)),
            (.undefined, .binary(let data)):
            bytes.append(contentsOf: data)
        default:
            throw mismatch(value, describe())
        }
        return true
    }

    /// A Decimal as `numeric` reads it.
    static func decimalText(_ value: Decimal) -> String { value.isNaN ? "NaN" : value.description }

    private static func mismatch(_ value: StoreValue, _ what: String) -> StoreError {
        StoreError(.invalidRequest, "\(what) cannot hold a value of kind \(value.kindName)")
    }

    /// The value of an attribute column of `type` at `column` of `row`.
    ///
    /// - Throws: ``StoreError`` `.corrupt` for a `numeric` or URI the type cannot hold.
    @inline(__always)
    static func attribute<Row: PGRow>(
        _ row: Row, _ column: Int, _ type: AttributeType, corrupt: (String) -> StoreError
    )
        throws -> StoreValue
    {
        if row.isNull(column) { return .null }
        switch type {
        case .integer16, .integer32, .integer64: return .integer(row.int64(column))
        case .boolean: return .bool(row.bool(column))
        case .double, .float: return .double(row.double(column))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: row.double(column)))
        case .string: return .string(row.string(column))
        case .decimal:
            let text = row.rawString(column)
            if text == "NaN" { return .decimal(.nan) }
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw corrupt("the numeric value \(text.prefix(40)) does not fit a Decimal")
            }
            return .decimal(decimal)
        case .uri:
            let text = row.string(column)
            guard let url = URL(string: text) else { throw corrupt("'\(text.prefix(80))' is not a URI") }
            return .uri(url)
        case .uuid:
            guard let uuid = row.uuid(column) else { throw corrupt("a uuid value is not 16 bytes") }
            return .uuid(uuid)
        default: return .binary(row.data(column))
        }
    }
}
