import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@Suite("Merging saves and notifications")
struct ContextMergeTests {
    @Test("mergeChanges(fromContextDidSave:) refreshes updated objects, drops deleted ones, registers inserted ones, keeps local changes")
    func mergeFromDidSave() throws {
        let stack = try TestStack(seeded: true)
        let view = stack.newContext()
        let ann = try stack.fetch("Employee", "name == 'Ann'", in: view)[0]
        let dan = try stack.fetch("Employee", "name == 'Dan'", in: view)[0]
        let track = try stack.fetch("Track", "title == 'Track 0'", in: view)[0]
        _ = (ann.value(forKey: "age"), dan.value(forKey: "age"), track.value(forKey: "title"))
        dan["email"] = "mine@example.com"
        let background = stack.newContext()
        var saved: ContextDidSave?
        background.addDidSaveObserver { saved = $0 }
        try stack.fetch("Employee", "name == 'Ann'", in: background)[0]["age"] = 99
        try stack.fetch("Employee", "name == 'Dan'", in: background)[0]["age"] = 88
        background.delete(try stack.fetch("Track", "title == 'Track 0'", in: background)[0])
        let tag = try background.insertNewObject(forEntityName: "Tag")
        tag["name"] = "merged"
        try background.save()
        var changes: ObjectsDidChange?
        view.addObjectsDidChangeObserver { changes = $0 }
        var merged: ObjectIDChanges?
        view.addDidMergeChangesObserver { merged = $0 }
        view.mergeChanges(fromContextDidSave: try #require(saved))
        #expect(ann.value(forKey: "age") as? Int == 99)
        #expect(dan.value(forKey: "age") as? Int == 88)
        #expect(dan.value(forKey: "email") as? String == "mine@example.com", "local changes are kept")
        #expect(dan.isUpdated)
        #expect(!track.isAccessible)
        #expect(view.registeredObject(for: tag.objectID) != nil)
        #expect(changes?.refreshedObjects.contains(ann) == true)
        #expect(changes?.deletedObjects.contains(track) == true)
        #expect(changes?.insertedObjects.contains { $0.objectID == tag.objectID } == true)
        #expect(merged?.deleted == [track.objectID])
        try view.save()
        let row = try stack.fetch("Employee", "name == 'Dan'", in: stack.newContext())[0]
        #expect(row.value(forKey: "age") as? Int == 88 && row.value(forKey: "email") as? String == "mine@example.com", "no conflict after the merge")
    }

    @Test("automaticallyMergesChangesFromParent: a root context follows saves of other contexts at its next entry point")
    func automaticMerge() throws {
        let stack = try TestStack(seeded: true)
        let view = stack.newContext()
        view.automaticallyMergesChangesFromParent = true
        let ann = try stack.fetch("Employee", "name == 'Ann'", in: view)[0]
        _ = ann.value(forKey: "age")
        let background = stack.newContext()
        try stack.fetch("Employee", "name == 'Ann'", in: background)[0]["age"] = 21
        try background.save()
        #expect(view.hasChanges == false)
        #expect(ann.value(forKey: "age") as? Int == 21)
        let other = stack.newContext()
        let annElsewhere = try stack.fetch("Employee", "name == 'Ann'", in: other)[0]
        _ = annElsewhere.value(forKey: "age")
        try stack.fetch("Employee", "name == 'Ann'", in: background)[0]["age"] = 22
        try background.save()
        #expect(annElsewhere.value(forKey: "age") as? Int == 21, "a context that does not merge keeps its values")
    }

    @Test("a main-queue view context merges background saves on the main queue")
    func mainQueueMerge() async throws {
        let stack = try TestStack(seeded: true)
        let view = ManagedObjectContext(coordinator: stack.coordinator, concurrencyType: .mainQueue)
        let id = try await view.perform {
            view.automaticallyMergesChangesFromParent = true
            let ann = try view.fetch(FetchRequest(entityName: "Employee", predicate: FetchPredicate(format: "name == 'Ann'")))[0]
            _ = ann.value(forKey: "age")
            return ann.objectID
        }
        let stream = try await view.perform { view.events() }
        let coordinator = stack.coordinator
        let background = ManagedObjectContext(coordinator: coordinator)
        try await background.perform {
            try background.existingObject(with: id)["age"] = 64
            try background.save()
        }
        var sawMerge = false
        for await event in stream {
            if case .didMergeChanges(let changes) = event, changes.refreshed.contains(id) {
                sawMerge = true
                break
            }
        }
        #expect(sawMerge)
        let age = try await view.perform { view.object(with: id).value(forKey: "age") as? Int }
        #expect(age == 64)
    }

    @Test("objects-did-change, will-save and did-save reach observers and the event stream")
    func notifications() async throws {
        let stack = try TestStack(seeded: true)
        let context = ManagedObjectContext(coordinator: stack.coordinator)
        let events = try await context.perform { context.events() }
        let tagID = try await context.perform {
            let tag = try context.insertNewObject(forEntityName: "Tag")
            tag["name"] = "observed"
            return tag.objectID
        }
        try await context.perform { try context.save() }
        var seen: [ContextEvent] = []
        for await event in events {
            seen.append(event)
            if case .didSave = event { break }
        }
        #expect(seen.contains { if case .objectsDidChange(let c) = $0 { return c.inserted.contains(tagID) } else { return false } })
        #expect(seen.contains(.willSave))
        #expect(seen.contains { if case .didSave(let saved) = $0 { return saved.insertedObjectIDs.count == 1 } else { return false } })
        var willSave = 0
        let token = context.performAndWait { context.addWillSaveObserver { willSave += 1 } }
        try context.performAndWait {
            try stack.fetch("Tag", "name == 'red'", in: context)[0]["name"] = "crimson"
            try context.save()
            context.removeObserver(token)
            try stack.fetch("Tag", "name == 'crimson'", in: context)[0]["name"] = "red"
            try context.save()
        }
        #expect(willSave == 1)
    }

    @Test("a long-lived context lets go of fetched objects nobody holds; retainsRegisteredObjects keeps them")
    func weakRegistration() throws {
        let stack = try TestStack(seeded: false)
        let seeding = stack.newContext()
        for index in 0..<5_000 {
            let tag = try seeding.insertNewObject(forEntityName: "Tag")
            tag["name"] = "t\(index)"
        }
        try seeding.save()
        let context = stack.newContext()
        var kept: ManagedObject?
        for round in 0..<4 {
            let tags = try context.fetch(FetchRequest(entityName: "Tag"))
            if round == 0 { kept = tags[7] }
            kept?["name"] = "changed \(round)"
        }
        #expect(context.registeredObjects.count < 10_000, "registrations stay bounded: \(context.registeredObjects.count)")
        #expect(context.registeredObject(for: try #require(kept).objectID) === kept, "a held, changed object stays")
        let keeping = stack.newContext()
        keeping.retainsRegisteredObjects = true
        for _ in 0..<3 { _ = try keeping.fetch(FetchRequest(entityName: "Tag")) }
        #expect(keeping.registeredObjects.count == 5_000)
        #expect(stack.coordinator.rowCache.statistics.pinned <= 5_000 + 10_000)
    }
}
