import Foundation
import Strata
import Testing

/// The corpus folder (../shared/corpus), when the environment names it.
private let corpusPath = ProcessInfo.processInfo.environment["STRATA_CORPUS"]

extension Trait where Self == ConditionTrait {
    /// Runs a test only when `STRATA_CORPUS` names the corpus folder; reports it skipped otherwise.
    fileprivate static var needsCorpus: Self {
        .enabled(if: ProcessInfo.processInfo.environment["STRATA_CORPUS"] != nil, "STRATA_CORPUS is not set")
    }
}

/// Loads `models/<name>.xcdatamodel.xml` from the corpus.
private func corpusModel(_ name: String) throws -> ManagedObjectModel {
    let folder = try #require(corpusPath)
    let url = URL(fileURLWithPath: folder).appendingPathComponent("models/\(name).xcdatamodel.xml")
    return try ManagedObjectModel(contentsOf: url)
}

private func entity(_ model: ManagedObjectModel, _ name: String) throws -> EntityDescription {
    try #require(model.entity(named: name), "entity \(name)")
}

private func attribute(_ model: ManagedObjectModel, _ entityName: String, _ name: String) throws -> AttributeDescription
{
    try #require(try entity(model, entityName).attributesByName[name], "attribute \(entityName).\(name)")
}

private func relationship(
    _ model: ManagedObjectModel, _ entityName: String, _ name: String
) throws -> RelationshipDescription {
    try #require(try entity(model, entityName).relationshipsByName[name], "relationship \(entityName).\(name)")
}

@Suite("Xcode models from the corpus load with what their files say")
struct ModelCorpusTests {
    @Test("the corpus holds the 14 model files these tests cover", .needsCorpus)
    func corpusListing() throws {
        let folder = URL(fileURLWithPath: try #require(corpusPath)).appendingPathComponent("models")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".xml") }
        #expect(names.count == 14)
    }

    @Test("every corpus model loads, and nothing Xcode wrote in them gives a warning", .needsCorpus)
    func everyModelLoadsWithoutWarnings() throws {
        let folder = URL(fileURLWithPath: try #require(corpusPath)).appendingPathComponent("models")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".xml") }
            .sorted()
        for name in names {
            let model = try ManagedObjectModel(contentsOf: folder.appendingPathComponent(name))
            #expect(model.loadWarnings.isEmpty, "\(name): \(model.loadWarnings.map(\.description))")
        }
    }

    @Test("CoreStore ColorsDemo: a transient attribute and a fetched property", .needsCorpus)
    func colorsDemo() throws {
        let model = try corpusModel("JohnEstropia__CoreStore__ColorsDemo")
        #expect(model.entities.map(\.name) == ["Palette"])
        let palette = try entity(model, "Palette")
        #expect(palette.representedClassName == "Classic_ColorsDemo_Palette")
        #expect(palette.attributes.count == 4)
        let hue = try attribute(model, "Palette", "hue")
        #expect(hue.type == .float && !hue.isOptional && hue.defaultValue == .double(0))
        let group = try attribute(model, "Palette", "colorGroup")
        #expect(group.type == .string && group.isTransient && group.isOptional)
        #expect(palette.fetchedProperties == [FetchedPropertyDescription("testFetchProperty", entityName: "Palette")])
        #expect(model.versionIdentifiers.isEmpty)
    }

    @Test("CoreStore test model: two configurations and self-referential relationships", .needsCorpus)
    func coreStoreTestModel() throws {
        let model = try corpusModel("JohnEstropia__CoreStore__CoreStoreTests-Model")
        #expect(model.entities.map(\.name) == ["TestEntity1AAA", "TestEntity2"])
        #expect(model.configurations == ["Config1": ["TestEntity1AAA"], "Config2": ["TestEntity2"]])
        #expect(try model.entities(forConfiguration: "Config2").map(\.name) == ["TestEntity2"])
        #expect(try attribute(model, "TestEntity1AAA", "testDecimal").type == .decimal)
        #expect(try attribute(model, "TestEntity1AAA", "testEntityID").type == .integer64)
        #expect(try attribute(model, "TestEntity2", "testData").type == .binaryData)
        #expect(try entity(model, "TestEntity2").attributes.allSatisfy(\.isOptional))
        let ordered = try relationship(model, "TestEntity2", "testToManyOrdered")
        #expect(ordered.isToMany && ordered.isOrdered && ordered.destinationEntityName == "TestEntity2")
        #expect(ordered.inverseName == "testToOne" && ordered.deleteRule == .nullify)
        let unordered = try relationship(model, "TestEntity1AAA", "testToManyUnordered")
        #expect(unordered.isToMany && !unordered.isOrdered && unordered.maxCount == 0)
        let toOne = try relationship(model, "TestEntity1AAA", "testToOne")
        #expect(!toOne.isToMany && toOne.maxCount == 1 && toOne.inverseName == "testToManyUnordered")
    }

    @Test("CoreStore EvolutionDemo V1: required scalars with defaults", .needsCorpus)
    func evolutionV1() throws {
        let model = try corpusModel("JohnEstropia__CoreStore__EvolutionDemo-V1")
        let creature = try entity(model, "Creature")
        #expect(creature.attributes.map(\.name) == ["dnaCode", "numberOfFlagella"])
        let flagella = try attribute(model, "Creature", "numberOfFlagella")
        #expect(flagella.type == .integer32 && !flagella.isOptional && flagella.defaultValue == .integer(2))
        #expect(try attribute(model, "Creature", "dnaCode").defaultValue == .integer(0))
    }

    @Test("CoreStore EvolutionDemo V2: Boolean defaults, and a hash that differs from V1's", .needsCorpus)
    func evolutionV2() throws {
        let model = try corpusModel("JohnEstropia__CoreStore__EvolutionDemo-V2")
        let creature = try entity(model, "Creature")
        #expect(creature.attributes.count == 5)
        let head = try attribute(model, "Creature", "hasHead")
        #expect(head.type == .boolean && head.defaultValue == .bool(true))
        #expect(try attribute(model, "Creature", "numberOfFlippers").defaultValue == .integer(2))
        let v1 = try corpusModel("JohnEstropia__CoreStore__EvolutionDemo-V1")
        #expect(v1.entityVersionHashesByName["Creature"] != model.entityVersionHashesByName["Creature"])
    }

    @Test("SwiftGen fixture: every attribute type, derived attributes, templates, index, constraint", .needsCorpus)
    func swiftGenFixture() throws {
        let model = try corpusModel("SwiftGen__SwiftGen__Model2-fixture")
        #expect(model.entities.count == 8)
        // Roots alphabetically, each followed by its descendants.
        #expect(
            model.entities.map(\.name) == [
                "AbstractEntity", "NewEntity", "AutoClassGen", "AutoExtensionGen", "ImpossibleType", "MainEntity",
                "ChildEntity", "SecondaryEntity",
            ])
        #expect(try entity(model, "AbstractEntity").isAbstract)
        #expect(try entity(model, "MainEntity").hierarchyNumbers == [6, 7])
        let types: [String: AttributeType] = [
            "int16": .integer16, "int32": .integer32, "int64": .integer64, "decimal": .decimal, "double": .double,
            "float": .float, "string": .string, "boolean": .boolean, "date": .date, "binaryData": .binaryData,
            "uuid": .uuid, "uri": .uri, "transformable": .transformable,
        ]
        for (name, type) in types { #expect(try attribute(model, "MainEntity", name).type == type, "\(name)") }
        #expect(try entity(model, "MainEntity").attributes.count == 27)
        #expect(try attribute(model, "MainEntity", "attributedString").valueClassName == "NSAttributedString")
        #expect(try attribute(model, "MainEntity", "transient").isTransient)
        #expect(try attribute(model, "MainEntity", "binaryData").userInfo == ["key": "value"])
        #expect(try attribute(model, "MainEntity", "integerOptionSet").userInfo.count == 3)
        #expect(try attribute(model, "MainEntity", "decimal").defaultValue == .decimal(0))
        #expect(!(try attribute(model, "MainEntity", "string").isOptional))

        let child = try entity(model, "ChildEntity")
        #expect(child.superentityName == "MainEntity" && child.properties.count == 33)
        #expect(child.properties.first?.name == "attributedString")  // inherited properties come first
        let canonical = try attribute(model, "ChildEntity", "canonicalOptionalString")
        #expect(
            canonical.userInfo[AttributeDescription.derivationExpressionUserInfoKey] == "canonical:(optionalString)")
        #expect(try attribute(model, "ChildEntity", "now").type == .double)
        #expect(child.userInfo == ["key": "value"])

        let oneToMany = try relationship(model, "MainEntity", "oneToMany")
        #expect(oneToMany.isToMany && oneToMany.isOrdered && oneToMany.inverseName == "oneToMany")
        let back = try relationship(model, "SecondaryEntity", "oneToMany")
        #expect(!back.isToMany && back.destinationEntityName == "MainEntity")
        #expect(try relationship(model, "SecondaryEntity", "manyToMany").isToMany)

        #expect(
            try entity(model, "MainEntity").fetchedProperties == [
                FetchedPropertyDescription(
                    "fetchedProperty", entityName: "NewEntity", predicateFormat: "true == true",
                    userInfo: ["key": "value"])
            ])
        #expect(model.fetchRequestTemplates.count == 3)
        let dictionary = try #require(model.fetchRequestTemplates["DictionaryFetchRequest"])
        #expect(dictionary.resultType == .dictionary && dictionary.predicateFormat.isEmpty)
        let objects = try #require(model.fetchRequestTemplates["ObjectFetchRequest"])
        #expect(objects.resultType == .managedObject && objects.predicateFormat == "uuid == $UUID")
        #expect(objects.includesSubentities)
        let ids = try #require(model.fetchRequestTemplates["ObjectIDFetchRequest"])
        #expect(
            ids.resultType == .managedObjectID && ids.predicateFormat == "oneToOne.name == $NAME OR string == $NEEDLE")

        #expect(model.configurations == ["Custom": ["NewEntity"]])
        let newEntity = try entity(model, "NewEntity")
        #expect(newEntity.uniquenessConstraints == [["identifier"]])
        #expect(
            newEntity.indexes == [FetchIndexDescription(name: "byIdentifierIndex", elements: [.init("identifier")])])
        #expect(newEntity.representedClassName == "CheckedNewEntity")
    }

    @Test("CoreDataPlus SampleModel: three-level inheritance, compound constraint, transformable", .needsCorpus)
    func coreDataPlusSampleModel() throws {
        let model = try corpusModel("alemar11__CoreDataPlus__SampleModel")
        #expect(model.entities.map(\.name) == ["Car", "SportCar", "ExpensiveSportCar", "Person"])
        #expect(model.versionIdentifiers == ["1"])
        let expensive = try entity(model, "ExpensiveSportCar")
        #expect(expensive.superentityName == "SportCar" && expensive.rootEntityName == "Car")
        #expect(expensive.properties.count == 8)
        #expect(expensive.isKind(of: try entity(model, "Car")))
        #expect(try entity(model, "Car").uniquenessConstraints == [["numberPlate"]])
        #expect(try entity(model, "Person").uniquenessConstraints == [["firstName", "lastName"]])
        let color = try attribute(model, "Car", "color")
        #expect(color.type == .transformable && color.valueTransformerName == "ColorTransformer")
        #expect(color.valueClassName == "Color")
        #expect(try attribute(model, "Car", "currentDrivingSpeed").isTransient)
        let id = try attribute(model, "Person", "id")
        #expect(id.type == .uuid && !id.isOptional)
        let owner = try relationship(model, "Car", "owner")
        #expect(owner.destinationEntityName == "Person" && owner.inverseName == "cars" && owner.deleteRule == .nullify)
        #expect(try relationship(model, "Person", "cars").isToMany)
    }

    @Test("CoreDataPlus SampleModel2: fetch index, renaming identifier, changed hashes", .needsCorpus)
    func coreDataPlusSampleModel2() throws {
        let model = try corpusModel("alemar11__CoreDataPlus__SampleModel2")
        #expect(model.entities.map(\.name) == ["Car", "SportCar", "LuxuryCar", "Person"])
        #expect(model.versionIdentifiers == ["2"])
        #expect(try entity(model, "LuxuryCar").renamingIdentifier == "ExpensiveSportCar")
        #expect(
            try entity(model, "Car").indexes == [
                FetchIndexDescription(name: "byMakerAndNumberPlate", elements: [.init("maker"), .init("numberPlate")])
            ])
        let v1 = try corpusModel("alemar11__CoreDataPlus__SampleModel")
        // Car lost its stored `color` attribute, so its hash moves.
        #expect(v1.entityVersionHashesByName["Car"] != model.entityVersionHashesByName["Car"])
        #expect(v1.versionHash != model.versionHash)
    }

    @Test("FreeCoreData EmployeeDirectory: abstract Person, many-to-many, No Action", .needsCorpus)
    func employeeDirectory() throws {
        let model = try corpusModel("ashalkhakov__FreeCoreData__EmployeeDirectory")
        #expect(model.entities.map(\.name) == ["Department", "Person", "Contractor", "Employee", "Project"])
        let person = try entity(model, "Person")
        #expect(person.isAbstract && person.subentityNames == ["Contractor", "Employee"])
        #expect(person.hierarchyNumbers == [2, 3, 4])
        #expect(try attribute(model, "Person", "fullName").isTransient)
        #expect(!(try attribute(model, "Person", "firstName").isOptional))
        let salary = try attribute(model, "Employee", "salary")
        #expect(salary.type == .integer32 && salary.validation.minimum == .integer(0))
        let projects = try relationship(model, "Employee", "projects")
        #expect(projects.isToMany && projects.inverseName == "members" && projects.deleteRule == .noAction)
        let members = try relationship(model, "Project", "members")
        #expect(members.isToMany && members.inverseName == "projects")
        #expect(try relationship(model, "Department", "employees").deleteRule == .noAction)
        #expect(try entity(model, "Employee").properties.count == 7)
    }

    @Test("DuckDuckGo BrowsingHistory: URI with a transformer, renaming identifier, cascade", .needsCorpus)
    func browsingHistory() throws {
        let model = try corpusModel("duckduckgo__BrowserServicesKit__BrowsingHistory")
        #expect(model.entities.count == 2)
        let url = try attribute(model, "BrowsingHistoryEntryManagedObject", "url")
        #expect(url.type == .uri && url.valueTransformerName == "NSURLTransformer" && !url.isOptional)
        let visits = try attribute(model, "BrowsingHistoryEntryManagedObject", "numberOfTotalVisits")
        #expect(visits.renamingIdentifier == "numberOfVisits" && visits.defaultValue == .integer(0))
        #expect(try attribute(model, "BrowsingHistoryEntryManagedObject", "failedToLoad").defaultValue == .bool(false))
        let toVisits = try relationship(model, "BrowsingHistoryEntryManagedObject", "visits")
        #expect(toVisits.deleteRule == .cascade && toVisits.isToMany && toVisits.inverseName == "historyEntry")
        let entry = try relationship(model, "PageVisitManagedObject", "historyEntry")
        #expect(!entry.isOptional && entry.minCount == 1 && entry.maxCount == 1)
    }

    @Test("DuckDuckGo SyncMetadata 4: unique constraints and fetch indexes", .needsCorpus)
    func syncMetadata() throws {
        let model = try corpusModel("duckduckgo__BrowserServicesKit__SyncMetadata4")
        #expect(model.entities.map(\.name) == ["SyncFeatureEntity", "SyncableSettingsMetadata"])
        let settings = try entity(model, "SyncableSettingsMetadata")
        #expect(settings.uniquenessConstraints == [["key"]])
        #expect(settings.indexes.map(\.name) == ["byKey"])
        let feature = try entity(model, "SyncFeatureEntity")
        #expect(feature.uniquenessConstraints == [["name"]])
        #expect(feature.indexes == [FetchIndexDescription(name: "byName", elements: [.init("name", ascending: true)])])
        #expect(try attribute(model, "SyncFeatureEntity", "lastSyncLocalTimestamp").type == .date)
    }

    @Test("MagicalRecord test model: abstract parent, userInfo, defaults, relationships without inverses", .needsCorpus)
    func magicalRecord() throws {
        let model = try corpusModel("magicalpanda__MagicalRecord__MagicalRecord-TestModel")
        #expect(model.entities.count == 12)
        #expect(try entity(model, "AbstractRelatedEntity").isAbstract)
        #expect(try entity(model, "ConcreteRelatedEntity").superentityName == "AbstractRelatedEntity")
        #expect(try entity(model, "MappedEntity").userInfo == ["relatedByAttribute": "mapped"])
        let single = try entity(model, "SingleEntityWithNoRelationships")
        #expect(single.attributes.count == 18 && single.relationships.isEmpty)
        let note = try attribute(model, "SingleEntityWithNoRelationships", "notInJsonAttribute")
        #expect(note.defaultValue == .string("Set From Core Data Model Editor"))
        #expect(
            try attribute(model, "SingleEntityWithNoRelationships", "nullTestAttribute").defaultValue == .integer(100))
        #expect(
            try attribute(model, "SingleEntityWithNoRelationships", "decimalTestAttribute").defaultValue == .decimal(0))
        #expect(try attribute(model, "SingleEntityWithNoRelationships", "colorTestAttribute").type == .transformable)
        let mapped = try attribute(
            model, "SingleEntityRelatedToMappedEntityWithSecondaryMappings", "secondaryMappedAttribute")
        #expect(mapped.userInfo["mappedKeyName.2"] == "actualMappedKey" && mapped.userInfo.count == 3)
        let related = try entity(model, "SingleRelatedEntity")
        #expect(related.relationships.count == 4)
        #expect(related.relationships.allSatisfy { $0.deleteRule == .cascade && $0.inverseName == nil })
        let toOne = try relationship(model, "SingleRelatedEntity", "testAbstractToOneRelationship")
        #expect(toOne.isOptional && toOne.minCount == 1 && toOne.maxCount == 1)
        #expect(
            try attribute(model, "SingleEntityRelatedToMappedEntityWithSecondaryMappings", "notImportedAttribute")
                .defaultValue == .bool(true))
    }

    @Test("MIOCoreData test model: required attributes, UUID, scalar default", .needsCorpus)
    func mioCoreData() throws {
        let model = try corpusModel("miolabs__MIOCoreData__MIOCoreData-TestModel")
        let simple = try entity(model, "SimpleEntity")
        #expect(model.entities.count == 1 && simple.attributes.count == 3)
        #expect(simple.attributes.allSatisfy { !$0.isOptional })
        #expect(try attribute(model, "SimpleEntity", "identifier").type == .uuid)
        let type = try attribute(model, "SimpleEntity", "type")
        #expect(type.type == .integer16 && type.defaultValue == .integer(0))
    }

    @Test("mogenerator Swift test: a fetch template and a cascading to-many", .needsCorpus)
    func mogenSwiftTest() throws {
        let model = try corpusModel("rentzsch__mogenerator__MogenSwiftTest")
        #expect(model.entities.map(\.name) == ["MyEntity", "UnorderedToManyDst", "UnorderedToManySrc"])
        #expect(
            model.fetchRequestTemplates == [
                "allUnorderedToManySrcs": FetchRequestTemplate(entityName: "UnorderedToManySrc", predicateFormat: "")
            ])
        let source = try relationship(model, "UnorderedToManySrc", "relationship")
        #expect(source.isToMany && source.deleteRule == .cascade && source.inverseName == "relationship")
        let destination = try relationship(model, "UnorderedToManyDst", "relationship")
        #expect(!destination.isToMany && destination.deleteRule == .nullify)
        #expect(try attribute(model, "MyEntity", "integerAttribute").defaultValue == .integer(0))
    }

    @Test("mogenerator test model: inheritance, ordered to-many, templates with variables, userInfo", .needsCorpus)
    func mogeneratorTest() throws {
        let model = try corpusModel("rentzsch__mogenerator__mogenerator-test")
        #expect(
            model.entities.map(\.name) == [
                "EntitySansCustomClass", "EntitySansCustomClass2", "ConcreteEntityWithCustomClass1",
                "ConcreteEntityWithCustomClass2", "EntityWithBaseClass", "Human", "Child", "Parent", "Uncle",
            ])
        let human = try entity(model, "Human")
        #expect(human.subentityNames == ["Child", "Parent", "Uncle"])
        #expect(human.userInfo["key with.dots..."] == "value with \"quotes\"")
        let age = try attribute(model, "Human", "age")
        #expect(!age.isOptional && age.validation.minimum == .integer(0) && age.defaultValue == .integer(0))
        #expect(age.userInfo == ["mogenerator.readonly": "true"])
        let parent = try entity(model, "Parent")
        #expect(parent.properties.count == 19)
        #expect(parent.properties.prefix(4).map(\.name) == ["age", "gender", "humanName", "meaninglessRelationship"])
        #expect(try attribute(model, "Parent", "myInt16Transient").isTransient)
        #expect(try attribute(model, "Parent", "myDecimal").type == .decimal)
        let ordered = try relationship(model, "Parent", "orderedChildren")
        #expect(ordered.isOrdered && ordered.deleteRule == .cascade && ordered.inverseName == "parent")
        #expect(try relationship(model, "Parent", "children").inverseName == nil)
        #expect(try relationship(model, "Child", "parent").inverseName == "orderedChildren")
        #expect(model.fetchRequestTemplates.count == 5)
        #expect(model.fetchRequestTemplates["byParentName"]?.predicateFormat == "parent.parentName == $parentName")
        #expect(model.fetchRequestTemplates["byParent"]?.entityName == "Child")
    }
}
