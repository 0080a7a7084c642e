extension StoreValue: PredicateEvaluable {
    /// A bare value has no keys; reading one is a type mismatch.
    public func keyValue(forKey key: String) throws -> KeyValue {
        if case .null = self { return .value(.null) }
        throw FetchPredicateError(.typeMismatch, "cannot read the key '\(key)' of \(kindName.withArticle) value")
    }

    /// The value itself, so that `SELF BEGINSWITH "a"` filters a list of strings.
    public var selfValue: StoreValue { self }
}
