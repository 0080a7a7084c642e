import Foundation
import StrataTesting
import Testing

@testable import Strata

/// The members a to-many fault or a prefetch reads with their rows are registered and cached as a
/// fetch's rows are: each row pinned once, as it is stored, for the object that holds it (a fault
/// made from an ID alone included), and every pin given back with the context.
@Suite("SQLite driver: pins of to-many members read with their rows")
struct SQLiteMemberPinTests {
    static let parents = 3
    static let childrenPerParent = 4

    /// A store of parents with children, reopened through a ``RecordingDriver`` with an empty row
    /// cache; the parents' and children's IDs.
    static func store(in directory: TemporaryDirectory) throws -> (
        PersistentStoreCoordinator, RecordingDriver, parents: [ManagedObjectID], children: [ManagedObjectID]
    ) {
        let parent = EntityDescription(
            "Parent", properties: [.attribute("name", .string), .toMany("children", "Child", inverse: "parent")])
        let child = EntityDescription(
            "Child", properties: [.attribute("value", .integer64), .toOne("parent", "Parent", inverse: "children")])
        let model = try ManagedObjectModel(entities: [parent, child])
        let url = directory.file("members.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            _ = try coordinator.addPersistentStore(type: .sqlite, at: url)
            let context = ManagedObjectContext(coordinator: coordinator)
            for index in 0..<parents {
                let object = try context.insertNewObject(forEntityName: "Parent")
                object["name"] = "parent \(index)"
                for value in 0..<childrenPerParent {
                    let member = try context.insertNewObject(forEntityName: "Child")
                    member["value"] = Int64(index * childrenPerParent + value)
                    member["parent"] = object
                }
            }
            try context.save()
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: RecordingDriver.storeType(wrapping: .sqlite), at: url)
        // The store was opened through RecordingDriver.storeType(wrapping:).
        let driver = try #require(store.driver as? RecordingDriver)
        let reader = ManagedObjectContext(coordinator: coordinator)
        var byName = FetchRequest(entityName: "Parent")
        byName.sortKeys = [SortKey("name")]
        var byValue = FetchRequest(entityName: "Child")
        byValue.sortKeys = [SortKey("value")]
        let ids = (try reader.fetch(byName).map(\.objectID), try reader.fetch(byValue).map(\.objectID))
        coordinator.rowCache.removeAll(in: ObjectIdentifier(store))
        return (coordinator, driver, ids.0, ids.1)
    }

    @Test("firing a to-many fault pins every member's row once, a member made from its ID alone included")
    func toManyFaultPinsMembers() throws {
        let directory = try TemporaryDirectory(prefix: "member-pins")
        let (coordinator, _, parents, children) = try Self.store(in: directory)
        let cache = coordinator.rowCache
        #expect(cache.statistics.pinned == 0)
        do {
            let context = ManagedObjectContext(coordinator: coordinator)
            let parent = try context.existingObject(with: parents[0])
            // A member registered before its row is read: a fault without a row or a pin.
            let early = context.object(with: children[1])
            #expect(early.isFault && cache.statistics.pinned == 1)
            let members = parent.objects(forKey: "children")
            #expect(members.count == Self.childrenPerParent)
            #expect(members.contains { $0 === early } && !early.isFault)
            #expect(
                Set(members.map { $0["value"] as Int64? ?? -1 }) == Set((0..<Self.childrenPerParent).map(Int64.init)))
            #expect(cache.statistics.pinned == 1 + Self.childrenPerParent, "the parent and each member, once")
            #expect(cache.readsInFlight == 0)
        }
        #expect(cache.statistics.pinned == 0, "the context gave every pin back")
    }

    @Test("a prefetch pins every member's row once and a second walk reads nothing more from the driver")
    func prefetchPinsMembers() throws {
        let directory = try TemporaryDirectory(prefix: "member-pins")
        let (coordinator, driver, _, children) = try Self.store(in: directory)
        let cache = coordinator.rowCache
        do {
            let context = ManagedObjectContext(coordinator: coordinator)
            let early = context.object(with: children[Self.childrenPerParent + 2])
            var request = FetchRequest(entityName: "Parent")
            request.returnsObjectsAsFaults = false
            request.relationshipKeyPathsForPrefetching = ["children"]
            let fetched = try context.fetch(request)
            #expect(fetched.count == Self.parents)
            #expect(!early.isFault)
            #expect(cache.statistics.pinned == Self.parents * (1 + Self.childrenPerParent))
            driver.clearCalls()
            let values = fetched.flatMap { $0.objects(forKey: "children") }.compactMap { $0["value"] as Int64? }
            #expect(values.sorted() == (0..<Int64(Self.parents * Self.childrenPerParent)).map { $0 })
            #expect(driver.calls.isEmpty, "the walk read \(driver.calls)")
        }
        #expect(cache.statistics.pinned == 0)
    }

    @Test(
        "a to-many fault whose driver read fails keeps the error, ends its read and pins nothing; the next access loads it"
    )
    func failedMembersRead() throws {
        let directory = try TemporaryDirectory(prefix: "member-pins")
        let (coordinator, driver, parents, _) = try Self.store(in: directory)
        let cache = coordinator.rowCache
        let context = ManagedObjectContext(coordinator: coordinator)
        let parent = try context.existingObject(with: parents[2])
        let pinned = cache.statistics.pinned
        driver.failNext(.relatedRows, with: StoreError(.io, "injected read failure"))
        #expect(parent.objects(forKey: "children").isEmpty, "a failed read is no members")
        #expect(context.accessFailure?.code == .io, "and the context keeps the error")
        #expect(cache.readsInFlight == 0, "the failed read ended")
        #expect(cache.statistics.pinned == pinned, "nothing pinned for the failed read")
        #expect(context.registeredObjects.count == 1, "no member registered")
        let members = parent.objects(forKey: "children")
        #expect(members.count == Self.childrenPerParent, "the relationship stayed unfetched and loads now")
        #expect(cache.statistics.pinned == pinned + Self.childrenPerParent)
    }
}
