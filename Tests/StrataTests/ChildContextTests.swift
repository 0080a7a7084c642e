import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@Suite("Child contexts")
struct ChildContextTests {
    @Test("a child sees its parent's unsaved inserts, changes and deletions in fetches and faults")
    func childSeesParent() throws {
        let stack = try TestStack(seeded: true)
        let parent = stack.newContext()
        let ann = try stack.fetch("Employee", "name == 'Ann'", in: parent)[0]
        ann["age"] = 77
        let newcomer = try parent.insertNewObject(forEntityName: "Employee")
        newcomer["name"] = "Newcomer"
        newcomer["age"] = 30
        parent.delete(try stack.fetch("Employee", "name == 'bob'", in: parent)[0])
        let child = ManagedObjectContext(parent: parent)
        #expect(child.parent === parent)
        let names = Set(try stack.fetch("Employee", in: child).compactMap { $0.value(forKey: "name") as? String })
        #expect(names.contains("Newcomer"))
        #expect(!names.contains("bob"))
        #expect(names.count == 12)
        let old = try stack.fetch("Employee", "age > 70", in: child)
        #expect(
            old.map { $0.value(forKey: "name") as? String } == ["Ann"],
            "the parent's unsaved age is what the child matches on")
        #expect(child.object(with: ann.objectID).value(forKey: "age") as? Int == 77)
        #expect(child.object(with: newcomer.objectID).value(forKey: "name") as? String == "Newcomer")
        #expect(child.object(with: ann.objectID) !== ann, "each context has its own objects")
    }

    @Test("a child's save reaches its parent but not the store; the parent's save writes it")
    func childSave() throws {
        let stack = try TestStack(seeded: true)
        let parent = stack.newContext()
        let child = ManagedObjectContext(parent: parent)
        let tag = try child.insertNewObject(forEntityName: "Tag")
        tag["name"] = "from child"
        let dan = try stack.fetch("Employee", "name == 'Dan'", in: child)[0]
        dan["age"] = 55
        child.delete(try stack.fetch("Track", "title == 'Track 1'", in: child)[0])
        try child.save()
        #expect(!child.hasChanges)
        #expect(parent.hasChanges)
        #expect(try stack.fetch("Tag", "name == 'from child'", in: stack.newContext()).isEmpty, "not in the store yet")
        #expect(try stack.fetch("Tag", "name == 'from child'", in: parent).count == 1)
        #expect(try stack.fetch("Employee", "name == 'Dan'", in: parent)[0].value(forKey: "age") as? Int == 55)
        #expect(try stack.fetch("Track", "title == 'Track 1'", in: parent).isEmpty)
        try parent.save()
        let check = stack.newContext()
        #expect(try stack.fetch("Tag", "name == 'from child'", in: check).count == 1)
        #expect(try stack.fetch("Employee", "name == 'Dan'", in: check)[0].value(forKey: "age") as? Int == 55)
        #expect(try stack.fetch("Track", "title == 'Track 1'", in: check).isEmpty)
    }

    @Test("a child's large saves reach its parent whole, twice over, and the child keeps using its objects")
    func largeChildSaves() throws {
        let stack = try TestStack()
        let parent = stack.newContext()
        let child = ManagedObjectContext(parent: parent)
        var mine: [ManagedObject] = []
        for round in 0..<2 {
            // A first save lends every unsaved object of the child at once; the second lends
            // beside objects lent before, and one of its objects is deleted before the save and
            // never leaves the child.
            var batch: [ManagedObject] = []
            for index in 0..<300 {
                let tag = try child.insertNewObject(forEntityName: "Tag")
                tag["name"] = "tag \(round)-\(index)"
                batch.append(tag)
            }
            if round == 1 { child.delete(batch.removeLast()) }
            try child.save()
            mine += batch
            #expect(!child.hasChanges)
            #expect(try parent.count(for: FetchRequest(entityName: "Tag")) == mine.count)
            for tag in mine {
                #expect(child.object(with: tag.objectID) === tag, "the child's object answers for its ID")
                #expect(
                    parent.object(with: tag.objectID).value(forKey: "name") as? String == tag.value(forKey: "name")
                        as? String)
            }
        }
        mine[0]["name"] = "changed in the child"
        try child.save()
        try parent.save()
        #expect(mine.allSatisfy { !$0.objectID.isTemporaryID }, "permanent IDs reached the child")
        let names = try stack.fetch("Tag", in: stack.newContext()).compactMap { $0.value(forKey: "name") as? String }
        #expect(names.count == 599 && names.contains("changed in the child") && !names.contains("tag 1-299"))
    }

    @Test("a child's inserts arrive in its parent as if made there: values, changed keys, IDs obtained early")
    func insertsArriveWithTheirChanges() throws {
        let stack = try TestStack(seeded: false)
        let parent = stack.newContext()
        let child = ManagedObjectContext(parent: parent)
        var made: [ManagedObject] = []
        for index in 0..<150 {
            let employee = try child.insertNewObject(forEntityName: "Employee")
            employee["name"] = "e\(index)"
            // Set and taken back: a change all the same, as it would be in the parent.
            employee["age"] = index % 4 == 0 ? nil : index
            if index % 4 == 0 { employee["age"] = nil as Int? }
            made.append(employee)
        }
        // Some get permanent IDs before the save; they arrive registered under them.
        try child.obtainPermanentIDs(for: made.enumerated().filter { $0.offset % 3 == 1 }.map(\.element))
        let expected = made.map { Set($0.changedValues().keys) }
        #expect(expected[0] == ["name", "age"] && expected[1] == ["name", "age"])
        try child.save()
        #expect(parent.insertedObjects.count == 150)
        for (index, original) in made.enumerated() {
            let arrived = try #require(parent.registeredObject(for: original.objectID), "e\(index) is registered")
            #expect(arrived.isInserted)
            #expect(arrived.objectID.isTemporaryID == (index % 3 != 1))
            #expect(arrived.value(forKey: "name") as? String == "e\(index)")
            #expect(arrived.value(forKey: "age") as? Int == (index % 4 == 0 ? nil : index))
            #expect(Set(arrived.changedValues().keys) == expected[index], "e\(index)'s changed keys")
        }
        try parent.save()
        let stored = try stack.fetch("Employee", in: stack.newContext())
        #expect(Set(stored.compactMap { $0.value(forKey: "name") as? String }) == Set((0..<150).map { "e\($0)" }))
    }

    @Test("a child's inserts arrive in its parent as objects of their entities' classes, base and subclass alike")
    func insertsArriveAsTheirClasses() throws {
        let model = try ConformanceModel.model.registering(["Track": HookedTrack.self])
        let stack = try TestStack(model: model)
        let parent = stack.newContext()
        let child = ManagedObjectContext(parent: parent)
        // More than 64 of them, alternating: both the base class's path and a subclass's.
        var made: [ManagedObject] = []
        for index in 0..<100 {
            if index % 2 == 0 {
                let track = try child.insert(HookedTrack.self)
                track.title = "t\(index)"
                made.append(track)
            } else {
                let employee = try child.insertNewObject(forEntityName: "Employee")
                employee["name"] = "e\(index)"
                made.append(employee)
            }
        }
        try child.save()
        #expect(parent.insertedObjects.count == 100)
        for (index, original) in made.enumerated() {
            let arrived = try #require(parent.registeredObject(for: original.objectID), "object \(index) is registered")
            #expect(arrived !== original)
            #expect(arrived.objectID == original.objectID && arrived.entity === original.entity)
            #expect(arrived.managedObjectContext === parent)
            #expect(arrived.isInserted && !arrived.isFault)
            if index % 2 == 0 {
                let track = try #require(arrived as? HookedTrack, "track \(index) arrives as a HookedTrack")
                #expect(track.title == "t\(index)")
            } else {
                #expect(type(of: arrived) == ManagedObject.self, "employee \(index) arrives as a ManagedObject")
                #expect(arrived.value(forKey: "name") as? String == "e\(index)")
            }
        }
        // The parent's next insert gets an ID of its own, not one of the arrivals'.
        let next = try parent.insertNewObject(forEntityName: "Employee")
        next["name"] = "next"
        #expect(!made.contains { $0.objectID == next.objectID })
        try parent.save()
        let reader = stack.newContext()
        #expect(try stack.fetch("Track", in: reader).count == 50)
        #expect(try stack.fetch("Employee", in: reader).count == 51)
    }

    @Test("temporary IDs become permanent in every level when the root saves")
    func permanentIDsEverywhere() throws {
        let stack = try TestStack(seeded: false)
        let root = stack.newContext()
        let middle = ManagedObjectContext(parent: root)
        let leaf = ManagedObjectContext(parent: middle)
        let department = try leaf.insertNewObject(forEntityName: "Department")
        department["name"] = "Deep"
        let employee = try leaf.insertNewObject(forEntityName: "Employee")
        employee["name"] = "deep"
        employee["department"] = department
        try leaf.save()
        try middle.save()
        #expect(department.objectID.isTemporaryID)
        try root.save()
        #expect(!department.objectID.isTemporaryID, "the leaf's object has its permanent ID")
        #expect(!employee.objectID.isTemporaryID)
        #expect(employee.object(forKey: "department") === department, "references were rewritten")
        #expect(try root.existingObject(with: department.objectID).value(forKey: "name") as? String == "Deep")
        #expect(try middle.existingObject(with: employee.objectID).value(forKey: "name") as? String == "deep")
        department["name"] = "Deeper"
        try leaf.save()
        try middle.save()
        try root.save()
        #expect(try stack.fetch("Department", "name == 'Deeper'", in: stack.newContext()).count == 1)
    }

    @Test("obtainPermanentIDs in a child gives the same IDs to its ancestors")
    func obtainThroughChain() throws {
        let stack = try TestStack(seeded: false)
        let root = stack.newContext()
        let child = ManagedObjectContext(parent: root)
        let tag = try root.insertNewObject(forEntityName: "Tag")
        tag["name"] = "chain"
        let copy = child.object(with: tag.objectID)
        #expect(copy.value(forKey: "name") as? String == "chain")
        try child.obtainPermanentIDs(for: [copy])
        #expect(!copy.objectID.isTemporaryID)
        #expect(tag.objectID == copy.objectID, "the root's object took the same permanent ID")
        try root.save()
        #expect(try stack.fetch("Tag", "name == 'chain'", in: stack.newContext()).first?.objectID == copy.objectID)
    }

    @Test("rollback, reset and refresh work per level")
    func perLevel() throws {
        let stack = try TestStack(seeded: true)
        let parent = stack.newContext()
        let ann = try stack.fetch("Employee", "name == 'Ann'", in: parent)[0]
        ann["age"] = 40
        let child = ManagedObjectContext(parent: parent)
        let childAnn = child.object(with: ann.objectID)
        #expect(childAnn.value(forKey: "age") as? Int == 40)
        childAnn["age"] = 41
        child.rollback()
        #expect(childAnn.value(forKey: "age") as? Int == 40, "the child's rollback returns to the parent's value")
        #expect(ann.value(forKey: "age") as? Int == 40, "the parent kept its change")
        ann["age"] = 42
        child.refresh(childAnn, mergeChanges: false)
        #expect(childAnn.value(forKey: "age") as? Int == 42, "refresh reads the parent's current value")
        child.reset()
        #expect(child.registeredObjects.isEmpty)
        parent.rollback()
        #expect(ann.value(forKey: "age") as? Int != 42)
    }

    @Test("a child's save validates and applies delete rules before reaching the parent")
    func childValidates() throws {
        let stack = try TestStack(seeded: true)
        let parent = stack.newContext()
        let child = ManagedObjectContext(parent: parent)
        _ = try child.insertNewObject(forEntityName: "Tag")
        #expect(throws: ObjectValidationError.self) { try child.save() }
        #expect(!parent.hasChanges)
        child.rollback()
        let research = try stack.fetch("Department", "name == 'Research'", in: child)[0]
        let staff = research.objects(forKey: "employees").count
        #expect(staff > 0)
        child.delete(research)
        try child.save()
        #expect(
            try stack.fetch("Employee", "department.name == 'Research'", in: parent).isEmpty,
            "the cascade reached the parent")
        #expect(parent.deletedObjects.count == staff + 1)
    }

    @Test(
        "a child's change to an object its parent changed meanwhile is a conflict under the error policy, merged under object-trump"
    )
    func childParentConflict() throws {
        let stack = try TestStack(seeded: true)
        let parent = stack.newContext()
        let ann = try stack.fetch("Employee", "name == 'Ann'", in: parent)[0]
        let child = ManagedObjectContext(parent: parent)
        let childAnn = child.object(with: ann.objectID)
        _ = childAnn.value(forKey: "age")
        ann["email"] = "parent@example.com"
        childAnn["age"] = 33
        #expect { try child.save() } throws: { error in
            guard let error = error as? StoreError, error.code == .conflict, let conflict = error.mergeConflicts.first
            else { return false }
            return conflict.sourceObject === childAnn && conflict.changedKeys == ["age"]
                && conflict.persistedSnapshot?["email"] == .string("parent@example.com")
        }
        child.mergePolicy = .mergeByPropertyObjectTrump
        try child.save()
        #expect(ann.value(forKey: "age") as? Int == 33)
        #expect(ann.value(forKey: "email") as? String == "parent@example.com", "the parent's own change stays")
    }
}
