import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

/// A store error met while loading never turns into "nothing there": the object stays a fault
/// (or the relationship unfetched), the error surfaces (thrown, or kept for the next save), nothing
/// half-changed reaches the store, and a retry works.
@Suite("Context: store errors while loading")
struct ContextStoreFailureTests {
    private static let injected = StoreError(.io, "injected read failure")

    @Test("a fault whose load fails stays a fault, reads nil, and the next save throws the error; a retry works")
    func failedFault() throws {
        let (stack, driver) = try TestStack.recording()
        let id = try stack.fetch("Employee", "name == 'Ann'", in: stack.newContext())[0].objectID
        let context = stack.newContext()
        let ann = context.object(with: id)
        stack.coordinator.rowCache.removeAll(in: ObjectIdentifier(stack.store))
        driver.failNext(.rows, with: Self.injected)
        #expect(ann.value(forKey: "name") == nil)
        #expect(ann.isFault, "the object is still a fault after the failed load")
        #expect(context.accessFailure?.code == .io)
        let other = try context.insertNewObject(forEntityName: "Tag")
        other["name"] = "after a failed read"
        #expect(throws: StoreError.self) { try context.save() }
        #expect(
            try stack.fetch("Tag", "name == 'after a failed read'", in: stack.newContext()).isEmpty,
            "nothing was written")
        #expect(context.accessFailure == nil, "the save reported the failure once")
        #expect(ann.value(forKey: "name") as? String == "Ann", "the fault loads on the next access")
        try context.save()
        #expect(try stack.fetch("Tag", "name == 'after a failed read'", in: stack.newContext()).count == 1)
    }

    @Test("fulfillFault throws the store's error and leaves the object a fault")
    func throwingFulfill() throws {
        let (stack, driver) = try TestStack.recording()
        let id = try stack.fetch("Employee", "name == 'bob'", in: stack.newContext())[0].objectID
        let context = stack.newContext()
        let bob = context.object(with: id)
        stack.coordinator.rowCache.removeAll(in: ObjectIdentifier(stack.store))
        driver.failNext(.rows, with: Self.injected)
        #expect(throws: StoreError.self) { try bob.fulfillFault() }
        #expect(bob.isFault)
        #expect(context.accessFailure == nil, "a thrown error is not kept as well")
        try bob.fulfillFault()
        #expect(!bob.isFault && bob.value(forKey: "name") as? String == "bob")
    }

    @Test("a setter that cannot load its object makes no change and the save throws; setConvertedValue throws at once")
    func failedSetter() throws {
        let (stack, driver) = try TestStack.recording()
        let id = try stack.fetch("Employee", "name == 'Dan'", in: stack.newContext())[0].objectID
        let context = stack.newContext()
        let dan = context.object(with: id)
        stack.coordinator.rowCache.removeAll(in: ObjectIdentifier(stack.store))
        driver.failNext(.rows, with: Self.injected)
        #expect(throws: StoreError.self) { try dan.setConvertedValue(40, forKey: "age") }
        driver.failNext(.rows, with: Self.injected)
        dan["age"] = 41
        #expect(!context.hasChanges, "the change was not made")
        #expect(throws: StoreError.self) { try context.save() }
        dan["age"] = 42
        try context.save()
        #expect(
            try stack.fetch("Employee", "name == 'Dan'", in: stack.newContext())[0].value(forKey: "age") as? Int == 42)
    }

    @Test("a cascade whose targets cannot be loaded commits nothing, and the retry cascades")
    func failedCascade() throws {
        let (stack, driver) = try TestStack.recording()
        let id = try stack.fetch("Department", "name == 'Research'", in: stack.newContext())[0].objectID
        let staff = try stack.fetch("Employee", "department.name == 'Research'", in: stack.newContext()).count
        #expect(staff > 0)
        let context = stack.newContext()
        let research = try context.existingObject(with: id)
        context.delete(research)
        stack.coordinator.rowCache.removeAll(in: ObjectIdentifier(stack.store))
        // The cascade loads the employees (faults) to delete them; their load fails.
        driver.failNext(.rows, with: Self.injected)
        driver.failNext(.rows, with: Self.injected)
        #expect(throws: StoreError.self) { try context.save() }
        let check = stack.newContext()
        #expect(
            try stack.fetch("Department", "name == 'Research'", in: check).count == 1, "the department is still stored")
        #expect(
            try stack.fetch("Employee", "department.name == 'Research'", in: check).count == staff, "its employees too")
        try context.save()
        let after = stack.newContext()
        #expect(try stack.fetch("Department", "name == 'Research'", in: after).isEmpty)
        #expect(try after.count(for: FetchRequest(entityName: "Employee")) == 12 - staff, "the employees were cascaded")
    }

    @Test("a relationship change that cannot load an object it touches changes nothing on either side")
    func failedLink() throws {
        let (stack, driver) = try TestStack.recording()
        let context = stack.newContext()
        let gus = try stack.fetch("Employee", "name == 'Gus'", in: context)[0]
        let target = try stack.fetch("Department", "name == 'Éditions'", in: context)[0]
        // Gus's department stays a fault in this context: unlinking him from it must load it.
        let oldID = try #require(gus.objectIDs(forRelationshipNamed: "department").first)
        let before = try stack.newContext().existingObject(with: oldID).objects(forKey: "employees").count
        stack.coordinator.rowCache.removeAll(in: ObjectIdentifier(stack.store))
        driver.failNext(.rows, with: Self.injected)
        #expect(throws: StoreError.self) { try gus.setConvertedValue(target, forKey: "department") }
        #expect(gus.objectIDs(forRelationshipNamed: "department") == [oldID], "gus keeps his department")
        #expect(target.objects(forKey: "employees").isEmpty, "the new department did not gain him")
        #expect(!context.hasChanges)
        #expect(
            context.object(with: oldID).objects(forKey: "employees").count == before, "the old one did not lose him")
    }

    @Test("another context's temporary ID gives an inaccessible object, also after that context is gone")
    func foreignTemporaryID() throws {
        let stack = try TestStack(seeded: true)
        let mine = stack.newContext()
        var temporary: ManagedObjectID?
        var uri: URL?
        do {
            let theirs = ManagedObjectContext(coordinator: stack.coordinator)
            let tag = try theirs.insertNewObject(forEntityName: "Tag")
            tag["name"] = "theirs"
            temporary = tag.objectID
            uri = tag.objectID.uriRepresentation()
        }
        let id = try #require(temporary)
        let stranger = mine.object(with: id)
        #expect(!stranger.isAccessible)
        #expect(stranger.value(forKey: "name") == nil)
        #expect(mine.object(with: id) === stranger, "the same object answers for the same ID")
        #expect(throws: StoreError.self) { try stranger.setConvertedValue("x", forKey: "name") }
        #expect { _ = try mine.existingObject(with: id) } throws: { ($0 as? StoreError)?.code == .notFound }
        let foreignURI = try #require(uri)
        let fromURI = try #require(stack.coordinator.managedObjectID(forURIRepresentation: foreignURI))
        #expect(mine.object(with: fromURI) === stranger)
        _ = mine.registeredObjects
        mine.reset()
        #expect(stranger.managedObjectContext == nil)
    }

    @Test("a fault registered under a key that an insert then receives leaves the context")
    func displacedFault() throws {
        let stack = try TestStack(seeded: true)
        let context = stack.newContext()
        let entity = try #require(stack.coordinator.managedObjectModel.entity(named: "Tag"))
        let used = try stack.store.driver.allocatePrimaryKeys(forEntity: entity.entityNumber, count: 1)
        let next = ManagedObjectID(
            entity: entity, rowID: RowID(entity: entity.entityNumber, primaryKey: used.upperBound + 1),
            store: stack.store)
        let fault = context.object(with: next)
        #expect(fault.isFault)
        let tag = try context.insertNewObject(forEntityName: "Tag")
        tag["name"] = "displacer"
        try context.save()
        #expect(tag.objectID == next, "the insert received the key the fault was made for")
        #expect(context.object(with: next) === tag)
        #expect(fault.managedObjectContext == nil, "the displaced fault left the context")
    }

    @Test("objects outliving their context keep their values and refuse changes they cannot hold")
    func objectsOutliveContext() throws {
        let stack = try TestStack(seeded: true)
        var loaded: ManagedObject?
        var fault: ManagedObject?
        do {
            let context = ManagedObjectContext(coordinator: stack.coordinator)
            let employees = try stack.fetch("Employee", in: context)
            loaded = employees[0]
            _ = loaded?.value(forKey: "name")
            fault = context.object(with: employees[1].objectID)
            if let fault { context.refresh(fault, mergeChanges: false) }
        }
        let object = try #require(loaded)
        #expect(object.managedObjectContext == nil)
        #expect(object.value(forKey: "name") as? String == "Ann")
        let unloaded = try #require(fault)
        #expect(unloaded.managedObjectContext == nil)
        _ = unloaded.value(forKey: "name")
        #expect(unloaded.objects(forKey: "mentees").isEmpty)
    }
}
