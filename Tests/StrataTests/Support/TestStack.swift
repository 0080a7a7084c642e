import Foundation
import Strata
import StrataInMemory
import StrataTesting

/// A coordinator with one in-memory store of the conformance model and a context on it.
struct TestStack {
    let coordinator: PersistentStoreCoordinator
    let store: PersistentStore
    let context: ManagedObjectContext
    private let kept = Kept()

    /// Contexts made by `newContext()`, alive as long as the stack (objects hold contexts weakly).
    private final class Kept { var contexts: [ManagedObjectContext] = [] }

    init(model: ManagedObjectModel = ConformanceModel.model, seeded: Bool = false, type: StoreType = .inMemory) throws {
        coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        store = try coordinator.addPersistentStore(type: type)
        context = ManagedObjectContext(coordinator: coordinator)
        if seeded { try ConformanceModel.seed(context) }
    }

    /// A stack whose store's driver is a ``RecordingDriver`` around the in-memory driver.
    static func recording(seeded: Bool = true) throws -> (TestStack, RecordingDriver) {
        let stack = try TestStack(seeded: seeded, type: RecordingDriver.storeType(wrapping: .inMemory))
        // The store was opened through RecordingDriver.storeType(wrapping:).
        return (stack, stack.store.driver as! RecordingDriver)
    }

    func newContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: coordinator)
        kept.contexts.append(context)
        return context
    }

    func fetch(_ entity: String, _ format: String? = nil, in context: ManagedObjectContext? = nil) throws
        -> [ManagedObject]
    {
        let sortKey =
            coordinator.managedObjectModel.entity(named: entity)?.property(named: "name") != nil ? "name" : "title"
        return try (context ?? self.context).fetch(
            FetchRequest(
                entityName: entity, predicate: try format.map { try FetchPredicate(format: $0) },
                sortKeys: [SortKey(sortKey)]))
    }
}
