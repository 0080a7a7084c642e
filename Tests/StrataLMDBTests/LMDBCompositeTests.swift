import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

/// Composite attributes in an LMDB store: each leaf element is a slot of its own, so indexes,
/// constraints and index plans work on element key paths.
@Suite("LMDB composite attributes")
struct LMDBCompositeTests {
    @Test("an indexed element and a constraint on an element get indexes, which predicates and sorts use")
    func indexedElements() throws {
        let position = AttributeDescription.composite(
            "position",
            elements: [AttributeDescription("x", .double, isIndexed: true), AttributeDescription("y", .double)])
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Point", properties: [.attribute("name", .string), .attribute(position)],
                uniquenessConstraints: [["position.y"]])
        ])
        let directory = try TemporaryDirectory(prefix: "lmdb-composite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .lmdb, at: directory.file("points.lmdb"))
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<50 {
            let point = try context.insertNewObject(forEntityName: "Point")
            point["name"] = "p\(index)"
            point.setValue(["x": Double(index % 10), "y": Double(index)] as [String: Any], forKey: "position")
        }
        try context.save()
        // The coordinator attached an LMDB store.
        let driver = store.driver as! LMDBDriver
        #expect(driver.layout.indexes.map(\.name) == ["Point:unique:position.y", "Point:attribute:position.x"])
        let point = try #require(model.entity(named: "Point"))
        for (format, count) in [("position.x == 3", 5), ("position.y > 44.5", 5), ("position.x BETWEEN {8, 9}", 10)] {
            let predicate = try FetchPredicate(format: format)
            var request = StoreFetch(entity: point)
            request.predicate = predicate
            if case .scan = QueryPlan.make(
                predicate, entity: point, entities: request.entityNumbers, layout: driver.layout)
            {
                Issue.record("\(format) did not use an index")
            }
            #expect(try driver.fetch(request).rows.count == count, "\(format)")
        }
        var sorted = FetchRequest(
            entityName: "Point", sortKeys: [SortKey("position.x", ascending: false), SortKey("name")])
        sorted.fetchLimit = 3
        #expect(try context.fetch(sorted).map { $0.value(forKey: "name") as? String } == ["p19", "p29", "p39"])
        let duplicate = try context.insertNewObject(forEntityName: "Point")
        duplicate.setValue(["y": 7.0] as [String: Any], forKey: "position")
        #expect(throws: (any Error).self) { try context.save() }
    }
}
