import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// Every Apple-written store of the corpus, opened without a model: the factory recovers one
/// (model cache or inference), the store opens read-only, and every entity counts its rows.
@Suite("Corpus stores open without a model", .enabled(if: Corpus.isAvailable))
struct CorpusStoreTests {
    @Test(
        "the store opens read-only with a recovered model and every entity's count equals SELECT COUNT(*) per Z_ENT",
        arguments: Corpus.stores)
    func opensWithoutModel(_ name: String) throws {
        let path = try Corpus.copyOfStore(name)
        let url = URL(fileURLWithPath: path)
        let recovered = try #require(try StoreType.sqlite.factory.recoverModel(at: url, options: StoreOptions()))
        #expect(recovered.requiresReadOnly)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: recovered.model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(isReadOnly: true))
        let context = ManagedObjectContext(coordinator: coordinator)

        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let entries = try connection.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000")
        var parents: [Int64: Int64] = [:]
        for entry in entries { parents[entry[0].integer ?? 0] = entry[2].integer ?? 0 }
        func root(_ number: Int64) -> Int64 {
            var current = number
            while let parent = parents[current], parent != 0 { current = parent }
            return current
        }
        var names: [Int64: String] = [:]
        for entry in entries { names[entry[0].integer ?? 0] = entry[1].text }
        var checked = 0
        for entry in entries {
            guard let number = entry[0].integer, let entityName = entry[1].text,
                let rootName = names[root(number)], let entity = recovered.model.entity(named: entityName)
            else { continue }
            let table = "Z" + rootName.uppercased()
            guard try connection.tableExists(table) else { continue }
            let expected =
                try connection.scalar("SELECT COUNT(*) FROM \(table) WHERE Z_ENT = ?", [.integer(number)])?.integer
                ?? -1
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            #expect(try context.count(for: request) == Int(expected), "\(name): \(entity.name)")
            #expect(try context.fetch(request).count == Int(expected), "\(name): \(entity.name) objects")
            checked += 1
        }
        #expect(checked > 0)
        #expect(throws: StoreError.self) {
            _ = try store.driver.allocatePrimaryKeys(forEntity: recovered.model.entities[0].entityNumber, count: 1)
        }
    }
}
