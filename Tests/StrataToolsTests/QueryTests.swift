import Foundation
import Strata
import StrataInMemory
import StrataTools
import Testing

@Suite("strata query: property names that clash with row keys")
struct QueryKeyClashTests {
    @Test("an attribute named id is written as _id beside the object URI")
    func idAttribute() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Thing", properties: [.attribute("id", .string), .attribute("entity", .integer16)])
        ])
        let location = memoryLocation("clash")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, at: location.url)
        let context = ManagedObjectContext(coordinator: coordinator)
        let thing = try context.insertNewObject(forEntityName: "Thing")
        thing["id"] = "A-1"
        thing["entity"] = 7
        try context.save()
        var options = QueryOptions(entity: "Thing")
        options.format = .json
        let output = try StoreQuery.run(location, options)
        #expect(output.contains("\"_id\":\"A-1\"") || output.contains("\"_id\": \"A-1\""))
        #expect(output.contains("\"_entity\":7") || output.contains("\"_entity\": 7"))
        #expect(output.components(separatedBy: "\"id\"").count == 2)
    }
}
