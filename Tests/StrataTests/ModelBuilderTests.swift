import Foundation
import Strata
import StrataTesting
import Testing

/// The ModelError thrown by building a model of `entities`.
private func buildError(
    _ entities: [EntityDescription], sourceLocation: SourceLocation = #_sourceLocation
) throws -> ModelError {
    do {
        _ = try ManagedObjectModel(entities: entities)
    } catch let error as ModelError {
        return error
    }
    Issue.record("building succeeded; a ModelError was expected", sourceLocation: sourceLocation)
    throw CancellationError()
}

/// A small library model: Author ⇄ Book, Novel inherits Book; fresh objects on every call.
private func libraryEntities(
    titleType: AttributeType = .string, titleName: String = "title", nameDefault: StoreValue = .null,
    nameOptional: Bool = false, transient: PropertyDescription? = .attribute("display", .string, isTransient: true)
) -> [EntityDescription] {
    [
        EntityDescription(
            "Author",
            properties: [
                .attribute("name", .string, isOptional: nameOptional, defaultValue: nameDefault),
                .toMany("books", "Book", inverse: "author"),
            ] + (transient.map { [$0] } ?? [])),
        EntityDescription(
            "Book",
            properties: [
                .attribute(titleName, titleType), .attribute("pages", .integer32),
                .toOne("author", "Author", inverse: "books"),
            ],
            uniquenessConstraints: [[titleName]]),
        EntityDescription("Novel", parent: "Book", properties: [.attribute("genre", .string)]),
    ]
}

@Suite("Building models in Swift: numbering, inheritance, checks and version hashes")
struct ModelBuilderTests {
    private func zooEntities() -> [EntityDescription] {
        [
            EntityDescription("Zoo", properties: [.attribute("city", .string)]),
            EntityDescription("Dog", parent: "Mammal", properties: [.attribute("breed", .string)]),
            EntityDescription("Cat", parent: "Mammal"),
            EntityDescription("Mammal", parent: "Animal", properties: [.attribute("furColor", .string)]),
            EntityDescription("Parrot", parent: "Bird"),
            EntityDescription("Bird", parent: "Animal", properties: [.attribute("wingspan", .double)]),
            EntityDescription("Animal", isAbstract: true, properties: [.attribute("name", .string)]),
        ]
    }

    @Test("entities are numbered roots alphabetically, each followed by its descendants breadth-first")
    func numbering() throws {
        let model = try ManagedObjectModel(entities: zooEntities())
        #expect(model.entities.map(\.name) == ["Animal", "Bird", "Mammal", "Parrot", "Cat", "Dog", "Zoo"])
        #expect(model.entities.map(\.entityNumber) == [1, 2, 3, 4, 5, 6, 7])
        #expect(model.entity(number: 6)?.name == "Dog")
        #expect(model.entity(number: 8) == nil)
    }

    @Test(
        "names that Swift's String comparison cannot order (Café written e + U+0301 beside Café2) are numbered the same way every time (round-trip seed 104)"
    )
    func numberingOfNamesWithCombiningMarks() throws {
        // Swift's `<` says neither "Cafe\u{301}" < "Caf\u{E9}2" nor the reverse, so sorting by it
        // left their order to hash order: numbers changed between processes and between a model
        // and the copy a store's embedded model decodes to.
        let names = ["Cafe\u{301}", "Caf\u{E9}2", "Cafe\u{301}3", "Cafe"]
        for padding in 0..<12 {
            var entities = [EntityDescription("Größe", properties: [.attribute("x", .string)])]
            for name in names { entities.append(EntityDescription(name, parent: "Größe")) }
            for (index, name) in names.enumerated() { entities.append(EntityDescription(name + "Root\(index)")) }
            for extra in 0..<padding { entities.append(EntityDescription("Pad\(extra)")) }
            var rng = SeededGenerator(seed: UInt64(padding))
            let model = try ManagedObjectModel(entities: entities.shuffled(using: &rng))
            let children = model.entities.map(\.name).filter { names.contains($0) }
            // Ordered by the names' canonical (NFC) UTF-16 code units, then as written.
            #expect(
                children.map { Array($0.unicodeScalars) } == [
                    Array("Cafe".unicodeScalars), Array("Cafe\u{301}".unicodeScalars),
                    Array("Caf\u{E9}2".unicodeScalars), Array("Cafe\u{301}3".unicodeScalars),
                ])
            let roots = model.entities.map(\.name).filter { $0.contains("Root") }
            #expect(
                roots.map { Array($0.unicodeScalars) }
                    == [3, 1, 2, 0].map { Array((names[$0] + "Root\($0)").unicodeScalars) })
        }
    }

    @Test("subentity hierarchies carry the numbers of the entity and all its descendants")
    func hierarchyNumbers() throws {
        let model = try ManagedObjectModel(entities: zooEntities())
        #expect(model.entity(named: "Animal")?.hierarchyNumbers == [1, 2, 3, 4, 5, 6])
        #expect(model.entity(named: "Mammal")?.hierarchyNumbers == [3, 5, 6])
        #expect(model.entity(named: "Bird")?.hierarchyNumbers == [2, 4])
        #expect(model.entity(named: "Zoo")?.hierarchyNumbers == [7])
        #expect(model.entity(named: "Mammal")?.subentityNames == ["Cat", "Dog"])
        #expect(model.entity(named: "Dog")?.rootEntityName == "Animal")
        let dog = try #require(model.entity(named: "Dog"))
        let animal = try #require(model.entity(named: "Animal"))
        #expect(dog.isKind(of: animal) && !animal.isKind(of: dog))
    }

    @Test("inherited properties come first, root's before parent's before own")
    func inheritedPropertiesFirst() throws {
        let model = try ManagedObjectModel(entities: zooEntities())
        let dog = try #require(model.entity(named: "Dog"))
        #expect(dog.properties.map(\.name) == ["name", "furColor", "breed"])
        #expect(dog.ownProperties.map(\.name) == ["breed"])
        #expect(dog.index(ofProperty: "furColor") == 1)
        #expect(dog.index(ofPropertyIgnoringCase: "FURCOLOR") == 1)
    }

    @Test("fetched properties are kept through resolution and re-registration")
    func fetchedPropertiesCarried() throws {
        let fetched = FetchedPropertyDescription("bigBooks", entityName: "Book", predicateFormat: "pages > 500")
        var entities = libraryEntities()
        entities[0] = EntityDescription("Author", properties: entities[0].ownProperties, fetchedProperties: [fetched])
        let model = try ManagedObjectModel(entities: entities)
        #expect(model.entity(named: "Author")?.fetchedProperties == [fetched])
        #expect(try model.registering([:]).entity(named: "Author")?.fetchedProperties == [fetched])
    }

    // MARK: Errors

    @Test("two entities with one name are a duplicate-name error")
    func duplicateEntities() throws {
        let error = try buildError([EntityDescription("A"), EntityDescription("A")])
        #expect(error.code == .duplicateName && error.element == "entity A")
    }

    @Test("names that are not identifiers are refused by the builder, naming the element")
    func invalidNames() throws {
        let hostile = "Foo(x); ATTACH DATABASE '/tmp/strata-\(UUID().uuidString)' AS p; --"
        let entity = try buildError([EntityDescription(hostile)])
        #expect(entity.code == .invalidName && entity.element?.hasPrefix("entity \"Foo(x); ATTACH") == true)
        let attribute = try buildError([EntityDescription("A", properties: [.attribute("x\ny", .string)])])
        #expect(attribute.code == .invalidName && attribute.element == "attribute A.\"x\\u{A}y\"")
        #expect(!attribute.description.contains("\n"))
        let relationship = try buildError([EntityDescription("A", properties: [.toOne("b\"", "A")])])
        #expect(relationship.code == .invalidName && relationship.message.contains("relationship name"))
        let fetched = try buildError([
            EntityDescription(
                "A", fetchedProperties: [FetchedPropertyDescription("all A", entityName: "A", predicateFormat: "")])
        ])
        #expect(fetched.code == .invalidName)
        for (configurations, templates) in [
            (["a;b": ["A"]], [String: FetchRequestTemplate]()),
            ([:], ["all\tA": FetchRequestTemplate(entityName: "A", predicateFormat: "")]),
        ] {
            #expect(throws: ModelError.self) {
                try ManagedObjectModel(
                    entities: [EntityDescription("A")], configurations: configurations, fetchRequestTemplates: templates
                )
            }
        }
        #expect(ManagedObjectModel.isValidName("_a1") && ManagedObjectModel.isValidName("default"))
        #expect(ManagedObjectModel.isValidName("größe") && ManagedObjectModel.isValidName("cre\u{301}e\u{301}"))
        #expect(!ManagedObjectModel.isValidName("a\u{200B}b") && !ManagedObjectModel.isValidName("a\u{202E}b"))
        #expect(
            !ManagedObjectModel.isValidName("") && !ManagedObjectModel.isValidName("1a")
                && !ManagedObjectModel.isValidName("a-b"))
    }

    @Test("a property repeating an inherited name is a duplicate-name error")
    func duplicateInheritedProperty() throws {
        let error = try buildError([
            EntityDescription("A", properties: [.attribute("x", .string)]),
            EntityDescription("B", parent: "A", properties: [.attribute("x", .integer16)]),
        ])
        #expect(error.code == .duplicateName)
    }

    @Test("an unknown parent is an unknown-entity error")
    func unknownParent() throws {
        let error = try buildError([EntityDescription("A", parent: "Ghost")])
        #expect(error.code == .unknownEntity && error.message.contains("Ghost"))
    }

    @Test("an inheritance cycle is an error, not a hang")
    func inheritanceCycle() throws {
        let error = try buildError([EntityDescription("A", parent: "B"), EntityDescription("B", parent: "A")])
        #expect(error.code == .malformed && error.message.contains("inherits from itself"))
    }

    @Test("an inverse that does not exist, or does not point back, is an invalid-inverse error")
    func badInverse() throws {
        let missing = try buildError([
            EntityDescription("A", properties: [.toOne("b", "B", inverse: "a")]),
            EntityDescription("B"),
        ])
        #expect(missing.code == .invalidInverse && missing.element == "relationship A.b")
        let elsewhere = try buildError([
            EntityDescription("A", properties: [.toOne("b", "B", inverse: "c")]),
            EntityDescription("B", properties: [.toOne("c", "C")]),
            EntityDescription("C"),
        ])
        #expect(elsewhere.code == .invalidInverse)
        let mismatched = try buildError([
            EntityDescription("A", properties: [.toOne("b", "B", inverse: "a"), .toOne("b2", "B")]),
            EntityDescription("B", properties: [.toOne("a", "A", inverse: "b2")]),
        ])
        #expect(mismatched.code == .invalidInverse)
    }

    @Test("a missing destination is an unknown-entity error")
    func missingDestination() throws {
        let error = try buildError([EntityDescription("A", properties: [.toMany("bs", "B")])])
        #expect(error.code == .unknownEntity)
    }

    @Test("a regular expression that does not compile is an invalid-value error")
    func badRegularExpression() throws {
        let rules = ValidationRules(regularExpression: "([a-z")
        let error = try buildError([EntityDescription("A", properties: [.attribute("x", .string, validation: rules)])])
        #expect(error.code == .invalidValue && error.element == "attribute A.x")
    }

    @Test("a fetched property of an unknown entity, or with a taken name, is an error")
    func badFetchedProperty() throws {
        let unknown = try buildError([
            EntityDescription("A", fetchedProperties: [FetchedPropertyDescription("f", entityName: "Z")])
        ])
        #expect(unknown.code == .unknownEntity)
        let taken = try buildError([
            EntityDescription(
                "A", properties: [.attribute("f", .string)],
                fetchedProperties: [FetchedPropertyDescription("f", entityName: "A")])
        ])
        #expect(taken.code == .duplicateName)
    }

    // MARK: Version hashes

    @Test("the same model built twice has the same hashes")
    func hashesStable() throws {
        let first = try ManagedObjectModel(entities: libraryEntities())
        let second = try ManagedObjectModel(entities: libraryEntities().reversed())
        #expect(first.versionHash == second.versionHash)
        #expect(first.entityVersionHashesByName == second.entityVersionHashesByName)
        #expect(first.versionHash.count == 32)
    }

    @Test("hashes follow the documented scheme (values computed independently and pinned)")
    func hashesPinned() throws {
        // Computed with Python's hashlib from the scheme documented in VersionHasher.swift.
        let model = try ManagedObjectModel(entities: libraryEntities())
        let hashes = model.entityVersionHashesByName.mapValues(\.hexString)
        #expect(hashes["Author"] == "89d5430ea220b57f07820da659c9fb1c50dab2c2afea718704bd64225dbf16b9")
        #expect(hashes["Book"] == "b2c3886b17139905bc6221b0c435e8047d51d1b4be5fdc708df68ba18310437d")
        #expect(hashes["Novel"] == "cb58f5fc4b9205b9c4f3ff65a3000caf69cea8681bddf9cf43887833d4b3f156")
        #expect(model.versionHash.hexString == "95dae89b351f78dd055b2d6ac6d6e49ba0468c20bea26dc4556e459e2c5a3cfa")
    }

    @Test("a stored attribute's type or name change moves the hash, and a subentity's with it")
    func hashesChangeWithStorage() throws {
        let base = try ManagedObjectModel(entities: libraryEntities())
        let retyped = try ManagedObjectModel(entities: libraryEntities(titleType: .uri))
        let renamed = try ManagedObjectModel(entities: libraryEntities(titleName: "heading"))
        for changed in [retyped, renamed] {
            #expect(changed.versionHash != base.versionHash)
            #expect(changed.entityVersionHashesByName["Book"] != base.entityVersionHashesByName["Book"])
            #expect(changed.entityVersionHashesByName["Novel"] != base.entityVersionHashesByName["Novel"])
            #expect(changed.entityVersionHashesByName["Author"] == base.entityVersionHashesByName["Author"])
        }
    }

    @Test("defaults, optionality and transient attributes leave the hash alone")
    func hashesIgnoreNonStorage() throws {
        let base = try ManagedObjectModel(entities: libraryEntities())
        let variants = [
            libraryEntities(nameDefault: .string("Anonymous")),
            libraryEntities(nameOptional: true),
            libraryEntities(transient: nil),
            libraryEntities(transient: .attribute("display", .integer64, isTransient: true)),
            libraryEntities(transient: .attribute("shown", .string, isTransient: true)),
        ]
        for entities in variants {
            #expect(try ManagedObjectModel(entities: entities).versionHash == base.versionHash)
        }
    }
}
