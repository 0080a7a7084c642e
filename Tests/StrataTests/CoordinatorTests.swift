import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@Suite("Coordinator: routing, stores, metadata")
struct CoordinatorTests {
    /// Two stores: "Staff" (Department, Employee) and "Media" (Playlist, Track, Chapter).
    func twoStores() throws -> (PersistentStoreCoordinator, PersistentStore, PersistentStore) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let staff = try coordinator.addPersistentStore(type: .inMemory, configuration: "Staff")
        let media = try coordinator.addPersistentStore(type: .inMemory, configuration: "Media")
        return (coordinator, staff, media)
    }

    @Test("a driver without parts of its own hands its whole answer over as one part")
    func defaultParts() throws {
        let stack = try TestStack()
        for index in 1...300 {
            let item = try stack.context.insertNewObject(forEntityName: "Item")
            item["int64"] = index
        }
        try stack.context.save()
        let item = try #require(stack.coordinator.managedObjectModel.entity(named: "Item"))
        var parts: [StoreFetchResult] = []
        try stack.store.driver.fetch(StoreFetch(entity: item)) { parts.append($0) }
        #expect(parts.count == 1)
        #expect(parts.first?.rows == (try stack.store.driver.fetch(StoreFetch(entity: item))).rows)
        #expect(parts.first?.rows.count == 300)
    }

    @Test("stores are named by their file's path, or by their URL without its password")
    func storeNames() throws {
        #expect(URL(fileURLWithPath: "/data/Shop.sqlite").storeName == "/data/Shop.sqlite")
        let server = try #require(URL(string: "postgres://ada:s3cret@db:5432/shop?schema=sales"))
        #expect(server.storeName == "postgres://ada@db:5432/shop?schema=sales")
        let request = StoreOpenRequest(
            url: server, model: ConformanceModel.model, configuration: nil, options: StoreOptions())
        #expect(request.displayName(type: "X") == "postgres://ada@db:5432/shop?schema=sales")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let url = try #require(URL(string: "memory://ada:s3cret@names-\(UUID().uuidString)"))
        let store = try coordinator.addPersistentStore(type: .inMemory, at: url)
        #expect(!store.displayName.contains("s3cret"))
        #expect(store.displayName.hasPrefix("memory://ada@names-"))
        let error = #expect(throws: StoreError.self) { try coordinator.addPersistentStore(type: .inMemory, at: url) }
        #expect(error.map { "\($0)".contains("s3cret") } == false)
    }

    @Test("inserts are routed to the store whose configuration holds the entity")
    func routing() throws {
        let (coordinator, staff, media) = try twoStores()
        let context = ManagedObjectContext(coordinator: coordinator)
        let d = try context.insertNewObject(forEntityName: "Department")
        d["name"] = "D"
        let t = try context.insertNewObject(forEntityName: "Track")
        t["title"] = "T"
        try context.save()
        #expect(d.objectID.persistentStore === staff)
        #expect(t.objectID.persistentStore === media)
        #expect(try staff.driver.fetch(StoreFetch(entity: d.entity)).rows.count == 1)
        #expect(try media.driver.fetch(StoreFetch(entity: d.entity)).rows.isEmpty)
    }

    @Test("an entity held by two stores: assign(_:to:) picks one, fetches span both in sort order")
    func spanningFetch() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let first = try coordinator.addPersistentStore(type: .inMemory)
        let second = try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        for (index, name) in ["delta", "alpha", "echo", "bravo", "charlie"].enumerated() {
            let tag = try context.insertNewObject(forEntityName: "Tag")
            tag["name"] = name
            try context.assign(tag, to: index % 2 == 0 ? first : second)
        }
        try context.save()
        let reader = ManagedObjectContext(coordinator: coordinator)
        let all = try reader.fetch(FetchRequest(entityName: "Tag", sortKeys: [SortKey("name")]))
        #expect(all.compactMap { $0["name"] as? String } == ["alpha", "bravo", "charlie", "delta", "echo"])
        #expect(Set(all.compactMap { $0.objectID.persistentStore.map(ObjectIdentifier.init) }).count == 2)
        var page = FetchRequest(entityName: "Tag", sortKeys: [SortKey("name", ascending: false)])
        page.fetchLimit = 2
        page.fetchOffset = 1
        #expect(try reader.fetch(page).compactMap { $0["name"] as? String } == ["delta", "charlie"])
        #expect(try reader.count(for: FetchRequest(entityName: "Tag")) == 5)
    }

    @Test("a relationship between objects in different stores is refused at save and nothing is written")
    func crossStore() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let first = try coordinator.addPersistentStore(type: .inMemory)
        let second = try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let d = try context.insertNewObject(forEntityName: "Department")
        d["name"] = "D"
        let e = try context.insertNewObject(forEntityName: "Employee")
        e["name"] = "E"
        e["department"] = d
        try context.assign(d, to: first)
        try context.assign(e, to: second)
        #expect(throws: StoreError.self) { try context.save() }
        do { try context.save() } catch let error as StoreError { #expect(error.code == .crossStore) }
        #expect(try first.driver.fetch(StoreFetch(entity: d.entity)).rows.isEmpty)
        #expect(try second.driver.fetch(StoreFetch(entity: e.entity)).rows.isEmpty)
    }

    @Test("a save over two stores that fails in the second after the first committed says so")
    func partialCommit() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let first = try coordinator.addPersistentStore(type: .inMemory)
        let second = try coordinator.addPersistentStore(type: .inMemory)
        let setup = ManagedObjectContext(coordinator: coordinator)
        let tag = try setup.insertNewObject(forEntityName: "Tag")
        tag["name"] = "shared"
        try setup.assign(tag, to: second)
        try setup.save()
        let stale = ManagedObjectContext(coordinator: coordinator)
        let mine = try stale.existingObject(with: tag.objectID)
        tag["name"] = "changed elsewhere"
        try setup.save()
        mine["name"] = "mine"
        let fresh = try stale.insertNewObject(forEntityName: "Tag")
        fresh["name"] = "new"
        try stale.assign(fresh, to: first)
        do {
            try stale.save()
            Issue.record("a stale save succeeded")
        } catch let error as StoreError {
            #expect(error.code == .partialCommit)
            #expect((error.underlying as? StoreError)?.code == .conflict)
        }
        #expect(try first.driver.fetch(StoreFetch(entity: tag.entity)).rows.count == 1)
    }

    @Test("attaching the same store location twice is refused")
    func attachTwice() throws {
        let url = URL(string: "memory://twice-\(UUID().uuidString)")!
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .inMemory, at: url)
        #expect(throws: StoreError.self) { try coordinator.addPersistentStore(type: .inMemory, at: url) }
    }

    @Test("execute returns what the request's result type asks for")
    func executeResultTypes() throws {
        let stack = try TestStack(seeded: true)
        var request = FetchRequest(entityName: "Tag")
        request.resultType = .managedObjectID
        #expect(try stack.context.execute(request).objectIDs?.count == 4)
        request.resultType = .count
        if case .count(let n) = try stack.context.execute(request) {
            #expect(n == 4)
        } else {
            Issue.record("not a count")
        }
        request.resultType = .dictionary
        if case .dictionaries(let rows) = try stack.context.execute(request) {
            #expect(rows.count == 4)
        } else {
            Issue.record("not dictionaries")
        }
    }

    @Test("assigning an object to a store that does not hold its entity is an error")
    func assignWrongStore() throws {
        let (coordinator, _, media) = try twoStores()
        let context = ManagedObjectContext(coordinator: coordinator)
        let d = try context.insertNewObject(forEntityName: "Department")
        #expect(throws: StoreError.self) { try context.assign(d, to: media) }
    }

    @Test("a store written with another model is refused, naming the entities that differ")
    func modelMismatch() throws {
        let url = URL(string: "memory://mismatch-\(UUID().uuidString)")!
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .inMemory, at: url)
        let changed = try ManagedObjectModel(
            entities: ConformanceModel.model.entities.map { entity in
                EntityDescription(
                    entity.name, parent: entity.superentityName, isAbstract: entity.isAbstract,
                    properties: entity.ownProperties + (entity.name == "Tag" ? [.attribute("color", .string)] : []),
                    uniquenessConstraints: entity.uniquenessConstraints)
            })
        let other = PersistentStoreCoordinator(managedObjectModel: changed)
        do {
            try other.addPersistentStore(type: .inMemory, at: url)
            Issue.record("a store of another model was opened")
        } catch let error as StoreError {
            #expect(error.code == .modelMismatch)
            #expect(error.message.contains("Tag"))
            #expect(!error.message.contains("Employee"))
        }
    }

    @Test("a removed store refuses further work; an unknown store cannot be removed")
    func removeStore() throws {
        let (coordinator, staff, _) = try twoStores()
        try coordinator.remove(staff)
        #expect(coordinator.persistentStores.count == 1)
        #expect(staff.isClosed)
        #expect(throws: StoreError.self) { try coordinator.remove(staff) }
        let context = ManagedObjectContext(coordinator: coordinator)
        #expect(throws: StoreError.self) {
            try context.insertNewObject(forEntityName: "Department").setConvertedValue("x", forKey: "name")
            try context.save()
        }
    }

    @Test("a read-only store refuses saves and the store is unchanged")
    func readOnly() throws {
        let url = URL(string: "memory://readonly-\(UUID().uuidString)")!
        let writer = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try writer.addPersistentStore(type: .inMemory, at: url)
        try ConformanceModel.seed(ManagedObjectContext(coordinator: writer))
        let reader = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try reader.addPersistentStore(type: .inMemory, at: url, options: StoreOptions(isReadOnly: true))
        let context = ManagedObjectContext(coordinator: reader)
        let ann = try context.fetch(
            FetchRequest(entityName: "Employee", predicate: FetchPredicate(format: "name == 'Ann'")))[0]
        ann["age"] = 1
        do {
            try context.save()
            Issue.record("a read-only store accepted a save")
        } catch let error as StoreError {
            #expect(error.code == .readOnly)
        }
        let check = ManagedObjectContext(coordinator: writer)
        #expect(
            try check.fetch(FetchRequest(entityName: "Employee", predicate: FetchPredicate(format: "name == 'Ann'")))[
                0]["age"] as? Int == 20)
    }

    @Test("fetch request templates substitute variables")
    func templates() throws {
        let model = try ManagedObjectModel(
            entities: ConformanceModel.model.entities.map {
                EntityDescription(
                    $0.name, parent: $0.superentityName, isAbstract: $0.isAbstract, properties: $0.ownProperties,
                    uniquenessConstraints: $0.uniquenessConstraints)
            },
            fetchRequestTemplates: [
                "olderThan": FetchRequestTemplate(entityName: "Employee", predicateFormat: "age > $AGE")
            ])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        try ConformanceModel.seed(context)
        let request = try FetchRequest(template: "olderThan", in: model, substitutionVariables: ["AGE": 45])
        let names = try context.fetch(request).compactMap { $0["name"] as? String }
        #expect(!names.isEmpty)
        #expect(try context.fetch(request).allSatisfy { ($0["age"] as? Int ?? 0) > 45 })
        #expect(throws: (any Error).self) {
            try FetchRequest(template: "olderThan", in: model).predicate?.evaluate(with: ["age": StoreValue.integer(1)])
        }
        #expect(throws: StoreError.self) { try FetchRequest(template: "missing", in: model) }
    }
}
