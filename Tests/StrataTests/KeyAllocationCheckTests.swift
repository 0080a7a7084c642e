import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Synchronization
import Testing

/// The coordinator checks the primary keys a driver hands out before objects take them: a damaged
/// key counter (SQLite's `Z_MAX`, LMDB's `pk…`, XML's next object id) must become a corrupt-store
/// error, never an overflow trap while the keys are assigned.
@Suite("Coordinator: checks on allocated keys")
struct KeyAllocationCheckTests {
    /// A range a damaged counter might produce for `count` keys.
    enum BadRange: String, CaseIterable, Sendable {
        case endsAtMaximum, tooShort, tooLong, startsAtZero, negative

        func range(count: Int) -> ClosedRange<Int64> {
            switch self {
            case .endsAtMaximum: return (Int64.max - Int64(count) + 1)...Int64.max
            case .tooShort: return 10...(10 + Int64(count) - 2)
            case .tooLong: return 10...(10 + Int64(count) + 5)
            case .startsAtZero: return 0...(Int64(count) - 1)
            case .negative: return (-Int64(count))...(-1)
            }
        }
    }

    /// An in-memory driver whose key allocation returns a bad range when asked to.
    final class MiscountingDriver: StoreDriver {
        let wrapped: any StoreDriver
        let bad = Mutex<BadRange?>(nil)
        init(_ wrapped: any StoreDriver) { self.wrapped = wrapped }
        var capabilities: DriverCapabilities { wrapped.capabilities }
        func loadMetadata() throws -> StoreMetadata { try wrapped.loadMetadata() }
        func saveMetadata(_ metadata: StoreMetadata) throws { try wrapped.saveMetadata(metadata) }
        func fetch(_ request: StoreFetch) throws -> StoreFetchResult { try wrapped.fetch(request) }
        func rows(for ids: [RowID]) throws -> [RowSnapshot] { try wrapped.rows(for: ids) }
        func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64> {
            if let bad = bad.withLock({ $0 }) { return bad.range(count: count) }
            return try wrapped.allocatePrimaryKeys(forEntity: entity, count: count)
        }
        func apply(_ batch: ChangeBatch) throws -> CommitResult { try wrapped.apply(batch) }
        func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult { try wrapped.execute(request) }
        func close() throws { try wrapped.close() }
    }

    struct Factory: StoreDriverFactory {
        func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
            MiscountingDriver(try StoreType.inMemory.factory.makeDriver(request))
        }
    }

    @Test(
        "a key range that is not the count asked for, not positive, or ends at Int64.max fails the save as corrupt",
        arguments: BadRange.allCases)
    func badRanges(_ bad: BadRange) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(
            type: StoreType(name: "Miscounting", factory: Factory()), configuration: "Staff",
            at: URL(string: "memory://keys-\(bad)"))
        // The store was opened with the miscounting factory.
        let driver = store.driver as! MiscountingDriver
        driver.bad.withLock { $0 = bad }
        let context = ManagedObjectContext(coordinator: coordinator)
        for name in ["Research", "Sales"] {
            let department = try context.insertNewObject(forEntityName: "Department")
            department["name"] = name
        }
        #expect {
            try context.save()
        } throws: { error in
            guard let error = error as? StoreError, error.code == .corrupt else { return false }
            return error.message.contains("Department") && error.store != nil
        }
        driver.bad.withLock { $0 = nil }
        try context.save()
        #expect(
            try ManagedObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Department")) == 2)
    }
}
