import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// The oracle from Apple: SampleModel_V1.sqlite and SampleModel_V2.sqlite hold the same data
/// before and after Core Data's own lightweight migration between the SampleModel and
/// SampleModel2 models (a transformable and a UUID attribute dropped, transient attributes, an
/// entity renamed through its renaming identifier, a fetch index added). Migrating V1 with Strata
/// must give V2's tables, columns, rows, indexes, `Z_PRIMARYKEY` and store identifier.
@Suite("Apple's SampleModel V1 → V2 migration, reproduced", .enabled(if: Corpus.isAvailable))
struct SampleModelMigrationTests {
    static func model(_ name: String) throws -> ManagedObjectModel {
        let root = try #require(Corpus.root)
        return try ManagedObjectModel(
            contentsOf: URL(fileURLWithPath: root).appendingPathComponent(
                "models/alemar11__CoreDataPlus__\(name).xcdatamodel.xml"))
    }

    /// Everything the oracle compares, read from a store.
    struct Snapshot: Equatable {
        var tables: [String: [String]] = [:]
        var indexes: [String: String] = [:]
        var rows: [String: [[SQLiteValue]]] = [:]
        var uuid: String = ""
    }

    static func snapshot(_ path: String) throws -> Snapshot {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        var snapshot = Snapshot()
        let tables = try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap
        { $0[0].text }
        for table in tables where table != "Z_METADATA" && table != "Z_MODELCACHE" && !table.hasPrefix("sqlite_") {
            snapshot.tables[table] = try connection.rows(
                "SELECT name, type FROM pragma_table_info(?) ORDER BY cid", [.text(table)]
            ).map {
                "\($0[0].text ?? "") \($0[1].text ?? "")"
            }
            let order = table == "Z_PRIMARYKEY" ? "Z_ENT" : "Z_PK"
            snapshot.rows[table] = try connection.rows("SELECT * FROM \(table) ORDER BY \(order)")
        }
        for row in try connection.rows("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL") {
            // Compare the statement's words, ignoring how the name and table are quoted and spaced.
            let sql = (row[1].text ?? "").replacingOccurrences(of: "\"", with: "").split(whereSeparator: \.isWhitespace)
                .joined(separator: " ")
            snapshot.indexes[row[0].text ?? ""] = sql
        }
        snapshot.uuid = try connection.scalar("SELECT Z_UUID FROM Z_METADATA")?.text ?? ""
        return snapshot
    }

    @Test(
        "migrating V1 with the two Xcode models gives V2's tables, columns, rows, indexes, Z_PRIMARYKEY and identifier")
    func reproducesAppleMigration() throws {
        let v1 = try Corpus.copyOfStore("SampleModel_V1.sqlite")
        let v2 = try Corpus.copyOfStore("SampleModel_V2.sqlite")
        let source = try Self.model("SampleModel")
        let destination = try Self.model("SampleModel2")
        let migration = try #require(
            try StoreMigration.plan(
                storeAt: URL(fileURLWithPath: v1), type: .sqlite, to: destination, sourceModel: source))
        #expect(migration.isLightweight)
        #expect(
            migration.mappingModel.entityMappings.contains {
                $0.name == "IEM_Transform_ExpensiveSportCar" && $0.destinationEntityName == "LuxuryCar"
            })
        let outcome = try migration.run()
        #expect(outcome.strategy == .inPlace)
        let mine = try Self.snapshot(v1)
        let apple = try Self.snapshot(v2)
        #expect(Set(apple.tables.keys) == ["ZCAR", "ZPERSON", "Z_PRIMARYKEY"])
        #expect(apple.rows["ZCAR"]?.count == 125 && apple.rows["ZPERSON"]?.count == 20 && apple.indexes.count == 5)
        #expect(mine.tables == apple.tables)
        #expect(mine.indexes == apple.indexes)
        for table in apple.rows.keys.sorted() { #expect(mine.rows[table] == apple.rows[table], "rows of \(table)") }
        #expect(mine.uuid == apple.uuid)

        let metadata = try #require(
            try StoreType.sqlite.factory.metadata(at: URL(fileURLWithPath: v1), options: StoreOptions(isReadOnly: true))
        )
        let appleMetadata = try #require(
            try StoreType.sqlite.factory.metadata(at: URL(fileURLWithPath: v2), options: StoreOptions(isReadOnly: true))
        )
        for key in [
            ModelVersionHashes.entityHashesKey, ModelVersionHashes.digestKey, ModelVersionHashes.identifiersKey,
        ] {
            #expect(metadata.values[key] == appleMetadata.values[key], "metadata \(key)")
        }
        #expect(destination.isConfiguration(nil, compatibleWithStoreMetadata: metadata))
        // The store opens with the new model, and its rows read back.
        let coordinator = PersistentStoreCoordinator(managedObjectModel: destination)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: v1))
        let context = ManagedObjectContext(coordinator: coordinator)
        #expect(try context.count(for: FetchRequest(entityName: "Car")) == 125)
        #expect(try context.count(for: FetchRequest(entityName: "LuxuryCar")) == 5)
        #expect(try context.count(for: FetchRequest(entityName: "Person")) == 20)
        try coordinator.remove(store)
    }

    @Test("V1's source model is found in its own model cache when none is given")
    func sourceFromModelCache() throws {
        let v1 = try Corpus.copyOfStore("SampleModel_V1.sqlite")
        let migration = try #require(
            try StoreMigration.plan(
                storeAt: URL(fileURLWithPath: v1), type: .sqlite, to: try Self.model("SampleModel2")))
        #expect(migration.sourceModelOrigin == .modelCache)
    }

    @Test("V2's store is already at SampleModel2: nothing to migrate; the older model is refused")
    func alreadyMigrated() throws {
        let v2 = URL(fileURLWithPath: try Corpus.copyOfStore("SampleModel_V2.sqlite"))
        #expect(try StoreMigration.plan(storeAt: v2, type: .sqlite, to: try Self.model("SampleModel2")) == nil)
        var options = StoreOptions()
        options.migration.modelVersions = [try Self.model("SampleModel"), try Self.model("SampleModel2")]
        #expect(throws: MigrationError.self) {
            try StoreMigration.plan(storeAt: v2, type: .sqlite, to: try Self.model("SampleModel"), options: options)
        }
    }
}
