import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

/// Setting an attribute checks the object's state first: a fault is filled, a deleted object and
/// one whose row is gone refuse the change, and only a loaded, live object skips the checks.
@Suite("Setting attributes by object state")
struct ObjectSetterStateTests {
    @Test("a fault is filled by a set, keeping its other values; the change is saved")
    func faultIsFilled() throws {
        let stack = try TestStack(seeded: true)
        let id = try stack.fetch("Employee", "name == 'Ann'")[0].objectID
        let context = ManagedObjectContext(coordinator: stack.coordinator)
        let fault = context.object(with: id)
        #expect(fault.isFault)
        try fault.setConvertedValue(Int64(77), forKey: "age")
        #expect(!fault.isFault && fault.isUpdated)
        #expect(fault["name"] as? String == "Ann", "the fault's other values were loaded, not lost")
        try context.save()
        let check = ManagedObjectContext(coordinator: stack.coordinator)
        #expect(try check.existingObject(with: id)["age"] as? Int == 77)
    }

    @Test("a deleted object refuses a change, naming the key")
    func deletedRefuses() throws {
        let stack = try TestStack(seeded: true)
        let context = ManagedObjectContext(coordinator: stack.coordinator)
        let ann = try stack.fetch("Employee", "name == 'Ann'", in: context)[0]
        context.delete(ann)
        let error = #expect(throws: StoreError.self) { try ann.setConvertedValue(Int64(1), forKey: "age") }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.contains("'age'") == true && error?.message.contains("deleted") == true)
    }

    @Test("an object whose row another context deleted refuses a change as not found")
    func goneRowRefuses() throws {
        let stack = try TestStack(seeded: true)
        // An employee nothing refers to, so deleting it passes validation.
        let zed = try stack.context.insertNewObject(forEntityName: "Employee")
        zed["name"] = "Zed"
        zed["age"] = 30
        try stack.context.save()
        let id = zed.objectID
        let mine = ManagedObjectContext(coordinator: stack.coordinator)
        let fault = mine.object(with: id)
        let theirs = ManagedObjectContext(coordinator: stack.coordinator)
        theirs.delete(try theirs.existingObject(with: id))
        try theirs.save()
        let error = #expect(throws: StoreError.self) { try fault.setConvertedValue(Int64(1), forKey: "age") }
        #expect(error?.code == .notFound)
        #expect(!fault.isAccessible)
        // Refused again once the object is known to be gone (no fault left to fire).
        #expect(throws: StoreError.self) { try fault.setConvertedValue(Int64(2), forKey: "age") }
    }
}
