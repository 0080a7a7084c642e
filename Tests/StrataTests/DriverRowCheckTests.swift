import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Synchronization
import Testing

/// The coordinator checks what drivers return before the core relies on it: rows read from a
/// damaged file must become ``StoreError/Code/corrupt``, never a negative key in the table of
/// unsaved objects, a force unwrap of an unknown entity, or an index past a row's values.
@Suite("Coordinator: checks on rows from drivers")
struct DriverRowCheckTests {
    /// Damage done to the rows an in-memory store returns.
    enum Damage: String, CaseIterable, Sendable {
        case negativeKey, zeroKey, unknownEntity, entityOfAnotherStore, missingValues, extraValues, maxVersion,
            negativeVersion
        case negativeReference, unknownReferenceEntity

        func apply(to row: RowSnapshot, model: ManagedObjectModel) -> RowSnapshot {
            var row = row
            // The entity is in the model: the row came from a store of it.
            let entity = model.entity(number: row.id.entity)!
            let toOne = entity.properties.firstIndex { $0.relationship?.isToMany == false }
            switch self {
            case .negativeKey: row.id = RowID(entity: row.id.entity, primaryKey: -row.id.primaryKey)
            case .zeroKey: row.id = RowID(entity: row.id.entity, primaryKey: 0)
            case .unknownEntity: row.id = RowID(entity: 9_999, primaryKey: row.id.primaryKey)
            case .entityOfAnotherStore:
                // in the model
                row.id = RowID(entity: model.entity(named: "Track")!.entityNumber, primaryKey: row.id.primaryKey)
            case .missingValues: row.values.removeLast()
            case .extraValues: row.values.append(.null)
            case .maxVersion: row.version = .max
            case .negativeVersion: row.version = -1
            case .negativeReference:
                if let toOne { row.values[toOne] = .reference(RowID(entity: row.id.entity, primaryKey: -5)) }
            case .unknownReferenceEntity:
                if let toOne { row.values[toOne] = .reference(RowID(entity: 777, primaryKey: 5)) }
            }
            return row
        }
    }

    /// A driver returning the in-memory store's rows with damage done to them.
    final class DamagingDriver: StoreDriver {
        let wrapped: any StoreDriver
        let model: ManagedObjectModel
        let damage = Locked<Damage?>(nil)
        init(_ wrapped: any StoreDriver, model: ManagedObjectModel) {
            self.wrapped = wrapped
            self.model = model
        }
        var capabilities: DriverCapabilities { wrapped.capabilities.subtracting(.inMemory) }
        func loadMetadata() throws -> StoreMetadata { try wrapped.loadMetadata() }
        func saveMetadata(_ metadata: StoreMetadata) throws { try wrapped.saveMetadata(metadata) }
        private func damaged(_ rows: [RowSnapshot]) -> [RowSnapshot] {
            guard let damage = damage.withLock({ $0 }) else { return rows }
            return rows.map { damage.apply(to: $0, model: model) }
        }
        func fetch(_ request: StoreFetch) throws -> StoreFetchResult {
            var request = request
            request.cachedRows = nil
            var result = try wrapped.fetch(request)
            result.rows = damaged(result.rows)
            return result
        }
        func rows(for ids: [RowID]) throws -> [RowSnapshot] { damaged(try wrapped.rows(for: ids)) }
        func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64> {
            try wrapped.allocatePrimaryKeys(forEntity: entity, count: count)
        }
        func apply(_ batch: ChangeBatch) throws -> CommitResult { try wrapped.apply(batch) }
        func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult { try wrapped.execute(request) }
        func close() throws { try wrapped.close() }
    }

    struct Factory: StoreDriverFactory {
        func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
            DamagingDriver(try StoreType.inMemory.factory.makeDriver(request), model: request.model)
        }
    }

    @Test(
        "damaged rows from a driver are a corrupt-store error naming the store and the row", arguments: Damage.allCases)
    func damagedRows(_ damage: Damage) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(
            type: StoreType(name: "Damaging", factory: Factory()), configuration: "Staff",
            at: URL(string: "memory://damaged-\(damage)"))
        let seeding = ManagedObjectContext(coordinator: coordinator)
        let department = try seeding.insertNewObject(forEntityName: "Department")
        department["name"] = "Research"
        for name in ["Ann", "bob"] {
            let employee = try seeding.insertNewObject(forEntityName: "Employee")
            employee["name"] = name
            employee["department"] = department
        }
        try seeding.save()
        // The store was opened with the damaging factory.
        let driver = store.driver as! DamagingDriver
        driver.damage.withLock { $0 = damage }
        coordinator.rowCache.removeAll(in: ObjectIdentifier(store))
        let context = ManagedObjectContext(coordinator: coordinator)
        #expect {
            _ = try context.fetch(FetchRequest(entityName: "Employee"))
        } throws: { error in
            guard let error = error as? StoreError, error.code == .corrupt else { return false }
            return error.message.contains("damaged") && error.store != nil
        }
        #expect(context.registeredObjects.isEmpty, "no object was made from a damaged row")
    }
}

@Suite("Coordinator: stores that fail to attach, key ranges, hand-made IDs")
struct AttachFailureTests {
    @Test("a store whose metadata cannot be read is closed, not left open")
    func closedOnFailedAttach() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let made = Locked<[RecordingDriver]>([])
        struct Factory: StoreDriverFactory {
            let made: @Sendable (RecordingDriver) -> Void
            func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
                let driver = RecordingDriver(wrapping: try StoreType.inMemory.factory.makeDriver(request))
                driver.failNext(.loadMetadata, with: StoreError(.corrupt, "damaged metadata"))
                made(driver)
                return driver
            }
        }
        let type = StoreType(name: "Failing", factory: Factory { driver in made.withLock { $0.append(driver) } })
        #expect(throws: StoreError.self) { try coordinator.addPersistentStore(type: type) }
        let driver = try #require(made.withLock { $0.first })
        #expect(driver.calls(.close).count == 1)
        #expect(coordinator.persistentStores.isEmpty)
    }

    @Test("a hand-made ID with the smallest key does not trap")
    func extremeTemporaryKey() throws {
        let stack = try TestStack(seeded: false)
        let entity = try #require(stack.coordinator.managedObjectModel.entity(named: "Tag"))
        let id = ManagedObjectID(
            entity: entity, rowID: RowID(entity: entity.entityNumber, primaryKey: .min), store: nil)
        let object = stack.context.object(with: id)
        #expect(!object.isAccessible)
        #expect(throws: StoreError.self) { _ = try stack.context.existingObject(with: id) }
    }
}
