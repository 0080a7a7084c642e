import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@Suite("Merge policies")
struct MergePolicyTests {
    /// Ann's age changed here and her email and salary changed in the store since this context read her.
    private func conflict(_ policy: MergePolicy) throws -> (TestStack, ManagedObjectContext, ManagedObject) {
        let stack = try TestStack(seeded: true)
        let mine = stack.newContext()
        mine.mergePolicy = policy
        let ann = try stack.fetch("Employee", "name == 'Ann'", in: mine)[0]
        _ = ann.value(forKey: "age")
        let theirs = stack.newContext()
        let theirAnn = try stack.fetch("Employee", "name == 'Ann'", in: theirs)[0]
        theirAnn["email"] = "store@example.com"
        theirAnn["age"] = 50
        try theirs.save()
        ann["age"] = 60
        ann["salary"] = 1.0
        return (stack, mine, ann)
    }

    private func stored(_ stack: TestStack) throws -> ManagedObject {
        try stack.fetch("Employee", "name == 'Ann'", in: stack.newContext())[0]
    }

    @Test(
        "error: the save fails with the conflicts: object, changed keys, cached, persisted and new snapshots and versions"
    )
    func errorPolicy() throws {
        let (stack, mine, ann) = try conflict(.error)
        #expect { try mine.save() } throws: { error in
            guard let error = error as? StoreError, error.code == .conflict, let conflict = error.mergeConflicts.first
            else { return false }
            return conflict.sourceObject === ann && Set(conflict.changedKeys) == ["age", "salary"]
                && conflict.persistedSnapshot?["email"] == .string("store@example.com")
                && conflict.objectSnapshot["age"] == .integer(60) && conflict.cachedSnapshot["email"] == .null
                && conflict.newVersionNumber == conflict.oldVersionNumber + 1
        }
        #expect(mine.hasChanges, "the changes stay for a retry")
        #expect(try stored(stack).value(forKey: "age") as? Int == 50)
    }

    @Test("object trump: my changed properties win, the others take the store's values")
    func objectTrump() throws {
        let (stack, mine, ann) = try conflict(.mergeByPropertyObjectTrump)
        try mine.save()
        let row = try stored(stack)
        #expect(row.value(forKey: "age") as? Int == 60)
        #expect(row.value(forKey: "salary") as? Double == 1.0)
        #expect(row.value(forKey: "email") as? String == "store@example.com")
        #expect(ann.value(forKey: "email") as? String == "store@example.com")
    }

    @Test("store trump: properties changed in the store win, my other changes are saved")
    func storeTrump() throws {
        let (stack, mine, ann) = try conflict(.mergeByPropertyStoreTrump)
        try mine.save()
        let row = try stored(stack)
        #expect(row.value(forKey: "age") as? Int == 50)
        #expect(row.value(forKey: "salary") as? Double == 1.0)
        #expect(row.value(forKey: "email") as? String == "store@example.com")
        #expect(ann.value(forKey: "age") as? Int == 50)
    }

    @Test("overwrite: my whole object replaces the store's")
    func overwrite() throws {
        let (stack, mine, _) = try conflict(.overwrite)
        try mine.save()
        let row = try stored(stack)
        #expect(row.value(forKey: "age") as? Int == 60)
        #expect(row.value(forKey: "email") == nil, "the store's email is overwritten with the value I read")
    }

    @Test("rollback: my changes to the conflicting object are dropped")
    func rollbackPolicy() throws {
        let (stack, mine, ann) = try conflict(.rollback)
        let tag = try mine.insertNewObject(forEntityName: "Tag")
        tag["name"] = "kept"
        try mine.save()
        let row = try stored(stack)
        #expect(row.value(forKey: "age") as? Int == 50)
        #expect(row.value(forKey: "salary") as? Double != 1.0)
        #expect(ann.value(forKey: "age") as? Int == 50)
        #expect(try stack.fetch("Tag", "name == 'kept'", in: stack.newContext()).count == 1, "other changes are saved")
    }

    @Test("a custom policy decides each object's values")
    func customPolicy() throws {
        final class Average: MergePolicy, @unchecked Sendable {
            init() { super.init(kind: .overwrite) }
            override func resolve(mergeConflicts conflicts: [MergeConflict]) throws {
                for conflict in conflicts {
                    guard case .integer(let mine) = conflict.objectSnapshot["age"],
                        case .integer(let theirs)? = conflict.persistedSnapshot?["age"]
                    else { continue }
                    conflict.sourceObject["age"] = Int((mine + theirs) / 2)
                }
                try super.resolve(mergeConflicts: conflicts)
            }
        }
        let (stack, mine, _) = try conflict(Average())
        try mine.save()
        #expect(try stored(stack).value(forKey: "age") as? Int == 55)
    }

    @Test("a change to a row deleted in the store: the deletion wins under every policy but error")
    func deletedInStore() throws {
        for policy in [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite, .rollback] {
            let stack = try TestStack(seeded: true)
            let mine = stack.newContext()
            mine.mergePolicy = policy
            let track = try stack.fetch("Track", "title == 'Track 2'", in: mine)[0]
            _ = track.value(forKey: "title")
            let theirs = stack.newContext()
            theirs.delete(try stack.fetch("Track", "title == 'Track 2'", in: theirs)[0])
            try theirs.save()
            track["title"] = "changed"
            try mine.save()
            #expect(!track.isAccessible, "\(policy)")
            #expect(try stack.fetch("Track", "title == 'changed'", in: stack.newContext()).isEmpty, "\(policy)")
        }
    }

    @Test("uniqueness: error reports the conflict; object trump turns the insert into an update of the stored row")
    func constraintUpsert() throws {
        let stack = try TestStack(seeded: true)
        let context = stack.newContext()
        let duplicate = try context.insertNewObject(forEntityName: "Tag")
        duplicate["name"] = "red"
        #expect { try context.save() } throws: { error in
            guard let error = error as? ObjectValidationError, let conflict = error.constraintConflicts.first else {
                return false
            }
            return conflict.constraint == ["name"] && conflict.conflictingObjects.first === duplicate
                && conflict.databaseObject != nil
        }
        let red = try stack.fetch("Tag", "name == 'red'", in: stack.newContext())[0].objectID
        context.mergePolicy = .mergeByPropertyObjectTrump
        let item = try context.fetch(FetchRequest(entityName: "Item"))[0]
        duplicate.addObject(item, toRelationship: "items")
        try context.save()
        #expect(duplicate.objectID == red, "the new object took the stored row's identity")
        #expect(!duplicate.isInserted)
        let check = stack.newContext()
        let reds = try stack.fetch("Tag", "name == 'red'", in: check)
        #expect(reds.count == 1)
        #expect(reds[0].objects(forKey: "items").contains { $0.objectID == item.objectID })
    }

    @Test("uniqueness among unsaved objects: object trump keeps the newest, store trump the first")
    func constraintAmongUnsaved() throws {
        for (policy, kept) in [
            (MergePolicy.mergeByPropertyObjectTrump, "second"), (.mergeByPropertyStoreTrump, "first"),
        ] {
            let stack = try TestStack(seeded: false)
            let context = stack.newContext()
            context.mergePolicy = policy
            let first = try context.insertNewObject(forEntityName: "Tag")
            first["name"] = "same"
            let second = try context.insertNewObject(forEntityName: "Tag")
            second["name"] = "same"
            try context.save()
            let winner = kept == "first" ? first : second
            let loser = kept == "first" ? second : first
            #expect(!winner.objectID.isTemporaryID, "\(policy)")
            #expect(loser.managedObjectContext == nil, "\(policy): the other one left unsaved")
            #expect(try stack.fetch("Tag", in: stack.newContext()).count == 1, "\(policy)")
        }
    }
}
