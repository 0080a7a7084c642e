import Foundation
import Strata

// How each comparison keeps the evaluator's semantics (StoreValue+Comparison.swift in the core):
// - `nil` equals only `nil`, and every ordering with `nil` is false: `== nil` is `IS NULL` on the
//   stored value, `!= c` is `IS DISTINCT FROM`, orderings are plain operators (NULL reads as false).
// - NaN is unordered: double, date and decimal columns compare through `NULLIF(col, 'NaN')`.
// - An integer compares exactly with a double: the double constant is turned into an integer
//   bound (`x < 2.5` is `x <= 2`), never the column into a double.
// - Strings are equal literally (`==`, `!=` and `IN` without [c]/[d]: the stored text against the
//   constant, byte for byte) and ordered by canonical equivalence and NFC scalar order
//   (`normalize(col, NFC) COLLATE "C"` against the NFC form of the constant), both in their stored
//   (escaped) form.

extension QueryTranslator {
    /// Binds a value and returns its placeholder.
    mutating func bind(_ append: (inout PGParameters) -> Void) -> String {
        let placeholder = nextPlaceholder
        append(&parameters)
        return placeholder
    }

    /// A constant as the column of `kind` compares with it: the SQL of the bound value, or a
    /// condition decided here; `nil` when SQL cannot answer as the evaluator would.
    private enum Operand {
        case bound(String)
        /// An integer column against a double that is not a whole number or out of range.
        case fractional(Double)
    }

    private mutating func operand(for column: Column, _ constant: StoreValue) -> Operand? {
        switch (column.kind, constant) {
        case (.integer, .integer(let n)): return .bound(bind { $0.append(n) })
        case (.integer, .bool(let b)): return .bound(bind { $0.append(Int64(b ? 1 : 0)) })
        case (.integer, .double(let d)):
            if d.isNaN { return nil }
            if d == d.rounded(), d >= -0x1p63, d < 0x1p63 { return .bound(bind { $0.append(Int64(d)) }) }
            return .fractional(d)
        case (.integer, .decimal(let d)), (.decimal, .decimal(let d)):
            if d.isNaN { return nil }
            return .bound(bind { $0.append(numeric: ValueCoding.decimalText(d)) })
        case (.decimal, .integer(let n)): return .bound(bind { $0.append(numeric: String(n)) })
        case (.decimal, .bool(let b)): return .bound(bind { $0.append(numeric: b ? "1" : "0") })
        case (.double, .double(let d)):
            if d.isNaN { return nil }
            return .bound(bind { $0.append(d) })
        case (.double, .integer(let n)):
            // Exact only where the integer converts to a double exactly.
            guard n.magnitude <= 1 << 53 else { return nil }
            return .bound(bind { $0.append(Double(n)) })
        case (.double, .bool(let b)): return .bound(bind { $0.append(b ? 1.0 : 0.0) })
        case (.double, .decimal(let d)):
            // The evaluator compares a double with a decimal as two doubles.
            if d.isNaN { return nil }
            let value = NSDecimalNumber(decimal: d).doubleValue
            if value.isNaN { return nil }
            return .bound(bind { $0.append(value) })
        case (.date, .date(let d)):
            let seconds = d.timeIntervalSinceReferenceDate
            if seconds.isNaN { return nil }
            return .bound(bind { $0.append(seconds) })
        case (.string, .string(let s)):
            guard strings else { return nil }
            return .bound(bind { $0.append(text: s.precomposedStringWithCanonicalMapping) } + " COLLATE \"C\"")
        case (.uri, .uri(let url)): return .bound(bind { $0.append(text: url.absoluteString) } + " COLLATE \"C\"")
        case (.uuid, .uuid(let u)): return .bound(bind { $0.append(uuid: u) })
        case (.binary, .binary(let data)): return .bound(bind { $0.append(bytes: data) })
        default: return nil
        }
    }

    /// `column op constant`.
    mutating func compare(
        _ column: Column, _ op: ComparisonOperator, _ constant: StoreValue, _ options: ComparisonOptions
    )
        -> String?
    {
        // Folding applies to strings only; the evaluator ignores options for other values.
        if column.kind == .string, !options.subtracting(.normalized).isEmpty { return nil }
        if column.kind == .string, !strings { return nil }
        if constant.isNull {
            switch op {
            case .equal: return "\(column.raw) IS NULL"
            case .notEqual: return "\(column.raw) IS NOT NULL"
            // NSComparisonPredicateOperator: nil against nil is "same" for <= and >=.
            case .lessThanOrEqual, .greaterThanOrEqual: return "\(column.raw) IS NULL"
            case .lessThan, .greaterThan, .beginsWith, .endsWith, .like, .matches, .contains:
                return "FALSE"
            default: return nil
            }
        }
        if column.kind == .string, op == .equal || op == .notEqual, case .string(let s) = constant {
            // Without [c]/[d], strings are equal literally, scalar by scalar, as Foundation's
            // isEqualToString: (StoreValue.predicateEqual): the stored text byte for byte, not
            // normalized ("e\u{301}" is not "\u{e9}").
            let value = bind { $0.append(text: s) } + " COLLATE \"C\""
            return op == .equal ? "\(column.raw) = \(value)" : "\(column.raw) IS DISTINCT FROM \(value)"
        }
        switch op {
        case .equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            let ordered = op != .equal && op != .notEqual
            if ordered, column.kind == .uuid || column.kind == .binary || column.kind == .uri { return nil }
            switch operand(for: column, constant) {
            case .bound(let value)?:
                if op == .notEqual { return "\(column.value) IS DISTINCT FROM \(value)" }
                // Every operator but `!=` has an SQL spelling (`sqlOperator`).
                return "\(column.value) \(Self.sqlOperator(op)!) \(value)"
            case .fractional(let d)?:
                return integerAgainstFraction(column, op, d)
            case nil:
                return nil
            }
        default:
            return nil
        }
    }

    /// An integer column against a double that is not a whole number in the range of Int64, as the
    /// evaluator compares them (exactly).
    private mutating func integerAgainstFraction(_ column: Column, _ op: ComparisonOperator, _ d: Double) -> String? {
        let notNull = "\(column.value) IS NOT NULL"
        if d >= 0x1p63 || d < -0x1p63 {
            let above = d >= 0x1p63  // every integer is below d
            switch op {
            case .equal: return "FALSE"
            case .notEqual: return "TRUE"
            case .lessThan, .lessThanOrEqual: return above ? notNull : "FALSE"
            default: return above ? "FALSE" : notNull
            }
        }
        // Not a whole number: x < d ⟺ x <= floor(d); x > d ⟺ x > floor(d).
        let floor = Int64(d.rounded(.down))  // d is in range and not whole, so its floor is too
        switch op {
        case .equal: return "FALSE"
        case .notEqual: return "TRUE"
        case .lessThan, .lessThanOrEqual: return "\(column.value) <= \(bind { $0.append(floor) })"
        default: return "\(column.value) > \(bind { $0.append(floor) })"
        }
    }

    /// `column IN {…}` and `column BETWEEN {low, high}`.
    mutating func compare(_ column: Column, _ op: ComparisonOperator, list: [StoreValue], _ options: ComparisonOptions)
        -> String?
    {
        switch op {
        case .in:
            if list.allSatisfy(\.isNull) { return "FALSE" }
            guard list.count <= Self.maximumBindings else { return nil }
            var parts: [String] = []
            // Membership is `==` per member, and a `nil` member matches nothing (NSInPredicateOperator).
            for member in list where !member.isNull {
                guard let part = compare(column, .equal, member, options) else { return nil }
                parts.append(part)
            }
            return Self.balanced(parts, "OR")
        case .between:
            guard list.count == 2, [.integer, .double, .decimal, .date, .string].contains(column.kind) else {
                return nil
            }
            if list.contains(where: \.isNull) { return "FALSE" }
            // NSBetweenPredicateOperator swaps bounds given in descending order.
            guard let order = try? StoreValue.predicateOrder(list[0], list[1], options: options) else {
                // Bounds that do not order (a string and a number; NaN): the evaluator decides, and
                // reports a mismatch. Not an engine error, so nothing is lost by `try?`.
                return nil
            }
            let (lower, upper) = order == .orderedDescending ? (list[1], list[0]) : (list[0], list[1])
            guard let low = compare(column, .greaterThanOrEqual, lower, options),
                let high = compare(column, .lessThanOrEqual, upper, options)
            else { return nil }
            return "(\(low)) AND (\(high))"
        default:
            return nil
        }
    }

    /// Two key paths of the row: numbers and dates, without options. Exact when both sides are of
    /// one kind, or an integer of at most 32 bits against a double (which holds it exactly).
    mutating func compare(_ a: Column, _ op: ComparisonOperator, _ b: Column, _ options: ComparisonOptions) -> String? {
        let numeric: Set<Kind> = [.integer, .double, .date, .decimal]
        guard numeric.contains(a.kind), numeric.contains(b.kind) else { return nil }
        let compatible =
            a.kind == b.kind || (a.kind == .integer && a.isSmallInteger && b.kind == .double)
            || (b.kind == .integer && b.isSmallInteger && a.kind == .double)
            || (a.kind == .integer && b.kind == .decimal) || (a.kind == .decimal && b.kind == .integer)
        guard compatible else { return nil }
        // `==` as the evaluator: both nil, or both numbers and equal (NaN equals nothing).
        let equal = "COALESCE(\(a.value) = \(b.value), \(a.raw) IS NULL AND \(b.raw) IS NULL)"
        switch op {
        case .equal: return equal
        case .notEqual: return "NOT \(equal)"
        case .lessThan, .greaterThan:
            // Every ordering operator has an SQL spelling.
            return "\(a.value) \(Self.sqlOperator(op)!) \(b.value)"
        case .lessThanOrEqual, .greaterThanOrEqual:
            // NSComparisonPredicateOperator: nil against nil is "same" (a NaN is not nil).
            return "(\(a.value) \(Self.sqlOperator(op)!) \(b.value) OR (\(a.raw) IS NULL AND \(b.raw) IS NULL))"
        default: return nil
        }
    }

    /// A to-one relationship (or `SELF`) compared with `nil` or an object.
    mutating func compareReference(
        _ sql: String, _ entitySQL: String?, _ destination: EntityDescription, _ op: ComparisonOperator,
        _ constant: StoreValue
    ) -> String? {
        switch (op, constant) {
        case (.equal, .null): return "\(sql) IS NULL"
        case (.notEqual, .null): return "\(sql) IS NOT NULL"
        case (.equal, .reference(let id)), (.notEqual, .reference(let id)):
            let matches: String
            if !destination.hierarchyNumbers.contains(id.entity) {
                matches = "FALSE"
            } else if let entitySQL {
                matches =
                    "\(sql) = \(bind { $0.append(id.primaryKey) }) AND \(entitySQL) = \(bind { $0.append(int32: id.entity) })"
            } else {
                matches = "\(sql) = \(bind { $0.append(id.primaryKey) })"
            }
            return op == .equal ? matches : Self.negated(matches)
        default:
            return nil
        }
    }
}
