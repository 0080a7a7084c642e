import Foundation

extension StoreMetadata {
    /// Whether Strata wrote the store's version hashes (its ``entityVersionHashes`` are Strata's
    /// scheme; the store records ``modelVersionHashKey``).
    public var hasStrataHashes: Bool { values[Self.modelVersionHashKey] != nil }

    /// The hashes Apple's Core Data recorded (`NSStoreModelVersionHashes`), when the store has
    /// them: a SQLite store keeps them among its ``values``; an XML store Apple wrote keeps them
    /// as its ``entityVersionHashes``.
    public var coreDataEntityVersionHashes: [String: Data]? {
        if case .dictionary(let stored)? = values[ModelVersionHashes.entityHashesKey] {
            var hashes: [String: Data] = [:]
            for (name, value) in stored {
                guard let data = value.dataValue else { return nil }
                hashes[name] = data
            }
            return hashes
        }
        if !hasStrataHashes, !entityVersionHashes.isEmpty { return entityVersionHashes }
        return nil
    }
}

extension ManagedObjectModel {
    /// Whether a store with `metadata` can be opened with this model's configuration without
    /// migration (Core Data's `isConfiguration(withName:compatibleWithStoreMetadata:)`).
    ///
    /// A store Strata wrote is compared by Strata's hashes (``EntityDescription/versionHash``); a
    /// store Apple's Core Data wrote by Core Data's (``ModelVersionHashes``), as Core Data compares
    /// them: a hashes version above 3 or no hashes is incompatible, the number of entities must
    /// agree, and every entity's hash must equal the stored one (below version 3, only the names).
    /// An unknown configuration is not compatible.
    public func isConfiguration(_ configuration: String?, compatibleWithStoreMetadata metadata: StoreMetadata) -> Bool {
        // An unknown configuration is simply not compatible (the error cannot change the answer).
        guard let members = try? entities(forConfiguration: configuration) else { return false }
        if metadata.hasStrataHashes {
            return isConfiguration(configuration, compatibleWith: metadata.entityVersionHashes)
        }
        guard let stored = metadata.coreDataEntityVersionHashes, !stored.isEmpty else { return false }
        var version = ModelVersionHashes.hashesVersion
        if case .integer(let recorded)? = metadata.values[ModelVersionHashes.hashesVersionKey] { version = recorded }
        guard version <= ModelVersionHashes.hashesVersion, stored.count == members.count else { return false }
        if version < ModelVersionHashes.hashesVersion { return members.allSatisfy { stored[$0.name] != nil } }
        let hashes = coreDataVersionHashes.entities
        return members.allSatisfy { stored[$0.name] != nil && stored[$0.name] == hashes[$0.name] }
    }

    /// The model among `candidates` whose hashes match `metadata` (``isConfiguration(_:compatibleWithStoreMetadata:)``),
    /// or `nil`: how a store's source model is found among the versions of a model bundle.
    public static func model(
        matching metadata: StoreMetadata, configuration: String? = nil, among candidates: [ManagedObjectModel]
    ) -> ManagedObjectModel? {
        candidates.first { $0.isConfiguration(configuration, compatibleWithStoreMetadata: metadata) }
    }
}
