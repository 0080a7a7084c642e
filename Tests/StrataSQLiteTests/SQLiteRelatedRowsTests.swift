import Foundation
import Strata
import StrataTesting
import Testing

/// `relatedRowsWithDestinations` hands over each destination row once, whether repeats are found
/// by looking along the first few rows or, past them, in a set.
@Suite("SQLite driver: related rows with destinations")
struct SQLiteRelatedRowsTests {
    static func model() throws -> ManagedObjectModel {
        let tag = EntityDescription(
            "Tag", properties: [.attribute("name", .string), .toMany("items", "Item", inverse: "tags")])
        let item = EntityDescription(
            "Item", properties: [.attribute("value", .integer64), .toMany("tags", "Tag", inverse: "items")])
        return try ManagedObjectModel(entities: [tag, item])
    }

    @Test("every item in three tags, asked for from all three: each row once, members in full, past the linear look")
    func repeatsAcrossSources() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-related")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        let store = try coordinator.addPersistentStore(type: .sqlite, at: directory.file("tags.sqlite"))
        let context = ManagedObjectContext(coordinator: coordinator)
        let tags = try (0..<3).map { index -> ManagedObject in
            let tag = try context.insertNewObject(forEntityName: "Tag")
            tag["name"] = "tag \(index)"
            return tag
        }
        // 40 items: more than the rows looked along before a set takes over.
        for value in 0..<40 {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["value"] = Int64(value)
            for tag in tags { tag.addObject(item, toRelationship: "items") }
        }
        try context.save()

        let tag = try #require(coordinator.managedObjectModel.entity(named: "Tag"))
        let slot = try #require(tag.index(ofProperty: "items"))
        let sources = tags.map(\.objectID.rowID)
        let request = RelatedRowsRequest(entity: tag, slot: slot, sources: sources)
        let related = try store.driver.relatedRowsWithDestinations(request)
        #expect(related.rows.count == 40, "one row per item")
        #expect(Set(related.rows.map(\.id)).count == 40)
        for source in sources { #expect(related.members[source]?.count == 40) }
        let values = related.rows.compactMap { row -> Int64? in
            guard case .integer(let value) = row.values[0] else { return nil }
            return value
        }
        #expect(values.sorted() == Array(0..<40))

        // One source: no repeats, every row still once.
        let one = try store.driver.relatedRowsWithDestinations(
            RelatedRowsRequest(entity: tag, slot: slot, sources: [sources[0]]))
        #expect(one.rows.count == 40 && Set(one.rows.map(\.id)).count == 40)
    }

    @Test("a source asked for twice, in two chunks of the statement: its members and their rows once")
    func repeatedSourceAcrossChunks() throws {
        let parent = EntityDescription(
            "Parent", properties: [.attribute("name", .string), .toMany("children", "Child", inverse: "parent")])
        let child = EntityDescription(
            "Child", properties: [.attribute("value", .integer64), .toOne("parent", "Parent", inverse: "children")])
        let directory = try TemporaryDirectory(prefix: "sqlite-related")
        let coordinator = PersistentStoreCoordinator(
            managedObjectModel: try ManagedObjectModel(entities: [parent, child]))
        let store = try coordinator.addPersistentStore(type: .sqlite, at: directory.file("parents.sqlite"))
        let context = ManagedObjectContext(coordinator: coordinator)
        // More parents than one statement asks for (500 keys), two children each.
        let parents = try (0..<600).map { index -> ManagedObject in
            let object = try context.insertNewObject(forEntityName: "Parent")
            object["name"] = "parent \(index)"
            for value in 0..<2 {
                let member = try context.insertNewObject(forEntityName: "Child")
                member["value"] = Int64(index * 2 + value)
                member["parent"] = object
            }
            return object
        }
        try context.save()
        let entity = try #require(coordinator.managedObjectModel.entity(named: "Parent"))
        let slot = try #require(entity.index(ofProperty: "children"))
        // The first parent again at the end: its key falls in the second chunk too.
        let sources = parents.map(\.objectID.rowID) + [parents[0].objectID.rowID]
        let request = RelatedRowsRequest(entity: entity, slot: slot, sources: sources)
        let related = try store.driver.relatedRowsWithDestinations(request)
        #expect(related.rows.count == 1_200, "one row per child")
        #expect(Set(related.rows.map(\.id)).count == 1_200)
        #expect(related.members[parents[0].objectID.rowID]?.count == 2, "the repeated source's members once")
        #expect(related.members.values.allSatisfy { $0.count == 2 })
        #expect(try store.driver.relatedRows(request) == related.members)
    }
}
