import Foundation
import StrataInMemory
import StrataTesting
import Testing

@testable import Strata

/// Transient attributes are never stored, also on a save's fastest insert path: objects of
/// entities without relationships get their rows while they get their keys.
@Suite("Transient attributes of inserted objects")
struct TransientInsertTests {
    @Test("inserted objects of an entity without relationships save null for their transient attribute")
    func transientNotStored() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Note",
                properties: [.attribute("text", .string), .attribute("scratch", .string, isTransient: true)])
        ])
        let directory = try TemporaryDirectory(prefix: "transient")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .inMemory, at: directory.file("store"))
        let context = ManagedObjectContext(coordinator: coordinator)
        let notes = try (0..<100).map { n -> ManagedObject in
            let note = try context.insertNewObject(forEntityName: "Note")
            note["text"] = "note \(n)"
            note["scratch"] = "scratch \(n)"
            return note
        }
        try context.save()
        #expect(notes[0]["scratch"] as? String == "scratch 0", "the object keeps its transient value")
        // Read back past the row cache: what the driver holds.
        coordinator.rowCache.removeAll(in: ObjectIdentifier(store))
        let rows = try store.driver.rows(for: notes.map(\.objectID.rowID))
        #expect(rows.count == 100)
        let scratch = try #require(model.entity(named: "Note")?.index(ofProperty: "scratch"))
        let text = try #require(model.entity(named: "Note")?.index(ofProperty: "text"))
        #expect(rows.allSatisfy { $0.values[scratch] == .null }, "no transient value reached the store")
        #expect(Set(rows.map { $0.values[text] }).count == 100)
        let again = try ManagedObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Note"))
        #expect(again.count == 100 && again.allSatisfy { $0["scratch"] == nil })
    }
}
