import Foundation
import Strata

extension QueryTranslator {
    /// The SQL value of a constant compared with a column of `kind`, or `nil` when the evaluator
    /// would compare them differently (or throw a type mismatch).
    func sqlConstant(_ value: StoreValue, for kind: Kind) -> SQLiteValue? {
        switch (kind, value) {
        case (.number, .integer(let n)), (.double, .integer(let n)): return .integer(n)
        case (.number, .bool(let b)), (.double, .bool(let b)): return .integer(b ? 1 : 0)
        case (.number, .double(let d)), (.double, .double(let d)): return d.isNaN ? nil : .real(d)
        case (.number, .decimal(let d)), (.double, .decimal(let d)):
            guard let double = Double(d.description), Decimal(string: "\(double)") == d else { return nil }
            return .real(double)
        case (.string, .string(let s)): return .text(s)
        case (.date, .date(let d)): return .real(d.timeIntervalSinceReferenceDate)
        case (.uuid, .uuid), (.binary, .binary), (.uri, .uri): return ValueCoding.sqliteValue(value)
        default: return nil
        }
    }

    private var collate: String { " COLLATE \(SQLiteFunctions.collation)" }

    /// `sql op constant` for a column of `kind`.
    mutating func compare(
        _ sql: String, _ kind: Kind, _ op: ComparisonOperator, _ constant: StoreValue, _ options: ComparisonOptions
    ) -> String? {
        // Folding applies to strings only; the evaluator ignores options for other values.
        let folding = kind == .string ? options.subtracting(.normalized) : []
        if constant.isNull { return nullAnswer(op, column: sql) }
        let column = folding.isEmpty ? sql : "strata_fold(\(sql), \(folding.rawValue))"
        // Strings without [c]/[d] are equal literally (BINARY on their UTF-8, as the evaluator
        // compares scalars); folded ones, and every ordering, by the STRATA collation.
        let literal = kind == .string && folding.isEmpty && (op == .equal || op == .notEqual)
        let suffix = (kind == .string && !literal) || kind == .uri ? collate : ""
        switch op {
        case .equal, .notEqual, .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            if op != .equal, op != .notEqual, kind == .uuid || kind == .binary || kind == .uri { return nil }
            guard var value = sqlConstant(constant, for: kind) else { return nil }
            if case .text(let text) = value, !folding.isEmpty { value = .text(folding.fold(text)) }
            let placeholder = bind(value)
            if op == .notEqual { return "\(column) IS NOT \(placeholder)\(suffix)" }
            return "\(column) \(Self.sqlOperator(op)) \(placeholder)\(suffix)"
        case .beginsWith, .endsWith, .contains, .like, .matches:
            guard kind == .string, case .string(let pattern) = constant, let code = SQLiteFunctions.code(of: op) else {
                return nil
            }
            return "strata_match(\(code), \(options.rawValue), \(sql), \(bind(.text(pattern))))"
        case .between, .in:
            return nil
        }
    }

    /// `sql IN {…}` and `sql BETWEEN {low, high}`.
    mutating func compare(
        _ sql: String, _ kind: Kind, _ op: ComparisonOperator, list: [StoreValue], _ options: ComparisonOptions
    ) -> String? {
        switch op {
        case .in:
            // Membership is `==` without options (containsObject:); a nil member matches nothing.
            let members = list.filter { !$0.isNull }
            if members.isEmpty { return "0" }
            guard nesting + Self.listLevelNesting * Self.levels(members.count) <= Self.maximumNesting,
                members.count <= maximumBindings
            else {
                return nil
            }
            var parts: [String] = []
            for member in members {
                guard let part = compare(sql, kind, .equal, member, []) else { return nil }
                parts.append(part)
            }
            return Self.balanced(parts, "OR")
        case .between:
            guard list.count == 2, kind == .number || kind == .double || kind == .date || kind == .string else {
                return nil
            }
            if list.contains(where: \.isNull) { return "0" }
            // Bounds in descending order are swapped, as the evaluator does; bounds that do not
            // order (a type mismatch) are left to the evaluator, which throws.
            guard let order = try? StoreValue.predicateOrder(list[0], list[1], options: options) else { return nil }
            let (lower, upper) = order == .orderedDescending ? (list[1], list[0]) : (list[0], list[1])
            guard let low = compare(sql, kind, .greaterThanOrEqual, lower, options),
                let high = compare(sql, kind, .lessThanOrEqual, upper, options)
            else { return nil }
            return "(\(low)) AND (\(high))"
        default:
            return nil
        }
    }

    /// The answer of comparing a column with `nil`: `==`, `<=` and `>=` hold when it is NULL
    /// (`nil <= nil` is true, as in Foundation), `!=` when it is not; every other operator is false
    /// in the evaluator.
    private func nullAnswer(_ op: ComparisonOperator, column: String? = nil) -> String? {
        switch op {
        case .equal, .lessThanOrEqual, .greaterThanOrEqual: column.map { "\($0) IS NULL" }
        case .notEqual: column.map { "\($0) IS NOT NULL" }
        case .lessThan, .greaterThan, .beginsWith, .endsWith, .like, .matches, .contains:
            "0"
        default: nil
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
                matches = "0"
            } else if let entitySQL, let number = layout.storeNumber(id.entity) {
                matches = "\(sql) = \(bind(.integer(id.primaryKey))) AND \(entitySQL) = \(number)"
            } else {
                matches = "\(sql) = \(bind(.integer(id.primaryKey)))"
            }
            return op == .equal ? matches : Self.negated(matches)
        default:
            return nil
        }
    }
}
