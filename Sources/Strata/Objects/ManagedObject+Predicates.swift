import Foundation

extension ManagedObject: PredicateEvaluable {
    /// Reads a key for predicate evaluation and sorting, firing the fault if needed.
    public func keyValue(forKey key: String) throws -> KeyValue {
        guard let slot = entity.index(ofProperty: key) else {
            guard let composite = entity.compositesByKeyPath[key] else {
                if fetchedPropertyDescription(named: key) != nil { return .objects(try fetchedObjects(forKey: key)) }
                throw FetchPredicateError.unknownKey(key, entity: entity.name)
            }
            fireFault()
            guard !values.isEmpty else { return .value(.null) }
            return CompositeElementValues.keyValue(composite, of: self) { values[$0] }
        }
        fireFault()
        guard !values.isEmpty else { return .value(.null) }
        guard let context = managedObjectContext else { return .value(values[slot]) }
        switch values[slot] {
        case .reference(let id):
            return context.object(for: id, relatedTo: self).map(KeyValue.object) ?? .value(.null)
        case .references, .unfetched:
            try loadToMany(slot)
            guard case .references(let ids) = values[slot] else { return .objects([]) }
            return .objects(context.objects(for: ids, relatedTo: self))
        case let value:
            return .value(value)
        }
    }

    /// `SELF` compares as a reference to the object's row.
    public var selfValue: StoreValue { .reference(objectID.rowID) }
}

extension ManagedObjectID: PredicateArgument {
    /// An object ID in a predicate compares as a reference to its row.
    public var predicateArgument: PredicateArgumentValue { .value(.reference(rowID)) }
}

extension ManagedObject: PredicateArgument {
    /// An object in a predicate (`department == %@`) compares as a reference to its row.
    public var predicateArgument: PredicateArgumentValue { .value(.reference(objectID.rowID)) }
}
