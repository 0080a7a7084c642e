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
/// - `strata_aggregate(function, type, value)`: an aggregate (sum, average, min, max by
///   ``code(of:)-(AggregateFunction)``) over values of an attribute type (its raw value), computed by the core's
///   ``AggregateAccumulator``; NULL over no values.
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

    /// Function codes of `strata_aggregate`.
    static func code(of function: AggregateFunction) -> Int64 {
        switch function {
        case .count: 0
        case .sum: 1
        case .average: 2
        case .min: 3
        case .max: 4
        }
    }

    static func function(code: Int64) -> AggregateFunction? {
        AggregateFunction.allCases.first { Self.code(of: $0) == code }
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
        status = sqlite3_create_function_v2(
            db, "strata_aggregate", 3, flags, nil, nil, aggregateStep, aggregateFinal, nil)
        guard status == SQLITE_OK else { throw connection.engineError(status, "cannot register strata_aggregate") }
        for name in [
            "NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
        ] {
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

private let compareStrings:
    @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32 = {
        _, lengthA, a, lengthB, b in
        let first = UnsafeRawBufferPointer(start: a, count: Int(lengthA))
        let second = UnsafeRawBufferPointer(start: b, count: Int(lengthB))
        if let order = asciiOrder(first, second) { return order }
        let x = String(decoding: first, as: UTF8.self)
        let y = String(decoding: second, as: UTF8.self)
        return x < y ? -1 : (x == y ? 0 : 1)
    }

/// The order of two strings decided by their bytes, which is Swift's `String` order when the
/// bytes deciding it are ASCII; `nil` when they are not, for the `String` comparison.
///
/// One pass to the first byte that differs (names in a sort usually differ in their first few
/// bytes). ASCII is its own canonical form and `String` compares scalars, so an all-ASCII common
/// prefix followed by two different ASCII bytes orders the strings as those bytes do, provided
/// neither is followed by a byte above 0x7F: a combining mark there would change the character
/// (`"e\u{301}"` is `"é"`, which sorts after `"f"`). Bytes after that cannot change the order: the
/// next ASCII character is a starter, so no later mark reaches back across it. For the same reason
/// a string that is an ASCII prefix of the other comes first when the other goes on with ASCII.
func asciiOrder(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Int32? {
    let common = min(first.count, second.count)
    var index = 0
    while index < common {
        let x = first[index]
        let y = second[index]
        if x != y {
            guard x < 0x80, y < 0x80 else { return nil }
            let nextX = index + 1 < first.count ? first[index + 1] : 0
            let nextY = index + 1 < second.count ? second[index + 1] : 0
            guard nextX < 0x80, nextY < 0x80 else { return nil }
            return x < y ? -1 : 1
        }
        guard x < 0x80 else { return nil }
        index += 1
    }
    if first.count == second.count { return 0 }
    // One is a prefix of the other: the longer goes on at `common`.
    let next = first.count > common ? first[common] : second[common]
    guard next < 0x80 else { return nil }
    return first.count < second.count ? -1 : 1
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

/// One group's accumulator, kept in SQLite's aggregate context between steps.
private final class AggregateBox {
    var accumulator: AggregateAccumulator
    var type: AttributeType
    var failure: String?

    init(_ accumulator: AggregateAccumulator, type: AttributeType) {
        self.accumulator = accumulator
        self.type = type
    }
}

/// The box of the group being aggregated: made at its first step, kept as a retained pointer in
/// the aggregate context until `aggregateFinal` releases it; `nil` when no step ran.
private func aggregateBox(_ context: OpaquePointer?, creating make: () -> AggregateBox) -> AggregateBox? {
    // Zeroed by SQLite on first use, so the slot starts as nil.
    guard let memory = sqlite3_aggregate_context(context, Int32(MemoryLayout<UnsafeMutableRawPointer?>.size)) else {
        return nil
    }
    let slot = memory.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    if let existing = slot.pointee { return Unmanaged<AggregateBox>.fromOpaque(existing).takeUnretainedValue() }
    let box = make()
    slot.pointee = Unmanaged.passRetained(box).toOpaque()
    return box
}

/// A column value of an attribute of `type`, as the driver decodes it (ValueCoding.attribute).
private func storeValue(_ value: OpaquePointer?, _ type: AttributeType) -> StoreValue {
    let storage = sqlite3_value_type(value)
    if storage == SQLITE_NULL { return .null }
    switch type {
    case .integer16, .integer32, .integer64:
        return .integer(
            storage == SQLITE_FLOAT
                ? Int64(exactly: sqlite3_value_double(value).rounded(.towardZero)) ?? 0 : sqlite3_value_int64(value))
    case .boolean: return .bool(sqlite3_value_int64(value) != 0)
    case .double, .float:
        if storage == SQLITE_BLOB, sqlite3_value_bytes(value) == 8, let bytes = sqlite3_value_blob(value) {
            let raw = UnsafeRawBufferPointer(start: bytes, count: 8)
            return .double(Double(bitPattern: raw.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }))
        }
        return .double(sqlite3_value_double(value))
    case .string: return text(value).map(StoreValue.string) ?? .null
    case .date: return .date(Date(timeIntervalSinceReferenceDate: sqlite3_value_double(value)))
    default: return .null
    }
}

private let aggregateStep: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, count, arguments in
    guard let arguments, count == 3, let function = SQLiteFunctions.function(code: sqlite3_value_int64(arguments[0])),
        let type = AttributeType(rawValue: Int(sqlite3_value_int64(arguments[1])))
    else {
        sqlite3_result_error(context, "strata_aggregate: bad arguments", -1)
        return
    }
    guard
        let box = aggregateBox(
            context, creating: { AggregateBox(AggregateAccumulator(function, type: type), type: type) })
    else {
        sqlite3_result_error_nomem(context)
        return
    }
    guard box.failure == nil else { return }
    do {
        try box.accumulator.add(storeValue(arguments[2], box.type))
    } catch {
        box.failure = "\(error)"
    }
}

private let aggregateFinal: @convention(c) (OpaquePointer?) -> Void = { context in
    guard let memory = sqlite3_aggregate_context(context, 0),
        let pointer = memory.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee
    else {
        // No step ran (no rows in the group): the caller reads NULL as the aggregate of no values.
        sqlite3_result_null(context)
        return
    }
    let box = Unmanaged<AggregateBox>.fromOpaque(pointer).takeRetainedValue()
    memory.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee = nil
    if let failure = box.failure {
        sqlite3_result_error(context, failure, -1)
        return
    }
    switch box.accumulator.result {
    case .null: sqlite3_result_null(context)
    case .integer(let n): sqlite3_result_int64(context, n)
    case .bool(let b): sqlite3_result_int64(context, b ? 1 : 0)
    case .double(let d):
        if d.isNaN || (d == 0 && d.sign == .minus) {
            var bits = d.bitPattern.bigEndian
            withUnsafeBytes(of: &bits) { raw in
                // SQLITE_TRANSIENT (-1): SQLite copies the 8 bytes before returning.
                sqlite3_result_blob(context, raw.baseAddress, 8, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
        } else {
            sqlite3_result_double(context, d)
        }
    case .string(let s): resultText(context, s)
    case .date(let date): sqlite3_result_double(context, date.timeIntervalSinceReferenceDate)
    default: sqlite3_result_error(context, "strata_aggregate: a value SQL cannot hold", -1)
    }
}
