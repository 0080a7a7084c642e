import Foundation

/// What one step of a key path yields when a predicate or a sort key reads it.
public enum KeyValue {
    /// A scalar value (an attribute, or `nil`).
    case value(StoreValue)
    /// A to-one relationship's destination.
    case object(any PredicateEvaluable)
    /// A to-many relationship's destinations (in order for ordered relationships).
    case objects([any PredicateEvaluable])
    /// A collection of scalars (for example an array in a dictionary being evaluated).
    case values([StoreValue])
}

/// Something a ``FetchPredicate`` can be evaluated against and a ``SortKey`` can read.
///
/// Managed objects, rows of the atomic store engine and plain dictionaries conform. The evaluator
/// walks a key path one key at a time through ``keyValue(forKey:)``.
public protocol PredicateEvaluable {
    /// The value of one key (an attribute or relationship name).
    ///
    /// - Throws: ``FetchPredicateError`` when the key is unknown.
    func keyValue(forKey key: String) throws -> KeyValue

    /// How `SELF` compares: a ``StoreValue/reference(_:)`` for objects and rows, or a scalar.
    var selfValue: StoreValue { get }
}

extension Dictionary: PredicateEvaluable where Key == String, Value == StoreValue {
    /// Reads a key of the dictionary; a missing key is `nil`, as for Core Data's dictionaries.
    public func keyValue(forKey key: String) throws -> KeyValue {
        guard let value = self[key] else { return .value(.null) }
        return .value(value)
    }

    /// Dictionaries have no identity; `SELF` is `nil`.
    public var selfValue: StoreValue { .null }
}
