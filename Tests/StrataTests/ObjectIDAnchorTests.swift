import Foundation
import StrataInMemory
import StrataTesting
import Testing

@testable import Strata

/// Object IDs hold their entity and store through anchors each context makes for itself.
@Suite("Object ID anchors")
struct ObjectIDAnchorTests {
    static func model(_ names: [String]) -> ManagedObjectModel {
        // Configured by hand, and a model no valid program changes: `try!` cannot fail here.
        try! ManagedObjectModel(
            entities: names.map { EntityDescription($0, properties: [.attribute("n", .integer64)]) })
    }

    @Test("IDs of one row made by two contexts are equal and hash alike, with their own anchors")
    func idsAcrossContexts() throws {
        let directory = try TemporaryDirectory(prefix: "anchors")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model(["A", "B"]))
        try coordinator.addPersistentStore(type: .inMemory, at: directory.file("store"))
        let writer = ManagedObjectContext(coordinator: coordinator)
        for n in 0..<5 {
            let object = try writer.insertNewObject(forEntityName: n % 2 == 0 ? "A" : "B")
            object["n"] = Int64(n)
        }
        try writer.save()
        let first = ManagedObjectContext(coordinator: coordinator)
        let second = ManagedObjectContext(coordinator: coordinator)
        let ours = try first.fetch(FetchRequest(entityName: "A")).map(\.objectID)
        let theirs = try second.fetch(FetchRequest(entityName: "A")).map(\.objectID)
        #expect(ours.count == 3)
        #expect(ours == theirs)
        #expect(Set(ours) == Set(theirs))
        #expect(ours.map(\.hashValue) == theirs.map(\.hashValue))
        #expect(ours[0].anchor !== theirs[0].anchor, "each context anchors its own IDs")
        #expect(ours.allSatisfy { $0.anchor === ours[0].anchor }, "one anchor per entity and store in a context")
        #expect(ours.allSatisfy { $0.entity.name == "A" && $0.persistentStore === coordinator.persistentStores[0] })
        let bees = try first.fetch(FetchRequest(entityName: "B")).map(\.objectID)
        #expect(bees.count == 2 && bees[0].anchor !== ours[0].anchor)
        // An ID made by hand equals the context's.
        let made = ManagedObjectID(entity: ours[0].entity, rowID: ours[0].rowID, store: ours[0].persistentStore)
        #expect(made == ours[0] && made.hashValue == ours[0].hashValue)
    }

    @Test("an ID keeps its entity and store alive after its context, coordinator and model are gone")
    func idsOutliveTheirOwners() throws {
        let directory = try TemporaryDirectory(prefix: "anchors")
        var id: ManagedObjectID?
        do {
            let model = Self.model(["Thing"])
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .inMemory, at: directory.file("store"))
            let context = ManagedObjectContext(coordinator: coordinator)
            let thing = try context.insertNewObject(forEntityName: "Thing")
            try context.save()
            id = thing.objectID
        }
        let kept = try #require(id)
        #expect(kept.entity.name == "Thing")
        #expect(kept.persistentStore != nil)
        #expect(kept.uriRepresentation().absoluteString.hasSuffix("/Thing/p1"))
    }

    @Test("an anchor cache does not reuse an anchor for another entity or store under the same numbers")
    func cacheChecksIdentity() throws {
        var anchors = ObjectIDAnchors()
        let one = Self.model(["X"])
        let other = Self.model(["X"])
        let x1 = try #require(one.entity(named: "X"))
        let x2 = try #require(other.entity(named: "X"))
        #expect(x1.entityNumber == x2.entityNumber)
        let a = anchors.anchor(x1, nil)
        #expect(anchors.anchor(x1, nil) === a)
        let b = anchors.anchor(x2, nil)
        #expect(b !== a && b.entity === x2)
        let directory = try TemporaryDirectory(prefix: "anchors")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: one)
        let store = try coordinator.addPersistentStore(type: .inMemory, at: directory.file("store"))
        let c = anchors.anchor(x1, store)
        #expect(c !== a && c.store === store && c.entity === x1)
        #expect(anchors.anchor(x1, nil).entity === x1, "switching stores back finds a working anchor")
        #expect(anchors.anchor(x1, store) === c)
    }

    /// glibc's `malloc_usable_size` (declared in `malloc.h`, which no Swift module exports), found
    /// with `dlsym` and called through its C signature.
    static func mallocUsableSize(_ pointer: UnsafeMutableRawPointer) throws -> Int {
        let symbol = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size"))
        typealias Function = @convention(c) (UnsafeMutableRawPointer?) -> Int
        return unsafeBitCast(symbol, to: Function.self)(pointer)
    }

    @Test("an ID is its anchor and primary key, 16 bytes, and an object fits a 96-byte allocation")
    func sizes() throws {
        #expect(MemoryLayout<ManagedObjectID>.size == 16)
        let directory = try TemporaryDirectory(prefix: "anchors")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model(["A"]))
        try coordinator.addPersistentStore(type: .inMemory, at: directory.file("store"))
        let context = ManagedObjectContext(coordinator: coordinator)
        let object = try context.insertNewObject(forEntityName: "A")
        // glibc's usable size of the object's allocation: 88 bytes in a 96-byte chunk; a stored
        // property of 8 bytes more makes it 104 in a 112-byte chunk, 16 bytes more per object.
        let usable = try withExtendedLifetime(object) {
            try Self.mallocUsableSize(Unmanaged.passUnretained(object).toOpaque())
        }
        #expect(usable <= 88, "a ManagedObject takes \(usable) usable bytes")
    }

    @Test("an ID made by hand for a row numbered otherwise than its entity keeps the row as given")
    func handMadeRowNumbers() throws {
        let model = Self.model(["A", "B"])
        let a = try #require(model.entity(named: "A"))
        let b = try #require(model.entity(named: "B"))
        let odd = ManagedObjectID(entity: a, rowID: RowID(entity: b.entityNumber, primaryKey: 7), store: nil)
        #expect(odd.rowID == RowID(entity: b.entityNumber, primaryKey: 7))
        #expect(odd.entity === a && odd.primaryKey == 7)
        let plain = ManagedObjectID(entity: a, rowID: RowID(entity: a.entityNumber, primaryKey: 7), store: nil)
        #expect(plain != odd, "IDs of rows numbered differently differ")
        let viaB = ManagedObjectID(entity: b, rowID: RowID(entity: b.entityNumber, primaryKey: 7), store: nil)
        #expect(viaB == odd && viaB.hashValue == odd.hashValue, "equal rows and stores make equal IDs")
        // An anchor cache makes the odd row an anchor of its own instead of renumbering it.
        var anchors = ObjectIDAnchors()
        let made = anchors.id(a, RowID(entity: b.entityNumber, primaryKey: -3), nil)
        #expect(made.rowID == RowID(entity: b.entityNumber, primaryKey: -3) && made.isTemporaryID)
        #expect(anchors.id(a, RowID(entity: a.entityNumber, primaryKey: 1), nil).rowID.entity == a.entityNumber)
    }
}
