import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// Stores written by Apple's Core Data (CoreDataPlus' SampleModel fixtures), opened with the
/// Xcode models they were written with.
@Suite("Apple-written SQLite stores open with their model", .enabled(if: Corpus.isAvailable))
struct AppleStoreTests {
    static func model(_ name: String) throws -> ManagedObjectModel {
        guard let root = Corpus.root else { throw Corpus.CorpusMissing() }
        return try ManagedObjectModel(
            contentsOf: URL(fileURLWithPath: root).appendingPathComponent(
                "models/alemar11__CoreDataPlus__\(name).xcdatamodel.xml"))
    }

    static func open(_ store: String, model: String, readOnly: Bool = false) throws
        -> (PersistentStoreCoordinator, ManagedObjectContext, String)
    {
        let path = try Corpus.copyOfStore(store)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model(model))
        try coordinator.addPersistentStore(
            type: .sqlite, at: URL(fileURLWithPath: path), options: StoreOptions(isReadOnly: readOnly))
        return (coordinator, ManagedObjectContext(coordinator: coordinator), path)
    }

    /// `SELECT COUNT(*)` per `Z_ENT` of a table.
    static func counts(_ path: String, table: String) throws -> [Int64: Int64] {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        var counts: [Int64: Int64] = [:]
        for row in try connection.rows("SELECT Z_ENT, COUNT(*) FROM \(table) GROUP BY Z_ENT") {
            counts[row[0].integer ?? -1] = row[1].integer
        }
        return counts
    }

    @Test("every entity of SampleModel_V1 fetches with its stored row count, values and relationships")
    func readsV1() throws {
        let (_, context, path) = try Self.open("SampleModel_V1.sqlite", model: "SampleModel")
        let cars = try Self.counts(path, table: "ZCAR")
        let people = try Self.counts(path, table: "ZPERSON")
        for (entity, expected) in [
            ("Car", cars[1]), ("SportCar", cars[2]), ("ExpensiveSportCar", cars[3]), ("Person", people[4]),
        ] {
            var request = FetchRequest(entityName: entity)
            request.includesSubentities = false
            #expect(try context.count(for: request) == Int(expected ?? -1), "\(entity)")
            #expect(try context.fetch(request).count == Int(expected ?? -1), "\(entity) objects")
        }
        let first = try #require(
            try context.fetch(
                FetchRequest(entityName: "Person", predicate: FetchPredicate(format: "lastName == 'Coster'"))
            ).first)
        #expect(first.value(forKey: "firstName") as? String == "Victoria")
        #expect(first.value(forKey: "id") is UUID)
        #expect(
            (first.value(forKey: "updatedAt") as? Date).map {
                abs($0.timeIntervalSinceReferenceDate - 639_503_569.638733) < 1e-3
            } == true)
        let owner = try #require(
            try context.fetch(
                FetchRequest(entityName: "Person", predicate: FetchPredicate(format: "cars.@count == 100"))
            ).first)
        #expect(owner.objects(forKey: "cars").count == 100)
        #expect(owner.objects(forKey: "cars").allSatisfy { $0.object(forKey: "owner") === owner })
        let panda = try context.fetch(
            FetchRequest(entityName: "Car", predicate: FetchPredicate(format: "numberPlate == '170'")))
        #expect(panda.first?.value(forKey: "maker") as? String == "FIAT")
        #expect(panda.first?.object(forKey: "owner") === owner)
        let limited = try context.fetch(FetchRequest(entityName: "ExpensiveSportCar"))
        #expect(limited.allSatisfy { $0.value(forKey: "isLimitedEdition") is Bool })
    }

    @Test("inserts, updates and deletes save to SampleModel_V1, pass integrity_check, and leave Apple's data alone")
    func writesV1() throws {
        let (_, context, path) = try Self.open("SampleModel_V1.sqlite", model: "SampleModel")
        let before = try Self.appleState(path)
        let person = try context.insertNewObject(forEntityName: "Person")
        person["firstName"] = "Ada"
        person["lastName"] = "Lovelace"
        person["id"] = UUID()
        person["updatedAt"] = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let car = try context.insertNewObject(forEntityName: "SportCar")
        car["numberPlate"] = "ADA-1"
        car["maker"] = "Babbage"
        car["owner"] = person
        let panda = try #require(
            try context.fetch(
                FetchRequest(entityName: "Car", predicate: FetchPredicate(format: "numberPlate == '159'"))
            ).first)
        panda["maker"] = "Fiat S.p.A."
        let doomed = try #require(
            try context.fetch(
                FetchRequest(entityName: "Car", predicate: FetchPredicate(format: "numberPlate == '139'"))
            ).first)
        context.delete(doomed)
        try context.save()

        let connection = try SQLiteConnection(path: path)
        #expect(try connection.scalar("PRAGMA integrity_check")?.text == "ok")
        connection.close()
        let after = try Self.appleState(path)
        #expect(after.modelCache == before.modelCache)
        for (key, value) in before.metadata
        where key != "StrataEntityVersionHashes" && key != StoreMetadata.modelVersionHashKey {
            #expect(after.metadata[key] == value, "metadata key \(key)")
        }
        #expect(after.uuid == before.uuid)

        let (_, reopened, _) = try Self.reopen(path, model: "SampleModel")
        let ada = try reopened.fetch(
            FetchRequest(entityName: "Person", predicate: FetchPredicate(format: "firstName == 'Ada'")))
        #expect(ada.count == 1)
        #expect(ada.first?.objects(forKey: "cars").map { $0.value(forKey: "numberPlate") as? String } == ["ADA-1"])
        #expect(
            try reopened.fetch(
                FetchRequest(entityName: "Car", predicate: FetchPredicate(format: "numberPlate == '159'"))
            ).first?.value(forKey: "maker") as? String == "Fiat S.p.A.")
        #expect(
            try reopened.count(
                for: FetchRequest(entityName: "Car", predicate: FetchPredicate(format: "numberPlate == '139'"))) == 0)
        #expect(try Self.counts(path, table: "ZCAR")[2] == 6)
    }

    @Test("SampleModel_V2 opens with its renamed entity and saves")
    func readsAndWritesV2() throws {
        let (_, context, path) = try Self.open("SampleModel_V2.sqlite", model: "SampleModel2")
        let cars = try Self.counts(path, table: "ZCAR")
        var luxury = FetchRequest(entityName: "LuxuryCar")
        luxury.includesSubentities = false
        #expect(try context.count(for: luxury) == Int(cars[3] ?? -1))
        #expect(try context.count(for: FetchRequest(entityName: "Car")) == Int(cars.values.reduce(0, +)))
        let car = try context.insertNewObject(forEntityName: "LuxuryCar")
        car["numberPlate"] = "LUX-1"
        car["isLimitedEdition"] = true
        try context.save()
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        #expect(try connection.scalar("PRAGMA integrity_check")?.text == "ok")
        #expect(try connection.scalar("SELECT Z_ENT FROM ZCAR WHERE ZNUMBERPLATE = 'LUX-1'")?.integer == 3)
        #expect(try connection.scalar("SELECT Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT = 3")?.text == "ExpensiveSportCar")
    }

    @Test("a store opened with a model that does not match names the entities that differ")
    func mismatch() throws {
        let path = try Corpus.copyOfStore("SampleModel_V2.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model("SampleModel"))
        do {
            try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path))
            Issue.record("opening SampleModel_V2 with the V1 model succeeded")
        } catch let error as StoreError {
            #expect(error.code == .modelMismatch)
            #expect(error.message.contains("Person"))
            #expect(error.message.contains("Car"))
            #expect(error.store == path)
        }
    }

    @Test("Apple's derived-attribute triggers run when Strata writes, and history tables stay untouched")
    func derivedAttributeTriggers() throws {
        let path = try Corpus.copyOfStore("SampleModel2_V1.sqlite")
        let url = URL(fileURLWithPath: path)
        let recovered = try #require(try StoreType.sqlite.factory.recoverModel(at: url, options: StoreOptions()))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: recovered.model)
        // Writable on purpose: the recovered model is the store's own, from its model cache.
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        let book = try #require(
            try context.fetch(FetchRequest(entityName: "Book", predicate: FetchPredicate(format: "pagesCount == 99")))
                .first)
        let pagesBefore = book.objects(forKey: "pages").count
        let check = try SQLiteConnection(path: path)
        defer { check.close() }
        let changes = try check.scalar("SELECT COUNT(*) FROM ACHANGE")?.integer
        let page = try context.insertNewObject(forEntityName: "Page")
        page["number"] = 1_000
        page["isBookmarked"] = false
        page["book"] = book
        try page.setStoreValue(.binary(Data("text".utf8)), forKey: "content")
        try context.save()
        let key = book.objectID.primaryKey
        #expect(
            try check.scalar("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = ?", [.integer(key)])?.integer
                == Int64(pagesBefore + 1))
        #expect(try check.scalar("SELECT Z1_BOOK FROM ZPAGE WHERE ZNUMBER = 1000")?.integer == 1)
        #expect(try check.scalar("SELECT COUNT(*) FROM ACHANGE")?.integer == changes)
        #expect(try check.scalar("PRAGMA integrity_check")?.text == "ok")
    }

    static func reopen(_ path: String, model: String) throws -> (
        PersistentStoreCoordinator, ManagedObjectContext, String
    ) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model(model))
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path))
        return (coordinator, ManagedObjectContext(coordinator: coordinator), path)
    }

    struct AppleState {
        var modelCache: Data?
        var metadata: [String: MetadataValue]
        var uuid: String
    }

    static func appleState(_ path: String) throws -> AppleState {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let metadata = try #require(
            try SQLiteDriverFactory().metadata(at: URL(fileURLWithPath: path), options: StoreOptions()))
        return AppleState(
            modelCache: try connection.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE")?.blob, metadata: metadata.values,
            uuid: metadata.uuid)
    }
}
