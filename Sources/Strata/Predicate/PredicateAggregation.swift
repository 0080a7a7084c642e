import Foundation

/// Collection operators (`@count`, `@sum`, `@avg`, `@min`, `@max`) and the aggregate functions
/// (`sum:`, `average:`…) they share their arithmetic with.
enum PredicateAggregation {
    static func apply(
        _ op: CollectionOperator, to collection: EvaluatedValue, keyPath: String?, reader: PredicateEvaluator
    ) throws -> EvaluatedValue {
        guard var members = collection.members else {
            throw FetchPredicateError(
                .typeMismatch, "\(op.rawValue) needs a collection (a to-many key path, {…} or a SUBQUERY)")
        }
        if op == .count { return .value(.integer(Int64(members.count))) }
        if let keyPath {
            members = try members.map { try reader.read(keyPath, from: $0) }
        }
        let values = try members.map { try $0.scalar() }
        switch op {
        case .count: return .value(.integer(Int64(values.count)))
        case .sum: return .value(try sum(values))
        case .average: return .value(try average(values))
        case .min: return .value(try extreme(values, keeping: .orderedAscending))
        case .max: return .value(try extreme(values, keeping: .orderedDescending))
        }
    }

    /// The numbers among `values`, skipping `nil`s.
    static func numbers(_ values: [StoreValue], _ name: String) throws -> [PredicateNumber] {
        try values.compactMap { value in
            if case .null = value { return nil }
            guard let number = PredicateNumber(value) else {
                throw FetchPredicateError(
                    .typeMismatch, "\(name) adds numbers, but found \(value.kindName.withArticle)")
            }
            return number
        }
    }

    /// The sum: an integer when every member is one (a double if that overflows), a decimal when any
    /// is a decimal, else a double; `0` for an empty collection.
    static func sum(_ values: [StoreValue]) throws -> StoreValue {
        let numbers = try numbers(values, "@sum")
        return try numbers.reduce(PredicateNumber.integer(0)) { try PredicateArithmetic.add($0, $1) }.storeValue
    }

    /// The mean, as a double (a decimal when any member is one); `nil` for an empty collection.
    static func average(_ values: [StoreValue]) throws -> StoreValue {
        let numbers = try numbers(values, "@avg")
        guard !numbers.isEmpty else { return .null }
        let total = try numbers.reduce(PredicateNumber.integer(0)) { try PredicateArithmetic.add($0, $1) }
        if case .decimal(let d) = total { return .decimal(d / Decimal(numbers.count)) }
        return .double(total.doubleValue / Double(numbers.count))
    }

    /// The smallest (`.orderedAscending`) or largest member, skipping `nil`s; `nil` when there is none.
    static func extreme(_ values: [StoreValue], keeping wanted: ComparisonResult) throws -> StoreValue {
        var best: StoreValue = .null
        for value in values {
            if case .null = value { continue }
            if case .null = best {
                best = value
                continue
            }
            if try StoreValue.predicateOrder(value, best) == wanted { best = value }
        }
        return best
    }
}

/// Arithmetic on numbers (and dates plus or minus seconds) for the operators and functions.
enum PredicateArithmetic {
    static func add(_ a: PredicateNumber, _ b: PredicateNumber) throws -> PredicateNumber {
        switch (a, b) {
        case (.integer(let x), .integer(let y)):
            let (sum, overflow) = x.addingReportingOverflow(y)
            return overflow ? .double(Double(x) + Double(y)) : .integer(sum)
        case (.decimal, _), (_, .decimal): return .decimal(decimal(a) + decimal(b))
        default: return .double(a.doubleValue + b.doubleValue)
        }
    }

    static func subtract(_ a: PredicateNumber, _ b: PredicateNumber) throws -> PredicateNumber {
        switch (a, b) {
        case (.integer(let x), .integer(let y)):
            let (difference, overflow) = x.subtractingReportingOverflow(y)
            return overflow ? .double(Double(x) - Double(y)) : .integer(difference)
        case (.decimal, _), (_, .decimal): return .decimal(decimal(a) - decimal(b))
        default: return .double(a.doubleValue - b.doubleValue)
        }
    }

    static func multiply(_ a: PredicateNumber, _ b: PredicateNumber) throws -> PredicateNumber {
        switch (a, b) {
        case (.integer(let x), .integer(let y)):
            let (product, overflow) = x.multipliedReportingOverflow(by: y)
            return overflow ? .double(Double(x) * Double(y)) : .integer(product)
        case (.decimal, _), (_, .decimal): return .decimal(decimal(a) * decimal(b))
        default: return .double(a.doubleValue * b.doubleValue)
        }
    }

    /// Division gives a double (a decimal with decimals), as `divide:by:` does; dividing by zero
    /// is an error rather than an infinity.
    static func divide(_ a: PredicateNumber, _ b: PredicateNumber) throws -> PredicateNumber {
        if b.doubleValue == 0 { throw FetchPredicateError(.typeMismatch, "division by zero") }
        switch (a, b) {
        case (.decimal, _), (_, .decimal): return .decimal(decimal(a) / decimal(b))
        default: return .double(a.doubleValue / b.doubleValue)
        }
    }

    static func decimal(_ number: PredicateNumber) -> Decimal {
        switch number {
        case .integer(let n): Decimal(n)
        case .double(let d): Decimal(d)
        case .decimal(let d): d
        }
    }
}
