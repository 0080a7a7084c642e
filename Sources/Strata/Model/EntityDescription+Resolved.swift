import Foundation

extension EntityDescription {
    /// What an entity is within its model, computed once by ``ModelResolver``: its number and place
    /// in the hierarchy, its properties (inherited ones first, composites expanded), its version
    /// hash and the tables hot paths read by slot.
    ///
    /// A value of `let`s: an entity holds one, set when the model creates it, and every field the
    /// entity exposes (``EntityDescription/properties``, ``EntityDescription/entityNumber``, …)
    /// reads it. An entity built by a caller holds ``unresolved``. The fields other modules read
    /// through inlinable getters are `@usableFromInline`, so a driver's loop over
    /// `entity.properties` loads the field directly, as it would a stored property.
    @usableFromInline struct Resolved: Sendable {
        /// See ``EntityDescription/entityNumber``.
        @usableFromInline let entityNumber: Int32
        /// See ``EntityDescription/properties``.
        @usableFromInline let properties: [PropertyDescription]
        /// See ``EntityDescription/defaultValues``.
        @usableFromInline let defaultValues: [StoreValue]
        /// What each slot holds, without the full description (hot paths switch on it).
        let slotKinds: [SlotKind]
        /// Whether every default value is `.null` (no attribute defaults, no to-many relationships).
        let defaultValuesAreNull: Bool
        /// The slots' names, for lookups by name.
        let names: PropertyNameIndex
        /// The slots a save must validate (stored properties with a rule, required ones, integer widths).
        let validatedSlots: [ValidatedSlot]
        /// The slots of stored to-many relationships and to-ones (for reference rewriting).
        let relationshipSlots: [Int]
        /// Whether the entity has relationships (``relationshipSlots`` is not empty): a flag, so
        /// registering an object reads one byte, not an array kept alive around the call.
        let hasRelationships: Bool
        /// The slots of transient properties (never stored).
        let transientSlots: [Int]
        /// See ``EntityDescription/compositeAttributes``.
        @usableFromInline let compositeAttributes: [AttributeDescription]
        /// Every composite by key path: declared ones (`location`) and nested ones (`location.address`).
        let compositesByKeyPath: [String: CompositeSlots]
        /// The presence rules of required composites (see ``CompositeRequirement``).
        let compositeRequirements: [CompositeRequirement]
        /// See ``EntityDescription/subentityNames``.
        @usableFromInline let subentityNames: [String]
        /// See ``EntityDescription/rootEntityName``.
        @usableFromInline let rootEntityName: String
        /// See ``EntityDescription/rootEntityNumber``.
        @usableFromInline let rootEntityNumber: Int32
        /// See ``EntityDescription/hierarchyNumbers``.
        @usableFromInline let hierarchyNumbers: Set<Int32>
        /// See ``EntityDescription/versionHash``.
        @usableFromInline let versionHash: Data

        /// The state of an entity no model has resolved: number 0, no properties, no hash.
        static let unresolved = Resolved(
            place: Place(entityNumber: 0, subentityNames: [], rootEntityName: "", rootEntityNumber: 0),
            hierarchyNumbers: [], versionHash: Data(), slots: Slots())
    }

    /// Where an entity stands in its model's numbering (see ``ModelResolver``).
    struct Place {
        let entityNumber: Int32
        let subentityNames: [String]
        let rootEntityName: String
        let rootEntityNumber: Int32
    }

    /// An entity's slots: its properties, inherited ones first, composites expanded to their leaf
    /// elements, with the tables derived from them.
    struct Slots {
        var properties: [PropertyDescription] = []
        var index: [String: Int] = [:]
        var composites = CompositeExpansion()

        init() {}

        /// The slots of the last entity of `chain`, which lists its ancestors root first.
        ///
        /// - Throws: ``ModelError`` for a property with an empty name or a name taken twice
        ///   (inherited names included).
        init(chain: [EntityDescription]) throws {
            let entity = chain.last!  // ancestry always contains the entity itself
            for level in chain {
                for property in level.ownProperties {
                    guard !property.name.isEmpty else {
                        throw ModelError(.malformed, "entity '\(level.name)' has a property with an empty name")
                    }
                    if index[property.name] != nil || composites.byKeyPath[property.name] != nil {
                        throw ModelError(
                            .duplicateName,
                            "entity '\(entity.name)' has two properties named '\(property.name)' (one may be inherited)",
                            element: "entity \(entity.name)")
                    }
                    if case .attribute(let attribute) = property, attribute.isComposite {
                        composites.expand(attribute, into: &properties, index: &index)
                        continue
                    }
                    index[property.name] = properties.count
                    properties.append(property)
                }
            }
        }
    }
}

extension EntityDescription.Resolved {
    /// The complete state of an entity: every field is computed here, from the entity's place in
    /// the model, its hierarchy, its version hash and its slots.
    init(
        place: EntityDescription.Place, hierarchyNumbers: Set<Int32>, versionHash: Data, slots: EntityDescription.Slots
    ) {
        let properties = slots.properties
        let composites = slots.composites
        self.entityNumber = place.entityNumber
        self.subentityNames = place.subentityNames
        self.rootEntityName = place.rootEntityName
        self.rootEntityNumber = place.rootEntityNumber
        self.hierarchyNumbers = hierarchyNumbers
        self.versionHash = versionHash
        self.properties = properties
        self.names = PropertyNameIndex(names: properties.map(\.name), slots: slots.index)
        self.compositeAttributes = composites.declared
        self.compositesByKeyPath = composites.byKeyPath
        self.compositeRequirements = composites.requirements
        self.defaultValues = properties.map { property in
            switch property {
            case .attribute(let a): a.defaultValue
            case .relationship(let r): r.isToMany ? .references([]) : .null
            }
        }
        self.defaultValuesAreNull = defaultValues.allSatisfy { if case .null = $0 { true } else { false } }
        self.relationshipSlots = properties.indices.filter { properties[$0].relationship != nil }
        self.hasRelationships = !relationshipSlots.isEmpty
        self.transientSlots = properties.indices.filter { properties[$0].isTransient }
        self.slotKinds = properties.map { property in
            switch property {
            case .attribute(let a):
                a.type == .transformable && a.valueTransformerName != nil ? .transformed : .attribute(a.type)
            case .relationship(let r): r.isToMany ? .toMany : .toOne
            }
        }
        self.validatedSlots = properties.indices.compactMap { slot -> ValidatedSlot? in
            switch properties[slot] {
            case .attribute(let a):
                guard !a.isTransient,
                    !a.isOptional || !a.validation.isEmpty || a.type == .integer16 || a.type == .integer32
                else { return nil }
                var rule = ValidatedSlot(
                    slot: slot, name: a.name, isOptional: a.isOptional, isRelationship: false, isToMany: false,
                    minCount: 0, maxCount: 0, type: a.type, hasRules: !a.validation.isEmpty)
                rule.presence = composites.presence[slot] ?? []
                return rule
            case .relationship(let r):
                guard !r.isTransient, !r.isOptional || r.minCount > 0 || (r.isToMany && r.maxCount > 0) else {
                    return nil
                }
                return ValidatedSlot(
                    slot: slot, name: r.name, isOptional: r.isOptional, isRelationship: true, isToMany: r.isToMany,
                    minCount: r.minCount, maxCount: r.maxCount, type: .undefined, hasRules: false)
            }
        }
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
