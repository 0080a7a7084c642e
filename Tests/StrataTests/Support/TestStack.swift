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

    init(model: ManagedObjectModel = ConformanceModel.model, seeded: Bool = false) throws {
        coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        store = try coordinator.addPersistentStore(type: .inMemory)
        context = ManagedObjectContext(coordinator: coordinator)
        if seeded { try ConformanceModel.seed(context) }
    }

    func newContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: coordinator)
        kept.contexts.append(context)
        return context
    }

    func fetch(_ entity: String, _ format: String? = nil, in context: ManagedObjectContext? = nil) throws -> [ManagedObject] {
        let sortKey = coordinator.managedObjectModel.entity(named: entity)?.property(named: "name") != nil ? "name" : "title"
        return try (context ?? self.context).fetch(
            FetchRequest(entityName: entity, predicate: try format.map { try FetchPredicate(format: $0) }, sortKeys: [SortKey(sortKey)]))
    }
}
