import Foundation

/// Evaluates ``FetchExpression/function(_:_:)``. A `nil` argument to an arithmetic or string
/// function gives `nil` (so comparisons with the result are false), as SQL does.
enum PredicateFunctionEvaluation {
    static func call(_ name: String, _ arguments: [EvaluatedValue]) throws -> EvaluatedValue {
        guard let arity = PredicateFunction.arities[name] else {
            throw FetchPredicateError(.unsupported, "unknown function '\(name)'")
        }
        guard arguments.count == arity else {
            throw FetchPredicateError(.invalidArgument, "\(name) takes \(arity) arguments, given \(arguments.count)")
        }
        switch name {
        case "now": return .value(.date(Date()))
        case "random": return .value(.double(Double.random(in: 0..<1)))
        case "noindex:": return arguments[0]
        case "count:":
            guard let members = arguments[0].members else { throw notCollection(name) }
            return .value(.integer(Int64(members.count)))
        case "sum:", "min:", "max:", "average:", "median:", "mode:", "stddev:":
            guard let members = arguments[0].members else { throw notCollection(name) }
            return try aggregate(name, members.map { try $0.scalar() })
        default: break
        }
        let values = try arguments.map { try $0.scalar() }
        if values.contains(where: \.isNull) { return .value(.null) }
        switch name {
        case "castObject:toType:":
            guard case .string(let type) = values[1] else {
                throw FetchPredicateError(.typeMismatch, "the type of CAST must be a string")
            }
            return .value(try PredicateValueCast.cast(values[0], to: type))
        case "uppercase:", "lowercase:":
            guard case .string(let s) = values[0] else {
                throw FetchPredicateError(
                    .typeMismatch, "\(name) needs a string, found \(values[0].kindName.withArticle)")
            }
            return .value(.string(name == "uppercase:" ? s.uppercased() : s.lowercased()))
        case "canonical:":
            guard case .string(let s) = values[0] else {
                throw FetchPredicateError(
                    .typeMismatch, "\(name) needs a string, found \(values[0].kindName.withArticle)")
            }
            return .value(
                .string(PredicateStringMatching.prepared(s, [.caseInsensitive, .diacriticInsensitive]).lowercased()))
        case "add:to:", "from:subtract:":
            if let dated = try dateArithmetic(name, values[0], values[1]) { return .value(dated) }
        default: break
        }
        let numbers = try values.map { value -> PredicateNumber in
            guard let number = PredicateNumber(value) else {
                throw FetchPredicateError(.typeMismatch, "\(name) needs numbers, found \(value.kindName.withArticle)")
            }
            return number
        }
        return .value(try numeric(name, numbers).storeValue)
    }

    static func notCollection(_ name: String) -> FetchPredicateError {
        FetchPredicateError(.typeMismatch, "\(name) needs a collection, such as {1, 2} or a to-many key path")
    }

    /// `date + seconds`, `date - seconds`, `date - date` (seconds).
    static func dateArithmetic(_ name: String, _ a: StoreValue, _ b: StoreValue) throws -> StoreValue? {
        switch (name, a, b) {
        case ("add:to:", .date(let d), _):
            guard let n = PredicateNumber(b) else { return nil }
            return .date(d.addingTimeInterval(n.doubleValue))
        case ("add:to:", _, .date(let d)):
            guard let n = PredicateNumber(a) else { return nil }
            return .date(d.addingTimeInterval(n.doubleValue))
        case ("from:subtract:", .date(let d), .date(let e)):
            return .double(d.timeIntervalSince(e))
        case ("from:subtract:", .date(let d), _):
            guard let n = PredicateNumber(b) else { return nil }
            return .date(d.addingTimeInterval(-n.doubleValue))
        default: return nil
        }
    }

    static func numeric(_ name: String, _ n: [PredicateNumber]) throws -> PredicateNumber {
        func integers() throws -> (Int64, Int64) {
            var result: [Int64] = []
            for number in n {
                guard case .integer(let x) = number else {
                    throw FetchPredicateError(.typeMismatch, "\(name) needs integers")
                }
                result.append(x)
            }
            return (result[0], result.count > 1 ? result[1] : 0)
        }
        switch name {
        case "add:to:": return try PredicateArithmetic.add(n[0], n[1])
        case "from:subtract:": return try PredicateArithmetic.subtract(n[0], n[1])
        case "multiply:by:": return try PredicateArithmetic.multiply(n[0], n[1])
        case "divide:by:": return try PredicateArithmetic.divide(n[0], n[1])
        case "modulus:by:":
            if case .integer(let a) = n[0], case .integer(let b) = n[1] {
                guard b != 0 else { throw FetchPredicateError(.typeMismatch, "modulus by zero") }
                return .integer(a == .min && b == -1 ? 0 : a % b)
            }
            guard n[1].doubleValue != 0 else { throw FetchPredicateError(.typeMismatch, "modulus by zero") }
            return .double(fmod(n[0].doubleValue, n[1].doubleValue))
        case "raise:toPower:": return .double(pow(n[0].doubleValue, n[1].doubleValue))
        case "sqrt:": return .double(n[0].doubleValue.squareRoot())
        case "log:": return .double(log10(n[0].doubleValue))
        case "ln:": return .double(log(n[0].doubleValue))
        case "exp:": return .double(exp(n[0].doubleValue))
        case "ceiling:": return rounded(n[0], .up)
        case "floor:": return rounded(n[0], .down)
        case "trunc:": return rounded(n[0], .towardZero)
        case "abs:":
            switch n[0] {
            case .integer(let x): return x == .min ? .double(-Double(x)) : .integer(Swift.abs(x))
            case .double(let x): return .double(Swift.abs(x))
            case .decimal(let x): return .decimal(x < 0 ? -x : x)
            }
        case "random:":
            guard case .integer(let upper) = n[0], upper > 0 else {
                throw FetchPredicateError(.typeMismatch, "random: needs a positive integer")
            }
            return .integer(Int64.random(in: 0..<upper))
        case "onesComplement:": return .integer(~(try integers().0))
        case "bitwiseAnd:with:": return .integer(try integers().0 & integers().1)
        case "bitwiseOr:with:": return .integer(try integers().0 | integers().1)
        case "bitwiseXor:with:": return .integer(try integers().0 ^ integers().1)
        case "leftshift:by:": return .integer(try integers().0 << integers().1)
        case "rightshift:by:": return .integer(try integers().0 >> integers().1)
        default: throw FetchPredicateError(.unsupported, "unknown function '\(name)'")
        }
    }

    static func rounded(_ number: PredicateNumber, _ rule: FloatingPointRoundingRule) -> PredicateNumber {
        switch number {
        case .integer: return number
        case .double(let d): return .double(d.rounded(rule))
        case .decimal(let d):
            var value = d
            var result = Decimal()
            let mode: NSDecimalNumber.RoundingMode =
                switch rule {
                case .up: .up
                case .down: .down
                default: d < 0 ? .up : .down
                }
            NSDecimalRound(&result, &value, 0, mode)
            return .decimal(result)
        }
    }

    static func aggregate(_ name: String, _ values: [StoreValue]) throws -> EvaluatedValue {
        switch name {
        case "sum:": return .value(try PredicateAggregation.sum(values))
        case "average:": return .value(try PredicateAggregation.average(values))
        case "min:": return .value(try PredicateAggregation.extreme(values, keeping: .orderedAscending))
        case "max:": return .value(try PredicateAggregation.extreme(values, keeping: .orderedDescending))
        default: break
        }
        let numbers = try PredicateAggregation.numbers(values, name).map(\.doubleValue)
        switch name {
        case "median:":
            guard !numbers.isEmpty else { return .value(.null) }
            let sorted = numbers.sorted()
            let middle = sorted.count / 2
            return .value(.double(sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2))
        case "stddev:":
            guard !numbers.isEmpty else { return .value(.null) }
            let mean = numbers.reduce(0, +) / Double(numbers.count)
            let variance = numbers.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(numbers.count)
            return .value(.double(variance.squareRoot()))
        default:  // mode: every most frequent value, in first-seen order
            var counts: [Double: Int] = [:]
            var order: [Double] = []
            for number in numbers {
                if counts[number] == nil { order.append(number) }
                counts[number, default: 0] += 1
            }
            let most = counts.values.max() ?? 0
            return .collection(order.filter { counts[$0] == most }.map { .value(.double($0)) })
        }
    }
}
