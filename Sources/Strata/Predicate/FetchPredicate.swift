import Foundation

/// A condition on objects, written in Core Data's predicate format-string language.
///
/// `FetchPredicate` is Strata's counterpart of `NSPredicate`: an immutable tree that fetch requests,
/// validation rules, fetch request templates and the `strata` tool share. Build one from a format
/// string with ``init(format:_:)``, evaluate it in memory with ``evaluate(with:substitutionVariables:)``,
/// print it back with ``predicateFormat``. Drivers that can translate the tree (SQLite to SQL) do;
/// the in-memory evaluator defines what every translation must answer.
///
/// ```swift
/// let adults = try FetchPredicate(format: "name BEGINSWITH[c] %@ AND age > %d", "a", 30)
/// adults.predicateFormat   // name BEGINSWITH[c] "a" AND age > 30
/// ```
///
/// Thread safety: a value type, `Sendable`; share it freely.
public indirect enum FetchPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE` (`true`) or `FALSEPREDICATE` (`false`).
    case constant(Bool)
    /// `NOT p`.
    case not(FetchPredicate)
    /// `p AND q AND …`; an empty list is true.
    case and([FetchPredicate])
    /// `p OR q OR …`; an empty list is false.
    case or([FetchPredicate])
    /// A comparison of two expressions (`age > 30`, `ANY tags.name ==[c] "x"`).
    case comparison(ComparisonPredicate)

    /// The predicate that is always true (`TRUEPREDICATE`).
    public static var truePredicate: FetchPredicate { .constant(true) }
    /// The predicate that is always false (`FALSEPREDICATE`).
    public static var falsePredicate: FetchPredicate { .constant(false) }

    /// Both predicates (`lhs AND rhs`), flattening nested `AND`s.
    public static func && (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        var parts: [FetchPredicate] = []
        for side in [lhs, rhs] {
            if case .and(let inner) = side { parts += inner } else { parts.append(side) }
        }
        return .and(parts)
    }

    /// Either predicate (`lhs OR rhs`), flattening nested `OR`s.
    public static func || (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        var parts: [FetchPredicate] = []
        for side in [lhs, rhs] {
            if case .or(let inner) = side { parts += inner } else { parts.append(side) }
        }
        return .or(parts)
    }

    /// The negation (`NOT predicate`).
    public static prefix func ! (predicate: FetchPredicate) -> FetchPredicate { .not(predicate) }
}

/// One comparison: `lhs op rhs`, with an optional quantifier and string options.
public struct ComparisonPredicate: Sendable, Hashable {
    /// The left expression.
    public var lhs: FetchExpression
    /// The operator.
    public var op: ComparisonOperator
    /// The right expression.
    public var rhs: FetchExpression
    /// `ANY`/`SOME` or `ALL` before the comparison; `NONE` is written as `NOT ANY`.
    public var modifier: ComparisonModifier
    /// `[c]`, `[d]`, `[n]` options of string comparisons.
    public var options: ComparisonOptions

    /// Creates a comparison.
    public init(
        _ lhs: FetchExpression, _ op: ComparisonOperator, _ rhs: FetchExpression,
        modifier: ComparisonModifier = .direct, options: ComparisonOptions = []
    ) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.modifier = modifier
        self.options = options
    }
}

/// The operator of a ``ComparisonPredicate``.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `<`
    case lessThan = "<"
    /// `<=` (also written `=<`)
    case lessThanOrEqual = "<="
    /// `>`
    case greaterThan = ">"
    /// `>=` (also written `=>`)
    case greaterThanOrEqual = ">="
    /// `==` (also written `=`)
    case equal = "=="
    /// `!=` (also written `<>`)
    case notEqual = "!="
    /// `MATCHES`: the whole left string matches the right regular expression (ICU syntax).
    case matches = "MATCHES"
    /// `LIKE`: the left string matches the right pattern, with `*` and `?` wildcards.
    case like = "LIKE"
    /// `BEGINSWITH`
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`
    case endsWith = "ENDSWITH"
    /// `IN`: the left value is a member of the right collection (or a substring of the right string).
    case `in` = "IN"
    /// `CONTAINS`: the left collection holds the right value (or the left string contains the right one).
    case contains = "CONTAINS"
    /// `BETWEEN`: the left value lies between the two values of the right collection, inclusive.
    case between = "BETWEEN"

    /// Whether the operator only applies to strings.
    public var isStringOperator: Bool {
        switch self {
        case .matches, .like, .beginsWith, .endsWith: true
        default: false
        }
    }
}

/// The quantifier of a ``ComparisonPredicate`` whose left side is a collection.
public enum ComparisonModifier: String, Sendable, Hashable, CaseIterable {
    /// Compare the left value itself.
    case direct = ""
    /// `ANY` (or `SOME`): some member of the left collection satisfies the comparison; false when empty.
    case any = "ANY"
    /// `ALL`: every member satisfies the comparison; true when empty.
    case all = "ALL"
}

/// Options of string comparisons: `[c]`, `[d]`, `[n]`, combinable (`[cd]`).
public struct ComparisonOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    /// Creates options from their raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: ignore case.
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: ignore diacritics.
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
    /// `[n]`: both sides are already folded (a promise that lets drivers use an index); compares as
    /// without options.
    public static let normalized = ComparisonOptions(rawValue: 4)

    /// The options as written after an operator (`[cd]`), or `""`.
    public var formatSuffix: String {
        var letters = ""
        if contains(.caseInsensitive) { letters += "c" }
        if contains(.diacriticInsensitive) { letters += "d" }
        if contains(.normalized) { letters += "n" }
        return letters.isEmpty ? "" : "[\(letters)]"
    }
}

/// A value inside a predicate: a constant, a key path, a variable, a function, a subquery.
///
/// Arithmetic (`a + b`) is the function `add:to:`, as in `NSExpression`; ``function(_:_:)``
/// lists the names. Key paths through relationships are one string (`"department.name"`);
/// collection operators (`items.@sum.price`) are ``collection(_:of:keyPath:)``.
public indirect enum FetchExpression: Sendable, Hashable {
    /// A constant value (`"abc"`, `42`, `nil`, `YES`, `CAST(0, "NSDate")`).
    case constant(StoreValue)
    /// `{a, b, c}`: an array of expressions.
    case aggregate([FetchExpression])
    /// `SELF`: the object the predicate is evaluated with.
    case evaluatedObject
    /// A key path read from the evaluated object (`name`, `department.manager.name`).
    case keyPath(String)
    /// A key path read from the value of another expression (`$x.price`, `FUNCTION(…).name`).
    case member(FetchExpression, String)
    /// `$NAME`: a variable, bound by ``FetchPredicate/withSubstitutionVariables(_:)``, by the
    /// substitution variables of an evaluation, or by a `SUBQUERY`.
    case variable(String)
    /// A collection operator on a collection: `items.@count`, `items.@sum.price`.
    case collection(CollectionOperator, of: FetchExpression, keyPath: String?)
    /// `SUBQUERY(collection, $variable, predicate)`: the members of `collection` the predicate accepts.
    case subquery(collection: FetchExpression, variable: String, predicate: FetchPredicate)
    /// A function of `NSExpression`'s list, by its selector name (`"now"`, `"lowercase:"`,
    /// `"add:to:"`); see ``PredicateFunction``.
    case function(String, [FetchExpression])
    /// `TERNARY(condition, a, b)`.
    case ternary(FetchPredicate, FetchExpression, FetchExpression)
}

/// A key-path collection operator (`@count`, `@sum`, `@avg`, `@min`, `@max`).
public enum CollectionOperator: String, Sendable, Hashable, CaseIterable {
    /// `@count`: the number of members.
    case count = "@count"
    /// `@sum`: the sum of numeric members (`0` for an empty collection).
    case sum = "@sum"
    /// `@avg`: the mean of numeric members (`nil` for an empty collection).
    case average = "@avg"
    /// `@min`: the smallest member (`nil` for an empty collection).
    case min = "@min"
    /// `@max`: the largest member (`nil` for an empty collection).
    case max = "@max"
}
