import Foundation

/// An entity of a model: a kind of managed object, with attributes, relationships, a place in an
/// inheritance hierarchy and the constraints its rows keep.
///
/// Build one with ``init(_:parent:isAbstract:properties:uniquenessConstraints:indexes:representedClassName:managedObjectClass:renamingIdentifier:versionHashModifier:userInfo:fetchedProperties:)``
/// and pass it to ``ManagedObjectModel``; the model makes its own resolved copy, in which
/// ``properties`` includes inherited ones and ``entityNumber`` is set.
///
/// Thread safety: immutable once the model that owns it is created; safe to share.
public final class EntityDescription: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: the resolved fields below are written only by ManagedObjectModel.init,
    // before the entity is published to any other code, and never afterwards.

    /// The entity's name, unique in its model.
    public let name: String
    /// The parent entity's name, when the entity inherits.
    public let superentityName: String?
    /// Whether the entity is abstract (no instances of exactly this entity).
    public let isAbstract: Bool
    /// The properties declared on this entity, without inherited ones.
    public let ownProperties: [PropertyDescription]
    /// Unique constraints: each inner array is one constraint over one or more property names.
    public let uniquenessConstraints: [[String]]
    /// Fetch indexes.
    public let indexes: [FetchIndexDescription]
    /// The class Xcode records for the entity (informational).
    public let representedClassName: String?
    /// The ``ManagedObject`` subclass that contexts instantiate for this entity.
    public let managedObjectClass: ManagedObject.Type
    /// The identifier used to map a renamed entity during migration.
    public let renamingIdentifier: String?
    /// A string mixed into the version hash to force a new version.
    public let versionHashModifier: String?
    /// Free-form key/value pairs.
    public let userInfo: [String: String]
    /// Fetched properties: named, query-backed, unidirectional properties (never stored).
    public let fetchedProperties: [FetchedPropertyDescription]

    /// The entity's number in its model: roots alphabetically, each followed by its descendants
    /// breadth-first (Core Data's `Z_ENT` numbering), starting at 1. Zero before resolution.
    //
    // `@exclusivity(unchecked)` on the fields hot paths read for every object (number,
    // properties, defaults, slot kinds, names): the model sets them while it resolves, before any
    // context or store can see the entity, and never again, so no access can overlap a write.
    @exclusivity(unchecked) public internal(set) var entityNumber: Int32 = 0
    /// Every property, inherited ones first; a property's position is its slot in rows and objects.
    ///
    /// A composite attribute takes no slot of its own: each of its leaf elements takes one, as an
    /// attribute named by its key path (`location.latitude`, `place.address.city`) that carries the
    /// element's type, optionality, default and rules. ``compositeAttributes`` lists the composites.
    @exclusivity(unchecked) public internal(set) var properties: [PropertyDescription] = []
    /// Composite attributes as declared (with their elements), inherited ones first. Their
    /// elements' values live in the slots of ``properties`` named by key path.
    public internal(set) var compositeAttributes: [AttributeDescription] = []
    /// Every composite by key path: declared ones (`location`) and nested ones (`location.address`).
    var compositesByKeyPath: [String: CompositeSlots] = [:]
    /// The presence rules of required composites (see ``CompositeRequirement``).
    var compositeRequirements: [CompositeRequirement] = []
    /// Direct subentity names, sorted.
    public internal(set) var subentityNames: [String] = []
    /// The root of the inheritance hierarchy (the entity itself for roots).
    public internal(set) var rootEntityName: String = ""
    /// The number of the root of the inheritance hierarchy (primary keys are unique per root).
    public internal(set) var rootEntityNumber: Int32 = 0
    /// The entity numbers of this entity and all its descendants.
    public internal(set) var hierarchyNumbers: Set<Int32> = []
    /// The entity's version hash (see ``ManagedObjectModel/versionHash``).
    public internal(set) var versionHash: Data = Data()
    /// The values a new object starts with (defaults; empty to-many relationships), one per slot.
    @exclusivity(unchecked) public internal(set) var defaultValues: [StoreValue] = []
    /// Whether every default value is `.null` (no attribute defaults, no to-many relationships).
    @exclusivity(unchecked) var defaultValuesAreNull = true
    /// The slots a save must validate (stored properties with a rule, required ones, integer widths).
    @exclusivity(unchecked) var validatedSlots: [ValidatedSlot] = []
    /// What each slot holds, without the full description (hot paths switch on it).
    @exclusivity(unchecked) var slotKinds: [SlotKind] = []
    /// The slots of stored to-many relationships and to-ones (for reference rewriting).
    @exclusivity(unchecked) var relationshipSlots: [Int] = []
    /// The slots of transient properties (never stored).
    var transientSlots: [Int] = []
    @exclusivity(unchecked) var propertyIndex: [String: Int] = [:]
    /// Property names in slot order (for entities few enough to search by comparing names).
    @exclusivity(unchecked) var propertyNames: [String] = []
    /// ``nameHint(_:)`` of each property name, in slot order: most names differ in it, so a
    /// lookup compares strings only for the slot whose hint matches.
    @exclusivity(unchecked) var propertyNameHints: [UInt64] = []
    /// ``nameBits(_:)`` of each property name, in slot order.
    @exclusivity(unchecked) var propertyNameBits: [NameBits] = []
    var lowercasedIndex: [String: Int] = [:]

    /// Creates an entity for a model under construction.
    ///
    /// - Parameters:
    ///   - name: The entity's name.
    ///   - parent: The superentity's name.
    ///   - isAbstract: Whether the entity is abstract.
    ///   - properties: Attributes and relationships declared on this entity.
    ///   - uniquenessConstraints: Each inner array is one (possibly compound) unique constraint.
    ///   - managedObjectClass: The subclass contexts create for this entity.
    ///   - fetchedProperties: Query-backed properties; they take no slot in rows and no part in
    ///     the version hash.
    public init(
        _ name: String, parent: String? = nil, isAbstract: Bool = false, properties: [PropertyDescription] = [],
        uniquenessConstraints: [[String]] = [], indexes: [FetchIndexDescription] = [],
        representedClassName: String? = nil, managedObjectClass: ManagedObject.Type = ManagedObject.self,
        renamingIdentifier: String? = nil, versionHashModifier: String? = nil, userInfo: [String: String] = [:],
        fetchedProperties: [FetchedPropertyDescription] = []
    ) {
        self.name = name
        self.superentityName = parent
        self.isAbstract = isAbstract
        self.ownProperties = properties
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        self.representedClassName = representedClassName
        self.managedObjectClass = managedObjectClass
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
        self.fetchedProperties = fetchedProperties
    }

    /// A copy with a different object class (used by ``ManagedObjectModel/registering(_:)``).
    func copy(managedObjectClass: ManagedObject.Type) -> EntityDescription {
        EntityDescription(
            name, parent: superentityName, isAbstract: isAbstract, properties: ownProperties,
            uniquenessConstraints: uniquenessConstraints, indexes: indexes,
            representedClassName: representedClassName, managedObjectClass: managedObjectClass,
            renamingIdentifier: renamingIdentifier, versionHashModifier: versionHashModifier, userInfo: userInfo,
            fetchedProperties: fetchedProperties)
    }

    /// The slot of the property named `name`, or `nil`.
    ///
    /// - Complexity: O(1) on average.
    @inlinable public func index(ofProperty name: String) -> Int? { _propertyIndex(name) }

    @usableFromInline func _propertyIndex(_ name: String) -> Int? {
        // A few names are found faster by comparing them than by hashing the key.
        if !propertyNames.isEmpty, propertyNames.count <= 12 {
            let bits = Self.nameBits(name)
            for slot in propertyNameBits.indices where propertyNameBits[slot] == bits { return slot }
            let hint = Self.nameHint(name)
            for slot in propertyNameHints.indices where propertyNameHints[slot] == hint && propertyNames[slot] == name {
                return slot
            }
            // Swift strings that are equal may differ in bytes (a name spelled in another Unicode
            // normalization), and then in their hint: the table, which hashes canonically, decides.
        }
        return propertyIndex[name]
    }

    /// A cheap summary of a name: its UTF-8 length and first byte (equal bytes have equal hints;
    /// a short string's length and bytes are read without touching memory elsewhere).
    @inlinable static func nameHint(_ name: String) -> UInt64 {
        let utf8 = name.utf8
        return UInt64(utf8.count) << 8 | UInt64(utf8.first ?? 0)
    }

    /// The two words a `String` is made of. Equal words are the same string: the same storage,
    /// or the same short string held in the words themselves (15 UTF-8 bytes or fewer, which
    /// property names written in a program almost always are, and whose form is canonical). So a
    /// match needs no string comparison and reads no memory; a mismatch proves nothing and the
    /// lookup goes on comparing names.
    struct NameBits: Equatable {
        var low: UInt64
        var high: UInt64
    }

    static func nameBits(_ name: String) -> NameBits {
        // A String is two words on every platform Strata builds for (checked by the size test in
        // EntityDescription's tests); the words are only compared, never turned back into a string.
        let words = unsafeBitCast(name, to: (UInt64, UInt64).self)
        return NameBits(low: words.0, high: words.1)
    }

    /// The slot of the property whose name matches `name` ignoring case (XML stores lower-case names).
    public func index(ofPropertyIgnoringCase name: String) -> Int? { lowercasedIndex[name.lowercased()] }

    /// The composite attribute at `keyPath`: a declared one (`location`) or a nested element that
    /// is itself a composite (`location.address`); `nil` for anything else.
    public func compositeAttribute(atKeyPath keyPath: String) -> AttributeDescription? {
        compositesByKeyPath[keyPath]?.attribute
    }

    /// Whether `keyPath` names a composite attribute or a nested composite element.
    @inlinable public func isComposite(_ keyPath: String) -> Bool { _isComposite(keyPath) }

    @usableFromInline func _isComposite(_ keyPath: String) -> Bool {
        !compositesByKeyPath.isEmpty && compositesByKeyPath[keyPath] != nil
    }

    /// The slot a key path of this entity reads, joining components that name a composite's
    /// elements: for `["location", "latitude", …]` starting at 0, the slot of `location.latitude`
    /// and the number of components used (2). `nil` when the components from `start` name no
    /// property or stop inside a composite.
    public func slot(forComponents components: [String], from start: Int) -> (slot: Int, count: Int)? {
        guard components.indices.contains(start) else { return nil }
        var key = components[start]
        var end = start
        if let slot = _propertyIndex(key) { return (slot, 1) }
        while _isComposite(key), end + 1 < components.count {
            end += 1
            key += "." + components[end]
            if let slot = _propertyIndex(key) { return (slot, end - start + 1) }
        }
        return nil
    }

    /// The property named `name` (own or inherited), or `nil`.
    public func property(named name: String) -> PropertyDescription? {
        propertyIndex[name].map { properties[$0] }
    }

    /// Attributes, inherited ones first, one per slot: a composite appears as its leaf elements,
    /// named by key path (see ``compositeAttributes`` for the composites themselves).
    public var attributes: [AttributeDescription] { properties.compactMap(\.attribute) }

    /// Relationships, inherited ones first.
    public var relationships: [RelationshipDescription] { properties.compactMap(\.relationship) }

    /// Attributes by name, inherited ones included (composite elements by key path, as in ``attributes``).
    public var attributesByName: [String: AttributeDescription] {
        Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0) })
    }

    /// Relationships by name, inherited ones included.
    public var relationshipsByName: [String: RelationshipDescription] {
        Dictionary(uniqueKeysWithValues: relationships.map { ($0.name, $0) })
    }

    /// Whether this entity is `other` or one of its descendants.
    public func isKind(of other: EntityDescription) -> Bool { other.hierarchyNumbers.contains(entityNumber) }

    public var description: String { "entity '\(name)'" }
}

/// A fetch index of an entity: one or more elements, each a property with an order.
public struct FetchIndexDescription: Sendable, Hashable {
    /// One element of an index.
    public struct Element: Sendable, Hashable {
        /// The indexed property's name.
        public var property: String
        /// Whether the element sorts ascending.
        public var ascending: Bool
        /// Creates an element.
        public init(_ property: String, ascending: Bool = true) {
            self.property = property
            self.ascending = ascending
        }
    }
    /// The index's name.
    public var name: String
    /// The elements, in order.
    public var elements: [Element]
    /// Creates an index.
    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}

/// A composite of an entity, resolved: its description and the slots of its leaf elements.
struct CompositeSlots: Sendable {
    /// The composite's description (a declared attribute or a nested element).
    let attribute: AttributeDescription
    /// Its key path (`location`, `location.address`).
    let keyPath: String
    /// The slots of every leaf element below it, in declaration order.
    let leafSlots: [Int]
}

/// A required composite (declared or nested) whose value must be present at save: at least one of
/// `slots` non-nil whenever one of `contextSlots` (the enclosing composite's leaves) is; a declared
/// composite has no context and is always checked.
struct CompositeRequirement: Sendable {
    let name: String
    let slots: [Int]
    let contextSlots: [Int]
}

/// What one property slot holds, compactly (hot paths read it instead of copying descriptions).
enum SlotKind: Sendable {
    /// A stored or transient attribute of the type, without a value transformer.
    case attribute(AttributeType)
    /// A transformable attribute with a named transformer.
    case transformed
    /// A to-one relationship.
    case toOne
    /// A to-many relationship.
    case toMany
}

/// The save-time checks of one slot, precomputed from its description.
struct ValidatedSlot: Sendable {
    let slot: Int
    let name: String
    let isOptional: Bool
    let isRelationship: Bool
    let isToMany: Bool
    let minCount: Int
    let maxCount: Int
    let type: AttributeType
    /// Whether the attribute has declarative rules beyond optionality and integer width.
    let hasRules: Bool
    /// For an element of an optional composite: the leaf slots of the composite that holds it.
    /// The element is required only when one of them holds a value (the composite is present).
    var presence: [Int] = []
}
