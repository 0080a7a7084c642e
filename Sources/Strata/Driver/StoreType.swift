import Foundation
import Synchronization

/// Makes drivers for one store type. Each driver product provides one and a ``StoreType``
/// constant (`StoreType.inMemory`, `StoreType.sqlite`, …), so the coordinator never names a
/// concrete driver type.
public protocol StoreDriverFactory: Sendable {
    /// Opens (or creates) a store.
    func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver
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
        (try? model.entities(forConfiguration: configuration)) ?? model.entities
    }

    /// A short name for messages: the file path, or the store type.
    public func displayName(type: String) -> String { url?.path ?? type }
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

    /// Creates options.
    public init(isReadOnly: Bool = false, timeout: Double = 5, createIfMissing: Bool = true, values: [String: String] = [:]) {
        self.isReadOnly = isReadOnly
        self.timeout = timeout
        self.createIfMissing = createIfMissing
        self.values = values
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

    private static let registry = Mutex<[String: StoreType]>([:])

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
