import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@Suite("Managed object context")
struct ContextTests {
    @Test("one object per ID: fetching twice in one context returns the same instance")
    func uniquing() throws {
        let stack = try TestStack(seeded: true)
        let context = stack.newContext()
        let first = try stack.fetch("Employee", "name == 'Ann'", in: context)[0]
        let second = try stack.fetch("Employee", "age >= 0", in: context).first { $0.objectID == first.objectID }
        #expect(second === first)
        #expect(context.object(with: first.objectID) === first)
        #expect(context.registeredObject(for: first.objectID) === first)
    }

    @Test("delete rules run again for an object deleted a second time after a rollback, and once per deletion")
    func deleteRulesPerDeletion() throws {
        let stack = try TestStack(seeded: true)
        let context = stack.newContext()
        let research = try stack.fetch("Department", "name == 'Research'", in: context)[0]
        let staff = research.objects(forKey: "employees")
        #expect(!staff.isEmpty)
        context.delete(research)
        context.processPendingChanges()
        #expect(staff.allSatisfy { $0.isDeleted }, "the cascade deleted the employees")
        context.rollback()
        #expect(!research.isDeleted && staff.allSatisfy { !$0.isDeleted }, "rolled back")
        context.delete(research)
        context.processPendingChanges()
        #expect(staff.allSatisfy { $0.isDeleted }, "the cascade ran again for the second deletion")
        // Processing again applies nothing twice: the deleted set stays as it is.
        let deleted = context.deletedObjects
        context.processPendingChanges()
        #expect(context.deletedObjects == deleted)
        try context.save()
        let check = stack.newContext()
        #expect(try stack.fetch("Department", "name == 'Research'", in: check).isEmpty)
        #expect(try stack.fetch("Employee", "department.name == 'Research'", in: check).isEmpty)
    }

    @Test("inserted objects have temporary IDs until save, then permanent ones with store URIs")
    func temporaryIDs() throws {
        let stack = try TestStack()
        let tag = try stack.context.insertNewObject(forEntityName: "Tag")
        tag["name"] = "t"
        #expect(tag.objectID.isTemporaryID)
        #expect(tag.objectID.uriRepresentation().absoluteString.hasPrefix("x-coredata:///Tag/t"))
        #expect(tag.isInserted && tag.hasChanges && stack.context.hasChanges)
        try stack.context.save()
        #expect(!tag.objectID.isTemporaryID)
        #expect(!tag.isInserted && !tag.hasChanges && !stack.context.hasChanges)
        let uri = tag.objectID.uriRepresentation()
        #expect(uri.absoluteString == "x-coredata://\(stack.store.identifier)/Tag/p\(tag.objectID.primaryKey)")
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: uri) == tag.objectID)
        #expect(
            stack.coordinator.managedObjectID(forURIRepresentation: URL(string: "x-coredata://NOPE/Tag/p1")!) == nil)
    }

    @Test("obtainPermanentIDs gives inserted objects permanent IDs before save and references follow")
    func obtainPermanentIDs() throws {
        let stack = try TestStack()
        let department = try stack.context.insertNewObject(forEntityName: "Department")
        department["name"] = "D"
        let employee = try stack.context.insertNewObject(forEntityName: "Employee")
        employee["name"] = "E"
        employee["department"] = department
        try stack.context.obtainPermanentIDs(for: [department, employee])
        #expect(!department.objectID.isTemporaryID)
        #expect(employee.object(forKey: "department") === department)
        #expect(department.objects(forKey: "employees") == [employee])
        try stack.context.save()
        let again = try stack.fetch("Employee", in: stack.newContext())[0]
        #expect(again.object(forKey: "department")?.objectID == department.objectID)
    }

    @Test("obtainPermanentIDs for some of the unsaved objects, one listed twice, registers each object once")
    func obtainPermanentIDsForSome() throws {
        let stack = try TestStack()
        let tags = try (0..<3).map { index -> ManagedObject in
            let tag = try stack.context.insertNewObject(forEntityName: "Tag")
            tag["name"] = "t\(index)"
            return tag
        }
        let temporaryIDs = tags.map(\.objectID)
        let temporary = tags[2].objectID
        try stack.context.obtainPermanentIDs(for: [tags[0], tags[1], tags[0]])
        #expect(
            stack.context.registeredObject(for: temporaryIDs[0]) == nil
                && stack.context.registeredObject(for: temporaryIDs[1]) == nil)
        #expect(!tags[0].objectID.isTemporaryID && !tags[1].objectID.isTemporaryID && tags[2].objectID.isTemporaryID)
        #expect(tags[0].objectID != tags[1].objectID)
        #expect(stack.context.registeredObjects.count == 3)
        for tag in tags { #expect(stack.context.registeredObject(for: tag.objectID) === tag) }
        #expect(stack.context.registeredObject(for: temporary) === tags[2])
        try stack.context.save()
        #expect(stack.context.registeredObjects.count == 3 && tags.allSatisfy { !$0.objectID.isTemporaryID })
        #expect(try stack.fetch("Tag", in: stack.newContext()).count == 3)
    }

    @Test("objects fetched as faults load on first access, in one batch per fetch")
    func faultsFireOnAccess() throws {
        let stack = try TestStack(seeded: true)
        let ids = try stack.context.fetchObjectIDs(FetchRequest(entityName: "Employee"))
        let context = stack.newContext()
        let objects = ids.map { context.object(with: $0) }
        #expect(objects.allSatisfy { $0.isFault })
        _ = objects[0].value(forKey: "name")
        #expect(!objects[0].isFault)
        var request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])
        request.fetchBatchSize = 5
        let batchContext = stack.newContext()
        let batched = try batchContext.fetch(request)
        #expect(batched.allSatisfy { $0.isFault })
        #expect(
            batched.compactMap { $0["name"] as? String }
                == ConformanceModel.employeeNames.sorted {
                    try! SortKey.compare(.string($0), .string($1)) == .orderedAscending
                })  // strings always compare
    }

    @Test("changedValues and committedValues report the unsaved and the saved state")
    func changeInspection() throws {
        let stack = try TestStack(seeded: true)
        let ann = try stack.fetch("Employee", "name == 'Ann'")[0]
        #expect(!ann.hasChanges)
        ann["age"] = 77
        #expect(ann.isUpdated)
        #expect(ann.changedValues()["age"] as? Int == 77)
        #expect(ann.committedValues(forKeys: ["age"])["age"] as? Int == 20)
        #expect(stack.context.updatedObjects.contains(ann))
    }

    @Test("rollback discards inserts, updates and deletes")
    func rollback() throws {
        let stack = try TestStack(seeded: true)
        let context = stack.context
        let ann = try stack.fetch("Employee", "name == 'Ann'")[0]
        let bob = try stack.fetch("Employee", "name == 'bob'")[0]
        let oldDepartment = bob.object(forKey: "department")
        let newcomer = try context.insertNewObject(forEntityName: "Tag")
        newcomer["name"] = "fresh"
        ann["age"] = 99
        bob["department"] = nil
        context.delete(try stack.fetch("Track", nil)[0])
        context.rollback()
        #expect(!context.hasChanges)
        #expect(ann["age"] as? Int == 20)
        #expect(bob.object(forKey: "department") === oldDepartment)
        #expect(oldDepartment?.objects(forKey: "employees").contains(bob) == true)
        #expect(newcomer.managedObjectContext == nil)
        #expect(try context.count(for: FetchRequest(entityName: "Tag")) == 4)
        #expect(try context.count(for: FetchRequest(entityName: "Track")) == 6)
    }

    @Test("reset forgets every object and releases its row cache pins")
    func reset() throws {
        let stack = try TestStack(seeded: true)
        let context = stack.newContext()
        _ = try stack.fetch("Employee", in: context).map { $0["name"] }
        #expect(stack.coordinator.rowCache.statistics.pinned > 0)
        context.reset()
        #expect(context.registeredObjects.isEmpty)
        stack.context.reset()
        #expect(stack.coordinator.rowCache.statistics.pinned == 0)
    }

    @Test("refresh without merging drops changes; with merging keeps them over newer saved values")
    func refresh() throws {
        let stack = try TestStack(seeded: true)
        let mine = stack.newContext()
        let theirs = stack.newContext()
        let a = try stack.fetch("Employee", "name == 'Gus'", in: mine)[0]
        let b = try stack.fetch("Employee", "name == 'Gus'", in: theirs)[0]
        b["salary"] = 1.5
        try theirs.save()
        a["age"] = 66
        mine.refresh(a, mergeChanges: true)
        #expect(a["salary"] as? Double == 1.5)
        #expect(a["age"] as? Int == 66)
        mine.refresh(a, mergeChanges: false)
        #expect(a.isFault)
        #expect(a["age"] as? Int != 66)
        #expect(!mine.hasChanges)
    }

    @Test("lifecycle hooks run on insert, fetch, save and delete")
    func lifecycleHooks() throws {
        let model = try ConformanceModel.model.registering(["Track": HookedTrack.self])
        let stack = try TestStack(model: model)
        let track = try stack.context.insert(HookedTrack.self)
        #expect(track.events == ["awakeFromInsert"])
        #expect(track["title"] as? String == "untitled")
        try stack.context.save()
        #expect(track.events == ["awakeFromInsert", "willSave", "didSave"])
        let fetched = try stack.newContext().fetch(FetchRequest(entityName: "Track"), as: HookedTrack.self)[0]
        _ = fetched["title"]
        #expect(fetched.events == ["awakeFromFetch"])
        fetched.managedObjectContext?.delete(fetched)
        #expect(fetched.events.last == "prepareForDeletion")
    }

    @Test("perform runs on the context's queue; performAndWait returns values and nests")
    func executor() async throws {
        let stack = try TestStack(seeded: true)
        let context = stack.newContext()
        let count = try await context.perform {
            try context.count(for: FetchRequest(entityName: "Employee"))
        }
        #expect(count == 12)
        let nested = context.performAndWait { context.performAndWait { 7 } }
        #expect(nested == 7)
    }

    @Test("inserting an abstract or unknown entity is a clear error")
    func insertErrors() throws {
        let stack = try TestStack()
        #expect(throws: StoreError.self) { try stack.context.insertNewObject(forEntityName: "Vehicle") }
        #expect(throws: StoreError.self) { try stack.context.insertNewObject(forEntityName: "Nope") }
        #expect(throws: StoreError.self) { try stack.context.fetch(FetchRequest(entityName: "Nope")) }
    }

    @Test("a predicate with an unknown key path is reported against the entity")
    func unknownKeyPath() throws {
        let stack = try TestStack(seeded: true)
        #expect(throws: FetchPredicateError.self) {
            try stack.context.fetch(
                FetchRequest(entityName: "Employee", predicate: FetchPredicate(format: "shoeSize > 3")))
        }
    }

    @Test("setting a value of the wrong type through the throwing setter names the attribute")
    func wrongType() throws {
        let stack = try TestStack()
        let employee = try stack.context.insertNewObject(forEntityName: "Employee")
        do {
            try employee.setConvertedValue("old", forKey: "age")
            Issue.record("a string was accepted for an Integer 16 attribute")
        } catch let error as StoreError {
            #expect(error.message.contains("Employee.age"))
        }
        #expect(throws: StoreError.self) { try employee.setConvertedValue(70_000, forKey: "age") }
        #expect(throws: StoreError.self) { try employee.setConvertedValue(1, forKey: "shoeSize") }
    }
}

final class HookedTrack: ManagedObject {
    var events: [String] = []
    @ManagedAttribute("title") var title: String?

    override func awakeFromInsert() {
        events.append("awakeFromInsert")
        title = "untitled"
    }
    override func awakeFromFetch() { events.append("awakeFromFetch") }
    override func willSave() { events.append("willSave") }
    override func didSave() { events.append("didSave") }
    override func prepareForDeletion() { events.append("prepareForDeletion") }
}
