import Foundation

/// What `$manager`, `$entityPolicy`, `$entityMapping` and `$propertyMapping` are to the
/// evaluator: markers the method calls recognize; reading a key of one is an error.
private final class MigrationVariable: PredicateEvaluable {
    enum Kind {
        case manager, policy
        case entityMapping(EntityMapping)
        case propertyMapping(PropertyMapping)
    }
    let kind: Kind
    init(_ kind: Kind) { self.kind = kind }

    func keyValue(forKey key: String) throws -> KeyValue {
        switch (kind, key) {
        case (.entityMapping(let mapping), "name"): return .value(.string(mapping.name))
        case (.entityMapping(let mapping), "sourceEntityName"):
            return .value(mapping.sourceEntityName.map(StoreValue.string) ?? .null)
        case (.entityMapping(let mapping), "destinationEntityName"):
            return .value(mapping.destinationEntityName.map(StoreValue.string) ?? .null)
        case (.propertyMapping(let mapping), "name"): return .value(.string(mapping.name))
        default:
            throw MigrationError(
                .invalidMapping,
                "a value expression reads '\(key)' of a migration variable; call one of its functions with FUNCTION(…)")
        }
    }

    var selfValue: StoreValue { .null }
}

extension MigrationManager {
    /// The value of `expression` for one instance, as a Swift value (`nil`, a number, a string,
    /// a date, data, a ``ManagedObject``, or an array of them): `$source`, `$destination`,
    /// `$manager`, `$entityPolicy`, `$entityMapping` and `$propertyMapping` are bound, and
    /// `FUNCTION(…)` calls Core Data's selectors (`valueForKey:`, the manager's
    /// `destinationInstancesFor…` lookups, the policy's functions).
    ///
    /// - Throws: ``MigrationError`` `.invalidMapping` for an expression that does not evaluate.
    public func value(
        of expression: FetchExpression, source: ManagedObject?, destination: ManagedObject?, mapping: EntityMapping,
        property: PropertyMapping? = nil, policy: EntityMigrationPolicy? = nil
    ) throws -> Any? {
        Self.swiftValue(
            try evaluate(
                expression, source: source, destination: destination, mapping: mapping, property: property,
                policy: policy))
    }

    func evaluate(
        _ expression: FetchExpression, source: ManagedObject?, destination: ManagedObject?, mapping: EntityMapping,
        property: PropertyMapping?, policy: EntityMigrationPolicy?
    ) throws -> EvaluatedValue {
        var evaluator = PredicateEvaluator(root: source ?? [String: StoreValue](), substitutions: [:])
        evaluator.bindings["source"] = source.map(EvaluatedValue.object) ?? .value(.null)
        evaluator.bindings["destination"] = destination.map(EvaluatedValue.object) ?? .value(.null)
        evaluator.bindings["manager"] = .object(MigrationVariable(.manager))
        evaluator.bindings["entityPolicy"] = .object(MigrationVariable(.policy))
        evaluator.bindings["entityMapping"] = .object(MigrationVariable(.entityMapping(mapping)))
        if let property {
            evaluator.bindings["propertyMapping"] = .object(MigrationVariable(.propertyMapping(property)))
        }
        let reader = evaluator
        evaluator.methodCall = { [unowned self] target, selector, arguments in
            try self.call(
                selector, on: target, arguments, reader: reader, destination: destination, property: property,
                policy: policy)
        }
        do {
            return try evaluator.value(expression)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(
                .invalidMapping,
                "the value expression \(expression) of mapping '\(mapping.name)'\(property.map { " for '\($0.name)'" } ?? "") does not evaluate: \(error)",
                underlying: error)
        }
    }

    private func call(
        _ selector: String, on target: EvaluatedValue, _ arguments: [EvaluatedValue], reader: PredicateEvaluator,
        destination: ManagedObject?, property: PropertyMapping?, policy: EntityMigrationPolicy?
    ) throws -> EvaluatedValue {
        func string(_ index: Int) throws -> String {
            guard index < arguments.count, case .value(.string(let text)) = arguments[index] else {
                throw MigrationError(.invalidMapping, "argument \(index + 1) of \(selector) must be a string")
            }
            return text
        }
        switch target {
        case .object(let variable as MigrationVariable):
            switch (variable.kind, selector) {
            case (.manager, "destinationInstancesForEntityMappingNamed:sourceInstances:"):
                return .collection(
                    destinationInstances(
                        forEntityMappingName: try string(0), sourceInstances: Self.objects(arguments[1])
                    ).map { .object($0) })
            case (.manager, "sourceInstancesForEntityMappingNamed:destinationInstances:"):
                return .collection(
                    sourceInstances(
                        forEntityMappingName: try string(0), destinationInstances: Self.objects(arguments[1])
                    ).map { .object($0) })
            case (.manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:"):
                return .collection(
                    destinationInstances(
                        forSourceRelationshipNamed: try string(0), sourceInstances: Self.objects(arguments[1])
                    ).map { .object($0) })
            case (.policy, InferredExpressions.nonNilOrDefault):
                let name = try string(0)
                let value = try reader.read(name, from: arguments[1])
                if case .value(.null) = value, let destination, let key = property?.name {
                    return .value(try destination.storeValue(forKey: key))
                }
                return value
            case (.policy, _):
                guard let policy else {
                    throw MigrationError(
                        .invalidMapping, "\(selector) is called on $entityPolicy outside a migration policy")
                }
                let result = try policy.value(
                    forFunction: selector, arguments: arguments.map(Self.swiftValue), manager: self)
                return try Self.evaluated(result)
            default:
                throw MigrationError(.invalidMapping, "the migration does not know the function \(selector)")
            }
        case .object, .collection, .value(.null):
            guard selector == "valueForKey:" || selector == "valueForKeyPath:" else {
                throw MigrationError(
                    .invalidMapping,
                    "FUNCTION(object, \"\(selector)\", …): objects answer valueForKey: and valueForKeyPath: only")
            }
            return try reader.read(try string(0), from: target)
        case .value(let value):
            throw MigrationError(
                .invalidMapping, "\(selector) is called on \(value.kindName.withArticle) value, not an object")
        }
    }

    /// Sets a destination property from an evaluated value: relationships take the objects,
    /// attributes the value converted to their type.
    func set(_ value: EvaluatedValue, forKey key: String, of object: ManagedObject) throws {
        do {
            if let slot = object.entity.index(ofProperty: key),
                let relationship = object.entity.properties[slot].relationship
            {
                let objects = Self.objects(value)
                if relationship.isToMany {
                    try object.setConvertedValue(
                        relationship.isOrdered ? objects as Any : Set(objects) as Any, forKey: key)
                } else {
                    try object.setConvertedValue(objects.first, forKey: key)
                }
                return
            }
            switch value {
            case .value(let stored): try object.setStoreValue(stored, forKey: key)
            case .object(let other as ManagedObject): try object.setConvertedValue(other, forKey: key)
            case .object(let other): try object.setStoreValue(other.selfValue, forKey: key)
            case .collection:
                throw MigrationError(
                    .invalidMapping, "a collection cannot be the value of attribute '\(object.entity.name).\(key)'")
            }
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(
                .invalidMapping, "the mapped value of '\(object.entity.name).\(key)' does not fit it: \(error)",
                underlying: error)
        }
    }

    /// The objects an evaluated value holds (one, a collection, or none).
    static func objects(_ value: EvaluatedValue) -> [ManagedObject] {
        switch value {
        case .object(let object as ManagedObject): [object]
        case .collection(let items): items.flatMap(objects)
        default: []
        }
    }

    static func swiftValue(_ value: EvaluatedValue) -> Any? {
        switch value {
        case .value(let stored):
            switch stored {
            case .null, .reference, .references, .unfetched: return nil
            case .integer(let n): return Int(truncatingIfNeeded: n)
            case .double(let d): return d
            case .decimal(let d): return d
            case .string(let s): return s
            case .bool(let b): return b
            case .date(let d): return d
            case .binary(let d): return d
            case .uuid(let u): return u
            case .uri(let u): return u
            }
        case .object(let object): return object
        case .collection(let items): return items.map(swiftValue)
        }
    }

    static func evaluated(_ value: Any?) throws -> EvaluatedValue {
        switch value {
        case nil: return .value(.null)
        case let object as ManagedObject: return .object(object)
        case let objects as Set<ManagedObject>: return .collection(objects.map { .object($0) })
        case let items as [Any?]: return .collection(try items.map(evaluated))
        case let items as [Any]: return .collection(try items.map(evaluated))
        case let stored as StoreValue: return .value(stored)
        case let argument as any PredicateArgument:
            switch argument.predicateArgument {
            case .value(let stored): return .value(stored)
            case .values(let values): return .collection(values.map { .value($0) })
            case .keyPath(let path): return .value(.string(path))
            }
        default:
            throw MigrationError(
                .invalidMapping,
                "a migration function returned a value of type \(type(of: value as Any)), which a store cannot hold")
        }
    }
}
