import Foundation

/// An aggregate function of a grouped or aggregated fetch (Core Data's `count:`, `sum:`,
/// `average:`, `min:`, `max:` expressions in `propertiesToFetch`).
public enum AggregateFunction: String, Sendable, Hashable, CaseIterable {
    /// `count:`: the values that are not `nil` (every row for `count:(SELF)`, written `count(*)`).
    case count
    /// `sum:`: the sum of the numbers.
    case sum
    /// `average:`: the mean of the numbers.
    case average
    /// `min:`: the smallest value.
    case min
    /// `max:`: the largest value.
    case max

    /// The function's name in a ``FetchExpression/function(_:_:)`` (`"sum:"`).
    public var selector: String { self == .average ? "average:" : rawValue + ":" }

    /// The function named by a ``FetchExpression/function(_:_:)`` selector, if it is an aggregate.
    public init?(selector: String) {
        guard let found = Self.allCases.first(where: { $0.selector == selector }) else { return nil }
        self = found
    }

    /// The name used in result keys and SQL-like text (`sum`, `avg`, `count`, `min`, `max`).
    public var shortName: String { self == .average ? "avg" : rawValue }
}

/// Accumulates one aggregate over a group's values: the one definition every driver that computes
/// aggregates itself must match (drivers call it, or compute exactly what it computes).
///
/// Rules (docs/live-results.md):
/// - Values are normalized first (``normalized(_:)``): a Double NaN reads as `nil` and `-0.0` as
///   `0.0`, as Core Data's SQLite store reads them; `nil` values are skipped.
/// - `count` counts the values left.
/// - `sum` is exact and does not depend on the order of the values: integers (and Booleans, as 0
///   and 1) are added in 128 bits and give an integer when the total fits 64 bits, otherwise the
///   total rounded once to a Double; Doubles (with any integers) are added exactly and rounded
///   once (Shewchuk's algorithm, as Python's `math.fsum`); any Decimal makes the sum a Decimal.
///   A sum of no values is 0 (of the attribute's kind).
/// - `average` is the exact sum divided by the count, a Double (a Decimal for Decimals); `nil`
///   for no values.
/// - `min` and `max` compare as predicates do (``StoreValue/predicateOrder(_:_:options:)``);
///   values that order the same but differ (composed and decomposed `é`) are decided by their
///   Unicode scalars, so the answer does not depend on the order either; `nil` for no values.
///
/// Thread safety: a value type; confine each accumulator to one thread.
public struct AggregateAccumulator {
    /// The function accumulated.
    public let function: AggregateFunction
    /// The attribute type of the values (decides the kind of an empty sum), when known.
    public let type: AttributeType?
    private var count = 0
    private var integerTotal: Int128 = 0
    private var integerOverflow = false
    private var partials: [Double] = []
    private var special: Double = 0
    private var sawDouble = false
    private var decimalTotal: Decimal?
    private var extreme: StoreValue = .null

    /// Creates an accumulator of `function` over values of an attribute of `type`.
    public init(_ function: AggregateFunction, type: AttributeType? = nil) {
        self.function = function
        self.type = type
    }

    /// `value` as aggregates and grouping read it: Double NaN as `nil`, `-0.0` as `0.0`.
    public static func normalized(_ value: StoreValue) -> StoreValue {
        if case .double(let d) = value {
            if d.isNaN { return .null }
            if d == 0 { return .double(0) }
        }
        return value
    }

    /// Adds one value.
    ///
    /// - Throws: ``FetchPredicateError`` with code `typeMismatch` when `sum` or `average` meets a
    ///   value that is not a number, or `min`/`max` values that do not order (a string and a date).
    public mutating func add(_ raw: StoreValue) throws {
        let value = Self.normalized(raw)
        if case .null = value { return }
        count += 1
        switch function {
        case .count: return
        case .sum, .average: try addNumber(value)
        case .min, .max: try addExtreme(value)
        }
    }

    private mutating func addNumber(_ value: StoreValue) throws {
        switch value {
        case .integer(let n): addInteger(Int128(n))
        case .bool(let b): addInteger(b ? 1 : 0)
        case .double(let d):
            sawDouble = true
            addDouble(d)
        case .decimal(let d): decimalTotal = (decimalTotal ?? 0) + d
        default:
            throw FetchPredicateError(
                .typeMismatch, "\(function.selector) adds numbers, but found \(value.kindName.withArticle)")
        }
    }

    private mutating func addInteger(_ n: Int128) {
        let (total, overflow) = integerTotal.addingReportingOverflow(n)
        if overflow {
            // More than 2^63 values of 2^64: move the total into the exact Double sum.
            integerOverflow = true
            Self.addExactly(integerTotal, into: &self)
            integerTotal = n
        } else {
            integerTotal = total
        }
    }

    private static func addExactly(_ n: Int128, into accumulator: inout AggregateAccumulator) {
        var rest = n
        while rest != 0 {
            let part = Double(rest)
            accumulator.addDouble(part)
            rest -= Int128(part)
        }
    }

    /// Shewchuk's exact addition into non-overlapping partials (Python's `math.fsum`).
    private mutating func addDouble(_ value: Double) {
        guard value.isFinite else {
            special += value
            return
        }
        var x = value
        var kept = 0
        for index in partials.indices {
            var y = partials[index]
            if abs(x) < abs(y) { swap(&x, &y) }
            let high = x + y
            let low = y - (high - x)
            if low != 0 {
                partials[kept] = low
                kept += 1
            }
            x = high
        }
        partials.removeSubrange(kept...)
        if !x.isFinite {
            // Finite values whose running total left Double's range: the sum is that infinity.
            special += x
            partials.removeAll()
        } else if x != 0 {
            partials.append(x)
        }
    }

    /// The exactly rounded sum of the partials (round half even across partials, as `fsum`).
    private func roundedPartials() -> Double {
        if special != 0 || special.isNaN { return special }
        var n = partials.count
        guard n > 0 else { return 0 }
        n -= 1
        var high = partials[n]
        var low = 0.0
        while n > 0 {
            let x = high
            n -= 1
            let y = partials[n]
            high = x + y
            low = y - (high - x)
            if low != 0 { break }
        }
        if n > 0, (low < 0 && partials[n - 1] < 0) || (low > 0 && partials[n - 1] > 0) {
            let y = low * 2
            let x = high + y
            if y == x - high { high = x }
        }
        return high
    }

    private mutating func addExtreme(_ value: StoreValue) throws {
        if case .null = extreme {
            extreme = value
            return
        }
        let wanted: ComparisonResult = function == .min ? .orderedAscending : .orderedDescending
        let order = try StoreValue.predicateOrder(value, extreme)
        if order == wanted || (order == .orderedSame && Self.tieBreak(value, extreme) == wanted) { extreme = value }
    }

    /// Orders values that compare the same but differ (canonically equivalent strings), so min and
    /// max do not depend on the order values arrive in.
    private static func tieBreak(_ a: StoreValue, _ b: StoreValue) -> ComparisonResult {
        if case .string(let x) = a, case .string(let y) = b {
            if x.unicodeScalars.elementsEqual(y.unicodeScalars) { return .orderedSame }
            return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars) { $0.value < $1.value }
                ? .orderedAscending : .orderedDescending
        }
        let (x, y) = (String(describing: a), String(describing: b))
        return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending)
    }

    /// The aggregate of the values added so far.
    public var result: StoreValue {
        switch function {
        case .count: return .integer(Int64(count))
        case .min, .max: return extreme
        case .sum:
            if let decimalTotal { return .decimal(decimalTotal + decimalOfRest) }
            if count == 0 {
                switch type {
                case .double?, .float?: return .double(0)
                case .decimal?: return .decimal(0)
                default: return .integer(0)
                }
            }
            if !sawDouble && !integerOverflow, let exact = Int64(exactly: integerTotal) { return .integer(exact) }
            return .double(doubleTotal)
        case .average:
            guard count > 0 else { return .null }
            if let decimalTotal { return .decimal((decimalTotal + decimalOfRest) / Decimal(count)) }
            return .double(doubleTotal / Double(count))
        }
    }

    /// Integers and Doubles added, rounded once.
    private var doubleTotal: Double {
        var copy = self
        Self.addExactly(integerTotal, into: &copy)
        return copy.roundedPartials()
    }

    /// Integers and Doubles added, as a Decimal (when Decimals are present too).
    private var decimalOfRest: Decimal {
        guard integerTotal != 0 || !partials.isEmpty || special != 0 else { return 0 }
        if !sawDouble && !integerOverflow, let exact = Int64(exactly: integerTotal) { return Decimal(exact) }
        return Decimal(doubleTotal)
    }
}
