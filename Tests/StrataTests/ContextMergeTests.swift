import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@Suite("Merging saves and notifications")
struct ContextMergeTests {
    @Test(
        "mergeChanges(fromContextDidSave:) refreshes updated objects, drops deleted ones, registers inserted ones, keeps local changes"
    )
    func mergeFromDidSave() throws {
        let stack = try TestStack(seeded: true)
        let view = stack.newContext()
        let ann = try stack.fetch("Employee", "name == 'Ann'", in: view)[0]
        let dan = try stack.fetch("Employee", "name == 'Dan'", in: view)[0]
        let track = try stack.fetch("Track", "title == 'Track 0'", in: view)[0]
        _ = (ann.value(forKey: "age"), dan.value(forKey: "age"), track.value(forKey: "title"))
        dan["email"] = "mine@example.com"
        let background = stack.newContext()
        var saved: ContextDidSave?
        background.addDidSaveObserver { saved = $0 }
        try stack.fetch("Employee", "name == 'Ann'", in: background)[0]["age"] = 99
        try stack.fetch("Employee", "name == 'Dan'", in: background)[0]["age"] = 88
        background.delete(try stack.fetch("Track", "title == 'Track 0'", in: background)[0])
        let tag = try background.insertNewObject(forEntityName: "Tag")
        tag["name"] = "merged"
        try background.save()
        var changes: ObjectsDidChange?
        view.addObjectsDidChangeObserver { changes = $0 }
        var merged: ObjectIDChanges?
        view.addDidMergeChangesObserver { merged = $0 }
        view.mergeChanges(fromContextDidSave: try #require(saved))
        #expect(ann.value(forKey: "age") as? Int == 99)
        #expect(dan.value(forKey: "age") as? Int == 88)
        #expect(dan.value(forKey: "email") as? String == "mine@example.com", "local changes are kept")
        #expect(dan.isUpdated)
        #expect(!track.isAccessible)
        #expect(view.registeredObject(for: tag.objectID) != nil)
        #expect(changes?.refreshedObjects.contains(ann) == true)
        #expect(changes?.deletedObjects.contains(track) == true)
        #expect(changes?.insertedObjects.contains { $0.objectID == tag.objectID } == true)
        #expect(merged?.deleted == [track.objectID])
        try view.save()
        let row = try stack.fetch("Employee", "name == 'Dan'", in: stack.newContext())[0]
        #expect(
            row.value(forKey: "age") as? Int == 88 && row.value(forKey: "email") as? String == "mine@example.com",
            "no conflict after the merge")
    }

    @Test(
        "automaticallyMergesChangesFromParent: a root context follows saves of other contexts at its next entry point")
    func automaticMerge() throws {
        let stack = try TestStack(seeded: true)
        let view = stack.newContext()
        view.automaticallyMergesChangesFromParent = true
        let ann = try stack.fetch("Employee", "name == 'Ann'", in: view)[0]
        _ = ann.value(forKey: "age")
        let background = stack.newContext()
        try stack.fetch("Employee", "name == 'Ann'", in: background)[0]["age"] = 21
        try background.save()
        #expect(view.hasChanges == false)
        #expect(ann.value(forKey: "age") as? Int == 21)
        let other = stack.newContext()
        let annElsewhere = try stack.fetch("Employee", "name == 'Ann'", in: other)[0]
        _ = annElsewhere.value(forKey: "age")
        try stack.fetch("Employee", "name == 'Ann'", in: background)[0]["age"] = 22
        try background.save()
        #expect(annElsewhere.value(forKey: "age") as? Int == 21, "a context that does not merge keeps its values")
    }

    @Test("a main-queue view context merges background saves on the main queue")
    func mainQueueMerge() async throws {
        let stack = try TestStack(seeded: true)
        let view = ManagedObjectContext(coordinator: stack.coordinator, concurrencyType: .mainQueue)
        let id = try await view.perform {
            view.automaticallyMergesChangesFromParent = true
            let ann = try view.fetch(
                FetchRequest(entityName: "Employee", predicate: FetchPredicate(format: "name == 'Ann'")))[0]
            _ = ann.value(forKey: "age")
            return ann.objectID
        }
        let stream = try await view.perform { view.events() }
        let coordinator = stack.coordinator
        let background = ManagedObjectContext(coordinator: coordinator)
        try await background.perform {
            try background.existingObject(with: id)["age"] = 64
            try background.save()
        }
        var sawMerge = false
        for await event in stream {
            if case .didMergeChanges(let changes) = event, changes.refreshed.contains(id) {
                sawMerge = true
                break
            }
        }
        #expect(sawMerge)
        let age = try await view.perform { view.object(with: id).value(forKey: "age") as? Int }
        #expect(age == 64)
    }

    @Test("objects-did-change, will-save and did-save reach observers and the event stream")
    func notifications() async throws {
        let stack = try TestStack(seeded: true)
        let context = ManagedObjectContext(coordinator: stack.coordinator)
        let events = try await context.perform { context.events() }
        let tagID = try await context.perform {
            let tag = try context.insertNewObject(forEntityName: "Tag")
            tag["name"] = "observed"
            return tag.objectID
        }
        try await context.perform { try context.save() }
        var seen: [ContextEvent] = []
        for await event in events {
            seen.append(event)
            if case .didSave = event { break }
        }
        #expect(
            seen.contains {
                if case .objectsDidChange(let c) = $0 { return c.inserted.contains(tagID) } else { return false }
            })
        #expect(seen.contains(.willSave))
        #expect(
            seen.contains {
                if case .didSave(let saved) = $0 { return saved.insertedObjectIDs.count == 1 } else { return false }
            })
        var willSave = 0
        let token = context.performAndWait { context.addWillSaveObserver { willSave += 1 } }
        try context.performAndWait {
            try stack.fetch("Tag", "name == 'red'", in: context)[0]["name"] = "crimson"
            try context.save()
            context.removeObserver(token)
            try stack.fetch("Tag", "name == 'crimson'", in: context)[0]["name"] = "red"
            try context.save()
        }
        #expect(willSave == 1)
    }

    /// An in-memory driver whose remote-change handler the test can call, standing in for a shared
    /// server's notifications; "the other process" writes through a second coordinator on the same
    /// named in-memory store.
    final class RemoteReportingDriver: StoreDriver {
        let wrapped: any StoreDriver
        let handler = Locked<(@Sendable (RemoteChanges) -> Void)?>(nil)
        /// Run once after the next commit reaches the store, before the commit returns.
        let afterNextApply = Locked<(@Sendable () throws -> Void)?>(nil)
        init(_ wrapped: any StoreDriver) { self.wrapped = wrapped }
        var capabilities: DriverCapabilities { wrapped.capabilities }
        func loadMetadata() throws -> StoreMetadata { try wrapped.loadMetadata() }
        func saveMetadata(_ metadata: StoreMetadata) throws { try wrapped.saveMetadata(metadata) }
        func fetch(_ request: StoreFetch) throws -> StoreFetchResult { try wrapped.fetch(request) }
        func rows(for ids: [RowID]) throws -> [RowSnapshot] { try wrapped.rows(for: ids) }
        func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64> {
            try wrapped.allocatePrimaryKeys(forEntity: entity, count: count)
        }
        func apply(_ batch: ChangeBatch) throws -> CommitResult {
            let result = try wrapped.apply(batch)
            try afterNextApply.withLock { hook in
                defer { hook = nil }
                return hook
            }?()
            return result
        }
        func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult { try wrapped.execute(request) }
        func observeRemoteChanges(_ handler: @escaping @Sendable (RemoteChanges) -> Void) throws {
            self.handler.withLock { $0 = handler }
        }
        func close() throws { try wrapped.close() }
        func report(_ changes: RemoteChanges) { handler.withLock { $0 }?(changes) }
    }

    struct RemoteFactory: StoreDriverFactory {
        func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
            RemoteReportingDriver(try StoreType.inMemory.factory.makeDriver(request))
        }
    }

    /// This process's coordinator on a named in-memory store attached through ``RemoteFactory``,
    /// and the store's driver; `seeded` puts the conformance rows in first.
    static func remoteStore(_ name: String, seeded: Bool) throws -> (
        url: URL?, mine: PersistentStoreCoordinator, store: PersistentStore, driver: RemoteReportingDriver
    ) {
        let url = URL(string: "memory://\(name)-\(UUID().uuidString)")
        let mine = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try mine.addPersistentStore(type: StoreType(name: "RemoteTest", factory: RemoteFactory()), at: url)
        if seeded { try ConformanceModel.seed(ManagedObjectContext(coordinator: mine)) }
        // The store was attached through RemoteFactory.
        return (url, mine, store, store.driver as! RemoteReportingDriver)
    }

    @Test("changes another process commits reach remote-change observers and merging contexts")
    func remoteChanges() throws {
        let (url, mine, store, driver) = try Self.remoteStore("remote", seeded: false)
        let theirs = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try theirs.addPersistentStore(type: .inMemory, at: url)
        let seeding = ManagedObjectContext(coordinator: theirs)
        try ConformanceModel.seed(seeding)
        let view = ManagedObjectContext(coordinator: mine)
        view.automaticallyMergesChangesFromParent = true
        let ann = try view.fetch(
            FetchRequest(entityName: "Employee", predicate: FetchPredicate(format: "name == 'Ann'")))[0]
        let track = try view.fetch(
            FetchRequest(entityName: "Track", predicate: FetchPredicate(format: "title == 'Track 0'")))[0]
        _ = (ann.value(forKey: "age"), track.value(forKey: "title"))
        let heard = Locked<[ContextDidSave]>([])
        mine.addRemoteChangeObserver { saved in heard.withLock { $0.append(saved) } }
        // The other process changes Ann, deletes a track and adds a tag.
        let other = ManagedObjectContext(coordinator: theirs)
        try other.existingObject(
            with: ManagedObjectID(entity: ann.entity, rowID: ann.objectID.rowID, store: theirs.persistentStores[0]))[
                "age"] = 90
        other.delete(
            try other.existingObject(
                with: ManagedObjectID(
                    entity: track.entity, rowID: track.objectID.rowID, store: theirs.persistentStores[0])))
        let tag = try other.insertNewObject(forEntityName: "Tag")
        tag["name"] = "remote"
        try other.save()
        // Its notification arrives.
        driver.report(
            RemoteChanges(
                inserted: [tag.objectID.rowID], updated: [ann.objectID.rowID], deleted: [track.objectID.rowID]))
        #expect(heard.withLock { $0.count } == 1)
        // A context merges at its next entry point (here, the end of its event).
        view.processPendingChanges()
        #expect(ann.value(forKey: "age") as? Int == 90, "the merged value")
        #expect(!track.isAccessible)
        let tags = try view.fetch(
            FetchRequest(entityName: "Tag", predicate: FetchPredicate(format: "name == 'remote'")))
        #expect(tags.count == 1)
        #expect(
            view.registeredObject(for: ManagedObjectID(entity: tag.entity, rowID: tag.objectID.rowID, store: store))
                != nil)
    }

    @Test(
        "a row another process deletes between this process's commit of it and the commit's caching does not come back"
    )
    func remoteDeleteDuringCommit() throws {
        let (url, mine, store, driver) = try Self.remoteStore("commit-race", seeded: true)
        let theirs = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try theirs.addPersistentStore(type: .inMemory, at: url)
        /// After this process's next commit reaches the store: the other process reads the row
        /// titled `title` (the committed version), deletes it and says so, before the commit returns.
        func deleteElsewhere(title: String) {
            driver.afterNextApply.withLock {
                $0 = {
                    let other = ManagedObjectContext(coordinator: theirs)
                    let found = try other.fetch(
                        FetchRequest(entityName: "Track", predicate: FetchPredicate(format: "title == %@", title)))
                    guard found.count == 1 else { throw StoreError(.notFound, "\(found.count) rows titled \(title)") }
                    other.delete(found[0])
                    try other.save()
                    driver.report(RemoteChanges(deleted: [found[0].objectID.rowID]))
                }
            }
        }
        let context = ManagedObjectContext(coordinator: mine)
        // An update: the saved version 2 must not be cached over the other process's delete.
        let track = try context.fetch(
            FetchRequest(entityName: "Track", predicate: FetchPredicate(format: "title == 'Track 1'")))[0]
        track["title"] = "Track 1 renamed"
        deleteElsewhere(title: "Track 1 renamed")
        try context.save()
        // An insert: its row must not be cached (and pinned) over the delete either.
        let inserted = try context.insertNewObject(forEntityName: "Track")
        inserted["title"] = "Track new"
        deleteElsewhere(title: "Track new")
        try context.save()
        #expect(driver.afterNextApply.withLock { $0 == nil }, "both deletes ran")
        for id in [track.objectID, inserted.objectID] {
            let key = RowCache.Key(store: ObjectIdentifier(store), row: id.rowID)
            #expect(mine.rowCache.snapshot(for: key) == nil, "\(id) is not in the row cache")
            #expect("a new context does not find \(id)") {
                _ = try ManagedObjectContext(coordinator: mine).existingObject(with: id)
            } throws: { ($0 as? StoreError)?.code == .notFound }
        }
        let titles = try ManagedObjectContext(coordinator: mine).fetch(FetchRequest(entityName: "Track")).map {
            $0["title"] as String?
        }
        #expect(!titles.contains("Track 1 renamed") && !titles.contains("Track new"))
    }

    @Test(
        "a driver that may have missed remote changes empties the store's rows from the row cache, and nobody hears of nothing"
    )
    func missedRemoteChanges() throws {
        let (_, mine, store, driver) = try Self.remoteStore("missed", seeded: true)
        let view = ManagedObjectContext(coordinator: mine)
        let employees = try view.fetch(FetchRequest(entityName: "Employee"))
        let ann = try #require(employees.first)
        let key = RowCache.Key(store: ObjectIdentifier(store), row: ann.objectID.rowID)
        #expect(mine.rowCache.snapshot(for: key) != nil)
        let heard = Locked<Int>(0)
        mine.addRemoteChangeObserver { _ in heard.withLock { $0 += 1 } }
        #expect(!RemoteChanges(mayHaveMissedChanges: true).isEmpty)
        driver.report(RemoteChanges(mayHaveMissedChanges: true))
        #expect(mine.rowCache.snapshot(for: key) == nil, "every cached row of the store is dropped")
        #expect(heard.withLock { $0 } == 0, "no observer is told of an empty change")
        // The rows load again from the store.
        let again = try ManagedObjectContext(coordinator: mine).fetch(FetchRequest(entityName: "Employee"))
        #expect(again.count == employees.count)
    }

    @Test("a long-lived context lets go of fetched objects nobody holds; retainsRegisteredObjects keeps them")
    func weakRegistration() throws {
        let stack = try TestStack(seeded: false)
        let seeding = stack.newContext()
        for index in 0..<5_000 {
            let tag = try seeding.insertNewObject(forEntityName: "Tag")
            tag["name"] = "t\(index)"
        }
        try seeding.save()
        let context = stack.newContext()
        var kept: ManagedObject?
        for round in 0..<4 {
            let tags = try context.fetch(FetchRequest(entityName: "Tag"))
            if round == 0 { kept = tags[7] }
            kept?["name"] = "changed \(round)"
        }
        #expect(
            context.registeredObjects.count < 10_000, "registrations stay bounded: \(context.registeredObjects.count)")
        #expect(context.registeredObject(for: try #require(kept).objectID) === kept, "a held, changed object stays")
        let keeping = stack.newContext()
        keeping.retainsRegisteredObjects = true
        for _ in 0..<3 { _ = try keeping.fetch(FetchRequest(entityName: "Tag")) }
        #expect(keeping.registeredObjects.count == 5_000)
        #expect(stack.coordinator.rowCache.statistics.pinned <= 5_000 + 10_000)
    }
}
