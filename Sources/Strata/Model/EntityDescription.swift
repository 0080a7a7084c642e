import Foundation

/// An entity of a model: a kind of managed object, with attributes, relationships, a place in an
/// inheritance hierarchy and the constraints its rows keep.
///
/// Build one with ``init(_:parent:isAbstract:properties:uniquenessConstraints:indexes:representedClassName:managedObjectClass:renamingIdentifier:versionHashModifier:userInfo:fetchedProperties:)``
/// and pass it to ``ManagedObjectModel``; the model makes its own resolved copy, in which
/// ``properties`` includes inherited ones and ``entityNumber`` is set.
///
/// Thread safety: immutable (every field is a `let`; the model creates its copy with its resolved
/// state complete); `Sendable`.
public final class EntityDescription: Sendable, CustomStringConvertible {

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

    /// The entity's state within its model (numbers, properties, lookup tables, version hash),
    /// built complete by ``ModelResolver`` before the entity exists; ``Resolved/unresolved`` for
    /// an entity built by a caller. A `let`: no access can overlap a write, so hot paths read it
    /// without exclusivity checks.
    @usableFromInline let resolved: Resolved

    // The fields below read `resolved` in place. Those that are not plain numbers use a read
    // accessor, which lends the field as reading a stored property does (a getter returns a copy).

    /// The entity's number in its model: roots alphabetically, each followed by its descendants
    /// breadth-first (Core Data's `Z_ENT` numbering), starting at 1. Zero before resolution.
    @inlinable public var entityNumber: Int32 { resolved.entityNumber }
    /// Every property, inherited ones first; a property's position is its slot in rows and objects.
    ///
    /// A composite attribute takes no slot of its own: each of its leaf elements takes one, as an
    /// attribute named by its key path (`location.latitude`, `place.address.city`) that carries the
    /// element's type, optionality, default and rules. ``compositeAttributes`` lists the composites.
    @inlinable public var properties: [PropertyDescription] { _read { yield resolved.properties } }
    /// Composite attributes as declared (with their elements), inherited ones first. Their
    /// elements' values live in the slots of ``properties`` named by key path.
    @inlinable public var compositeAttributes: [AttributeDescription] { _read { yield resolved.compositeAttributes } }
    /// Direct subentity names, sorted.
    @inlinable public var subentityNames: [String] { _read { yield resolved.subentityNames } }
    /// The root of the inheritance hierarchy (the entity itself for roots).
    @inlinable public var rootEntityName: String { _read { yield resolved.rootEntityName } }
    /// The number of the root of the inheritance hierarchy (primary keys are unique per root).
    @inlinable public var rootEntityNumber: Int32 { resolved.rootEntityNumber }
    /// The entity numbers of this entity and all its descendants.
    @inlinable public var hierarchyNumbers: Set<Int32> { _read { yield resolved.hierarchyNumbers } }
    /// The entity's version hash (see ``ManagedObjectModel/versionHash``).
    @inlinable public var versionHash: Data { _read { yield resolved.versionHash } }
    /// The values a new object starts with (defaults; empty to-many relationships), one per slot.
    @inlinable public var defaultValues: [StoreValue] { _read { yield resolved.defaultValues } }
    /// Every composite by key path: declared ones (`location`) and nested ones (`location.address`).
    var compositesByKeyPath: [String: CompositeSlots] { _read { yield resolved.compositesByKeyPath } }
    /// The presence rules of required composites (see ``CompositeRequirement``).
    var compositeRequirements: [CompositeRequirement] { _read { yield resolved.compositeRequirements } }
    /// Whether every default value is `.null` (no attribute defaults, no to-many relationships).
    var defaultValuesAreNull: Bool { resolved.defaultValuesAreNull }
    /// The slots a save must validate (stored properties with a rule, required ones, integer widths).
    var validatedSlots: [ValidatedSlot] { _read { yield resolved.validatedSlots } }
    /// What each slot holds, without the full description (hot paths switch on it).
    var slotKinds: [SlotKind] { _read { yield resolved.slotKinds } }
    /// The slots of stored to-many relationships and to-ones (for reference rewriting).
    var relationshipSlots: [Int] { _read { yield resolved.relationshipSlots } }
    /// Whether the entity has relationships (``relationshipSlots`` is not empty).
    var hasRelationships: Bool { resolved.hasRelationships }
    /// The slots of transient properties (never stored).
    var transientSlots: [Int] { _read { yield resolved.transientSlots } }

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
        self.resolved = .unresolved
    }

    /// The entity `source` declares, with the object class `managedObjectClass` and the state
    /// `resolved` its model computed for it.
    init(_ source: EntityDescription, managedObjectClass: ManagedObject.Type, resolved: Resolved) {
        self.name = source.name
        self.superentityName = source.superentityName
        self.isAbstract = source.isAbstract
        self.ownProperties = source.ownProperties
        self.uniquenessConstraints = source.uniquenessConstraints
        self.indexes = source.indexes
        self.representedClassName = source.representedClassName
        self.managedObjectClass = managedObjectClass
        self.renamingIdentifier = source.renamingIdentifier
        self.versionHashModifier = source.versionHashModifier
        self.userInfo = source.userInfo
        self.fetchedProperties = source.fetchedProperties
        self.resolved = resolved
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

    @usableFromInline func _propertyIndex(_ name: String) -> Int? { resolved.names.slot(of: name) }

    /// The slot of the property whose name matches `name` ignoring case (XML stores lower-case
    /// names): the property of exactly that name if there is one, else the first in slot order.
    public func index(ofPropertyIgnoringCase name: String) -> Int? { resolved.names.slot(ignoringCase: name) }

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
        _propertyIndex(name).map { properties[$0] }
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
