import Foundation
import Strata
import Testing

@testable import StrataSQLite

/// The decoded model cache of SampleModel_V1.sqlite against its Xcode source,
/// corpus/models/alemar11__CoreDataPlus__SampleModel.xcdatamodel.xml (expectations written by
/// reading that file).
@Suite("SampleModel_V1 model cache matches its Xcode model", .enabled(if: Corpus.isAvailable))
struct SampleModelDecodingTests {
    let model: ManagedObjectModel

    init() throws {
        let recovered = try StoreModelRecovery.recoverModel(
            fromStoreAt: try Corpus.copyOfStore("SampleModel_V1.sqlite"))
        #expect(recovered.source == .modelCache)
        model = recovered.model
    }

    @Test("entities, numbers and inheritance match")
    func entities() throws {
        #expect(model.entities.map(\.name) == ["Car", "SportCar", "ExpensiveSportCar", "Person"])
        #expect(model.entities.map(\.entityNumber) == [1, 2, 3, 4])
        #expect(model.entity(named: "Car")?.superentityName == nil)
        #expect(model.entity(named: "SportCar")?.superentityName == "Car")
        #expect(model.entity(named: "ExpensiveSportCar")?.superentityName == "SportCar")
        #expect(model.entity(named: "Person")?.superentityName == nil)
        #expect(model.entities.allSatisfy { !$0.isAbstract })
        #expect(model.entity(named: "SportCar")?.ownProperties.isEmpty == true)
        #expect(model.entity(named: "Car")?.representedClassName == "Car")
    }

    @Test("attributes have Xcode's types, optionality, transience and defaults")
    func attributes() throws {
        let car = try #require(model.entity(named: "Car")).attributesByName
        #expect(
            Set(car.keys) == ["color", "currentDrivingSpeed", "maker", "markedForDeletionAsOf", "model", "numberPlate"])
        #expect(car["color"]?.type == .transformable)
        #expect(car["color"]?.valueTransformerName == "ColorTransformer")
        #expect(car["currentDrivingSpeed"]?.type == .integer64)
        #expect(car["currentDrivingSpeed"]?.isTransient == true)
        #expect(car["currentDrivingSpeed"]?.defaultValue == .integer(0))
        #expect(car["maker"]?.type == .string)
        #expect(car["markedForDeletionAsOf"]?.type == .date)
        #expect(car["model"]?.type == .string)
        #expect(car["numberPlate"]?.type == .string)
        #expect(car["numberPlate"]?.isOptional == false)
        #expect(car["maker"]?.isOptional == true)

        let expensive = try #require(model.entity(named: "ExpensiveSportCar"))
        #expect(expensive.ownProperties.map(\.name) == ["isLimitedEdition"])
        #expect(expensive.attributesByName["isLimitedEdition"]?.type == .boolean)
        #expect(expensive.attributesByName["isLimitedEdition"]?.defaultValue == .bool(false))
        #expect(expensive.attributesByName["numberPlate"]?.type == .string)

        let person = try #require(model.entity(named: "Person")).attributesByName
        #expect(Set(person.keys) == ["firstName", "id", "isDriving", "lastName", "updatedAt"])
        #expect(person["id"]?.type == .uuid)
        #expect(person["id"]?.isOptional == false)
        #expect(person["isDriving"]?.type == .boolean)
        #expect(person["isDriving"]?.isTransient == true)
        #expect(person["isDriving"]?.isOptional == false)
        #expect(person["updatedAt"]?.type == .date)
        #expect(person["updatedAt"]?.isOptional == false)
        #expect(person["firstName"]?.type == .string)
        #expect(person["lastName"]?.type == .string)
    }

    @Test("relationships have destinations, inverses, cardinality and delete rules")
    func relationships() throws {
        let owner = try #require(model.entity(named: "Car")?.relationshipsByName["owner"])
        #expect(owner.destinationEntityName == "Person")
        #expect(owner.inverseName == "cars")
        #expect(!owner.isToMany)
        #expect(owner.maxCount == 1)
        #expect(owner.isOptional)
        #expect(owner.deleteRule == .nullify)
        #expect(model.entity(named: "ExpensiveSportCar")?.relationshipsByName["owner"] == owner)

        let cars = try #require(model.entity(named: "Person")?.relationshipsByName["cars"])
        #expect(cars.destinationEntityName == "Car")
        #expect(cars.inverseName == "owner")
        #expect(cars.isToMany)
        #expect(!cars.isOrdered)
        #expect(cars.isOptional)
        #expect(cars.deleteRule == .nullify)
    }

    @Test("unique constraints match")
    func constraints() throws {
        #expect(model.entity(named: "Car")?.uniquenessConstraints == [["numberPlate"]])
        #expect(model.entity(named: "Person")?.uniquenessConstraints == [["firstName", "lastName"]])
        #expect(model.versionIdentifiers == ["1"])
    }
}
