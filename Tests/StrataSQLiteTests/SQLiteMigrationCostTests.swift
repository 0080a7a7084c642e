import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// What an in-place SQLite migration reads: adding an optional attribute must stay in the order of
/// `ALTER TABLE ADD COLUMN`, not a scan of every row.
@Suite("SQLite migration cost")
struct SQLiteMigrationCostTests {
    @Test(
        "an in-place migration checks only attributes that become required: one the old model already required is not scanned again"
    )
    func requiredAttributesAreNotRescanned() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-migration-cost")
        let url = try SQLiteMigrationTests.seededStore(directory, people: 20)
        // A value no save can write (Person.name is required): if the migration looked at the
        // column again it would refuse the store.
        let connection = try SQLiteConnection(path: url.path, mode: .readWrite)
        try connection.execute("UPDATE ZPERSON SET ZNAME = NULL WHERE Z_PK = (SELECT min(Z_PK) FROM ZPERSON)")
        connection.close()
        let model = try ManagedObjectModel(
            entities: MigrationModels.version1.entities.map { entity in
                EntityDescription(
                    entity.name, parent: entity.superentityName,
                    properties: entity.ownProperties + (entity.name == "Person" ? [.attribute("email", .string)] : []))
            })
        let outcome = try #require(try StoreMigration.plan(storeAt: url, type: .sqlite, to: model)).run()
        #expect(outcome.strategy == .inPlace)
    }

    @Test("an attribute that becomes required is still checked: rows without a value refuse the migration")
    func newlyRequiredAttributesAreChecked() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-migration-cost-required")
        let url = try SQLiteMigrationTests.seededStore(directory, people: 20)
        let model = try ManagedObjectModel(
            entities: MigrationModels.version1.entities.map { entity in
                EntityDescription(
                    entity.name, parent: entity.superentityName,
                    properties: entity.ownProperties.map { property in
                        entity.name == "Person" && property.name == "city"
                            ? .attribute("city", .string, isOptional: false) : property
                    } + (entity.name == "Person" ? [.attribute("email", .string)] : []))
            })
        #expect {
            try StoreMigration.plan(storeAt: url, type: .sqlite, to: model)?.run()
        } throws: { error in
            (error as? MigrationError)?.code == .validation
        }
    }
}
