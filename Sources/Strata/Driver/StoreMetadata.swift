import Foundation

/// A store's metadata: its identifier, type, the version hashes of the model that wrote it, and
/// free-form keys (Core Data's metadata dictionary, with Apple's keys kept as they were).
public struct StoreMetadata: Sendable, Hashable {
    /// The store's UUID (upper-case), used in object URIs.
    public var uuid: String
    /// The store type's name (`"SQLite"`, `"XML"`, `"LMDB"`, `"InMemory"`).
    public var storeType: String
    /// Entity name → version hash of the model that last wrote the store.
    public var entityVersionHashes: [String: Data]
    /// Every other key, as a property-list-like value.
    public var values: [String: MetadataValue]

    /// Creates metadata.
    public init(
        uuid: String = UUID().uuidString, storeType: String, entityVersionHashes: [String: Data] = [:],
        values: [String: MetadataValue] = [:]
    ) {
        self.uuid = uuid
        self.storeType = storeType
        self.entityVersionHashes = entityVersionHashes
        self.values = values
    }

    /// The key Strata stores its own model encoding under.
    public static let modelKey = "StrataModel"
    /// The key Strata stores its model version hash under.
    public static let modelVersionHashKey = "StrataModelVersionHash"
}

/// A property-list-like metadata value.
public indirect enum MetadataValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case data(Data)
    case date(Date)
    case array([MetadataValue])
    case dictionary([String: MetadataValue])

    /// The string, when this is one.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The data, when this is some.
    public var dataValue: Data? {
        if case .data(let d) = self { return d }
        return nil
    }
}
