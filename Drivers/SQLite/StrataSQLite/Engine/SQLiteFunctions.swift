import CSQLite
import Foundation
import Strata

/// The SQL functions and the collation the driver registers on each of its connections, so that
/// pushed-down predicates and sorts compare strings exactly as the core's evaluator does.
///
/// - `COLLATE STRATA`: Swift `String` order (Unicode canonical equivalence, NFC scalar order), the
///   order of ``StoreValue/predicateOrder(_:_:options:)`` and ``SortKey``.
/// - `strata_fold(text, options)`: ``ComparisonOptions/fold(_:)`` with `options` as raw bits.
/// - `strata_match(op, options, text, pattern)`: 1 when the core's evaluator accepts
///   `text <op>[options] pattern` for a string operator (`BEGINSWITH`, `ENDSWITH`, `CONTAINS`,
///   `LIKE`, `MATCHES`), else 0 (also 0 when either side is NULL, as the evaluator answers false).
/// - `NSCoreDataDATriggerUpdatedAffectedObjectValue`, `NSCoreDataDATriggerInsertUpdatedAffectedObjectValue`:
///   no-ops, so the derived-attribute triggers Apple's Core Data leaves in stores can run.
enum SQLiteFunctions {
    /// The collation name used in generated SQL.
    static let collation = "STRATA"

    /// Operator codes of `strata_match`.
    static func code(of op: ComparisonOperator) -> Int64? {
        switch op {
        case .beginsWith: 1
        case .endsWith: 2
        case .contains: 3
        case .like: 4
        case .matches: 5
        default: nil
        }
    }

    static func op(code: Int64) -> ComparisonOperator? {
        switch code {
        case 1: .beginsWith
        case 2: .endsWith
        case 3: .contains
        case 4: .like
        case 5: .matches
        default: nil
        }
    }

    /// Registers everything on `connection`.
    static func register(on connection: SQLiteConnection) throws {
        let db = try connection.openHandle()
        var status = sqlite3_create_collation_v2(db, collation, SQLITE_UTF8, nil, compareStrings, nil)
        guard status == SQLITE_OK else { throw connection.engineError(status, "cannot register collation") }
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        status = sqlite3_create_function_v2(db, "strata_fold", 2, flags, nil, fold, nil, nil, nil)
        guard status == SQLITE_OK else { throw connection.engineError(status, "cannot register strata_fold") }
        status = sqlite3_create_function_v2(db, "strata_match", 4, flags, nil, match, nil, nil, nil)
        guard status == SQLITE_OK else { throw connection.engineError(status, "cannot register strata_match") }
        for name in ["NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue"] {
            status = sqlite3_create_function_v2(db, name, -1, SQLITE_UTF8, nil, noOp, nil, nil, nil)
            guard status == SQLITE_OK else { throw connection.engineError(status, "cannot register \(name)") }
        }
    }
}

/// Reads an argument as a Swift string, `nil` for NULL.
private func text(_ value: OpaquePointer?) -> String? {
    guard sqlite3_value_type(value) != SQLITE_NULL, let bytes = sqlite3_value_text(value) else { return nil }
    let count = Int(sqlite3_value_bytes(value))
    return String(decoding: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self)
}

private func resultText(_ context: OpaquePointer?, _ string: String) {
    var copy = string
    copy.withUTF8 { bytes in
        bytes.withMemoryRebound(to: CChar.self) { chars in
            // SQLITE_TRANSIENT (-1): SQLite copies the bytes before returning. An empty string needs
            // a non-null pointer (bit pattern 1 is never null; SQLite reads no byte of it).
            sqlite3_result_text64(
                context, chars.baseAddress ?? UnsafePointer(bitPattern: 1)!, sqlite3_uint64(chars.count),
                unsafeBitCast(-1, to: sqlite3_destructor_type.self), UInt8(SQLITE_UTF8))
        }
    }
}

private let compareStrings: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32 = {
    _, lengthA, a, lengthB, b in
    let x = String(decoding: UnsafeRawBufferPointer(start: a, count: Int(lengthA)), as: UTF8.self)
    let y = String(decoding: UnsafeRawBufferPointer(start: b, count: Int(lengthB)), as: UTF8.self)
    return x < y ? -1 : (x == y ? 0 : 1)
}

private let fold: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, count, arguments in
    // SQLite calls with exactly the 2 arguments the function was registered with.
    guard let arguments, count == 2, let string = text(arguments[0]) else {
        sqlite3_result_null(context)
        return
    }
    let options = ComparisonOptions(rawValue: Int(sqlite3_value_int64(arguments[1])))
    resultText(context, options.fold(string))
}

private let match: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, count, arguments in
    guard let arguments, count == 4, let op = SQLiteFunctions.op(code: sqlite3_value_int64(arguments[0])) else {
        sqlite3_result_error(context, "strata_match: bad arguments", -1)
        return
    }
    guard let string = text(arguments[2]), let pattern = text(arguments[3]) else {
        sqlite3_result_int64(context, 0)
        return
    }
    let options = ComparisonOptions(rawValue: Int(sqlite3_value_int64(arguments[1])))
    let predicate = FetchPredicate.comparison(
        ComparisonPredicate(.constant(.string(string)), op, .constant(.string(pattern)), options: options))
    do {
        sqlite3_result_int64(context, try predicate.evaluate(with: StoreValue.null) ? 1 : 0)
    } catch {
        sqlite3_result_error(context, "\(error)", -1)
    }
}

private let noOp: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, _, _ in sqlite3_result_null(context)
}
