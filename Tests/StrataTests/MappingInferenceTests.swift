import Foundation
import Strata
import StrataTesting
import Testing

private func model(_ entities: [EntityDescription]) throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: entities)
}

private func changes(_ source: ManagedObjectModel, _ destination: ManagedObjectModel) -> [String] {
    do {
        _ = try MappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        return []
    } catch let error as MigrationError {
        return error.code == .inferenceFailed ? error.changes : ["unexpected \(error)"]
    } catch {
        return ["unexpected \(error)"]
    }
}

@Suite("Inferred mapping models")
struct MappingInferenceTests {
    @Test(
        "the model change of MigrationModels is inferred: a transform per entity named as Core Data names it, with Core Data's expressions"
    )
    func issueChange() throws {
        let mapping = try MappingModel.inferredMappingModel(
            forSourceModel: MigrationModels.version1, destinationModel: MigrationModels.version2)
        #expect(mapping.isInferred)
        #expect(
            Set(mapping.entityMappings.map(\.name))
                == ["IEM_Transform_Person", "IEM_Transform_Employee", "IEM_Transform_Pet", "IEM_Transform_Club"])
        let member = try #require(mapping.entityMappings.first { $0.destinationEntityName == "Member" })
        #expect(member.name == "IEM_Transform_Person")
        #expect(member.mappingType == .transform)
        #expect(member.sourceEntityName == "Person")
        let town = try #require(member.attributeMappings.first { $0.name == "town" })
        #expect(town.valueExpression.map { "\($0)" } == #"FUNCTION($source, "valueForKey:", "city")"#)
        let status = try #require(member.attributeMappings.first { $0.name == "status" })
        #expect(status.valueExpression == nil)
        let pets = try #require(member.relationshipMappings.first { $0.name == "pets" })
        #expect(
            pets.valueExpression.map { "\($0)" }
                == #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "pets", FUNCTION($source, "valueForKey:", "pets"))"#
        )
        #expect(!member.attributeMappings.contains { $0.name == "nickname" })
    }

    @Test("an unchanged entity is a copy, a new one an add, a dropped one a remove")
    func mappingTypes() throws {
        let a = try model([EntityDescription("Keep", properties: [.attribute("x", .string)]), EntityDescription("Old")])
        let b = try model([EntityDescription("Keep", properties: [.attribute("x", .string)]), EntityDescription("New")])
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: a, destinationModel: b)
        #expect(mapping.entityMappings.map(\.name).sorted() == ["IEM_Add_New", "IEM_Copy_Keep", "IEM_Remove_Old"])
        #expect(mapping.entityMapping(named: "IEM_Remove_Old")?.mappingType == .remove)
        #expect(mapping.entityMapping(named: "IEM_Add_New")?.sourceEntityName == nil)
    }

    @Test("numbers and Booleans convert both ways; every other type change is listed as needing a mapping model")
    func typeChanges() throws {
        let numeric: [AttributeType] = [.integer16, .integer32, .integer64, .decimal, .double, .float, .boolean]
        for from in numeric {
            for to in numeric {
                let a = try model([EntityDescription("E", properties: [.attribute("v", from)])])
                let b = try model([EntityDescription("E", properties: [.attribute("v", to)])])
                #expect(changes(a, b).isEmpty, "\(from) → \(to)")
            }
        }
        for (from, to) in [
            (AttributeType.string, AttributeType.integer32), (.date, .double), (.integer64, .string),
            (.binaryData, .string), (.uuid, .string),
        ] {
            let a = try model([EntityDescription("E", properties: [.attribute("v", from)])])
            let b = try model([EntityDescription("E", properties: [.attribute("v", to)])])
            let listed = changes(a, b)
            #expect(
                listed.count == 1 && listed[0].contains("E.v") && listed[0].contains(to.xcodeName),
                "\(from) → \(to): \(listed)")
        }
    }

    @Test("Binary ↔ Transformable is inferred only when the destination attribute's user info allows it")
    func transformableToBinary() throws {
        let a = try model([EntityDescription("E", properties: [.attribute("v", .transformable)])])
        let plain = try model([EntityDescription("E", properties: [.attribute("v", .binaryData)])])
        #expect(changes(a, plain).count == 1)
        var allowed = AttributeDescription("v", .binaryData)
        allowed.userInfo = ["NSMigrationAllowTypeTransformation": "YES"]
        #expect(changes(a, try model([EntityDescription("E", properties: [.attribute(allowed)])])).isEmpty)
    }

    @Test("every change that cannot be inferred is listed in one error")
    func severalChanges() throws {
        let a = try model([
            EntityDescription("A", properties: [.attribute("text", .string), .toMany("bs", "B", inverse: "a")]),
            EntityDescription("B", properties: [.toOne("a", "A", inverse: "bs")]),
            EntityDescription("C", properties: [.attribute("when", .date)]),
        ])
        let b = try model([
            EntityDescription("A", properties: [.attribute("text", .integer32), .toOne("bs", "B", inverse: "a")]),
            EntityDescription("B", properties: [.toOne("a", "A", inverse: "bs")]),
            EntityDescription("C", properties: [.attribute("when", .string)]),
        ])
        let listed = changes(a, b)
        #expect(listed.count == 3, "\(listed)")
        #expect(listed.contains { $0.contains("A.text") })
        #expect(listed.contains { $0.contains("A.bs") && $0.contains("to-one") })
        #expect(listed.contains { $0.contains("C.when") })
    }

    @Test("merging two source hierarchies into one is refused; adding a parent above one is inferred")
    func hierarchies() throws {
        let a = try model([EntityDescription("Cat"), EntityDescription("Dog")])
        let merged = try model([
            EntityDescription("Animal"), EntityDescription("Cat", parent: "Animal"),
            EntityDescription("Dog", parent: "Animal"),
        ])
        let listed = changes(a, merged)
        #expect(listed.count == 1 && listed[0].contains("Animal") && listed[0].contains("merged"), "\(listed)")
        let one = try model([EntityDescription("Cat")])
        let parented = try model([EntityDescription("Animal"), EntityDescription("Cat", parent: "Animal")])
        #expect(changes(one, parented).isEmpty)
        #expect(changes(parented, one).isEmpty)
    }

    @Test("duplicate renaming identifiers and a relationship whose destination changed are listed")
    func identifiersAndDestinations() throws {
        let a = try model([
            EntityDescription("A", properties: [.toOne("b", "B")]), EntityDescription("B"), EntityDescription("C"),
        ])
        let b = try model([
            EntityDescription("A", properties: [.toOne("b", "C")]), EntityDescription("B"), EntityDescription("C"),
            EntityDescription("D", renamingIdentifier: "C"),
        ])
        let listed = changes(a, b)
        #expect(listed.contains { $0.contains("renaming identifier 'C'") }, "\(listed)")
        #expect(listed.contains { $0.contains("A.b") && $0.contains("destination") }, "\(listed)")
    }

    @Test("a mapping expression parses with FUNCTION, prints back the same, and a fetch refuses FUNCTION")
    func mappingExpressions() throws {
        let text =
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#
        let expression = try FetchExpression(mappingFormat: text)
        #expect("\(expression)" == text)
        #expect(throws: FetchPredicateError.self) { try FetchExpression(format: text) }
        #expect(throws: FetchPredicateError.self) {
            try FetchExpression(mappingFormat: #"FUNCTION($source, "valueForKey:")"#)
        }
        #expect(throws: FetchPredicateError.self) { try FetchExpression(mappingFormat: #"FUNCTION($source, 3, "x")"#) }
        let mapping = try PropertyMapping(name: "name", format: "$source.name")
        #expect(mapping.valueExpression == .member(.variable("source"), "name"))
    }

    @Test("a mapping model with two mappings of one name is refused")
    func duplicateNames() {
        #expect(throws: MigrationError.self) {
            try MappingModel(entityMappings: [
                EntityMapping(name: "X", mappingType: .add, destinationEntityName: "A"),
                EntityMapping(name: "X", mappingType: .add, destinationEntityName: "B"),
            ])
        }
    }
}
