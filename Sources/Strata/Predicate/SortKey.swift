import Foundation

/// How a ``SortKey`` compares strings.
public enum SortComparison: String, Sendable, Hashable, CaseIterable {
    /// Unicode scalar order of NFC text (Swift's `String` order; SQLite's `BINARY` on NFC text).
    case `default`
    /// Case folded first (`compare(_:options: .caseInsensitive)`).
    case caseInsensitive
    /// Finder-like: case-insensitive, runs of ASCII digits compared as numbers ("file2" < "file10").
    /// Strata defines it itself so that every platform and driver sorts the same way.
    case localizedStandard
}

/// One key of a sort order: Strata's counterpart of `NSSortDescriptor`.
///
/// The key path may go through to-one relationships (`"department.name"`) and may end in a
/// collection operator on a to-many relationship (`"items.@count"`). `nil` sorts first in
/// ascending order and last in descending order, as Core Data does.
///
/// Thread safety: a value type, `Sendable`.
public struct SortKey: Sendable, Hashable, CustomStringConvertible {
    /// The key path read from each object.
    public let keyPath: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// How strings compare.
    public var comparison: SortComparison
    /// The key path parsed once; `nil` when it is malformed (reported by ``compare(_:_:by:)``).
    private let expression: FetchExpression?
    /// The key when the key path is one key (`"name"`): read straight from the object, without an
    /// evaluator (sorting reads a key of every object).
    private let singleKey: String?

    /// Creates a sort key.
    public init(_ keyPath: String, ascending: Bool = true, comparison: SortComparison = .default) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.comparison = comparison
        // A malformed key path is kept as nil: value(of:) parses it again and throws that error, and
        // fetch validation reports it, so the error is never lost.
        let expression = try? KeyPathSyntax.expression(parsing: keyPath, base: .evaluatedObject)  // value(of:) rethrows
        self.expression = expression
        if case .keyPath(let key) = expression, !key.isEmpty, !key.utf8.contains(UInt8(ascii: ".")) {
            singleKey = key
        } else {
            singleKey = nil
        }
    }

    /// The same key in the opposite direction.
    public var reversed: SortKey {
        var key = self
        key.ascending.toggle()
        return key
    }

    public var description: String {
        let options = comparison == .default ? "" : ", \(comparison)"
        return "\(keyPath) \(ascending ? "ascending" : "descending")\(options)"
    }

    /// The value this key reads from `object`.
    ///
    /// - Throws: ``FetchPredicateError`` when the key path is malformed, unknown, or reads a collection.
    public func value(of object: any PredicateEvaluable) throws -> StoreValue {
        if let singleKey {
            switch try object.keyValue(forKey: singleKey) {
            case .value(.references): break  // a to-many relationship: explained below
            case .value(let value): return value
            case .object(let destination): return destination.selfValue
            case .objects, .values: break  // collections: explained below
            }
        }
        guard let expression else {
            _ = try KeyPathSyntax.expression(parsing: keyPath, base: .evaluatedObject)
            throw FetchPredicateError(.invalidArgument, "'\(keyPath)' is not a key path")
        }
        let value = try PredicateEvaluator(root: object, substitutions: [:]).value(expression)
        guard case .collection = value else { return try value.scalar() }
        throw FetchPredicateError(
            .typeMismatch, "sort key '\(keyPath)' reads a to-many relationship; sort by a to-one key path or use @count"
        )
    }

    /// Orders two objects by `keys`, the first key deciding unless it finds them equal.
    ///
    /// - Throws: ``FetchPredicateError`` when a key cannot be read or two values do not order.
    public static func compare(_ a: any PredicateEvaluable, _ b: any PredicateEvaluable, by keys: [SortKey]) throws
        -> ComparisonResult
    {
        for key in keys {
            let result = try key.compareValues(key.value(of: a), key.value(of: b))
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }

    /// Orders two values as this key does (direction and string comparison included).
    public func compareValues(_ a: StoreValue, _ b: StoreValue) throws -> ComparisonResult {
        let result = try SortKey.compare(a, b, comparison: comparison)
        guard !ascending else { return result }
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// The ascending order of two values: `nil` first, numbers across types, strings by
    /// `comparison`, dates by time; UUIDs, URIs, data and references in a fixed order of their own.
    ///
    /// - Throws: ``FetchPredicateError/Code-swift.struct/typeMismatch`` for values of different kinds.
    public static func compare(_ a: StoreValue, _ b: StoreValue, comparison: SortComparison = .default) throws
        -> ComparisonResult
    {
        switch (a, b) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.string(let x), .string(let y)):
            switch comparison {
            case .default: return order(x, y)
            case .caseInsensitive:
                return order(ComparisonOptions.caseInsensitive.fold(x), ComparisonOptions.caseInsensitive.fold(y))
            case .localizedStandard: return standardCompare(x, y)
            }
        case (.uuid(let x), .uuid(let y)): return order(x.uuidString, y.uuidString)
        case (.uri(let x), .uri(let y)): return order(x.absoluteString, y.absoluteString)
        case (.reference(let x), .reference(let y)): return order(x, y)
        case (.binary(let x), .binary(let y)):
            return x.lexicographicallyPrecedes(y) ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        default:
            return try StoreValue.predicateOrder(a, b) ?? .orderedSame
        }
    }

    /// Sorts `objects` by `keys`, stably (equal objects keep their order). Each key is read once
    /// per object.
    ///
    /// - Complexity: O(n log n) comparisons after n × keys reads.
    public static func sort<Element: PredicateEvaluable>(_ objects: [Element], by keys: [SortKey]) throws -> [Element] {
        guard !keys.isEmpty else { return objects }
        let rows = try objects.enumerated().map { index, object in
            (index: index, values: try keys.map { try $0.value(of: object) })
        }
        var failure: (any Error)?
        let sorted = rows.sorted { lhs, rhs in
            if failure != nil { return false }
            do {
                for (position, key) in keys.enumerated() {
                    let result = try key.compareValues(lhs.values[position], rhs.values[position])
                    if result != .orderedSame { return result == .orderedAscending }
                }
            } catch {
                failure = error
            }
            return lhs.index < rhs.index
        }
        if let failure { throw failure }
        return sorted.map { objects[$0.index] }
    }

    /// Finder-like comparison: case-insensitive, digit runs compared by value.
    static func standardCompare(_ x: String, _ y: String) -> ComparisonResult {
        let a = chunks(ComparisonOptions.caseInsensitive.fold(x))
        let b = chunks(ComparisonOptions.caseInsensitive.fold(y))
        for (p, q) in zip(a, b) {
            let result: ComparisonResult
            switch (p.isNumber, q.isNumber) {
            case (true, true):
                let (m, n) = (p.text.drop { $0 == "0" }, q.text.drop { $0 == "0" })
                result = m.count != n.count ? order(m.count, n.count) : order(String(m), String(n))
            default: result = order(p.text, q.text)
            }
            if result != .orderedSame { return result }
        }
        return order(a.count, b.count)
    }

    private static func chunks(_ string: String) -> [(isNumber: Bool, text: String)] {
        var result: [(isNumber: Bool, text: String)] = []
        for character in string {
            let isDigit = character.isASCII && character.isNumber
            if let last = result.last, last.isNumber == isDigit {
                result[result.count - 1].text.append(character)
            } else {
                result.append((isDigit, String(character)))
            }
        }
        return result
    }
}
