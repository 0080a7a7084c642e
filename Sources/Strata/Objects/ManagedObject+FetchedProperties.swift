import Foundation

// Fetched properties (Core Data's NSFetchedPropertyDescription): a named query evaluated lazily,
// the first time the property is read on an object, through the object's context's fetch (so on
// every driver, with the context's pending changes). The result is kept by the context for the
// object and is not updated as the store changes; `refresh(_:mergeChanges:)` drops it so the next
// read fetches again, and `reset()` drops them all.

extension ManagedObject {
    /// The objects of the fetched property `key`, fetching them on first access (Core Data's
    /// fetched properties, read with `value(forKey:)`, which returns the same array).
    ///
    /// The property's predicate sees `$FETCH_SOURCE` as this object (`$FETCH_SOURCE` alone is the
    /// object, `$FETCH_SOURCE.name` its value, read now) and `$FETCHED_PROPERTY` as the property's
    /// description (`$FETCHED_PROPERTY.name`, `$FETCHED_PROPERTY.entityName`,
    /// `$FETCHED_PROPERTY.userInfo.KEY`, a string). The result is kept: later reads return it
    /// without fetching, even after the store changed, until
    /// ``ManagedObjectContext/refresh(_:mergeChanges:)`` or ``ManagedObjectContext/reset()``.
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` when `key` names no fetched property of the
    ///   entity (or of an ancestor) or the object is in no context; ``FetchPredicateError``, its
    ///   message naming the entity and property, when the predicate reads a variable nobody sets
    ///   or compares values that do not fit (a date with a Boolean); the store's error.
    public func fetchedObjects(forKey key: String) throws -> [ManagedObject] {
        guard let property = fetchedPropertyDescription(named: key) else { throw unknownKey(key) }
        checkConfinement("fetchedObjects(forKey: \"\(key)\")")
        guard let context = managedObjectContext else {
            throw StoreError(
                .invalidRequest,
                "cannot evaluate fetched property '\(entity.name).\(key)': the object is in no context; insert it or read it from one"
            )
        }
        if let kept = context.fetchedPropertyResults[ObjectIdentifier(self)], kept.object === self,
            let objects = kept.byName[key]
        {
            return objects
        }
        let objects: [ManagedObject]
        do {
            objects = try context.fetch(try fetchRequest(for: property))
        } catch var error as FetchPredicateError {
            error.message = "fetched property '\(entity.name).\(key)' ('\(property.predicateFormat)'): \(error.message)"
            throw error
        }
        var kept = context.fetchedPropertyResults[ObjectIdentifier(self)] ?? FetchedPropertyResults(object: self)
        if kept.object !== self { kept = FetchedPropertyResults(object: self) }
        kept.byName[key] = objects
        context.fetchedPropertyResults[ObjectIdentifier(self)] = kept
        return objects
    }

    /// The fetch request a fetched property runs for this object, variables substituted.
    ///
    /// - Throws: ``FetchPredicateError`` when the predicate does not parse or a `$FETCH_SOURCE`
    ///   or `$FETCHED_PROPERTY` key path cannot be read.
    public func fetchRequest(for property: FetchedPropertyDescription) throws -> FetchRequest {
        var request = FetchRequest(entityName: property.entityName)
        if let predicate = try ManagedObjectModel.fetchedPredicate(property) {
            let substitution = FetchedPropertySubstitution(source: self, property: property)
            request.predicate = try substitution.apply(predicate)
        }
        return request
    }

    /// The fetched property `name` of the object's entity or an ancestor.
    func fetchedPropertyDescription(named name: String) -> FetchedPropertyDescription? {
        if let own = entity.fetchedProperties.first(where: { $0.name == name }) { return own }
        guard entity.superentityName != nil, let model = managedObjectContext?.coordinator.managedObjectModel else {
            return nil
        }
        return model.fetchedProperty(named: name, of: entity)
    }

    /// ``fetchedObjects(forKey:)`` for property reads that cannot throw: a failure reads as an
    /// empty array and is kept by the context for its next save (``ManagedObjectContext/accessFailure``).
    func fetchedObjectsRecording(_ key: String) -> [ManagedObject] {
        do {
            return try fetchedObjects(forKey: key)
        } catch {
            managedObjectContext?.noteAccessFailure(error)
            return []
        }
    }
}

/// The fetched property results of one object, kept by its context. The weak reference makes an
/// entry left behind by an object that is gone unusable by another object at the same address.
struct FetchedPropertyResults {
    weak var object: ManagedObject?
    var byName: [String: [ManagedObject]] = [:]
}

/// Replaces `$FETCH_SOURCE` and `$FETCHED_PROPERTY`, with the key paths read through them, by
/// constants: the values they have for the source object now.
struct FetchedPropertySubstitution {
    static let source = "FETCH_SOURCE"
    static let property = "FETCHED_PROPERTY"

    let source: ManagedObject
    let property: FetchedPropertyDescription

    func apply(_ predicate: FetchPredicate) throws -> FetchPredicate {
        switch predicate {
        case .constant: return predicate
        case .not(let inner): return .not(try apply(inner))
        case .and(let parts): return .and(try parts.map(apply))
        case .or(let parts): return .or(try parts.map(apply))
        case .comparison(var comparison):
            comparison.lhs = try apply(comparison.lhs)
            comparison.rhs = try apply(comparison.rhs)
            return .comparison(comparison)
        }
    }

    func apply(_ expression: FetchExpression) throws -> FetchExpression {
        if let (variable, rooted) = Self.rooted(expression) {
            let root: any PredicateEvaluable =
                variable == Self.source ? source : FetchedPropertyValues(property: property)
            let value = try rooted.value(with: root)
            return try PredicateArgumentValue.constantExpression(value)
        }
        switch expression {
        case .constant, .evaluatedObject, .keyPath, .variable: return expression
        case .aggregate(let items): return .aggregate(try items.map(apply))
        case .member(let base, let path): return .member(try apply(base), path)
        case .collection(let op, let collection, let path):
            return .collection(op, of: try apply(collection), keyPath: path)
        case .subquery(let collection, let variable, let predicate):
            return .subquery(collection: try apply(collection), variable: variable, predicate: try apply(predicate))
        case .function(let name, let arguments): return .function(name, try arguments.map(apply))
        case .ternary(let condition, let a, let b): return .ternary(try apply(condition), try apply(a), try apply(b))
        }
    }

    /// For an expression read from one of the two variables (`$FETCH_SOURCE`,
    /// `$FETCH_SOURCE.department.name`, `$FETCH_SOURCE.items.@count`): the variable, and the
    /// expression with the variable replaced by the evaluated object.
    static func rooted(_ expression: FetchExpression) -> (String, FetchExpression)? {
        switch expression {
        case .variable(let name) where name == source || name == property: return (name, .evaluatedObject)
        case .member(let base, let path):
            guard let (name, inner) = rooted(base) else { return nil }
            return (name, .member(inner, path))
        case .collection(let op, let base, let path):
            guard let (name, inner) = rooted(base) else { return nil }
            return (name, .collection(op, of: inner, keyPath: path))
        default: return nil
        }
    }
}

/// A fetched property's description as `$FETCHED_PROPERTY` reads it.
private struct FetchedPropertyValues: PredicateEvaluable {
    let property: FetchedPropertyDescription

    func keyValue(forKey key: String) throws -> KeyValue {
        switch key {
        case "name": return .value(.string(property.name))
        case "entityName", "entity": return .value(.string(property.entityName))
        case "userInfo": return .object(property.userInfo.mapValues(StoreValue.string))
        default:
            throw FetchPredicateError(
                .unknownKeyPath,
                "$FETCHED_PROPERTY of '\(property.name)' has no key '\(key)'; it has name, entityName and userInfo")
        }
    }

    var selfValue: StoreValue { .null }
}
