import Foundation
import Strata
import StrataTesting
import Testing

@Suite("strata query: predicates comparing two constants")
struct ConstantPredicateQueryTests {
    @Test("comparisons of constants on a SQLite store answer as in memory instead of crashing the binary")
    func constants() throws {
        let directory = try TemporaryDirectory()
        let location = try seededMemoryStore(fileLocation(.sqlite, "seeded", in: directory))
        let url = try #require(location.url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(isReadOnly: true))
        let context = ManagedObjectContext(coordinator: coordinator)
        let items = try context.fetch(FetchRequest(entityName: "Item"))
        #expect(!items.isEmpty)
        for format in [
            "2 => 1", "!(1 < 0)", "(1 < 0) || (1 > 0)", "(1 < 0) AND (1 > 0)", "NOT (2 => 1) OR int16 > 0",
            "1 == 1 AND int16 > 0",
        ] {
            let predicate = try FetchPredicate(format: format)
            let expected = try items.filter { try predicate.evaluate(with: $0) }.count
            let result = try runStrata([
                "query", url.path, "--entity", "Item", "--where", format, "--count", "--format", "json",
            ])
            #expect(result.status == 0, "\(format): \(result.stderr)")
            #expect(result.stdout.contains("\"count\": \(expected)"), "\(format): \(result.stdout)")
        }
    }
}
