/// Small builders the core uses to make predicates without parsing.
extension FetchPredicate {
    /// `keyPath == value`.
    public static func keyPath(_ keyPath: String, equals value: StoreValue) -> FetchPredicate {
        .comparison(ComparisonPredicate(.keyPath(keyPath), .equal, .constant(value)))
    }
}

extension FetchPredicateError {
    /// A key the evaluated object's entity does not have.
    static func unknownKey(_ key: String, entity: String) -> FetchPredicateError {
        FetchPredicateError(.unknownKeyPath, "entity '\(entity)' has no property named '\(key)'", found: key)
    }
}
