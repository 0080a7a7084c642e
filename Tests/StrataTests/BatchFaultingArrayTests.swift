import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

final class Dog: ManagedObject {
    @ManagedAttribute("name") var name: String
}

@Suite("Batch-faulting results")
struct BatchFaultingArrayTests {
    /// A store of `count` tags named `t00000`…, none of them registered or cached.
    private static func tags(_ count: Int) throws -> TestStack {
        let stack = try TestStack(seeded: false)
        do {
            let seeding = ManagedObjectContext(coordinator: stack.coordinator)
            for index in 0..<count {
                let tag = try seeding.insertNewObject(forEntityName: "Tag")
                tag["name"] = String(format: "t%05d", index)
            }
            try seeding.save()
        }
        stack.coordinator.rowCache.removeAll(in: ObjectIdentifier(stack.store))
        return stack
    }

    @Test("walking a large result keeps a few batches of objects registered, not the whole result")
    func walkStaysBounded() throws {
        let stack = try Self.tags(20_000)
        let context = stack.newContext()
        var request = FetchRequest(entityName: "Tag", sortKeys: [SortKey("name")])
        request.fetchBatchSize = 500
        let tags = try context.fetchBatchFaulting(request)
        #expect(tags.count == 20_000)
        weak let first = tags[0]
        #expect(first != nil)
        var most = 0
        var names: [String] = []
        for (index, tag) in tags.enumerated() {
            names.append(tag["name"] as String? ?? "?")
            if index % 1_000 == 999 { most = max(most, context.registeredObjects.count) }
        }
        #expect(names == (0..<20_000).map { String(format: "t%05d", $0) })
        // The sweep starts at 4,096 registered objects; the array holds two batches of 500.
        #expect(most < 4_096 + 1_000, "registered objects during the walk: at most \(most)")
        #expect(first == nil, "the first batch's objects were let go")
        #expect(stack.coordinator.rowCache.statistics.count == 0, "the batches' rows stayed out of the row cache")
        // Reading an early position again makes its object again, loaded from the store's row.
        #expect(tags[0]["name"] as String? == "t00000")
    }

    @Test("with retainsRegisteredObjects the context keeps every walked object, as Core Data's does")
    func retained() throws {
        let stack = try Self.tags(6_000)
        let context = stack.newContext()
        context.retainsRegisteredObjects = true
        var request = FetchRequest(entityName: "Tag")
        request.fetchBatchSize = 100
        let tags = try context.fetchBatchFaulting(request)
        weak let first = tags[0]
        for tag in tags { _ = tag["name"] as String? }
        #expect(first != nil)
        #expect(context.registeredObjects.count == 6_000)
    }

    @Test("a typed batch-faulting fetch keeps the objects of the class, in the order fetch(_:as:) gives")
    func typed() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Animal", isAbstract: true, properties: [.attribute("name", .string)]),
            EntityDescription("Dog", parent: "Animal", managedObjectClass: Dog.self),
            EntityDescription("Cat", parent: "Animal"),
        ])
        let stack = try TestStack(model: model)
        for index in 0..<30 {
            let animal = try stack.context.insertNewObject(forEntityName: index % 3 == 0 ? "Cat" : "Dog")
            animal["name"] = String(format: "a%02d", index)
        }
        try stack.context.save()
        let context = stack.newContext()
        var request = FetchRequest(entityName: "Animal", sortKeys: [SortKey("name", ascending: false)])
        request.fetchBatchSize = 4
        let dogs = try context.fetchBatchFaulting(request, as: Dog.self)
        let expected = try context.fetch(request, as: Dog.self)
        #expect(dogs.count == 20 && expected.count == 20)
        #expect(dogs.map(\.name) == expected.map(\.name))
        #expect(zip(dogs, expected).allSatisfy { $0 === $1 })
        #expect(try context.fetchBatchFaulting(request).count == 30)
    }

    @Test("after a reset, reading a position makes a new object registered in the context")
    func afterReset() throws {
        let stack = try Self.tags(50)
        let context = stack.newContext()
        var request = FetchRequest(entityName: "Tag", sortKeys: [SortKey("name")])
        request.fetchBatchSize = 10
        let tags = try context.fetchBatchFaulting(request)
        let before = tags[3]
        context.reset()
        let after = tags[3]
        #expect(after !== before)
        #expect(after.managedObjectContext === context)
        #expect(after["name"] as String? == "t00003")
        #expect(context.registeredObject(for: after.objectID) === after)
    }
}
