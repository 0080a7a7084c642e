/// A relationship of an entity: its destination, inverse, cardinality and delete rule.
public struct RelationshipDescription: Sendable, Hashable {
    /// The relationship's name, unique within its entity and the entity's ancestors.
    public var name: String
    /// The destination entity's name.
    public var destinationEntityName: String
    /// The inverse relationship's name on the destination, if any (strongly recommended).
    public var inverseName: String?
    /// Whether the relationship holds many destinations.
    public var isToMany: Bool
    /// For to-many relationships: whether the destinations keep a user-defined order.
    public var isOrdered: Bool
    /// Whether an empty relationship is allowed at save.
    public var isOptional: Bool
    /// Whether the relationship lives in memory only.
    public var isTransient: Bool
    /// The fewest destinations allowed at save (0 for none).
    public var minCount: Int
    /// The most destinations allowed at save (0 for unbounded; 1 for to-one). A negative count is
    /// unbounded too: Core Data's model caches store -1 for some to-many relationships, and Strata
    /// keeps it because it takes part in Core Data's version hash.
    public var maxCount: Int
    /// What deleting the source does to the destinations.
    public var deleteRule: DeleteRule
    /// The identifier used to map a renamed relationship during migration.
    public var renamingIdentifier: String?
    /// A string mixed into the version hash to force a new version.
    public var versionHashModifier: String?
    /// Free-form key/value pairs.
    public var userInfo: [String: String]

    /// Creates a relationship.
    ///
    /// - Parameters:
    ///   - name: The relationship's name.
    ///   - destination: The destination entity's name.
    ///   - inverse: The inverse relationship's name on the destination.
    ///   - toMany: Whether the relationship holds many destinations.
    ///   - ordered: For to-many: whether order is kept.
    ///   - deleteRule: What deleting the source does (default `.nullify`, as in Xcode).
    public init(
        _ name: String, destination: String, inverse: String? = nil, toMany: Bool = false, ordered: Bool = false,
        isOptional: Bool = true, isTransient: Bool = false, minCount: Int = 0, maxCount: Int? = nil,
        deleteRule: DeleteRule = .nullify, renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.isToMany = toMany
        self.isOrdered = toMany && ordered
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.minCount = minCount
        self.maxCount = maxCount ?? (toMany ? 0 : 1)
        self.deleteRule = deleteRule
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }
}

/// One property of an entity: an attribute or a relationship.
public enum PropertyDescription: Sendable, Hashable {
    case attribute(AttributeDescription)
    case relationship(RelationshipDescription)

    /// The property's name.
    public var name: String {
        switch self {
        case .attribute(let a): a.name
        case .relationship(let r): r.name
        }
    }

    /// Whether the property is never stored.
    public var isTransient: Bool {
        switch self {
        case .attribute(let a): a.isTransient
        case .relationship(let r): r.isTransient
        }
    }

    /// Whether `nil` (or an empty relationship) is allowed at save.
    public var isOptional: Bool {
        switch self {
        case .attribute(let a): a.isOptional
        case .relationship(let r): r.isOptional
        }
    }

    /// The attribute, when this is one.
    public var attribute: AttributeDescription? {
        if case .attribute(let a) = self { return a }
        return nil
    }

    /// The relationship, when this is one.
    public var relationship: RelationshipDescription? {
        if case .relationship(let r) = self { return r }
        return nil
    }

    /// An attribute (shorthand for ``AttributeDescription/init(_:_:isOptional:defaultValue:isTransient:validation:valueTransformerName:valueClassName:allowsExternalBinaryDataStorage:isIndexed:renamingIdentifier:versionHashModifier:userInfo:)``).
    public static func attribute(
        _ name: String, _ type: AttributeType, isOptional: Bool = true, defaultValue: StoreValue = .null,
        isTransient: Bool = false, validation: ValidationRules = ValidationRules(), valueTransformerName: String? = nil
    ) -> PropertyDescription {
        .attribute(
            AttributeDescription(
                name, type, isOptional: isOptional, defaultValue: defaultValue, isTransient: isTransient,
                validation: validation, valueTransformerName: valueTransformerName))
    }

    /// A composite attribute (shorthand for ``AttributeDescription/composite(_:elements:compositeName:isOptional:isTransient:renamingIdentifier:versionHashModifier:userInfo:)``):
    /// `.composite("location", elements: [.init("latitude", .double), .init("longitude", .double)])`.
    public static func composite(
        _ name: String, elements: [AttributeDescription], compositeName: String? = nil, isOptional: Bool = true,
        isTransient: Bool = false
    ) -> PropertyDescription {
        .attribute(
            .composite(
                name, elements: elements, compositeName: compositeName, isOptional: isOptional, isTransient: isTransient
            ))
    }

    /// A to-one relationship.
    public static func toOne(
        _ name: String, _ destination: String, inverse: String? = nil, isOptional: Bool = true,
        deleteRule: DeleteRule = .nullify
    ) -> PropertyDescription {
        .relationship(
            RelationshipDescription(
                name, destination: destination, inverse: inverse, isOptional: isOptional,
                minCount: isOptional ? 0 : 1, deleteRule: deleteRule))
    }

    /// A to-many relationship.
    public static func toMany(
        _ name: String, _ destination: String, inverse: String? = nil, ordered: Bool = false, minCount: Int = 0,
        maxCount: Int = 0, deleteRule: DeleteRule = .nullify
    ) -> PropertyDescription {
        .relationship(
            RelationshipDescription(
                name, destination: destination, inverse: inverse, toMany: true, ordered: ordered,
                isOptional: minCount == 0, minCount: minCount, maxCount: maxCount, deleteRule: deleteRule))
    }
}
