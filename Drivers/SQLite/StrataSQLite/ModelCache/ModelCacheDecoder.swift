import Foundation
import Strata

/// Decodes the model Core Data embeds in its SQLite stores (`Z_MODELCACHE.Z_CONTENT`): a raw
/// DEFLATE stream of an `NSKeyedArchiver` archive whose root is an `NSManagedObjectModel`.
///
/// The same archive format is a compiled `.mom` file, which ``decodeModel(fromArchive:)`` reads
/// too. The key mapping is described in docs/formats/sqlite-model-cache.md. What Strata's model
/// cannot hold is left out: fetched properties, fetch request templates (their predicates are
/// archived `NSPredicate` objects), validation predicates, transformable default values, partial
/// indexes, and the Spotlight, history and CloudKit flags. Derived attributes become ordinary
/// stored attributes.
///
/// Thread safety: stateless; call from any thread.
public enum ModelCacheDecoder {
    /// Decodes a model from the compressed `Z_CONTENT` blob of a store's `Z_MODELCACHE` table.
    ///
    /// - Parameter compressed: The blob as stored (raw DEFLATE).
    /// - Returns: The model, checked by ``ManagedObjectModel``; entity numbers follow Core Data's
    ///   numbering, so they match the store's `Z_ENT` values.
    /// - Throws: ``SQLiteError`` with code ``SQLiteError/Code/corrupt`` for bad compressed data, a
    ///   bad archive or an inconsistent model (the core's ``ModelError`` in `underlying`), or
    ///   ``SQLiteError/Code/unsupported`` for an attribute type Strata does not have.
    public static func decodeModel(fromModelCache compressed: Data) throws -> ManagedObjectModel {
        let archive = try KeyedArchive(data: try RawDeflate.inflate(compressed))
        return try decodeModel(fromArchive: archive)
    }

    /// Decodes a model from a keyed archive whose root object is an `NSManagedObjectModel`
    /// (an inflated model cache, or a compiled `.mom` file's contents).
    ///
    /// - Throws: ``SQLiteError`` as ``decodeModel(fromModelCache:)`` does.
    public static func decodeModel(fromArchive archive: KeyedArchive) throws -> ManagedObjectModel {
        let root = try archive.topObject("root")
        guard root.isKind(of: "NSManagedObjectModel") else {
            throw SQLiteError(
                .corrupt, "model archive's root is '\(root.className ?? "a scalar")', not an NSManagedObjectModel")
        }
        guard let entityEntries = root["NSEntities"]?.entries else {
            throw SQLiteError(.corrupt, "model archive has no NSEntities dictionary")
        }
        var entities: [EntityDescription] = []
        for (key, object) in entityEntries {
            guard object.isKind(of: "NSEntityDescription") else {
                throw SQLiteError(
                    .corrupt, "model archive lists '\(object.className ?? "a scalar")' among its entities")
            }
            entities.append(try decodeEntity(object, key: key.string))
        }
        let configurations = try decodeConfigurations(root["NSConfigurations"])
        let versionIdentifiers = (root["NSVersionIdentifiers"]?.elements ?? []).compactMap(\.string).sorted()
        do {
            return try ManagedObjectModel(
                entities: entities, configurations: configurations, versionIdentifiers: versionIdentifiers,
                userInfo: stringDictionary(root["NSUserInfo"]))
        } catch let error as ModelError {
            throw SQLiteError(
                .corrupt,
                "the model archive describes a model Strata rejects (\(error.message)); open the store with the model that wrote it",
                underlying: error)
        }
    }

    // MARK: - Entities

    static func decodeEntity(_ object: ArchivedObject, key: String?) throws -> EntityDescription {
        guard let name = object["NSEntityName"]?.string ?? key, !name.isEmpty else {
            throw SQLiteError(.corrupt, "model archive has an entity without a name")
        }
        let parent = object["NSSuperentity"]
        let parentName = parent.flatMap { $0["NSEntityName"]?.string }
        if parent != nil && parentName == nil {
            throw SQLiteError(.corrupt, "entity '\(name)' has a superentity without a name")
        }
        // Each entity archives every property, inherited ones too (as copies or as
        // _NSPropertyDescriptionProxy objects); Strata's entities declare only their own.
        let inherited = Set((parent?["NSProperties"]?.stringKeyedEntries ?? []).map(\.key))
        var properties: [PropertyDescription] = []
        for (key, stored) in object["NSProperties"]?.stringKeyedEntries ?? [] where !inherited.contains(key) {
            let property = stored.isKind(of: "_NSPropertyDescriptionProxy") ? stored["NSUnderlyingProperty"] : stored
            guard let property else {
                throw SQLiteError(.corrupt, "property '\(name).\(key)' is a proxy without an underlying property")
            }
            if let decoded = try decodeProperty(property, key: key, entity: name) { properties.append(decoded) }
        }
        let renaming = object["NSRenamingIdentifier"]?.string
        return EntityDescription(
            name, parent: parentName, isAbstract: object["NSIsAbstract"]?.bool ?? false, properties: properties,
            uniquenessConstraints: decodeUniquenessConstraints(object["NSUniqueTuples"]),
            indexes: decodeIndexes(object["NSFetchIndexDescriptions"]),
            representedClassName: object["NSClassNameForEntity"]?.string,
            renamingIdentifier: renaming == name ? nil : renaming,
            versionHashModifier: nonEmpty(object["NSVersionHashModifier"]?.string),
            userInfo: stringDictionary(object["NSUserInfo"]))
    }

    static func decodeUniquenessConstraints(_ object: ArchivedObject?) -> [[String]] {
        (object?.elements ?? []).compactMap { tuple -> [String]? in
            let names = (tuple.elements ?? []).compactMap { $0.string ?? $0["NSPropertyName"]?.string }
            return names.isEmpty ? nil : names
        }
    }

    static func decodeIndexes(_ object: ArchivedObject?) -> [FetchIndexDescription] {
        (object?.elements ?? []).compactMap { index -> FetchIndexDescription? in
            guard let name = index["NSIndexName"]?.string else { return nil }
            let elements = (index["NSIndexElements"]?.elements ?? []).compactMap { element in
                element["NSPropertyName"]?.string.map {
                    FetchIndexDescription.Element($0, ascending: element["NSAscending"]?.bool ?? true)
                }
            }
            return elements.isEmpty ? nil : FetchIndexDescription(name: name, elements: elements)
        }
    }

    static func decodeConfigurations(_ object: ArchivedObject?) throws -> [String: [String]] {
        var configurations: [String: [String]] = [:]
        for (name, members) in object?.stringKeyedEntries ?? [] {
            let names = (members.elements ?? []).compactMap { $0.string ?? $0["NSEntityName"]?.string }
            configurations[name] = names.sorted()
        }
        return configurations
    }

    // MARK: - Small conversions

    /// A user-info dictionary with its values as strings (numbers and Booleans described).
    static func stringDictionary(_ object: ArchivedObject?) -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in object?.stringKeyedEntries ?? [] {
            if let text = value.string {
                result[key] = text
            } else if case .bool(let flag) = value.value {
                result[key] = flag ? "YES" : "NO"
            } else if let number = value.integer {
                result[key] = String(number)
            } else if let number = value.real {
                result[key] = String(number)
            }
        }
        return result
    }

    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }
}
