import Foundation

extension StoreMigrationPlan {
    /// The row plan of `mapping`, or `nil` when the mapping needs objects: a custom policy, a
    /// filter predicate, a custom or added-with-expressions mapping, a value expression other
    /// than the shapes inference makes (a source property's value, with or without a default; a
    /// relationship's destinations; a constant), several mappings reading one source entity, or
    /// several source hierarchies feeding one destination hierarchy (primary keys could collide).
    ///
    /// - Throws: ``MigrationError`` `.invalidMapping` when the mapping names entities or properties
    ///   the models lack.
    public static func compile(
        _ mapping: MappingModel, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel
    ) throws -> StoreMigrationPlan? {
        try mapping.check(sourceModel: sourceModel, destinationModel: destinationModel)
        var plans: [EntityPlan] = []
        var covered = Set<String>()
        var sourceRoots: [String: String] = [:]
        var added: [EntityDescription] = []
        var filled = Set<String>()
        for entityMapping in mapping.entityMappings {
            if entityMapping.entityMigrationPolicyClassName != nil || entityMapping.filterPredicate != nil {
                return nil
            }
            switch entityMapping.effectiveType {
            case .remove: continue
            case .add:
                guard let name = entityMapping.destinationEntityName, let entity = destinationModel.entity(named: name)
                else {
                    return nil
                }
                let expressions = entityMapping.attributeMappings + entityMapping.relationshipMappings
                guard expressions.allSatisfy({ $0.valueExpression == nil }) else { return nil }
                added.append(entity)
            case .copy, .transform:
                guard let sourceName = entityMapping.sourceEntityName,
                    let destinationName = entityMapping.destinationEntityName,
                    let source = sourceModel.entity(named: sourceName),
                    let destination = destinationModel.entity(named: destinationName),
                    covered.insert(sourceName).inserted, filled.insert(destinationName).inserted
                else { return nil }
                if let other = sourceRoots[destination.rootEntityName], other != source.rootEntityName { return nil }
                sourceRoots[destination.rootEntityName] = source.rootEntityName
                guard let slots = slotSources(entityMapping, source: source, destination: destination) else {
                    return nil
                }
                plans.append(EntityPlan(source: source, destination: destination, slots: slots))
            case .custom, .undefined:
                return nil
            }
        }
        for entity in destinationModel.entities
        where !filled.contains(entity.name) && !added.contains(where: { $0 === entity }) {
            added.append(entity)
        }
        plans.sort { $0.source.entityNumber < $1.source.entityNumber }
        let dropped = sourceModel.entities.filter { !covered.contains($0.name) }
        return StoreMigrationPlan(
            sourceModel: sourceModel, destinationModel: destinationModel, mappingModel: mapping, entities: plans,
            droppedEntities: dropped, addedEntities: added.sorted { $0.entityNumber < $1.entityNumber },
            constraintsToCheck: constraintChecks(plans), metadata: StoreMetadata(storeType: ""))
    }

    /// The slot sources of one copy or transform mapping, or `nil` for an expression that needs objects.
    private static func slotSources(_ mapping: EntityMapping, source: EntityDescription, destination: EntityDescription)
        -> [SlotSource]?
    {
        let expressions = Dictionary(
            (mapping.attributeMappings + mapping.relationshipMappings).map { ($0.name, $0.valueExpression) }
        ) { first, _ in first }
        var slots: [SlotSource] = []
        for property in destination.properties {
            if property.isTransient {
                slots.append(.null)
                continue
            }
            let expression: FetchExpression?
            if mapping.effectiveType == .copy, expressions[property.name] == nil {
                // A copy without property mappings carries every property over as it is.
                expression =
                    source.index(ofProperty: property.name) != nil ? InferredExpressions.value(of: property.name) : nil
            } else {
                expression = expressions[property.name] ?? nil
            }
            switch property {
            case .attribute(let attribute):
                guard let expression else {
                    slots.append(attribute.defaultValue.isNull ? .null : .constant(attribute.defaultValue))
                    continue
                }
                if case .constant(let value) = expression {
                    slots.append(value.isNull ? .null : .constant(value))
                    continue
                }
                let (name, withDefault) =
                    valueOrDefaultSource(expression).map { ($0, true) } ?? (sourceProperty(expression), false)
                guard let name, let slot = source.index(ofProperty: name),
                    case .attribute(let previous) = source.properties[slot], !previous.isTransient,
                    let conversion = conversion(from: previous.type, to: attribute.type)
                else { return nil }
                let fallback: StoreValue? = withDefault || !attribute.isOptional ? attribute.defaultValue : nil
                slots.append(
                    .attribute(
                        slot: slot, conversion: conversion, defaultValue: fallback?.isNull == true ? nil : fallback))
            case .relationship(let relationship):
                guard let expression else {
                    slots.append(relationship.isToMany ? .constant(.references([])) : .null)
                    continue
                }
                guard let name = relationshipSource(expression), let slot = source.index(ofProperty: name),
                    case .relationship(let previous) = source.properties[slot], !previous.isTransient
                else { return nil }
                switch (previous.isToMany, relationship.isToMany) {
                case (false, false): slots.append(.toOne(slot: slot))
                case (true, true): slots.append(.toMany(slot: slot, fromToOne: false))
                case (false, true): slots.append(.toMany(slot: slot, fromToOne: true))
                case (true, false): return nil
                }
            }
        }
        return slots
    }

    /// The conversion from `from` to `to`, or `nil` when rows cannot convert.
    static func conversion(from: AttributeType, to: AttributeType) -> ValueConversion? {
        if from == to { return ValueConversion.none }
        if Set([from, to]) == [.binaryData, .transformable] { return ValueConversion.none }
        let numeric = MappingInference.numericTypes.union([.boolean])
        guard numeric.contains(from), numeric.contains(to) else { return nil }
        switch to {
        case .integer16, .integer32, .integer64:
            // Widening between integer types keeps every value; anything else is checked.
            if from.isInteger, let a = from.integerRange, let b = to.integerRange, b.lowerBound <= a.lowerBound,
                a.upperBound <= b.upperBound
            {
                return ValueConversion.none
            }
            return .integer(to)
        case .double: return .double
        case .float: return .float
        case .decimal: return .decimal
        case .boolean: return .boolean
        default: return nil
        }
    }

    /// `FUNCTION($source, "valueForKey:", "name")` or `$source.name` → `name`.
    static func sourceProperty(_ expression: FetchExpression) -> String? {
        switch expression {
        case .function(FetchExpression.methodCallName, let arguments):
            guard arguments.count == 3, arguments[0] == .variable("source"),
                arguments[1] == .constant(.string(InferredExpressions.valueForKey)),
                case .constant(.string(let name)) = arguments[2]
            else { return nil }
            return name
        case .member(.variable("source"), let path): return path
        default: return nil
        }
    }

    /// `FUNCTION($entityPolicy, "_nonNilValueOrDefaultValueForAttribute:source:destination:", "name", $source, $destination)` → `name`.
    static func valueOrDefaultSource(_ expression: FetchExpression) -> String? {
        guard case .function(FetchExpression.methodCallName, let arguments) = expression, arguments.count == 5,
            arguments[0] == .variable("entityPolicy"),
            arguments[1] == .constant(.string(InferredExpressions.nonNilOrDefault)),
            case .constant(.string(let name)) = arguments[2], arguments[3] == .variable("source"),
            arguments[4] == .variable("destination")
        else { return nil }
        return name
    }

    /// The source relationship whose destinations a relationship expression maps: Core Data's
    /// `destinationInstancesForSourceRelationshipNamed:sourceInstances:` (and
    /// `…ForEntityMappingNamed:…`) over `$source.name`, or `$source.name` alone.
    static func relationshipSource(_ expression: FetchExpression) -> String? {
        if let name = sourceProperty(expression) { return name }
        guard case .function(FetchExpression.methodCallName, let arguments) = expression, arguments.count == 4,
            arguments[0] == .variable("manager"),
            arguments[1] == .constant(.string(InferredExpressions.destinationsForRelationship))
                || arguments[1] == .constant(.string("destinationInstancesForEntityMappingNamed:sourceInstances:"))
        else { return nil }
        return sourceProperty(arguments[3])
    }

    /// The uniqueness constraints of each destination entity that its source did not already have
    /// over the same properties with values copied as they are.
    private static func constraintChecks(_ plans: [EntityPlan]) -> [ConstraintCheck] {
        var checks: [ConstraintCheck] = []
        var seen = Set<String>()
        for plan in plans where seen.insert(plan.destination.name).inserted {
            for constraint in plan.destination.uniquenessConstraints {
                let sources = constraint.map { name -> String? in
                    guard let slot = plan.destination.index(ofProperty: name),
                        case .attribute(let from, .none, nil) = plan.slots[slot]
                    else { return nil }
                    return plan.source.properties[from].name
                }
                let existed =
                    !sources.contains(nil)
                    && plan.source.uniquenessConstraints.contains { Set($0) == Set(sources.compactMap { $0 }) }
                if !existed { checks.append(ConstraintCheck(entity: plan.destination.name, properties: constraint)) }
            }
        }
        return checks
    }
}
