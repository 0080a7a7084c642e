import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

/// What a save leaves of a context's inserted, updated and deleted lists, for an entity without
/// relationships (the save then skips delete rules and clears the lists on its own visits).
@Suite("Context lists across saves")
struct ContextSaveListsTests {
    static let model: ManagedObjectModel = {
        // Configured by hand, and a model no valid program changes: `try!` cannot fail here.
        try! ManagedObjectModel(entities: [
            EntityDescription("Note", properties: [.attribute("title", .string), .attribute("rank", .integer64)])
        ])
    }()

    static func stack(_ model: ManagedObjectModel = model) throws -> (PersistentStoreCoordinator, TemporaryDirectory) {
        let directory = try TemporaryDirectory(prefix: "save-lists")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, at: directory.file("notes"))
        return (coordinator, directory)
    }

    static func titles(_ coordinator: PersistentStoreCoordinator) throws -> [String: Int64] {
        let notes = try ManagedObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Note"))
        return Dictionary(
            uniqueKeysWithValues: notes.map { (($0["title"] as String?) ?? "?", ($0["rank"] as Int64?) ?? -1) })
    }

    @Test("after a save of every kind of change, the objects join the lists again and their next changes are saved")
    func listsAfterMixedSave() throws {
        let (coordinator, directory) = try Self.stack()
        defer { withExtendedLifetime(directory) {} }
        let context = ManagedObjectContext(coordinator: coordinator)
        var notes: [String: ManagedObject] = [:]
        for title in ["a", "b", "c", "d"] {
            let note = try context.insertNewObject(forEntityName: "Note")
            note["title"] = title
            note["rank"] = Int64(1)
            notes[title] = note
        }
        try context.save()
        let (a, b, c, d) = (notes["a"]!, notes["b"]!, notes["c"]!, notes["d"]!)
        let x = try context.insertNewObject(forEntityName: "Note")
        x["title"] = "x"
        x["rank"] = Int64(0)
        a["rank"] = Int64(2)
        context.delete(b)
        let y = try context.insertNewObject(forEntityName: "Note")
        y["title"] = "y"
        context.delete(y)
        c["rank"] = Int64(3)
        context.delete(c)
        // A change dropped by a refresh: the object is no longer updated, and this save does not visit it.
        d["rank"] = Int64(4)
        context.refresh(d, mergeChanges: false)
        try context.save()
        #expect(!context.hasChanges)
        #expect(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty && context.deletedObjects.isEmpty)
        #expect(!context.registeredObjects.contains(b) && !context.registeredObjects.contains(c))
        #expect(!context.registeredObjects.contains(y))
        #expect(try Self.titles(coordinator) == ["a": 2, "d": 1, "x": 0])

        // Each saved object takes a new change, and each list takes its objects again.
        x["rank"] = Int64(5)
        a["rank"] = Int64(6)
        d["rank"] = Int64(7)
        #expect(context.updatedObjects == [x, a, d])
        try context.save()
        #expect(try Self.titles(coordinator) == ["a": 6, "d": 7, "x": 5])
        context.delete(d)
        let z = try context.insertNewObject(forEntityName: "Note")
        z["title"] = "z"
        z["rank"] = Int64(0)
        a["rank"] = Int64(8)
        #expect(context.updatedObjects == [a])
        #expect(context.deletedObjects == [d])
        #expect(context.insertedObjects == [z])
        try context.save()
        #expect(!context.hasChanges)
        #expect(try Self.titles(coordinator) == ["a": 8, "x": 5, "z": 0])
    }

    @Test("after a save that changed every listed object, a second change of one of them is saved")
    func listsAfterUpdatesOnly() throws {
        let (coordinator, directory) = try Self.stack()
        defer { withExtendedLifetime(directory) {} }
        let context = ManagedObjectContext(coordinator: coordinator)
        let notes = try (0..<300).map { index in
            let note = try context.insertNewObject(forEntityName: "Note")
            note["title"] = "n\(index)"
            note["rank"] = Int64(index)
            return note
        }
        try context.save()
        for note in notes { note["rank"] = ((note["rank"] as Int64?) ?? 0) + 1000 }
        try context.save()
        #expect(context.updatedObjects.isEmpty)
        notes[7]["rank"] = Int64(-7)
        #expect(context.updatedObjects == [notes[7]])
        for note in notes.suffix(100) { context.delete(note) }
        try context.save()
        let stored = try Self.titles(coordinator)
        #expect(stored.count == 200)
        #expect(stored["n7"] == -7)
        #expect(stored["n8"] == 1008)
        #expect(stored["n250"] == nil)
        // A deleted object left its context: deleting it again is ignored, not saved twice.
        context.delete(notes[250])
        #expect(!context.hasChanges)
    }

    @Test("a subclass's validateForDelete still refuses a delete of an entity without relationships")
    func deleteValidationHook() throws {
        let (coordinator, directory) = try Self.stack(try Self.model.registering(["Note": GuardedNote.self]))
        defer { withExtendedLifetime(directory) {} }
        let context = ManagedObjectContext(coordinator: coordinator)
        let kept = try context.insert(GuardedNote.self)
        kept["title"] = "kept"
        kept["rank"] = Int64(0)
        let free = try context.insert(GuardedNote.self)
        free["title"] = "free"
        free["rank"] = Int64(1)
        try context.save()
        context.delete(kept)
        context.delete(free)
        do {
            try context.save()
            Issue.record("the hook's refusal was not reported")
        } catch let error as ObjectValidationError {
            #expect(error.failures.count == 1)
            #expect(error.failures.first?.objectID == kept.objectID)
        }
        #expect(try Self.titles(coordinator) == ["kept": 0, "free": 1], "nothing was deleted")
        context.rollback()
        context.delete(free)
        try context.save()
        #expect(try Self.titles(coordinator) == ["kept": 0])
    }
}

final class GuardedNote: ManagedObject {
    struct Kept: Error {}

    override func validateForDelete() throws {
        if (self["rank"] as Int64?) == 0 { throw Kept() }
    }
}
