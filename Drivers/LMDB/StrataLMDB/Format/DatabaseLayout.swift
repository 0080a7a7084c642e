import Foundation
import Strata

/// How one model maps onto the named databases of an LMDB store (see docs/formats/lmdb.md):
/// which rows database holds each entity, how each slot is stored, the relationship keys and the
/// secondary indexes. Derived from the model alone, so every process computes the same layout.
///
/// Thread safety: immutable; `Sendable`.
struct DatabaseLayout: Sendable {
    /// How one slot of a row is stored.
    enum Slot: Sendable, Equatable {
        /// Never stored (transient properties).
        case transient
        /// An attribute stored in the row body.
        case attribute(AttributeType)
        /// A to-one relationship: the destination's key in the row body, and a reverse entry
        /// `refs[rel, destination] -> source`.
        case toOne(rel: UInt32)
        /// A to-many relationship whose inverse is to-one: its members are the reverse entries of
        /// the inverse (`refs[inverse, source]`); `order` names the order list when ordered.
        case reverse(inverse: UInt32, order: UInt32?)
        /// A to-many relationship whose members live in the links database (`links[rel, source]`),
        /// mirrored under `inverse` when the inverse is to-many too; `order` when ordered.
        case links(rel: UInt32, inverse: UInt32?, order: UInt32?)
    }

    /// A secondary index: unique constraints, fetch indexes and indexed attributes.
    struct Index: Sendable {
        /// The index number: the first four bytes of every key in the `index` database.
        var id: UInt32
        /// A stable description (`Tag:unique:name`) recorded in the store's metadata.
        var name: String
        /// The entity declaring the index; rows of its whole hierarchy are indexed.
        var owner: Int32
        /// The entity numbers whose rows carry entries.
        var entities: Set<Int32>
        /// The indexed slots, most significant first.
        var slots: [Int]
        /// Whether the index enforces a unique constraint.
        var isUnique: Bool
    }

    /// One rows database per inheritance root.
    struct Root: Sendable {
        var number: Int32
        var name: String
        var databaseName: String { "rows.\(name)" }
    }

    let model: ManagedObjectModel
    /// Roots by entity number (of the root).
    let roots: [Int32: Root]
    /// Root number of every entity.
    let rootOf: [Int32: Int32]
    /// Slot kinds by entity number.
    let slots: [Int32: [Slot]]
    /// Every index, by id order.
    let indexes: [Index]
    /// Indexes covering rows of each entity.
    let indexesByEntity: [Int32: [Index]]
    /// Entities whose rows have relationship entries to write (to-one reverse entries, links or
    /// order lists); rows of other entities are written with their body alone.
    let linked: Set<Int32>
    /// The fast decoder's plan of each entity's rows.
    let plans: [Int32: RowCodec.Plan]

    init(model: ManagedObjectModel) {
        self.model = model
        var roots: [Int32: Root] = [:]
        var rootOf: [Int32: Int32] = [:]
        var slots: [Int32: [Slot]] = [:]
        for entity in model.entities {
            // Every entity's root is in the same model.
            let root = model.entity(named: entity.rootEntityName)!
            roots[root.entityNumber] = Root(number: root.entityNumber, name: root.name)
            rootOf[entity.entityNumber] = root.entityNumber
            slots[entity.entityNumber] = entity.properties.enumerated().map { slot, property in
                Self.slot(property, at: slot, of: entity, in: model)
            }
        }
        var indexes: [Index] = []
        for entity in model.entities.sorted(by: { $0.entityNumber < $1.entityNumber }) {
            func add(_ kind: String, _ names: [String], unique: Bool) {
                let found = names.compactMap { entity.index(ofProperty: $0) }
                guard found.count == names.count, !found.isEmpty,
                    found.allSatisfy({
                        entity.properties[$0].attribute != nil || entity.properties[$0].relationship?.isToMany == false
                    }),
                    found.allSatisfy({ !entity.properties[$0].isTransient })
                else { return }
                indexes.append(
                    Index(
                        id: UInt32(indexes.count + 1), name: "\(entity.name):\(kind):\(names.joined(separator: ","))",
                        owner: entity.entityNumber, entities: entity.hierarchyNumbers, slots: found, isUnique: unique))
            }
            for constraint in entity.uniquenessConstraints { add("unique", constraint, unique: true) }
            for index in entity.indexes { add("fetch.\(index.name)", index.elements.map(\.property), unique: false) }
            for case .attribute(let attribute) in entity.ownProperties where !attribute.isTransient {
                if attribute.isIndexed { add("attribute", [attribute.name], unique: false) }
                for (path, element) in attribute.leafElements where element.isIndexed {
                    add("attribute", [attribute.name + "." + path], unique: false)
                }
            }
        }
        var byEntity: [Int32: [Index]] = [:]
        for index in indexes {
            for number in index.entities { byEntity[number, default: []].append(index) }
        }
        self.roots = roots
        self.rootOf = rootOf
        self.slots = slots
        self.indexes = indexes
        self.indexesByEntity = byEntity
        plans = slots.mapValues { RowCodec.Plan($0) }
        linked = Set(
            slots.filter { _, kinds in
                kinds.contains { kind in
                    switch kind {
                    case .toOne, .links: true
                    case .reverse(_, let order): order != nil
                    case .transient, .attribute: false
                    }
                }
            }.keys)
    }

    /// The relationship key of `slot` in `entity`: the number of the topmost entity declaring the
    /// property (so subentities share it) in the high 16 bits, the slot in the low 16.
    static func relationshipKey(_ entity: EntityDescription, slot: Int, in model: ManagedObjectModel) -> UInt32 {
        let name = entity.properties[slot].name
        var declaring = entity
        while let parentName = declaring.superentityName, let parent = model.entity(named: parentName),
            parent.index(ofProperty: name) != nil
        {
            declaring = parent
        }
        return UInt32(UInt16(truncatingIfNeeded: declaring.entityNumber)) << 16
            | UInt32(UInt16(truncatingIfNeeded: slot))
    }

    private static func slot(
        _ property: PropertyDescription, at slot: Int, of entity: EntityDescription, in model: ManagedObjectModel
    ) -> Slot {
        switch property {
        case .attribute(let attribute):
            return attribute.isTransient ? .transient : .attribute(attribute.type)
        case .relationship(let relationship):
            if relationship.isTransient { return .transient }
            let key = relationshipKey(entity, slot: slot, in: model)
            var inverse: (key: UInt32, isToMany: Bool)?
            if let inverseName = relationship.inverseName,
                let destination = model.entity(named: relationship.destinationEntityName),
                let inverseSlot = destination.index(ofProperty: inverseName),
                let inverseRelationship = destination.properties[inverseSlot].relationship,
                !inverseRelationship.isTransient
            {
                inverse = (relationshipKey(destination, slot: inverseSlot, in: model), inverseRelationship.isToMany)
            }
            guard relationship.isToMany else { return .toOne(rel: key) }
            let order = relationship.isOrdered ? key : nil
            if let inverse, !inverse.isToMany { return .reverse(inverse: inverse.key, order: order) }
            return .links(rel: key, inverse: inverse?.key, order: order)
        }
    }

    /// The rows database name holding `entity`'s rows.
    func root(of entity: Int32) -> Root? { rootOf[entity].flatMap { roots[$0] } }

    /// A signature of everything here that decides where bytes go; stored in the metadata database
    /// and compared at open (a store written under another layout is refused, not misread).
    var signature: String {
        var parts: [String] = []
        for entity in model.entities.sorted(by: { $0.entityNumber < $1.entityNumber }) {
            parts.append("\(entity.entityNumber)=\(entity.name)")
        }
        parts += indexes.map { "i\($0.id)=\($0.name)" }
        return parts.joined(separator: ";")
    }
}
