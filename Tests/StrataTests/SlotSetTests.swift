import Foundation
import StrataInMemory
import Testing

@testable import Strata

/// The set of changed slots: the sets the save builds, and the word an object keeps them in with
/// its flags (slots past 53 in a side table), which keeps the object in malloc's 80-byte chunk.
@Suite("Changed-slot sets")
struct SlotSetTests {
    @Test("slots below and past 63 are kept, listed in order, tested, cleared and told apart")
    func keepsSlots() {
        var set = SlotSet()
        #expect(set.isEmpty && set.bits(below: 54) == 0)
        for slot in [5, 0, 53, 5] { set.insert(slot) }
        #expect(set.ascending == [0, 5, 53])
        #expect(set.bits(below: 54) == 1 | 1 << 5 | 1 << 53)
        #expect(set.bits(below: 53) == nil, "slot 53 is not below 53")
        #expect(SlotSet(bits: 1 | 1 << 5 | 1 << 53) == set)
        set.insert(63)
        #expect(set.bits(below: 54) == nil && set.bits(below: 64) != nil)
        set.insert(100)
        #expect(set.ascending == [0, 5, 53, 63, 100] && Array(set) == set.ascending)
        #expect(set.bits(below: 64) == nil && set.contains(100) && !set.contains(99))
        set.removeAll()
        #expect(set.isEmpty && set == SlotSet())
    }

    /// Whether `malloc` is glibc's (a sanitizer's allocator rounds sizes its own way).
    static let glibcMalloc = dlsym(nil, "__tsan_init") == nil && dlsym(nil, "__asan_init") == nil

    @Test(
        "a managed object fits malloc's 80-byte chunk",
        .enabled(if: glibcMalloc, "a sanitizer's allocator replaces glibc's"))
    func objectSize() throws {
        // 100,000 objects at rest: every 16 bytes here is 1.6 MB (docs/benchmarks.md, Memory).
        let entity = EntityDescription("Note", properties: [.attribute("title", .string)])
        let model = try ManagedObjectModel(entities: [entity])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let object = try context.insertNewObject(forEntityName: "Note")
        // glibc's `malloc_usable_size` (declared in malloc.h, which the Glibc module leaves out):
        // the chunk's size less its 8-byte header.
        let symbol = try #require(dlsym(nil, "malloc_usable_size"))
        let usableSize = unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int).self)
        let usable = usableSize(Unmanaged.passUnretained(object).toOpaque())
        #expect(usable <= 72, "glibc's chunk of \(usable + 8) bytes holds the object; 80 is the goal")
    }

    @Test("an entity of 70 attributes tracks, saves and reports changes past slot 53")
    func wideEntity() throws {
        let names = (0..<70).map { "a\($0)" }
        let entity = EntityDescription("Wide", properties: names.map { .attribute($0, .integer64) })
        let model = try ManagedObjectModel(entities: [entity])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let object = try context.insertNewObject(forEntityName: "Wide")
        for (index, name) in names.enumerated() { object[name] = Int64(index) }
        try context.save()
        #expect(!object.hasChanges)

        let id = ObjectIdentifier(object)
        #expect(!WideSlots.holds(id), "a save clears the object's wide set")

        object["a68"] = Int64(-68)
        #expect(WideSlots.holds(id), "slot 68 is past the word's 54 slots")
        object["a2"] = Int64(-2)
        #expect(object.isUpdated && object.isSlotChanged(68) && object.isSlotChanged(2) && !object.isSlotChanged(3))
        #expect(Set(object.changedValues().keys) == ["a2", "a68"])
        try context.save()
        #expect(!object.hasChanges && object.changedValues().isEmpty && !WideSlots.holds(id))

        // A slot changed in the word before the first one past 53 is carried into the side table.
        object["a3"] = Int64(-3)
        #expect(!WideSlots.holds(id) && object.isSlotChanged(3))
        object["a60"] = Int64(-60)
        #expect(WideSlots.holds(id) && object.isSlotChanged(3) && object.isSlotChanged(60))
        #expect(Set(object.changedValues().keys) == ["a3", "a60"])
        try context.save()
        #expect(!object.hasChanges && !WideSlots.holds(id))

        // An object freed with a wide set leaves no entry behind for the next object at its address.
        var freed: ObjectIdentifier?
        do {
            let scratch = ManagedObjectContext(coordinator: coordinator)
            let other = try scratch.existingObject(with: object.objectID)
            other["a60"] = Int64(60)
            freed = ObjectIdentifier(other)
            #expect(WideSlots.holds(ObjectIdentifier(other)) && other.hasChanges)
        }
        #expect(!WideSlots.holds(try #require(freed)), "the object's deinit removed its entry")

        let reader = ManagedObjectContext(coordinator: coordinator)
        let read = try reader.existingObject(with: object.objectID)
        #expect(
            read["a68"] as? Int == -68 && read["a2"] as? Int == -2 && read["a69"] as? Int == 69,
            "\(read["a68"] ?? "nil")")
        #expect(read["a3"] as? Int == -3 && read["a60"] as? Int == -60)
    }
}
