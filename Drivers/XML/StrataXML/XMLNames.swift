import Foundation
import Strata

/// The names an XML store writes for a model's entities and properties, and how a name read from
/// a file finds its entity or property.
///
/// Core Data writes entity names upper-cased (`object/@type`, `relationship/@destination`) and
/// property names lower-cased. A model can hold names that are equal after that (entities `Item`
/// and `ITEM`; properties `name` and `Name`, or attribute `label` and relationship `Label`); the
/// members of such a group are written exactly as the model spells them instead, so every name in
/// the file stays distinct. Core Data's own models never have such groups (its XML store could
/// not tell them apart either), so the files it reads and writes are unaffected.
///
/// Reading a name: the written name first, exactly; then ignoring case (upper-case fold for
/// entities, lower-case for properties, the folds Core Data's names already have), which finds
/// names written by Core Data or by hand in another case. A name that matches several only
/// ignoring case is ambiguous and reported, never guessed.
///
/// Thread safety: immutable; `Sendable`.
struct XMLNames: Sendable {
    /// What a lookup found.
    enum Match<T> {
        case found(T)
        /// Several matched ignoring case: their model names.
        case ambiguous([String])
        case missing
    }

    /// The written entity name, by entity number.
    private let entityNames: [Int32: String]
    /// The written property names of each entity, one per slot, by entity number.
    private let propertyNames: [Int32: [String]]
    private let entitiesByName: [String: Int32]
    private let entitiesByFold: [String: [Int32]]
    private let slotsByName: [Int32: [String: Int]]
    private let slotsByFold: [Int32: [String: [Int]]]
    private let model: ManagedObjectModel

    init(model: ManagedObjectModel) {
        self.model = model
        var entityFolds: [String: [Int32]] = [:]
        for entity in model.entities { entityFolds[entity.name.uppercased(), default: []].append(entity.entityNumber) }
        var entityNames: [Int32: String] = [:]
        for entity in model.entities {
            let fold = entity.name.uppercased()
            entityNames[entity.entityNumber] = (entityFolds[fold]?.count ?? 0) > 1 ? entity.name : fold
        }
        var propertyNames: [Int32: [String]] = [:]
        var slotsByName: [Int32: [String: Int]] = [:]
        var slotsByFold: [Int32: [String: [Int]]] = [:]
        for entity in model.entities {
            var folds: [String: [Int]] = [:]
            for (slot, property) in entity.properties.enumerated() {
                folds[property.name.lowercased(), default: []].append(slot)
            }
            let written = entity.properties.map { property -> String in
                let fold = property.name.lowercased()
                return (folds[fold]?.count ?? 0) > 1 ? property.name : fold
            }
            propertyNames[entity.entityNumber] = written
            var byName: [String: Int] = [:]
            for (slot, name) in written.enumerated() where byName[name] == nil { byName[name] = slot }
            slotsByName[entity.entityNumber] = byName
            slotsByFold[entity.entityNumber] = folds
        }
        self.entityNames = entityNames
        self.propertyNames = propertyNames
        self.entitiesByName = Dictionary(entityNames.map { ($0.value, $0.key) }) { a, _ in a }
        self.entitiesByFold = entityFolds
        self.slotsByName = slotsByName
        self.slotsByFold = slotsByFold
    }

    /// The name written for `entity` (in `object/@type` and `relationship/@destination`).
    func writtenName(of entity: EntityDescription) -> String {
        entityNames[entity.entityNumber] ?? entity.name.uppercased()
    }

    /// The name written for the property in `slot` of `entity`.
    func writtenName(ofSlot slot: Int, in entity: EntityDescription) -> String {
        propertyNames[entity.entityNumber]?[slot] ?? entity.properties[slot].name.lowercased()
    }

    /// The entity a file's `object/@type` names.
    func entity(forType type: String) -> Match<EntityDescription> {
        if let number = entitiesByName[type], let entity = model.entity(number: number) { return .found(entity) }
        let candidates = entitiesByFold[type.uppercased()] ?? []
        switch candidates.count {
        case 0: return .missing
        case 1: return model.entity(number: candidates[0]).map(Match.found) ?? .missing
        default: return .ambiguous(candidates.compactMap { model.entity(number: $0)?.name })
        }
    }

    /// The slot of `entity` a file's property name names.
    func slot(forProperty name: String, in entity: EntityDescription) -> Match<Int> {
        if let slot = slotsByName[entity.entityNumber]?[name] { return .found(slot) }
        let candidates = slotsByFold[entity.entityNumber]?[name.lowercased()] ?? []
        switch candidates.count {
        case 0: return .missing
        case 1: return .found(candidates[0])
        default: return .ambiguous(candidates.map { entity.properties[$0].name })
        }
    }
}
