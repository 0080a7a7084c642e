import Foundation
import StrataInMemory
import StrataTesting
import Testing

@testable import Strata

/// `existingObject(with:)` pins its row under the row cache's lock that found it, or that stored it
/// when it came from the driver; the object owns that pin exactly once, whatever it was before the
/// lookup.
@Suite("Pins taken by lookups by ID")
struct ContextLookupPinTests {
    /// A seeded stack whose rows are all in the row cache, none pinned, and the IDs of its employees.
    static func cachedStack() throws -> (TestStack, [ManagedObjectID]) {
        let stack = try TestStack(seeded: true)
        stack.context.reset()
        // A context of the test's own, gone (with its pins) when this returns; the stack keeps
        // the contexts it makes.
        let reader = ManagedObjectContext(coordinator: stack.coordinator)
        let ids = try reader.fetch(FetchRequest(entityName: "Employee")).map(\.objectID)
        return (stack, ids)
    }

    @Test(
        "a lookup pins its row at once, found in the row cache or stored from the driver, and the context releases it",
        arguments: [false, true])
    func lookupPinsAtOnce(fromDriver: Bool) throws {
        let (stack, ids) = try Self.cachedStack()
        let cache = stack.coordinator.rowCache
        #expect(ids.count >= 3)
        #expect(cache.statistics.pinned == 0)
        if fromDriver { cache.removeAll(in: ObjectIdentifier(stack.store)) }
        let (hits, misses) = (cache.statistics.hits, cache.statistics.misses)
        do {
            let context = ManagedObjectContext(coordinator: stack.coordinator)
            let first = try context.existingObject(with: ids[0])
            if fromDriver {
                #expect(cache.statistics.misses == misses + 1, "the row came from the driver")
            } else {
                #expect(cache.statistics.hits == hits + 1, "the row came from the row cache")
            }
            #expect(cache.statistics.pinned == 1, "pinned without waiting for the context's queued pins")
            #expect(cache.readsInFlight == 0)
            #expect(try context.existingObject(with: ids[0]) === first)
            #expect(cache.statistics.pinned == 1, "a second lookup of a registered object pins nothing")
            _ = try context.existingObject(with: ids[1])
            #expect(cache.statistics.pinned == 2)
        }
        #expect(cache.statistics.pinned == 0, "the context released both pins when it went")
    }

    @Test("a fault a fetch registered keeps its one pin when a lookup fills it")
    func pinnedFaultKeepsOnePin() throws {
        let (stack, ids) = try Self.cachedStack()
        let cache = stack.coordinator.rowCache
        do {
            let context = ManagedObjectContext(coordinator: stack.coordinator)
            var request = FetchRequest(entityName: "Employee")
            request.returnsObjectsAsFaults = true
            let faults = try context.fetch(request)
            #expect(faults.allSatisfy { $0.isFault })
            #expect(cache.statistics.pinned == faults.count)
            let object = try context.existingObject(with: ids[1])
            #expect(!object.isFault && faults.contains { $0 === object })
            #expect(cache.statistics.pinned == faults.count)
        }
        // A second pin for the filled fault would outlive the context and keep the row resident.
        #expect(cache.statistics.pinned == 0, "no pin left behind")
    }

    @Test("a fault made from an ID alone, without a pin, takes the lookup's pin")
    func unpinnedFaultTakesThePin() throws {
        let (stack, ids) = try Self.cachedStack()
        let cache = stack.coordinator.rowCache
        do {
            let context = ManagedObjectContext(coordinator: stack.coordinator)
            let fault = context.object(with: ids[2])
            #expect(fault.isFault)
            #expect(cache.statistics.pinned == 0, "a fault made from an ID pins nothing")
            let object = try context.existingObject(with: ids[2])
            #expect(object === fault && !object.isFault)
            #expect(cache.statistics.pinned == 1, "the filled fault holds the lookup's pin")
        }
        #expect(cache.statistics.pinned == 0, "and gives it back with its context")
    }

    @Test("a lookup whose driver read fails throws, ends its read and pins nothing; a retry works")
    func failedDriverRead() throws {
        let (stack, driver) = try TestStack.recording()
        let id = try stack.fetch("Employee", "name == 'Ann'", in: stack.newContext())[0].objectID
        let cache = stack.coordinator.rowCache
        cache.removeAll(in: ObjectIdentifier(stack.store))
        let context = stack.newContext()
        driver.failNext(.rows, with: StoreError(.io, "injected read failure"))
        #expect(throws: StoreError.self) { try context.existingObject(with: id) }
        #expect(cache.readsInFlight == 0, "the failed read ended")
        #expect(cache.statistics.pinned == 0)
        let ann = try context.existingObject(with: id)
        #expect(ann.value(forKey: "name") as? String == "Ann")
        #expect(cache.statistics.pinned == 1 && cache.readsInFlight == 0)
    }
}
