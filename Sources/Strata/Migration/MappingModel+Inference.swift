import Foundation

extension MappingModel {
    /// The mapping Core Data's lightweight migration infers between two model versions, or an error
    /// listing every change that needs a mapping model (Core Data's
    /// `inferredMappingModel(forSourceModel:destinationModel:)`).
    ///
    /// Entities and properties are matched by renaming identifier (their name when they have
    /// none). Inferred: entities and properties added or removed; renames through renaming
    /// identifiers; optional ↔ required (a required value without a default fails at migration
    /// time if a row has none, as in Core Data); attribute type changes among Integer 16/32/64,
    /// Decimal, Double, Float and Boolean (and Binary ↔ Transformable when the destination
    /// attribute's user info has `NSMigrationAllowTypeTransformation`); to-one → to-many; ordered ↔
    /// unordered; parents added or removed as long as no destination hierarchy takes entities of
    /// two source hierarchies. Not inferred, as in Core Data: other type changes, to-many → to-one,
    /// a relationship whose destination became another entity, merged hierarchies, duplicate
    /// renaming identifiers, an attribute that became a composite or the other way round.
    ///
    /// - Throws: ``MigrationError`` `.inferenceFailed` with one line per change in
    ///   ``MigrationError/changes``.
    public static func inferredMappingModel(
        forSourceModel source: ManagedObjectModel, destinationModel destination: ManagedObjectModel
    ) throws -> MappingModel {
        var inference = MappingInference(source: source, destination: destination)
        let mappings = inference.run()
        if !inference.problems.isEmpty {
            throw MigrationError(
                .inferenceFailed,
                "the change between the models cannot be inferred; give a mapping model for these changes, or split the change into model versions that each can be inferred",
                changes: inference.problems)
        }
        return MappingModel(inferred: mappings)
    }
}

/// Core Data's names for the pieces of inferred mappings.
enum InferredExpressions {
    static let valueForKey = "valueForKey:"
    static let nonNilOrDefault = "_nonNilValueOrDefaultValueForAttribute:source:destination:"
    static let destinationsForRelationship = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"

    /// `FUNCTION($source, "valueForKey:", "name")`.
    static func value(of name: String) -> FetchExpression {
        .function(
            FetchExpression.methodCallName,
            [.variable("source"), .constant(.string(valueForKey)), .constant(.string(name))])
    }

    /// `FUNCTION($entityPolicy, "_nonNilValueOrDefaultValueForAttribute:source:destination:", "name", $source, $destination)`.
    static func valueOrDefault(of name: String) -> FetchExpression {
        .function(
            FetchExpression.methodCallName,
            [
                .variable("entityPolicy"), .constant(.string(nonNilOrDefault)), .constant(.string(name)),
                .variable("source"),
                .variable("destination"),
            ])
    }

    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "name", FUNCTION($source, "valueForKey:", "name"))`.
    static func destinations(of name: String) -> FetchExpression {
        .function(
            FetchExpression.methodCallName,
            [
                .variable("manager"), .constant(.string(destinationsForRelationship)), .constant(.string(name)),
                value(of: name),
            ])
    }
}

/// One run of inference: the mappings it builds and the changes it cannot infer.
struct MappingInference {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    var problems: [String] = []

    static let numericTypes: Set<AttributeType> = [.integer16, .integer32, .integer64, .decimal, .double, .float]

    /// Whether inference converts values of `from` into `to`.
    static func convertible(_ from: AttributeType, _ to: AttributeType, allowTransformation: Bool) -> Bool {
        if from == to { return from != .undefined }
        if allowTransformation { return Set([from, to]) == [.binaryData, .transformable] }
        let numericOrBool = numericTypes.union([.boolean])
        return numericOrBool.contains(from) && numericOrBool.contains(to)
    }

    static func identifier(_ entity: EntityDescription) -> String { entity.renamingIdentifier ?? entity.name }

    mutating func run() -> [EntityMapping] {
        let sources = index(source.entities, side: "source")
        let destinations = index(destination.entities, side: "destination")
        let sourceHashes = source.coreDataVersionHashes.entities
        let destinationHashes = destination.coreDataVersionHashes.entities
        var mappings: [EntityMapping] = []
        var sourceRootsByDestinationRoot: [String: Set<String>] = [:]
        for entity in destination.entities {
            let id = Self.identifier(entity)
            guard let old = sources[id] else {
                mappings.append(
                    EntityMapping(
                        name: "\(MappingModel.inferredPrefix)Add_\(id)", mappingType: .add,
                        destinationEntityName: entity.name,
                        destinationEntityVersionHash: destinationHashes[entity.name]))
                continue
            }
            sourceRootsByDestinationRoot[entity.rootEntityName, default: []].insert(old.rootEntityName)
            let (attributes, relationships) = propertyMappings(from: old, to: entity)
            let same = old.name == entity.name && sourceHashes[old.name] == destinationHashes[entity.name]
            mappings.append(
                EntityMapping(
                    name: "\(MappingModel.inferredPrefix)\(same ? "Copy" : "Transform")_\(id)",
                    mappingType: same ? .copy : .transform, sourceEntityName: old.name,
                    destinationEntityName: entity.name,
                    attributeMappings: attributes, relationshipMappings: relationships,
                    sourceEntityVersionHash: sourceHashes[old.name],
                    destinationEntityVersionHash: destinationHashes[entity.name]))
        }
        for (root, roots) in sourceRootsByDestinationRoot.sorted(by: { $0.key < $1.key }) where roots.count > 1 {
            problems.append(
                "the hierarchy of \(root) would hold entities of the separate source hierarchies \(roots.sorted().joined(separator: " and ")); hierarchies cannot be merged by inference"
            )
        }
        for entity in source.entities where destinations[Self.identifier(entity)] == nil {
            mappings.append(
                EntityMapping(
                    name: "\(MappingModel.inferredPrefix)Remove_\(Self.identifier(entity))", mappingType: .remove,
                    sourceEntityName: entity.name, sourceEntityVersionHash: sourceHashes[entity.name]))
        }
        return mappings
    }

    /// Entities by renaming identifier, noting duplicates.
    private mutating func index(_ entities: [EntityDescription], side: String) -> [String: EntityDescription] {
        var result: [String: EntityDescription] = [:]
        for entity in entities {
            let id = Self.identifier(entity)
            if let other = result[id] {
                problems.append(
                    "the \(side) entities \(other.name) and \(entity.name) share the renaming identifier '\(id)'; each entity needs its own"
                )
            } else {
                result[id] = entity
            }
        }
        return result
    }

    private mutating func propertyMappings(from old: EntityDescription, to new: EntityDescription)
        -> (attributes: [PropertyMapping], relationships: [PropertyMapping])
    {
        let oldSlots = PropertyPaths(old)
        let newSlots = PropertyPaths(new)
        var attributes: [PropertyMapping] = []
        var relationships: [PropertyMapping] = []
        for composite in new.compositeAttributes {
            let id = composite.renamingIdentifier ?? composite.name
            if case .attribute(let plain)? = oldSlots.property(withIdentifier: id), oldSlots.compositeNamed(id) == nil {
                problems.append(
                    "\(new.name).\(composite.name): the attribute \(old.name).\(plain.name) became a composite attribute, which inference cannot map"
                )
            }
        }
        for property in new.properties where !property.isTransient {
            let key = newSlots.identifier(of: property.name)
            let match = oldSlots.property(withIdentifier: key)
            switch property {
            case .attribute(let attribute):
                guard case .attribute(let previous)? = match, !previous.isTransient else {
                    if let composite = oldSlots.compositeNamed(key) {
                        problems.append(
                            "\(new.name).\(attribute.name): the composite attribute \(old.name).\(composite) became a plain attribute, which inference cannot map"
                        )
                    }
                    attributes.append(PropertyMapping(name: attribute.name))
                    continue
                }
                let allow = attribute.userInfo["NSMigrationAllowTypeTransformation"] != nil
                guard Self.convertible(previous.type, attribute.type, allowTransformation: allow) else {
                    problems.append(
                        "\(new.name).\(attribute.name): type \(previous.type.xcodeName) → \(attribute.type.xcodeName) cannot be inferred (only numbers and Booleans convert)"
                    )
                    continue
                }
                let expression =
                    !attribute.isOptional && attribute.defaultValue != .null
                    ? InferredExpressions.valueOrDefault(of: previous.name)
                    : InferredExpressions.value(of: previous.name)
                attributes.append(PropertyMapping(name: attribute.name, valueExpression: expression))
            case .relationship(let relationship):
                guard case .relationship(let previous)? = match, !previous.isTransient else {
                    relationships.append(PropertyMapping(name: relationship.name))
                    continue
                }
                if previous.isToMany, !relationship.isToMany {
                    problems.append(
                        "\(new.name).\(relationship.name): a to-many relationship (\(old.name).\(previous.name)) cannot become to-one by inference"
                    )
                    continue
                }
                if let oldTarget = source.entity(named: previous.destinationEntityName),
                    let newTarget = destination.entity(named: relationship.destinationEntityName),
                    Self.identifier(oldTarget) != Self.identifier(newTarget)
                {
                    problems.append(
                        "\(new.name).\(relationship.name): the destination changed from \(oldTarget.name) to \(newTarget.name), which inference cannot map"
                    )
                    continue
                }
                relationships.append(
                    PropertyMapping(
                        name: relationship.name, valueExpression: InferredExpressions.destinations(of: previous.name)))
            }
        }
        return (attributes, relationships)
    }
}

/// The stored properties of an entity by renaming identifier: plain properties by their
/// identifier, composite elements by the identifiers of the composite and its elements
/// (`location.latitude`).
struct PropertyPaths {
    let entity: EntityDescription
    private var byIdentifier: [String: PropertyDescription] = [:]
    private var identifiers: [String: String] = [:]
    private var composites: [String: String] = [:]

    init(_ entity: EntityDescription) {
        self.entity = entity
        var compositeIdentifiers: [String: String] = [:]
        for composite in entity.compositeAttributes {
            let id = composite.renamingIdentifier ?? composite.name
            composites[id] = composite.name
            func walk(_ elements: [AttributeDescription], namePath: String, idPath: String) {
                for element in elements {
                    let name = namePath + "." + element.name
                    let id = idPath + "." + (element.renamingIdentifier ?? element.name)
                    if element.isComposite {
                        walk(element.elements, namePath: name, idPath: id)
                    } else {
                        compositeIdentifiers[name] = id
                    }
                }
            }
            walk(composite.elements, namePath: composite.name, idPath: id)
        }
        for property in entity.properties {
            let id: String
            if let composite = compositeIdentifiers[property.name] {
                id = composite
            } else {
                switch property {
                case .attribute(let a): id = a.renamingIdentifier ?? a.name
                case .relationship(let r): id = r.renamingIdentifier ?? r.name
                }
            }
            identifiers[property.name] = id
            if byIdentifier[id] == nil { byIdentifier[id] = property }
        }
    }

    /// The renaming identifier (path) of the slot named `name`.
    func identifier(of name: String) -> String { identifiers[name] ?? name }

    /// The property whose identifier is `identifier`.
    func property(withIdentifier identifier: String) -> PropertyDescription? { byIdentifier[identifier] }

    /// The name of the composite whose identifier is `identifier`, if the entity has one.
    func compositeNamed(_ identifier: String) -> String? { composites[identifier] }
}
