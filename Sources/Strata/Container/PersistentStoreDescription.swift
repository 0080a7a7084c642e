import Foundation

/// How a ``PersistentContainer`` attaches one store (Core Data's `NSPersistentStoreDescription`):
/// its type, location, configuration, options and migration flags.
public struct PersistentStoreDescription: Sendable, Hashable, CustomStringConvertible {
    /// The store type's name (`"SQLite"`, `"XML"`, `"LMDB"`, `"InMemory"`, …), looked up with
    /// ``StoreType/named(_:)`` when the store is loaded.
    public var type: String
    /// Where the store lives; `nil` for stores without a file.
    public var url: URL?
    /// The model configuration the store holds (`nil`: every entity).
    public var configuration: String?
    /// Options the store is added with (read-only, lock timeout, migration, driver-specific
    /// values). A description's options migrate and infer by default (see
    /// ``shouldMigrateStoreAutomatically``), unlike a bare ``StoreOptions``.
    public var options: StoreOptions
    /// Migrate the store when it was written with an older version of the model (Core Data's
    /// `shouldMigrateStoreAutomatically`; `true` by default). The same flag as
    /// ``StoreOptions/shouldMigrateStoreAutomatically`` in ``options``.
    public var shouldMigrateStoreAutomatically: Bool {
        get { options.shouldMigrateStoreAutomatically }
        set { options.shouldMigrateStoreAutomatically = newValue }
    }
    /// Infer the mapping between model versions when no mapping model is given (Core Data's
    /// `shouldInferMappingModelAutomatically`; `true` by default). The same flag as
    /// ``StoreOptions/shouldInferMappingModelAutomatically`` in ``options``.
    public var shouldInferMappingModelAutomatically: Bool {
        get { options.shouldInferMappingModelAutomatically }
        set { options.shouldInferMappingModelAutomatically = newValue }
    }
    /// Load the store on a background thread in ``PersistentContainer/loadPersistentStores(completionHandler:)``
    /// (Core Data's `shouldAddStoreAsynchronously`; `false` by default).
    public var shouldAddStoreAsynchronously = false

    /// A store of `type` at `url`; the type is registered so that it can be found by name.
    public init(type: StoreType, url: URL? = nil) {
        StoreType.register(type)
        self.type = type.name
        self.url = url
        self.options = Self.defaultOptions
    }

    /// A SQLite store at `url` (the type Core Data's `init(url:)` picks). The SQLite driver must be
    /// linked and its type registered (`StoreType.sqlite` registers itself when first used).
    public init(url: URL) {
        self.type = "SQLite"
        self.url = url
        self.options = Self.defaultOptions
    }

    /// A description's options: migrate automatically and infer the mapping, as Core Data's
    /// descriptions do.
    static var defaultOptions: StoreOptions {
        StoreOptions(shouldMigrateStoreAutomatically: true, shouldInferMappingModelAutomatically: true)
    }

    /// Whether saves to the store are refused (Core Data's `isReadOnly`).
    public var isReadOnly: Bool {
        get { options.isReadOnly }
        set { options.isReadOnly = newValue }
    }

    /// How long to wait for a lock held by another process, in seconds (Core Data's `timeout`).
    public var timeout: TimeInterval {
        get { options.timeout }
        set { options.timeout = newValue }
    }

    /// Sets (or, with `nil`, removes) a driver option (Core Data's `setOption(_:forKey:)`).
    public mutating func setOption(_ value: String?, forKey key: String) {
        options.values[key] = value
    }

    public var description: String {
        "\(type) store\(url.map { " at \($0.path)" } ?? "")\(configuration.map { " (configuration \($0))" } ?? "")"
    }
}
