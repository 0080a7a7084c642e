/// A composite attribute's value as predicates and sort keys see it: an object whose keys are the
/// composite's elements, so `location.latitude` reads the element `latitude` of `location` the
/// way `department.name` reads through a relationship. Reading a key asks the owner for the
/// element's key path (`location.latitude`), which names a slot of its own.
struct CompositeElementValues: PredicateEvaluable {
    /// What holds the composite (an object or a row).
    let owner: any PredicateEvaluable
    /// The composite's key path in the owner (`location`, `location.address`).
    let keyPath: String

    func keyValue(forKey key: String) throws -> KeyValue {
        try owner.keyValue(forKey: keyPath + "." + key)
    }

    /// A present composite is not `nil` (`location != nil` holds) but has no value a predicate
    /// can write, so it compares equal to nothing else: an empty list of references stands for it.
    var selfValue: StoreValue { .references([]) }

    /// What reading the composite at `keyPath` of `owner` gives: `nil` when every element is
    /// `nil` (so `location == nil` holds for an absent composite), the composite otherwise.
    static func keyValue(
        _ composite: CompositeSlots, of owner: any PredicateEvaluable, slotValues: (Int) -> StoreValue
    ) -> KeyValue {
        guard composite.leafSlots.contains(where: { !slotValues($0).isNull }) else { return .value(.null) }
        return .object(CompositeElementValues(owner: owner, keyPath: composite.keyPath))
    }
}
