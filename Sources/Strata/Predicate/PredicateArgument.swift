import Foundation

/// A Swift value that can fill a format argument (`%@`, `%K`, `%d`…) or a substitution variable.
///
/// Numbers, strings, dates, data, UUIDs, URLs, decimals, Booleans, ``StoreValue``, ``RowID``,
/// arrays and sets of these, and optionals of these (`nil` is `NULL`) conform.
/// ``PredicateKeyPath`` is a key path for `%@` or `%K`; a plain `String` also works for `%K`.
/// Managed objects and object IDs conform too (`department == %@`), standing for their row.
/// Arguments are read once, when the predicate is built, so the protocol does not require
/// `Sendable` (managed objects are confined to their context).
public protocol PredicateArgument {
    /// The value the argument stands for.
    var predicateArgument: PredicateArgumentValue { get }
}

/// What a ``PredicateArgument`` stands for.
public enum PredicateArgumentValue: Sendable, Hashable {
    /// One value.
    case value(StoreValue)
    /// A collection of values (an array or set), for `IN`, `BETWEEN` and `{…}`.
    case values([StoreValue])
    /// A key path (for `%K`, or a key path passed to `%@`).
    case keyPath(String)
}

/// A key path passed as a format argument: `FetchPredicate(format: "%K == 1", PredicateKeyPath("a.b"))`.
public struct PredicateKeyPath: PredicateArgument, Hashable, ExpressibleByStringLiteral {
    /// The key path (`"department.name"`).
    public var keyPath: String
    /// Creates a key path argument.
    public init(_ keyPath: String) { self.keyPath = keyPath }
    /// Creates a key path argument from a literal.
    public init(stringLiteral value: String) { self.keyPath = value }
    public var predicateArgument: PredicateArgumentValue { .keyPath(keyPath) }
}

extension StoreValue: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue {
        if case .references(let ids) = self { return .values(ids.map(StoreValue.reference)) }
        return .value(self)
    }
}

extension RowID: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.reference(self)) }
}

extension Int: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.integer(Int64(self))) }
}
extension Int8: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.integer(Int64(self))) }
}
extension Int16: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.integer(Int64(self))) }
}
extension Int32: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.integer(Int64(self))) }
}
extension Int64: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.integer(self)) }
}
extension UInt: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { UInt64(self).predicateArgument }
}
extension UInt8: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.integer(Int64(self))) }
}
extension UInt16: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.integer(Int64(self))) }
}
extension UInt32: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.integer(Int64(self))) }
}
extension UInt64: PredicateArgument {
    /// Values above `Int64.max` become doubles.
    public var predicateArgument: PredicateArgumentValue {
        if let exact = Int64(exactly: self) { return .value(.integer(exact)) }
        return .value(.double(Double(self)))
    }
}
extension Double: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.double(self)) }
}
extension Float: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.double(Double(self))) }
}
extension Bool: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.bool(self)) }
}
extension String: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.string(self)) }
}
extension Substring: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.string(String(self))) }
}
extension Date: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.date(self)) }
}
extension Data: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.binary(self)) }
}
extension UUID: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.uuid(self)) }
}
extension URL: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.uri(self)) }
}
extension Decimal: PredicateArgument {
    public var predicateArgument: PredicateArgumentValue { .value(.decimal(self)) }
}

extension Optional: PredicateArgument where Wrapped: PredicateArgument {
    /// `nil` is `NULL`.
    public var predicateArgument: PredicateArgumentValue {
        switch self {
        case .none: .value(.null)
        case .some(let wrapped): wrapped.predicateArgument
        }
    }
}

extension Array: PredicateArgument where Element: PredicateArgument {
    /// The members' values, in order; nested collections are flattened.
    public var predicateArgument: PredicateArgumentValue { .values(PredicateArgumentValue.flatten(self)) }
}

extension Set: PredicateArgument where Element: PredicateArgument {
    /// The members' values (in no particular order); nested collections are flattened.
    public var predicateArgument: PredicateArgumentValue { .values(PredicateArgumentValue.flatten(Array(self))) }
}

extension PredicateArgumentValue {
    static func flatten(_ elements: [some PredicateArgument]) -> [StoreValue] {
        var values: [StoreValue] = []
        values.reserveCapacity(elements.count)
        for element in elements {
            switch element.predicateArgument {
            case .value(let value): values.append(value)
            case .values(let inner): values += inner
            case .keyPath(let path): values.append(.string(path))
            }
        }
        return values
    }

    /// The expression a format argument or substitution variable turns into.
    func expression() throws -> FetchExpression {
        switch self {
        case .value(let value):
            return try PredicateArgumentValue.constantExpression(value)
        case .values(let values):
            return .aggregate(try values.map(PredicateArgumentValue.constantExpression))
        case .keyPath(let path):
            return try KeyPathSyntax.expression(parsing: path, base: .evaluatedObject)
        }
    }

    static func constantExpression(_ value: StoreValue) throws -> FetchExpression {
        switch value {
        case .references(let ids): return .aggregate(ids.map { .constant(.reference($0)) })
        case .unfetched:
            throw FetchPredicateError(
                .invalidArgument, "an unfetched relationship cannot be a predicate argument; fetch its members first")
        default: return .constant(value)
        }
    }
}
