import Foundation

/// A named expression in a dictionary fetch's ``FetchRequest/propertiesToFetch`` or
/// ``FetchRequest/propertiesToGroupBy`` (Core Data's `NSExpressionDescription`).
///
/// ```swift
/// let total = ExpressionDescription(name: "total", expression: try FetchExpression(format: "sum:(salary)"))
/// request.propertiesToFetch = ["department.name", .expression(total)]
/// request.propertiesToGroupBy = ["department.name"]
/// ```
///
/// The expression is a key path (`department.name`) or an aggregate function over one:
/// `count:`, `sum:`, `average:`, `min:`, `max:` (``AggregateFunction``); `count:(SELF)` counts rows.
public struct ExpressionDescription: Sendable, Hashable {
    /// The key of the expression's value in each result dictionary.
    public var name: String
    /// The expression.
    public var expression: FetchExpression
    /// The type the value is converted to (Core Data's `expressionResultType`); the aggregate's own
    /// kind when `nil` (counts are integers, averages Doubles, `min`/`max` the attribute's type).
    public var resultType: AttributeType?

    /// Creates a description.
    public init(name: String, expression: FetchExpression, resultType: AttributeType? = nil) {
        self.name = name
        self.expression = expression
        self.resultType = resultType
    }
}

/// One entry of ``FetchRequest/propertiesToFetch`` or ``FetchRequest/propertiesToGroupBy``: a key
/// path (write it as a string literal) or a named expression.
public enum FetchProperty: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// An attribute or relationship, or a key path through to-one relationships
    /// (`"department.name"`); its value appears under the key path itself.
    case keyPath(String)
    /// A named expression: a key path under another name, or an aggregate.
    case expression(ExpressionDescription)

    /// A key path: `"name"`.
    public init(stringLiteral value: String) { self = .keyPath(value) }

    /// The key of the property's value in each result dictionary.
    public var name: String {
        switch self {
        case .keyPath(let path): path
        case .expression(let description): description.name
        }
    }

    public var description: String {
        switch self {
        case .keyPath(let path): path
        case .expression(let description): "\(description.name) = \(description.expression)"
        }
    }
}
