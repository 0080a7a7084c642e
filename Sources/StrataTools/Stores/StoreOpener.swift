import Foundation
import Strata

/// A model chosen for a store, and where it came from.
public struct ResolvedModel: Sendable {
    /// The model.
    public var model: ManagedObjectModel
    /// `"embedded"` (the store's own Strata model), `"modelCache"` (Apple's `Z_MODELCACHE`),
    /// `"inferred"` (guessed from the store's structure) or `"--model"` (the file given).
    public var source: String
    /// Whether the store should be opened read-only with it (inferred models).
    public var requiresReadOnly: Bool
    /// When a `--model` was given: whether its version hash equals the store's model's.
    public var matchesGivenModel: Bool?
    /// The model configuration the store holds, when it holds one that is not every entity: the
    /// configuration whose entities are exactly those the store's metadata records (a store
    /// attached with `configuration:` records only its own). `nil`: every entity.
    public var configuration: String?
}

/// Opens stores for the tools: finds the driver, the model (the store's embedded model first, then
/// the driver's recovered model, then `--model`) and opens the driver directly.
public enum StoreOpener {
    /// Reads a store's metadata without attaching it; `nil` when the driver cannot say.
    public static func metadata(at location: StoreLocation) throws -> StoreMetadata? {
        guard let url = location.url else { return nil }
        let type = try location.storeType()
        do {
            return try type.factory.metadata(at: url, options: StoreOptions(isReadOnly: true, createIfMissing: false))
        } catch {
            throw ToolError.wrapping(error, store: location.displayName)
        }
    }

    /// Chooses the model for an existing store: embedded, then recovered, then `modelPath`.
    ///
    /// - Throws: ``ToolError`` (usage) when the store has no readable model and none was given.
    public static func resolveModel(at location: StoreLocation, modelPath: String?) throws -> ResolvedModel {
        let given = try modelPath.map(ModelFile.load)
        if location.isFileBacked, !location.exists {
            throw ToolError.usage("no store at '\(location.displayName)'")
        }
        if location.isOnServer, try metadata(at: location) == nil {
            throw ToolError.usage(
                "no store at '\(location.displayName)': its schema holds no store; check the URL's schema")
        }
        let type = try location.storeType()
        var found: ResolvedModel?
        if let url = location.url {
            let options = StoreOptions(isReadOnly: true, createIfMissing: false)
            if let data = try metadata(at: location)?.values[StoreMetadata.modelKey]?.dataValue {
                do {
                    found = ResolvedModel(
                        model: try ManagedObjectModel(encodedRepresentation: data), source: "embedded",
                        requiresReadOnly: false)
                } catch {
                    if given == nil {
                        throw ToolError.failure(
                            "store '\(location.displayName)': its embedded model does not decode (\(error)); pass --model"
                        )
                    }
                }
            }
            if found == nil {
                do {
                    if let recovered = try type.factory.recoverModel(at: url, options: options) {
                        found = ResolvedModel(
                            model: recovered.model, source: recovered.source.rawValue,
                            requiresReadOnly: recovered.requiresReadOnly)
                    }
                } catch  where given != nil {
                    found = nil  // the given model is used instead
                } catch {
                    throw ToolError.wrapping(error, store: location.displayName)
                }
            }
        }
        if var found {
            if let given { found.matchesGivenModel = given.versionHash == found.model.versionHash }
            found.configuration = try storedConfiguration(at: location, model: found.model)
            return found
        }
        guard let given else {
            throw ToolError.usage(
                "store '\(location.displayName)' holds no model Strata can read; pass --model PATH (an .xcdatamodeld, .xcdatamodel or Strata model .json)"
            )
        }
        return ResolvedModel(
            model: given, source: "--model", requiresReadOnly: false, matchesGivenModel: true,
            configuration: try storedConfiguration(at: location, model: given))
    }

    /// The configuration of `model` whose entities are exactly the ones the store's metadata
    /// records, when that is not every entity; `nil` otherwise (every entity, or no such record).
    static func storedConfiguration(at location: StoreLocation, model: ManagedObjectModel) throws -> String? {
        guard let recorded = try metadata(at: location).map({ Set($0.entityVersionHashes.keys) }), !recorded.isEmpty,
            recorded != Set(model.entities.map(\.name))
        else { return nil }
        return model.configurations.keys.sorted().first { Set(model.configurations[$0] ?? []) == recorded }
    }

    /// Opens a store's driver directly (no coordinator), for streaming work.
    ///
    /// - Parameters:
    ///   - location: The store.
    ///   - model: The model to open it with.
    ///   - configuration: The configuration it holds (`nil`: every entity).
    ///   - readOnly: Open without writing.
    ///   - create: Create the store when missing.
    public static func openDriver(
        _ location: StoreLocation, model: ManagedObjectModel, configuration: String? = nil, readOnly: Bool,
        create: Bool = false
    ) throws -> any StoreDriver {
        let type = try location.storeType()
        let request = StoreOpenRequest(
            url: location.url, model: model, configuration: configuration,
            options: StoreOptions(isReadOnly: readOnly, createIfMissing: create))
        do {
            return try type.factory.makeDriver(request)
        } catch {
            throw ToolError.wrapping(error, store: location.displayName)
        }
    }

    /// Attaches a store to a new coordinator (for commands that work with objects).
    public static func attach(
        _ location: StoreLocation, model: ManagedObjectModel, configuration: String? = nil, readOnly: Bool
    ) throws -> (PersistentStoreCoordinator, PersistentStore) {
        let type = try location.storeType()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        do {
            let store = try coordinator.addPersistentStore(
                type: type, configuration: configuration, at: location.url,
                options: StoreOptions(isReadOnly: readOnly, createIfMissing: !readOnly))
            return (coordinator, store)
        } catch {
            throw ToolError.wrapping(error, store: location.displayName)
        }
    }
}
