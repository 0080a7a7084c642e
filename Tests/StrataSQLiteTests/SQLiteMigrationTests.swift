import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// SQLite's in-place migration, and Apple's own migration of SampleModel_V1.sqlite to
/// SampleModel_V2.sqlite reproduced.
@Suite("SQLite migration")
struct SQLiteMigrationTests {
    static func seededStore(_ directory: TemporaryDirectory, people: Int = 30) throws -> URL {
        let url = directory.file("store.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version1)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        try MigrationModels.seed(ManagedObjectContext(coordinator: coordinator), people: people)
        try coordinator.remove(store)
        return url
    }

    static func schema(_ path: String, _ table: String) throws -> (columns: [String], rootPage: Int64) {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let columns = try connection.rows("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", [.text(table)])
            .map {
                "\($0[0].text ?? "") \($0[1].text ?? "")"
            }
        let page =
            try connection.scalar("SELECT rootpage FROM sqlite_master WHERE name = ?", [.text(table)])?.integer ?? 0
        return (columns, page)
    }

    @Test("MigrationModels' change runs in place: the root table is renamed and rebuilt, and every row's data is kept")
    func issueChangeInPlace() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-migration")
        let url = try Self.seededStore(directory)
        let migration = try #require(try StoreMigration.plan(storeAt: url, type: .sqlite, to: MigrationModels.version2))
        #expect(migration.isLightweight)
        let outcome = try migration.run()
        #expect(outcome.strategy == .inPlace)
        let member = try Self.schema(url.path, "ZMEMBER")
        #expect(member.columns.contains("ZTOWN VARCHAR"))
        #expect(!member.columns.contains { $0.hasPrefix("ZNICKNAME ") })
        #expect(try Self.schema(url.path, "ZPERSON").columns.isEmpty)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version2)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        #expect(try MigrationModels.differences(ManagedObjectContext(coordinator: coordinator), people: 30).isEmpty)
        try coordinator.remove(store)
    }

    @Test("adding an optional attribute alters the table in place without rewriting it")
    func addColumnWithoutRewrite() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-migration-add")
        let url = try Self.seededStore(directory, people: 50)
        let before = try Self.schema(url.path, "ZPERSON")
        let model = try ManagedObjectModel(
            entities: MigrationModels.version1.entities.map { entity in
                EntityDescription(
                    entity.name, parent: entity.superentityName,
                    properties: entity.ownProperties + (entity.name == "Person" ? [.attribute("email", .string)] : []))
            })
        let outcome = try #require(try StoreMigration.plan(storeAt: url, type: .sqlite, to: model)).run()
        #expect(outcome.strategy == .inPlace)
        let after = try Self.schema(url.path, "ZPERSON")
        #expect(after.rootPage == before.rootPage, "the table was not rebuilt")
        #expect(after.columns == before.columns + ["ZEMAIL VARCHAR"])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        #expect(try context.count(for: FetchRequest(entityName: "Person")) == 50)
        #expect(
            try context.count(
                for: FetchRequest(entityName: "Person", predicate: try FetchPredicate(format: "email == nil"))) == 50)
        try coordinator.remove(store)
    }

    @Test("a failure in the middle of an in-place migration rolls the whole transaction back")
    func inPlaceFailureRollsBack() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-migration-rollback")
        let url = try Self.seededStore(directory)
        let model = try ManagedObjectModel(
            entities: MigrationModels.version1.entities.map { entity in
                EntityDescription(
                    entity.name, parent: entity.superentityName,
                    properties: entity.ownProperties + (entity.name == "Person" ? [.attribute("email", .string)] : []),
                    uniquenessConstraints: entity.name == "Person" ? [["city"]] : [])
            })
        #expect(throws: MigrationError.self) { try StoreMigration.plan(storeAt: url, type: .sqlite, to: model)?.run() }
        #expect(try Self.schema(url.path, "ZPERSON").columns.allSatisfy { !$0.hasPrefix("ZEMAIL") })
        let coordinator = PersistentStoreCoordinator(managedObjectModel: MigrationModels.version1)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        #expect(try ManagedObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Person")) == 30)
        try coordinator.remove(store)
    }
}
