import Foundation
import Synchronization

/// Makes drivers for one store type. Each driver product provides one and a ``StoreType``
/// constant (`StoreType.inMemory`, `StoreType.sqlite`, …), so the coordinator never names a
/// concrete driver type.
public protocol StoreDriverFactory: Sendable {
    /// Opens (or creates) a store.
    func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver

    /// Reads a store's metadata without attaching it (Core Data's
    /// `metadataForPersistentStore(ofType:at:options:)`); `nil` when the store does not exist.
    func metadata(at url: URL, options: StoreOptions) throws -> StoreMetadata?

    /// Recovers the model a store was written with, for opening it without one: from an
    /// embedded model (``StoreMetadata/modelKey``), Apple's model cache, or the store's own
    /// structure. `nil` when the driver cannot tell. Stores opened with a recovered model that is
    /// not an exact record of the original should be opened read-only.
    func recoverModel(at url: URL, options: StoreOptions) throws -> RecoveredModel?

    /// The files a store at `url` consists of: the main file (or directory) first, then
    /// companion files named by appending a suffix to its path (SQLite's `-wal` and `-shm`, a
    /// lock file). Used to size, copy and remove closed stores. The default is `[url]` for a file
    /// URL and nothing otherwise.
    func storeFiles(at url: URL, options: StoreOptions) -> [URL]

    /// Puts the complete, closed store at `source` in place of the store at `destination`, so
    /// that a kill at any moment leaves the old store or the new one (Core Data's
    /// `replacePersistentStore`). `source` is consumed. The default renames the main file over the
    /// destination's (symbolic links followed, fsynced, directory fsynced,
    /// ``StoreFileOperations/replace(_:with:companionSuffixes:)``) and removes the source's
    /// companion files; a driver whose store has other files, or none, overrides it.
    ///
    /// - Throws: ``StoreError``: `.locked` when the destination is in use, `.io`, `.unsupported`.
    func replaceStore(at destination: URL, withStoreFrom source: URL, options: StoreOptions) throws

    /// Removes a closed store and its companion files (Core Data's `destroyPersistentStore`). The
    /// default removes ``storeFiles(at:options:)``; a store that does not exist is not an error.
    func destroyStore(at url: URL, options: StoreOptions) throws

    /// Copies a closed store to `destination` (a backup), file by file, each made durable before
    /// it takes its name. The default copies ``storeFiles(at:options:)``.
    func copyStore(from source: URL, to destination: URL, options: StoreOptions) throws
}

extension StoreDriverFactory {
    /// By default a driver cannot read metadata without attaching the store (`nil`); file-backed
    /// drivers override this.
    public func metadata(at url: URL, options: StoreOptions) throws -> StoreMetadata? { nil }

    /// By default a driver cannot recover a model.
    public func recoverModel(at url: URL, options: StoreOptions) throws -> RecoveredModel? { nil }

    /// By default a store is the one file its URL names.
    public func storeFiles(at url: URL, options: StoreOptions) -> [URL] { url.isFileURL ? [url] : [] }

    /// By default the main file is renamed over the destination's.
    public func replaceStore(at destination: URL, withStoreFrom source: URL, options: StoreOptions) throws {
        guard destination.isFileURL, source.isFileURL else {
            throw StoreError(
                .unsupported, "this store type does not say how to replace its stores; migrate it in place or copy it",
                store: destination.absoluteString)
        }
        let companions = storeFiles(at: source, options: options).dropFirst().map {
            String($0.path.dropFirst(source.path.count))
        }
        try StoreFileOperations.replace(destination.path, with: source.path, companionSuffixes: companions)
    }

    /// By default the store's files are removed.
    public func destroyStore(at url: URL, options: StoreOptions) throws {
        guard url.isFileURL else {
            throw StoreError(
                .unsupported, "this store type does not say how to remove its stores", store: url.absoluteString)
        }
        try StoreFileOperations.remove(storeFiles(at: url, options: options).map(\.path))
    }

    /// By default the store's files are copied; a store that is not there is `notFound`.
    public func copyStore(from source: URL, to destination: URL, options: StoreOptions) throws {
        guard source.isFileURL, destination.isFileURL else {
            throw StoreError(
                .unsupported, "this store type does not say how to copy its stores", store: source.absoluteString)
        }
        // Companion files may be missing; the store itself may not (a copy of nothing is no backup).
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw StoreError(.notFound, "there is no store to copy here; check the path", store: source.path)
        }
        try StoreFileOperations.copy(
            storeFiles(at: source, options: options).map(\.path), from: source.path, to: destination.path)
    }
}

/// A model recovered from a store, and how faithful it is.
public struct RecoveredModel: Sendable {
    /// Where a recovered model came from.
    public enum Source: String, Sendable, Hashable {
        /// The store's embedded Strata model: exact.
        case embedded
        /// Apple's `Z_MODELCACHE`: exact for what Core Data stored.
        case modelCache
        /// Guessed from the store's structure (tables, XML elements): names and types may differ.
        case inferred
    }
    /// The model.
    public var model: ManagedObjectModel
    /// Where it came from.
    public var source: Source
    /// Whether stores opened with it should be read-only (true for inferred models).
    public var requiresReadOnly: Bool

    /// Creates a recovered model.
    public init(model: ManagedObjectModel, source: Source, requiresReadOnly: Bool? = nil) {
        self.model = model
        self.source = source
        self.requiresReadOnly = requiresReadOnly ?? (source == .inferred)
    }
}

/// Everything a driver is told when its store is opened.
public struct StoreOpenRequest: Sendable {
    /// Where the store lives; `nil` for stores without a file.
    public var url: URL?
    /// The coordinator's model.
    public var model: ManagedObjectModel
    /// The configuration the store is attached with (`nil` for every entity).
    public var configuration: String?
    /// Options given when the store was attached.
    public var options: StoreOptions

    /// Creates a request.
    public init(url: URL?, model: ManagedObjectModel, configuration: String?, options: StoreOptions) {
        self.url = url
        self.model = model
        self.configuration = configuration
        self.options = options
    }

    /// The entities the store holds.
    public var entities: [EntityDescription] {
        // The coordinator refused unknown configurations before making a request (safe to ignore here).
        (try? model.entities(forConfiguration: configuration)) ?? model.entities
    }

    /// A short name for messages: the file path, the URL of a store on a server (without its
    /// password), or the store type.
    public func displayName(type: String) -> String { url?.storeName ?? type }

    /// Where the driver logs: ``StoreOptions/log``, else what `STRATA_SQL_DEBUG` asks for.
    public var log: StoreLog { options.log ?? .environment(store: url?.storeName ?? "store") }
}

/// Options of an attached store. Known options have properties; drivers read their own from
/// ``values`` (for example SQLite pragmas).
public struct StoreOptions: Sendable, Hashable {
    /// Open the store read-only; saves to it fail with ``StoreError/Code/readOnly``.
    public var isReadOnly: Bool = false
    /// How long to wait for a lock held by another process, in seconds.
    public var timeout: Double = 5
    /// Create the store when it does not exist (default `true`).
    public var createIfMissing: Bool = true
    /// Driver-specific options, by name.
    public var values: [String: String] = [:]
    /// Migrate the store when it was written with another version of the model (Core Data's
    /// `NSMigratePersistentStoresAutomaticallyOption`; off by default, as for Core Data's
    /// `addPersistentStore`; ``PersistentStoreDescription`` turns it on).
    public var shouldMigrateStoreAutomatically = false
    /// When migrating automatically without a fitting mapping model in ``migration``, infer one
    /// (Core Data's `NSInferMappingModelAutomaticallyOption`; off by default).
    public var shouldInferMappingModelAutomatically = false
    /// What an automatic migration may use: mapping models, the model versions to find the
    /// store's own among, a staged migration manager, a backup location.
    public var migration = MigrationOptions()
    /// Where the driver logs what it does to its engine; `nil` (the default) follows
    /// `STRATA_SQL_DEBUG` (see ``StoreLog``).
    public var log: StoreLog?

    /// Creates options.
    public init(
        isReadOnly: Bool = false, timeout: Double = 5, createIfMissing: Bool = true, values: [String: String] = [:],
        shouldMigrateStoreAutomatically: Bool = false, shouldInferMappingModelAutomatically: Bool = false,
        migration: MigrationOptions = MigrationOptions(), log: StoreLog? = nil
    ) {
        self.isReadOnly = isReadOnly
        self.timeout = timeout
        self.createIfMissing = createIfMissing
        self.values = values
        self.shouldMigrateStoreAutomatically = shouldMigrateStoreAutomatically
        self.shouldInferMappingModelAutomatically = shouldInferMappingModelAutomatically
        self.migration = migration
        self.log = log
    }
}

/// A store type: a name and the factory that opens stores of that type.
public struct StoreType: Sendable, Hashable, CustomStringConvertible {
    /// The type's name, as stores record it (`"SQLite"`, `"InMemory"`, …).
    public let name: String
    /// The factory.
    public let factory: any StoreDriverFactory

    /// Creates a store type.
    public init(name: String, factory: any StoreDriverFactory) {
        self.name = name
        self.factory = factory
    }

    public static func == (lhs: StoreType, rhs: StoreType) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    public var description: String { name }

    private static let registry = Locked<[String: StoreType]>([:])

    /// Makes `type` findable by name (``named(_:)``); driver modules register their type when
    /// their constant is first used, and tools may register more.
    public static func register(_ type: StoreType) {
        registry.withLock { $0[type.name.lowercased()] = type }
    }

    /// The registered type named `name` (case-insensitive), or `nil`.
    public static func named(_ name: String) -> StoreType? {
        registry.withLock { $0[name.lowercased()] }
    }
}

extension URL {
    /// How messages name the store at this URL: a file's path; for other URLs (a database server's,
    /// an in-memory store's name) the URL itself with any password left out, so an error never
    /// shows a credential.
    public var storeName: String {
        if isFileURL { return path }
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false), components.password != nil
        else {
            return absoluteString
        }
        components.password = nil
        return components.string ?? "\(scheme ?? "store"):…"
    }
}
