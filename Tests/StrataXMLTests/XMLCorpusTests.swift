import Foundation
import Strata
import StrataInMemory
import StrataTesting
import StrataXML
import Testing

@Suite("XML corpus store")
struct XMLCorpusTests {
    static let corpus = ProcessInfo.processInfo.environment["STRATA_CORPUS"]

    static var mappingModel: URL {
        URL(fileURLWithPath: corpus ?? "/nonexistent").appendingPathComponent(
            "xml/alemar11__CoreDataPlus__V2toV3.xcmapping.xml")
    }

    @Test(
        "Xcode's mapping-model store opens without a model, with entities and inverses inferred",
        .enabled(if: corpus != nil))
    func inferredModel() throws {
        let recovered = try #require(
            try XMLDriverFactory().recoverModel(at: Self.mappingModel, options: StoreOptions()))
        #expect(recovered.source == .inferred)
        #expect(recovered.requiresReadOnly)
        let model = recovered.model
        #expect(
            Set(model.entities.map(\.name)) == [
                "XDDevAttributeMapping", "XDDevEntityMapping", "XDDevMappingModel", "XDDevRelationshipMapping",
            ])
        let entityMapping = try #require(model.entity(named: "XDDevEntityMapping"))
        #expect(entityMapping.attributesByName["mappingnumber"]?.type == .integer16)
        #expect(entityMapping.attributesByName["autogenerateexpression"]?.type == .boolean)
        let attributeMappings = try #require(entityMapping.relationshipsByName["attributemappings"])
        #expect(attributeMappings.isToMany)
        #expect(attributeMappings.destinationEntityName == "XDDevAttributeMapping")
        #expect(attributeMappings.inverseName == "entitymapping")
        let back = try #require(model.entity(named: "XDDevAttributeMapping")?.relationshipsByName["entitymapping"])
        #expect(!back.isToMany)
        #expect(back.inverseName == "attributemappings")
        #expect(
            model.entity(named: "XDDevRelationshipMapping")?.attributesByName["valueexpressiondata"]?.type
                == .binaryData)
    }

    @Test(
        "converting the corpus store to the in-memory driver and back to XML keeps every object, value and relationship",
        .enabled(if: corpus != nil))
    func roundTrip() throws {
        let directory = try TemporaryDirectory(prefix: "xml-corpus")
        let model = try #require(try XMLDriverFactory().recoverModel(at: Self.mappingModel, options: StoreOptions()))
            .model
        let source = PersistentStoreCoordinator(managedObjectModel: model)
        let sourceStore = try source.addPersistentStore(
            type: .xml, at: Self.mappingModel, options: StoreOptions(isReadOnly: true))
        #expect(sourceStore.identifier == "498313E6-D672-4887-A947-08765F4F1012")
        #expect(sourceStore.metadata.values["NSPersistenceFrameworkVersion"] == .integer(1044))
        #expect(sourceStore.metadata.entityVersionHashes.count == 5)
        let original = try XMLTestSupport.allRows(sourceStore.driver, model: model)
        #expect(original.count == 32)

        // XML → in-memory → a new XML file, row for row.
        let memory = PersistentStoreCoordinator(managedObjectModel: model)
        let memoryStore = try memory.addPersistentStore(
            type: .inMemory, at: URL(string: "memory://xml-corpus-\(UUID().uuidString)"))
        var batch = ChangeBatch()
        batch.inserts = Array(original.values)
        _ = try memoryStore.driver.apply(batch)
        let copied = try XMLTestSupport.allRows(memoryStore.driver, model: model)
        let outURL = directory.file("out.xml")
        let target = PersistentStoreCoordinator(managedObjectModel: model)
        let targetStore = try target.addPersistentStore(type: .xml, at: outURL)
        batch.inserts = Array(copied.values)
        _ = try targetStore.driver.apply(batch)
        try target.remove(targetStore)

        // Reopen and compare: same ids, same values, same relationships.
        let reopened = PersistentStoreCoordinator(managedObjectModel: model)
        let reopenedStore = try reopened.addPersistentStore(
            type: .xml, at: outURL, options: StoreOptions(isReadOnly: true))
        let again = try XMLTestSupport.allRows(reopenedStore.driver, model: model)
        #expect(again.count == original.count)
        for (id, row) in original {
            #expect(try #require(again[id]).values == row.values, "object z\(id.primaryKey)")
        }
        // And through a context: object z103 as the corpus file has it.
        let context = ManagedObjectContext(coordinator: reopened)
        let mapping = try #require(
            try context.fetch(FetchRequest(entityName: "XDDevEntityMapping")).first { $0.objectID.primaryKey == 103 })
        #expect(mapping["sourcename"] as? String == "SportCar")
        #expect(mapping["migrationpolicyclassname"] as? String == "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        #expect(mapping["mappingnumber"] as? Int == 4)
        #expect(mapping["autogenerateexpression"] as? Bool == true)
        #expect(Set(mapping.objects(forKey: "attributemappings").map(\.objectID.primaryKey)) == [113, 114, 133])
        #expect(mapping.object(forKey: "mappingmodel")?.objectID.primaryKey == 129)
        // The rewritten file infers the same model.
        let inferredAgain = try #require(try XMLDriverFactory().recoverModel(at: outURL, options: StoreOptions())).model
        #expect(inferredAgain.entities.map(\.name) == model.entities.map(\.name))
        #expect(
            inferredAgain.entities.map { $0.properties.map(\.name).sorted() }
                == model.entities.map { $0.properties.map(\.name).sorted() })
    }
}
