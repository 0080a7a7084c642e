import Foundation
import Strata
import StrataInMemory
import StrataLMDB
import StrataSQLite
import StrataTesting
import StrataTools
import StrataXML

/// A driver the round-trip suite saves through, and where its stores go.
enum RoundTripDriver: String, CaseIterable, Sendable, CustomStringConvertible {
    case memory, sqlite, xml, lmdb

    var scheme: KnownDriver {
        switch self {
        case .memory: .memory
        case .sqlite: .sqlite
        case .xml: .xml
        case .lmdb: .lmdb
        }
    }

    var storeType: StoreType {
        switch self {
        case .memory: .inMemory
        case .sqlite: .sqlite
        case .xml: .xml
        case .lmdb: .lmdb
        }
    }

    var description: String { rawValue }

    /// A new location for a store of this driver: a file in `directory` named after `name`, or a
    /// process-unique in-memory store.
    func location(_ name: String, in directory: TemporaryDirectory) -> StoreLocation {
        switch self {
        case .memory: StoreLocation(scheme: .memory, url: URL(string: "memory:roundtrip-\(name)-\(UUID().uuidString)"))
        case .sqlite: StoreLocation(scheme: .sqlite, url: directory.file("\(name).sqlite"))
        case .xml: StoreLocation(scheme: .xml, url: directory.file("\(name).xml"))
        case .lmdb: StoreLocation(scheme: .lmdb, url: directory.file("\(name).lmdb"))
        }
    }
}

/// The stores one driver holds a case's graph in: one per configuration (one in all when the
/// model has no configurations), with the configuration each holds.
struct RoundTripStores {
    var driver: RoundTripDriver
    var stores: [(configuration: String?, location: StoreLocation)]

    init(_ driver: RoundTripDriver, model: RoundTripModelSpec, tag: String, in directory: TemporaryDirectory) {
        self.driver = driver
        let configurations: [String?] = model.configurations.isEmpty ? [nil] : model.configurations.map(\.name)
        stores = configurations.enumerated().map { index, configuration in
            (configuration, driver.location("\(tag)-\(index)", in: directory))
        }
    }

    /// A coordinator with every store attached.
    func open(_ model: ManagedObjectModel) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        for store in stores {
            try coordinator.addPersistentStore(
                type: driver.storeType, configuration: store.configuration, at: store.location.url)
        }
        return coordinator
    }

    /// Detaches and closes every store of `coordinator`.
    static func close(_ coordinator: PersistentStoreCoordinator) throws {
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    /// The same IDs in another coordinator over the same stores (attached in the same order).
    static func translate(
        _ ids: [Int: ManagedObjectID], from oldStores: [PersistentStore], to coordinator: PersistentStoreCoordinator
    )
        -> [Int: ManagedObjectID]
    {
        let newStores = coordinator.persistentStores
        return ids.compactMapValues { id in
            guard let index = oldStores.firstIndex(where: { $0 === id.persistentStore }),
                newStores.indices.contains(index)
            else { return nil }
            return ManagedObjectID(entity: id.entity, rowID: id.rowID, store: newStores[index])
        }
    }
}
