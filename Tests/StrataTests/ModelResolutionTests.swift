import Foundation
import Testing

@testable import Strata

/// A model creates its entities with their resolved state complete (numbers, slots and their
/// tables, hierarchy, version hash), and reading it back through every entity agrees; the caller's
/// entity objects are only read.
@Suite("Model resolution: each entity's resolved state, whole")
struct ModelResolutionTests {
    /// Animal ← Mammal ← Dog, and Keeper; Dog inherits a default, a to-many, a required composite.
    private func zooEntities() -> [EntityDescription] {
        [
            EntityDescription(
                "Dog", parent: "Mammal",
                properties: [
                    .attribute("breed", .string), .attribute("scratch", .string, isTransient: true),
                    .toOne("owner", "Keeper"),
                ]),
            EntityDescription("Keeper", properties: [.toMany("animals", "Animal", inverse: "keepers")]),
            EntityDescription(
                "Mammal", parent: "Animal",
                properties: [
                    .composite(
                        "location", elements: [.init("latitude", .double), .init("longitude", .double)],
                        isOptional: false),
                    .attribute("furColor", .string, defaultValue: .string("brown")),
                ]),
            EntityDescription(
                "Animal", isAbstract: true,
                properties: [
                    .attribute("name", .string, isOptional: false, defaultValue: .string("x")),
                    .toMany("keepers", "Keeper", inverse: "animals"),
                ]),
        ]
    }

    private func kind(_ kind: SlotKind) -> String {
        switch kind {
        case .attribute(let type): "attribute \(type)"
        case .transformed: "transformed"
        case .toOne: "toOne"
        case .toMany: "toMany"
        }
    }

    @Test("an inheritance chain resolves whole: slots in order, their tables, numbers, hierarchy, defaults")
    func inheritanceChainResolvesWhole() throws {
        let model = try ManagedObjectModel(entities: zooEntities())
        #expect(model.entities.map(\.name) == ["Animal", "Mammal", "Dog", "Keeper"])
        let dog = try #require(model.entity(named: "Dog"))
        let names = [
            "name", "keepers", "location.latitude", "location.longitude", "furColor", "breed", "scratch", "owner",
        ]
        #expect(dog.properties.map(\.name) == names)
        for (slot, name) in names.enumerated() {
            #expect(dog.index(ofProperty: name) == slot, "\(name)")
            #expect(dog.property(named: name)?.name == name)
            #expect(dog.index(ofPropertyIgnoringCase: name.uppercased()) == slot, "\(name)")
        }
        #expect(dog.index(ofProperty: "location") == nil && dog.isComposite("location"))
        #expect(
            dog.defaultValues == [.string("x"), .references([]), .null, .null, .string("brown"), .null, .null, .null])
        #expect(!dog.defaultValuesAreNull)
        #expect(
            dog.slotKinds.map(kind) == [
                "attribute string", "toMany", "attribute double", "attribute double", "attribute string",
                "attribute string", "attribute string", "toOne",
            ])
        #expect(dog.relationshipSlots == [1, 7] && dog.hasRelationships)
        #expect(dog.transientSlots == [6])
        #expect(dog.validatedSlots.map(\.slot) == [0])
        #expect(dog.compositeAttributes.map(\.name) == ["location"])
        #expect(dog.compositeRequirements.map(\.name) == ["location"])
        #expect(dog.compositeRequirements.map(\.slots) == [[2, 3]])
        #expect(dog.compositeAttribute(atKeyPath: "location")?.elements.count == 2)

        #expect(model.entities.map(\.entityNumber) == [1, 2, 3, 4])
        #expect(model.entities.map(\.rootEntityNumber) == [1, 1, 1, 4])
        #expect(model.entities.map(\.rootEntityName) == ["Animal", "Animal", "Animal", "Keeper"])
        #expect(model.entities.map(\.hierarchyNumbers) == [[1, 2, 3], [2, 3], [3], [4]])
        #expect(model.entities.map(\.subentityNames) == [["Mammal"], ["Dog"], [], []])
        let keeper = try #require(model.entity(named: "Keeper"))
        #expect(keeper.defaultValues == [.references([])] && keeper.relationshipSlots == [0])
        let animal = try #require(model.entity(named: "Animal"))
        #expect(animal.properties.map(\.name) == ["name", "keepers"] && animal.compositeAttributes.isEmpty)

        // Each entity's hash chains its parent's resolved hash; all differ.
        let mammal = try #require(model.entity(named: "Mammal"))
        #expect(dog.versionHash == VersionHasher.hash(of: dog, parentHash: mammal.versionHash))
        #expect(mammal.versionHash == VersionHasher.hash(of: mammal, parentHash: animal.versionHash))
        #expect(Set(model.entities.map(\.versionHash)).count == 4 && dog.versionHash.count == 32)
    }

    @Test("re-registering classes resolves every entity to the same state")
    func reRegisteringResolvesTheSame() throws {
        let model = try ManagedObjectModel(entities: zooEntities())
        let again = try model.registering([:])
        for (a, b) in zip(model.entities, again.entities) {
            #expect(a !== b)
            #expect(a.name == b.name && a.entityNumber == b.entityNumber && a.versionHash == b.versionHash)
            #expect(a.properties == b.properties && a.defaultValues == b.defaultValues)
            #expect(a.hierarchyNumbers == b.hierarchyNumbers && a.rootEntityNumber == b.rootEntityNumber)
        }
        #expect(again.versionHash == model.versionHash)
    }

    @Test("a model whose last check fails leaves the caller's entities unresolved, and they resolve later")
    func failedCheckLeavesCallerEntitiesAlone() throws {
        // Zoo is numbered last, so every other entity has been resolved when its relationship fails.
        var entities = zooEntities()
        entities.append(EntityDescription("Zoo", properties: [.toOne("mascot", "Unicorn")]))
        #expect(throws: ModelError.self) { try ManagedObjectModel(entities: entities) }
        for entity in entities {
            #expect(entity.entityNumber == 0 && entity.rootEntityNumber == 0 && entity.rootEntityName.isEmpty)
            #expect(entity.properties.isEmpty && entity.defaultValues.isEmpty && entity.slotKinds.isEmpty)
            #expect(entity.hierarchyNumbers.isEmpty && entity.subentityNames.isEmpty && entity.versionHash.isEmpty)
            #expect(entity.index(ofProperty: entity.ownProperties[0].name) == nil)
        }
        let model = try ManagedObjectModel(entities: entities.dropLast())
        #expect(model.entity(named: "Dog")?.properties.count == 8)
        #expect(model.entities.map(\.entityNumber) == [1, 2, 3, 4])
    }

    @Test("a name matched ignoring case finds the property of exactly that name, else the first in slot order")
    func ignoringCasePrefersExactThenSlotOrder() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Thing", properties: [.attribute("Name", .string), .attribute("name", .string)])
        ])
        let thing = try #require(model.entity(named: "Thing"))
        #expect(thing.index(ofPropertyIgnoringCase: "Name") == 0)
        #expect(thing.index(ofPropertyIgnoringCase: "name") == 1)
        #expect(thing.index(ofPropertyIgnoringCase: "NAME") == 0)
        #expect(thing.index(ofPropertyIgnoringCase: "nAmE") == 0)
        #expect(thing.index(ofPropertyIgnoringCase: "names") == nil)
        #expect(!thing.hasRelationships && thing.relationshipSlots.isEmpty && thing.defaultValuesAreNull)
    }
}
