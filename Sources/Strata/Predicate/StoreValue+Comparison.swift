import Foundation

// How predicates and sort keys compare store values. Every driver that translates predicates or
// sorts must agree with these functions; the in-memory evaluator uses nothing else.
//
// - Numbers compare as numbers whatever their case: `.integer(1) == .double(1.0) == .bool(true)`
//   == `.decimal(1)`. A double against a decimal compares as doubles; integers against decimals
//   exactly. NaN is unordered (never equal, never less or greater).
// - Strings are equal without options when their Unicode scalars are (a literal comparison, as
//   `-[NSString isEqual:]`: composed and decomposed `é` differ). With `[c]`/`[d]` both sides are
//   folded with `folding(options:locale: nil)` (`[c]` case, `[d]` diacritics, and width with
//   either, as Foundation's CFStringCompare flags) and compared by canonical equivalence. Strings
//   order by canonical equivalence and their scalars in NFC (Swift's `String` comparison), folded
//   the same way.
// - Dates compare by time; UUIDs, URIs, binary data and references compare for equality only.
// - `nil` equals only `nil`; an ordering comparison with `nil` is unordered here (the operators
//   make `nil <= nil` true, see PredicateComparison).
// - Values of different kinds are never equal (Foundation's `isEqual:`), but ordering them (a
//   string with a date, a number with a string) is a type mismatch, thrown as
//   ``FetchPredicateError/Code-swift.struct/typeMismatch`` (Foundation's `compare:` raises).

extension ComparisonOptions {
    /// `string` folded as these options compare it: `[c]` folds case, `[d]` removes diacritics,
    /// and either also folds width (`Ａ` is `A`), as Foundation adds `kCFCompareWidthInsensitive`
    /// to both; `[n]` changes nothing.
    public func fold(_ string: String) -> String {
        var folding: String.CompareOptions = []
        if contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        guard !folding.isEmpty else { return string }
        folding.insert(.widthInsensitive)
        return string.folding(options: folding, locale: nil)
    }

    /// Whether these options fold strings (`[c]` or `[d]`).
    var foldsStrings: Bool { contains(.caseInsensitive) || contains(.diacriticInsensitive) }
}

/// A number read from a ``StoreValue`` for comparison and arithmetic.
enum PredicateNumber {
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)

    init?(_ value: StoreValue) {
        switch value {
        case .integer(let n): self = .integer(n)
        case .double(let d): self = .double(d)
        case .decimal(let d): self = .decimal(d)
        case .bool(let b): self = .integer(b ? 1 : 0)
        default: return nil
        }
    }

    var doubleValue: Double {
        switch self {
        case .integer(let n): Double(n)
        case .double(let d): d
        case .decimal(let d): NSDecimalNumber(decimal: d).doubleValue
        }
    }

    var storeValue: StoreValue {
        switch self {
        case .integer(let n): .integer(n)
        case .double(let d): .double(d)
        case .decimal(let d): .decimal(d)
        }
    }

    /// The order of two numbers, or `nil` when either is NaN.
    static func compare(_ a: PredicateNumber, _ b: PredicateNumber) -> ComparisonResult? {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return order(x, y)
        case (.integer(let x), .double(let y)): return compare(integer: x, double: y)
        case (.double(let x), .integer(let y)): return compare(integer: y, double: x).map(reversed)
        case (.double(let x), .double(let y)): return x.isNaN || y.isNaN ? nil : order(x, y)
        case (.decimal(let x), .decimal(let y)): return x.isNaN || y.isNaN ? nil : order(x, y)
        case (.decimal(let x), .integer(let y)): return x.isNaN ? nil : order(x, Decimal(y))
        case (.integer(let x), .decimal(let y)): return y.isNaN ? nil : order(Decimal(x), y)
        case (.decimal, .double), (.double, .decimal):
            let (x, y) = (a.doubleValue, b.doubleValue)
            return x.isNaN || y.isNaN ? nil : order(x, y)
        }
    }

    /// Exact comparison of an integer with a double (no rounding of either).
    private static func compare(integer x: Int64, double y: Double) -> ComparisonResult? {
        if y.isNaN { return nil }
        if y >= 0x1p63 { return .orderedAscending }
        if y < -0x1p63 { return .orderedDescending }
        let floor = y.rounded(.down)
        let whole = Int64(floor)
        if x != whole { return order(x, whole) }
        return y == floor ? .orderedSame : .orderedAscending
    }

    private static func reversed(_ result: ComparisonResult) -> ComparisonResult {
        switch result {
        case .orderedAscending: .orderedDescending
        case .orderedDescending: .orderedAscending
        case .orderedSame: .orderedSame
        }
    }
}

func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
    a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
}

extension StoreValue {
    /// Whether the value is a number (an integer, double, decimal or Boolean).
    public var isNumeric: Bool { PredicateNumber(self) != nil }

    /// Whether two values are equal as a predicate's `==` defines it.
    ///
    /// - Parameters:
    ///   - lhs: The left value.
    ///   - rhs: The right value.
    ///   - options: `[c]`/`[d]` folding, applied when both are strings.
    /// Values of different kinds (a number and a string) are unequal, as Foundation's `isEqual:`
    /// answers; strings without `[c]`/`[d]` compare literally, scalar by scalar.
    ///
    /// - Throws: Nothing today; the signature keeps room for kinds that cannot be compared.
    public static func predicateEqual(_ lhs: StoreValue, _ rhs: StoreValue, options: ComparisonOptions = []) throws
        -> Bool
    {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let a), .string(let b)):
            guard options.foldsStrings else { return a.unicodeScalars.elementsEqual(b.unicodeScalars) }
            return options.fold(a) == options.fold(b)
        case (.date(let a), .date(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.uri(let a), .uri(let b)): return a == b
        case (.binary(let a), .binary(let b)): return a == b
        case (.reference(let a), .reference(let b)): return a == b
        case (.references(let a), .references(let b)): return a == b
        default:
            if let a = PredicateNumber(lhs), let b = PredicateNumber(rhs) {
                return PredicateNumber.compare(a, b) == .orderedSame
            }
            return false
        }
    }

    /// The order of two values as a predicate's `<`, `>`, `BETWEEN` and `@min`/`@max` define it.
    ///
    /// - Returns: The order, or `nil` when the values are unordered (either is `nil` or NaN), in
    ///   which case every ordering comparison is false.
    /// - Throws: ``FetchPredicateError/Code-swift.struct/typeMismatch`` when the kinds do not order
    ///   (a string with a number, two UUIDs).
    public static func predicateOrder(_ lhs: StoreValue, _ rhs: StoreValue, options: ComparisonOptions = []) throws
        -> ComparisonResult?
    {
        switch (lhs, rhs) {
        case (.null, _), (_, .null): return nil
        case (.string(let a), .string(let b)): return order(options.fold(a), options.fold(b))
        case (.date(let a), .date(let b)): return order(a, b)
        default:
            if let a = PredicateNumber(lhs), let b = PredicateNumber(rhs) { return PredicateNumber.compare(a, b) }
            throw mismatch(lhs, rhs, "<")
        }
    }

    static func mismatch(_ lhs: StoreValue, _ rhs: StoreValue, _ op: String) -> FetchPredicateError {
        if lhs.kindName == rhs.kindName {
            return FetchPredicateError(.typeMismatch, "\(lhs.kindName) values cannot be ordered (\(op))")
        }
        return FetchPredicateError(
            .typeMismatch, "cannot compare \(lhs.kindName.withArticle) with \(rhs.kindName.withArticle) (\(op))")
    }
}

extension String {
    /// "a string", "an integer".
    var withArticle: String {
        guard let first = first else { return self }
        if self == "nil" { return self }
        return ("aeiouAEIOU".contains(first) && !hasPrefix("UUID") && !hasPrefix("URI") ? "an " : "a ") + self
    }
}
