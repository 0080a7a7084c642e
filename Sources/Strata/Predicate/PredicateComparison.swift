import Foundation

/// One comparison of two evaluated values, as the operators define it: as Foundation's
/// `NSPredicateOperator` subclasses do (docs/predicates.md, "Semantics", gives each rule's source).
enum PredicateComparison {
    static func test(
        _ lhs: EvaluatedValue, _ op: ComparisonOperator, _ rhs: EvaluatedValue, options: ComparisonOptions
    ) throws -> Bool {
        switch op {
        case .equal: return try equal(lhs, rhs, options: options)
        case .notEqual: return try !equal(lhs, rhs, options: options)
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            let (left, right) = (try lhs.scalar(), try rhs.scalar())
            // NSComparisonPredicateOperator: nil against nil is "same" for <= and >=; one nil is false.
            if left.isNull && right.isNull { return op == .lessThanOrEqual || op == .greaterThanOrEqual }
            guard let order = try StoreValue.predicateOrder(left, right, options: options) else {
                return false
            }
            switch op {
            case .lessThan: return order == .orderedAscending
            case .lessThanOrEqual: return order != .orderedDescending
            case .greaterThan: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .between:
            guard case .collection(let bounds) = rhs, bounds.count == 2 else {
                throw FetchPredicateError(.typeMismatch, "BETWEEN needs a collection of two bounds, {lower, upper}")
            }
            let value = try lhs.scalar()
            var (lower, upper) = (try bounds[0].scalar(), try bounds[1].scalar())
            // NSBetweenPredicateOperator swaps bounds given in descending order.
            if try StoreValue.predicateOrder(lower, upper, options: options) == .orderedDescending {
                swap(&lower, &upper)
            }
            guard let low = try StoreValue.predicateOrder(value, lower, options: options),
                let high = try StoreValue.predicateOrder(value, upper, options: options)
            else { return false }
            return low != .orderedAscending && high != .orderedDescending
        case .in: return try contains(rhs, lhs, options: options, op: "IN")
        case .contains: return try contains(lhs, rhs, options: options, op: "CONTAINS")
        case .beginsWith, .endsWith, .like, .matches:
            // An empty pattern matches nothing (NSSubstringPredicateOperator, NSMatchingPredicateOperator).
            guard let (string, pattern) = try strings(lhs, rhs, op), !pattern.isEmpty else { return false }
            switch op {
            case .beginsWith, .endsWith: return substring(pattern, of: string, op, options: options)
            case .like: return PredicateStringMatching.like(string, pattern: pattern, options: options)
            default: return try PredicateStringMatching.matches(string, pattern: pattern, options: options)
            }
        }
    }

    /// Whether `part` is a prefix (`BEGINSWITH`), suffix (`ENDSWITH`) or substring (`CONTAINS`)
    /// of `string` after folding both; an empty part, also one that folding empties, is in no string
    /// (`rangeOfString:` finds nothing for an empty string).
    static func substring(_ part: String, of string: String, _ op: ComparisonOperator, options: ComparisonOptions)
        -> Bool
    {
        let (folded, needle) = (options.fold(string), options.fold(part))
        if needle.isEmpty { return false }
        switch op {
        case .beginsWith: return folded.hasPrefix(needle)
        case .endsWith: return folded.hasSuffix(needle)
        default: return folded.contains(needle)
        }
    }

    /// `==`: collections compare member by member, in order; a collection equals no single value
    /// except that it is never `nil`.
    static func equal(_ lhs: EvaluatedValue, _ rhs: EvaluatedValue, options: ComparisonOptions) throws -> Bool {
        switch (lhs, rhs) {
        case (.collection(let a), .collection(let b)):
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) where try !equal(x, y, options: options) { return false }
            return true
        case (.collection, .value(.null)), (.value(.null), .collection): return false
        default: return try StoreValue.predicateEqual(lhs.scalar(), rhs.scalar(), options: options)
        }
    }

    /// `container CONTAINS element` (and `element IN container`): membership in a collection, or a
    /// substring of a string. Membership is `==` without options, as `containsObject:` tests
    /// `isEqual:` (NSInPredicateOperator): `[c]` and `[d]` apply to substrings only.
    static func contains(
        _ container: EvaluatedValue, _ element: EvaluatedValue, options: ComparisonOptions, op: String
    ) throws -> Bool {
        if case .object(let object) = container, let value = object as? StoreValue {
            // A bare value evaluated as SELF (`SELF CONTAINS "b"` on a string, or on nil).
            return try contains(.value(value), element, options: options, op: op)
        }
        switch container {
        case .collection(let members):
            if case .value(.null) = element { return false }
            for member in members where try equal(member, element, options: []) { return true }
            return false
        case .object(let object) where !(object.selfValue.isNull) && !isReference(object.selfValue):
            // A bare value evaluated as SELF (`SELF CONTAINS "b"` on a string).
            return try contains(.value(object.selfValue), element, options: options, op: op)
        case .value(.null): return false
        case .value(.string(let string)):
            switch try element.scalar() {
            case .null: return false
            case .string(let part): return substring(part, of: string, .contains, options: options)
            case let other:
                throw FetchPredicateError(
                    .typeMismatch, "\(op) cannot look for \(other.kindName.withArticle) in a string")
            }
        default:
            throw FetchPredicateError(
                // The kind is only for the message (safe to drop the error: it names "an object" instead).
                .typeMismatch,
                "\(op) needs a collection or a string, found \((try? container.scalar().kindName.withArticle) ?? "an object")"
            )
        }
    }

    static func isReference(_ value: StoreValue) -> Bool {
        if case .reference = value { return true }
        return false
    }

    /// Both sides of a string operator, or `nil` when either is `nil`.
    static func strings(_ lhs: EvaluatedValue, _ rhs: EvaluatedValue, _ op: ComparisonOperator) throws
        -> (String, String)?
    {
        let (left, right) = (try lhs.scalar(), try rhs.scalar())
        switch (left, right) {
        case (.null, _), (_, .null): return nil
        case (.string(let a), .string(let b)): return (a, b)
        default:
            let culprit = left.kindName == "string" ? right : left
            throw FetchPredicateError(
                .typeMismatch, "\(op.rawValue) compares strings, but found \(culprit.kindName.withArticle)")
        }
    }
}
