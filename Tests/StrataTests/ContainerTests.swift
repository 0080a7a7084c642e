import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Synchronization
import Testing

@Suite("Persistent container and the read/write layer")
struct ContainerTests {
    /// A container on a fresh in-memory store of the typed-subclass model.
    static func container(_ name: String = "Library") throws -> PersistentContainer {
        let container = PersistentContainer(name: name, managedObjectModel: try TypedSubclassTests.model())
        container.persistentStoreDescriptions = [
            PersistentStoreDescription(type: .inMemory, url: URL(string: "memory://container-\(UUID().uuidString)"))
        ]
        try container.loadPersistentStores()
        return container
    }

    @Test(
        "loadPersistentStores attaches the described stores once; the view context is a main-queue context that merges")
    func loading() throws {
        let container = try Self.container()
        #expect(container.persistentStoreCoordinator.persistentStores.count == 1)
        #expect(try container.loadPersistentStores().isEmpty, "loading again attaches nothing new")
        #expect(container.viewContext.concurrencyType == .mainQueue)
        #expect(container.viewContext.automaticallyMergesChangesFromParent)
        #expect(container.newBackgroundContext().concurrencyType == .privateQueue)
    }

    @Test("an unknown store type is a clear error naming the type")
    func unknownType() throws {
        let container = PersistentContainer(name: "Nowhere", managedObjectModel: try TypedSubclassTests.model())
        var description = PersistentStoreDescription(url: URL(fileURLWithPath: "/tmp/strata-no-such-type.store"))
        description.type = "NoSuchType"
        container.persistentStoreDescriptions = [description]
        #expect { try container.loadPersistentStores() } throws: { error in
            (error as? StoreError)?.code == .invalidRequest && "\(error)".contains("NoSuchType")
        }
        #expect(PersistentContainer.defaultDirectoryURL().path.isEmpty == false)
    }

    @Test("a background save is merged into the view context automatically")
    func backgroundSaveMerged() async throws {
        let container = try Self.container()
        let view = container.viewContext
        let id = try await container.performBackgroundTask { context in
            let author = try Author.create(in: context)
            author.name = "Le Guin"
            try context.save()
            return author.objectID
        }
        let name = try await view.perform { try view.existingObject(with: id)["name"] as? String }
        #expect(name == "Le Guin")
        try await container.performBackgroundTask { context in
            let author = try context.existingObject(with: id)
            author["name"] = "Ursula K. Le Guin"
            try context.save()
        }
        let merged = try await view.perform { view.object(with: id)["name"] as? String }
        #expect(merged == "Ursula K. Le Guin")
    }

    @Test("four background tasks in parallel all reach the store")
    func parallelTasks() async throws {
        let container = try Self.container()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    try await container.performBackgroundTask { context in
                        for index in 0..<25 {
                            let author = try Author.create(in: context)
                            author.name = "t\(task)-\(index)"
                        }
                        try context.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        let count = try await container.viewContext.perform { try Author.count(in: container.viewContext) }
        #expect(count == 100)
    }

    @Test("DataAccess: writes reach the store and the view context; reads chain; errors go to the handler")
    func dataAccess() throws {
        let container = try Self.container()
        let data = DataAccess(container: container)
        let errors = Locked<[String]>([])
        data.errorHandler = { error in errors.withLock { $0.append("\(error)") } }
        let seen = Locked<Int>(-1)
        data.writeSync { context in
            for name in ["Le Guin", "Butler", "Jemisin"] {
                let author = try Author.create(in: context)
                author.name = name
            }
        }.writeSync { context in
            try Author.first(matching: FetchPredicate(format: "name == 'Butler'"), in: context)?.delete()
        }.read { context in
            let count = try Author.count(in: context)
            seen.withLock { $0 = count }
        }
        #expect(seen.withLock { $0 } == 2)
        data.writeSync { context in
            _ = try Author.create(in: context)
            throw StoreError(.invalidRequest, "a write that fails")
        }
        #expect(errors.withLock { $0.count } == 1)
        #expect(
            try container.viewContext.performAndWait { try Author.count(in: container.viewContext) } == 2,
            "the failed write was rolled back")
        let store = ManagedObjectContext(coordinator: container.persistentStoreCoordinator)
        #expect(try Author.all(in: store).map(\.name).sorted() == ["Jemisin", "Le Guin"])
    }

    @Test("DataAccess async forms and writeAsync's completion")
    func dataAccessAsync() async throws {
        let container = try Self.container()
        let data = DataAccess(container: container)
        let id = try await data.write { context in
            let author = try Author.create(in: context)
            author.name = "Tolkien"
            try context.obtainPermanentIDs(for: [author])
            return author.objectID
        }
        let name = try await data.read { context in try context.existingObject(with: id)["name"] as? String }
        #expect(name == "Tolkien")
        let failure: (any Error)? = await withCheckedContinuation { continuation in
            data.writeAsync(
                { context in
                    let author = try Author.create(in: context)
                    author.name = "Pratchett"
                }, completion: { continuation.resume(returning: $0) })
        }
        #expect(failure == nil)
        #expect(try await data.read { try Author.count(in: $0) } == 2)
        await #expect(throws: StoreError.self) {
            try await data.write { _ in throw StoreError(.invalidRequest, "no") }
        }
    }

    @Test("typed helpers: create, all, all(matching:), first, count, deleteAll, delete, in(_:)")
    func typedHelpers() throws {
        let container = try Self.container()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (name, born) in [("A", 1900), ("B", 1950), ("C", 2000)] {
                let author = try Author.create(in: context)
                author.name = name
                author.born = Int16(born)
            }
            try context.save()
            #expect(try Author.all(in: context).count == 3)
            #expect(
                try Author.all(
                    matching: FetchPredicate(format: "born > 1920"), sortedBy: [SortKey("born")], in: context
                ).map(\.name) == ["B", "C"])
            #expect(try Author.first(sortedBy: [SortKey("born", ascending: false)], in: context)?.name == "C")
            #expect(try Author.count(matching: FetchPredicate(format: "born < 1960"), in: context) == 2)
            let other = ManagedObjectContext(coordinator: container.persistentStoreCoordinator)
            let b = try #require(try Author.first(matching: FetchPredicate(format: "name == 'B'"), in: context))
            #expect(try b.in(other).name == "B")
            b.delete()
            try context.save()
            #expect(throws: StoreError.self) {
                _ = try b.in(ManagedObjectContext(coordinator: container.persistentStoreCoordinator))
            }
            try Author.deleteAll(in: context)
            try context.save()
            #expect(try Author.count(in: context) == 0)
        }
    }
}
