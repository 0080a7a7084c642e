import Foundation
import Strata
import Synchronization

/// The in-memory store: the reference driver and the default test double.
///
/// Every row lives in the core's ``AtomicStoreEngine``; predicates, sorts and pages are applied
/// exactly by the core's evaluator, so its answers define what every other driver must return.
/// Nothing survives the process. Stores are independent unless opened with the same URL, in which
/// case they share rows for the life of the process (useful for "reopen" tests).
///
/// Thread safety: `Sendable`; the engine's lock serializes access.
public final class InMemoryDriver: StoreDriver {
    public let engine: AtomicStoreEngine

    init(engine: AtomicStoreEngine) { self.engine = engine }

    public var capabilities: DriverCapabilities {
        [.predicatePushdown, .sortPushdown, .countPushdown, .concurrentReads, .inMemory]
    }

    public func loadMetadata() throws -> StoreMetadata { engine.metadata }

    public func saveMetadata(_ metadata: StoreMetadata) throws { try engine.setMetadata(metadata) }

    public func fetch(_ request: StoreFetch) throws -> StoreFetchResult { try engine.fetch(request) }

    public func rows(for ids: [RowID]) throws -> [RowSnapshot] { engine.rows(for: ids) }

    public func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64> {
        try engine.allocatePrimaryKeys(forEntity: entity, count: count)
    }

    public func apply(_ batch: ChangeBatch) throws -> CommitResult { try engine.apply(batch) }

    /// Writes each change set into the engine's rows as it comes, undoing them all on a failure.
    public func apply(inParts next: (_ first: Bool) throws -> ChangeBatch?) throws -> CommitResult {
        try engine.apply(inParts: next)
    }

    public func close() throws {}
}

/// Opens in-memory stores.
public struct InMemoryDriverFactory: StoreDriverFactory {
    private static let named = NamedEngines()

    /// Creates the factory.
    public init() {}

    public func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
        let make = {
            AtomicStoreEngine(
                model: request.model, storeName: request.url?.absoluteString ?? "memory:",
                state: .init(metadata: StoreMetadata(storeType: StoreType.inMemoryName)))
        }
        guard let url = request.url else { return InMemoryDriver(engine: make()) }
        return InMemoryDriver(engine: Self.named.engine(for: url, make: make))
    }

    /// The metadata of the named store opened earlier in this process with `url`, or `nil`.
    public func metadata(at url: URL, options: StoreOptions) throws -> StoreMetadata? {
        Self.named.existingEngine(for: url)?.metadata
    }

    /// In-memory stores have no files.
    public func storeFiles(at url: URL, options: StoreOptions) -> [URL] { [] }

    /// The named store at `destination` becomes the one at `source` (which loses its name).
    public func replaceStore(at destination: URL, withStoreFrom source: URL, options: StoreOptions) throws {
        guard Self.named.move(from: source, to: destination) else {
            throw StoreError(
                .notFound, "there is no in-memory store named \(source.absoluteString) to put in place",
                store: destination.absoluteString)
        }
    }

    /// Forgets the named store at `url`.
    public func destroyStore(at url: URL, options: StoreOptions) throws { Self.named.remove(url) }

    /// Makes a named store at `destination` holding a copy of the rows of the one at `source`.
    public func copyStore(from source: URL, to destination: URL, options: StoreOptions) throws {
        guard let engine = Self.named.existingEngine(for: source) else {
            throw StoreError(
                .notFound, "there is no in-memory store named \(source.absoluteString) to copy",
                store: source.absoluteString)
        }
        Self.named.set(
            AtomicStoreEngine(model: engine.model, storeName: destination.absoluteString, state: engine.snapshot),
            for: destination)
    }

    /// The model embedded in the metadata of the named store at `url`, or `nil`.
    public func recoverModel(at url: URL, options: StoreOptions) throws -> RecoveredModel? {
        guard let data = try metadata(at: url, options: options)?.values[StoreMetadata.modelKey]?.dataValue else {
            return nil
        }
        return RecoveredModel(model: try ManagedObjectModel(encodedRepresentation: data), source: .embedded)
    }
}

/// Engines by URL, so a store opened twice with the same URL in one process sees the same rows.
private final class NamedEngines: Sendable {
    private let engines = Locked<[URL: AtomicStoreEngine]>([:])

    func engine(for url: URL, make: () -> AtomicStoreEngine) -> AtomicStoreEngine {
        engines.withLock { table in
            if let existing = table[url] { return existing }
            let engine = make()
            table[url] = engine
            return engine
        }
    }

    func existingEngine(for url: URL) -> AtomicStoreEngine? { engines.withLock { $0[url] } }

    /// Gives the engine named `source` the name `destination`; `false` when there is none.
    func move(from source: URL, to destination: URL) -> Bool {
        engines.withLock { table in
            guard let engine = table.removeValue(forKey: source) else { return false }
            table[destination] = engine
            return true
        }
    }

    func remove(_ url: URL) { _ = engines.withLock { $0.removeValue(forKey: url) } }

    func set(_ engine: AtomicStoreEngine, for url: URL) { engines.withLock { $0[url] = engine } }
}

extension StoreType {
    /// The name in-memory stores record as their type.
    public static let inMemoryName = "InMemory"

    /// The in-memory store type (`NSInMemoryStoreType`).
    public static var inMemory: StoreType {
        let type = StoreType(name: inMemoryName, factory: InMemoryDriverFactory())
        register(type)
        return type
    }
}
