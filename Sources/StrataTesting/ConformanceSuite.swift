import Foundation
import Strata

/// One check of the driver contract, run against a ``DriverHarness``.
public struct ConformanceCase: Sendable, CustomStringConvertible {
    /// What the case checks, as a sentence.
    public var name: String
    /// Runs the check; throws ``ConformanceFailure`` (or the store's error) when it fails.
    public var run: @Sendable (DriverHarness) throws -> Void

    /// Creates a case.
    public init(_ name: String, run: @escaping @Sendable (DriverHarness) throws -> Void) {
        self.name = name
        self.run = run
    }

    public var description: String { name }
}

/// The conformance suite: the contract every driver passes, ours or a third party's.
///
/// Run it from a driver's test target:
/// ```swift
/// @Test(arguments: ConformanceSuite.cases)
/// func conformance(_ check: ConformanceCase) throws { try check.run(.myDriver) }
/// ```
public enum ConformanceSuite {
    /// Every case.
    public static var cases: [ConformanceCase] {
        crudCases + valueCases + relationshipCases + queryCases + integrityCases + predicateCases + batchCases
            + batchInsertCases + saveCases
            + raceCases + shapeCases + compositeCases + fetchOptionCases + batchFaultingCases + groupedCases
            + derivationCases
            + durabilityCases + applyInPartsCases
    }

    /// A seeded store in a fresh directory, and a fresh context on it.
    struct Fixture {
        let directory: TemporaryDirectory
        let coordinator: PersistentStoreCoordinator
        let store: PersistentStore
        let harness: DriverHarness
        private let keeper = ContextKeeper()

        init(_ harness: DriverHarness, seeded: Bool = true) throws {
            directory = try TemporaryDirectory(prefix: "conformance-\(harness.name)")
            (coordinator, store) = try harness.openStack(in: directory)
            self.harness = harness
            if seeded { try ConformanceModel.seed(context()) }
        }

        /// A new context, kept alive as long as the fixture so objects fetched through it stay usable.
        func context() -> ManagedObjectContext { keeper.keep(ManagedObjectContext(coordinator: coordinator)) }

        /// Resets every context the fixture keeps: their objects are let go and their rows unpinned.
        func resetContexts() { keeper.resetAll() }

        /// Closes the store and opens it again with a new coordinator.
        func reopen() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
            try coordinator.remove(store)
            let (again, _) = try harness.openStack(in: directory)
            return (again, keeper.keep(ManagedObjectContext(coordinator: again)))
        }
    }

    static func fetch(_ context: ManagedObjectContext, _ entity: String, _ format: String? = nil, sort: [SortKey] = [])
        throws -> [ManagedObject]
    {
        try context.fetch(
            FetchRequest(
                entityName: entity, predicate: try format.map { try FetchPredicate(format: $0) }, sortKeys: sort))
    }

    static func names(_ objects: [ManagedObject], _ key: String = "name") -> [String] {
        objects.map { ($0.value(forKey: key) as? String) ?? "<nil>" }
    }
}

/// Holds contexts for the life of a fixture (objects keep only a weak reference to their context).
final class ContextKeeper {
    private var contexts: [ManagedObjectContext] = []
    func keep(_ context: ManagedObjectContext) -> ManagedObjectContext {
        contexts.append(context)
        return context
    }

    func resetAll() { for context in contexts { context.reset() } }
}
