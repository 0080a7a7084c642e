import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

/// `existingObject(with:)` pins a row found in the row cache under the lock that found it; the
/// object owns that pin exactly once, whatever it was before the lookup.
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

    @Test("a lookup found in the row cache pins its row at once, and the context releases it")
    func hitPinsAtOnce() throws {
        let (stack, ids) = try Self.cachedStack()
        let cache = stack.coordinator.rowCache
        #expect(ids.count >= 3)
        #expect(cache.statistics.pinned == 0)
        let hits = cache.statistics.hits
        do {
            let context = ManagedObjectContext(coordinator: stack.coordinator)
            let first = try context.existingObject(with: ids[0])
            #expect(cache.statistics.hits == hits + 1, "the row came from the row cache")
            #expect(cache.statistics.pinned == 1, "pinned without waiting for the context's queued pins")
            #expect(try context.existingObject(with: ids[0]) === first)
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
}
