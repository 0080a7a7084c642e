import Foundation

/// Strata's own versioned encoding of a ``ManagedObjectModel``: the model a store embeds in its
/// metadata (``StoreMetadata/modelKey``), so a store opens without the model file that wrote it.
///
/// The encoding is JSON with sorted keys:
/// `{"format": "strata-model", "version": 1, "entities": [...], "configurations": {...}, ...}`
/// (version 2 when the model has composite attributes).
/// Every field of every entity, attribute, relationship, fetched property, constraint, index,
/// configuration and fetch request template is kept; ``StoreValue`` defaults and validation
/// bounds are written with their case and an exact text form (doubles in Swift's shortest
/// round-trip form, dates as seconds since 2001 the same way, binary in base64), so decoding gives
/// a model with the same version hash and the same descriptions. The one thing not kept is
/// ``EntityDescription/managedObjectClass``, a runtime type: decoded entities use ``ManagedObject``
/// (re-register classes with ``ManagedObjectModel/registering(_:)``).
///
/// Readers refuse a `version` newer than ``ModelArchive/currentVersion`` with a ``ModelError``.
public enum ModelArchive {
    /// The `format` field's value.
    public static let formatName = "strata-model"
    /// The newest encoding version this build reads and writes.
    ///
    /// Version 2 adds composite attributes (`elements` and `composite` on an attribute). A model
    /// without composites is still written as version 1, which every earlier build reads; one
    /// with composites is written as version 2, which earlier builds refuse, saying to upgrade.
    public static let currentVersion = 2
}

extension ManagedObjectModel {
    /// The model in Strata's versioned encoding (see ``ModelArchive``).
    ///
    /// - Throws: `EncodingError` only if Foundation's JSON encoder fails, which the archive's
    ///   plain string and number fields do not cause.
    public func encodedRepresentation() throws -> Data {
        let archive = ModelArchive.Model(self)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(archive)
    }

    /// Decodes a model written by ``encodedRepresentation()``.
    ///
    /// - Throws: ``ModelError`` `.unreadable` when the data is not such an encoding or is of a
    ///   newer version; other ``ModelError`` codes when the decoded model is inconsistent.
    public convenience init(encodedRepresentation data: Data) throws {
        let archive: ModelArchive.Model
        do {
            let header = try JSONDecoder().decode(ModelArchive.Header.self, from: data)
            guard header.format == ModelArchive.formatName else {
                throw ModelError(.unreadable, "not a Strata model encoding (format '\(header.format)')")
            }
            guard header.version <= ModelArchive.currentVersion else {
                throw ModelError(
                    .unreadable,
                    "the model was encoded with version \(header.version) of Strata's model format; this build reads up to version \(ModelArchive.currentVersion). Upgrade Strata"
                )
            }
            archive = try JSONDecoder().decode(ModelArchive.Model.self, from: data)
        } catch let error as ModelError {
            throw error
        } catch {
            throw ModelError(.unreadable, "the embedded model does not decode: \(error)")
        }
        try self.init(
            entities: try archive.entities.map { try $0.decoded() }, configurations: archive.configurations,
            fetchRequestTemplates: try archive.fetchRequestTemplates.mapValues { try $0.decoded() },
            versionIdentifiers: archive.versionIdentifiers, userInfo: archive.userInfo)
    }
}

extension ModelArchive {
    struct Header: Decodable {
        var format: String
        var version: Int
    }

    struct Model: Codable {
        var format = ModelArchive.formatName
        var version = ModelArchive.currentVersion
        var entities: [Entity]
        var configurations: [String: [String]]
        var fetchRequestTemplates: [String: Template]
        var versionIdentifiers: [String]
        var userInfo: [String: String]
        var versionHash: String

        init(_ model: ManagedObjectModel) {
            version = model.entities.contains { !$0.compositeAttributes.isEmpty } ? 2 : 1
            entities = model.entities.map(Entity.init)
            configurations = model.configurations
            fetchRequestTemplates = model.fetchRequestTemplates.mapValues(Template.init)
            versionIdentifiers = model.versionIdentifiers
            userInfo = model.userInfo
            versionHash = model.versionHash.hexString
        }
    }

    struct Template: Codable {
        var entityName: String
        var predicateFormat: String
        var includesSubentities: Bool
        var resultType: Int
        /// Absent in encodings written before templates kept them (then 0).
        var fetchLimit: Int?
        var fetchBatchSize: Int?

        init(_ template: FetchRequestTemplate) {
            entityName = template.entityName
            predicateFormat = template.predicateFormat
            includesSubentities = template.includesSubentities
            resultType = template.resultType.rawValue
            fetchLimit = template.fetchLimit == 0 ? nil : template.fetchLimit
            fetchBatchSize = template.fetchBatchSize == 0 ? nil : template.fetchBatchSize
        }

        func decoded() throws -> FetchRequestTemplate {
            guard let type = FetchResultType(rawValue: resultType) else {
                throw ModelError(.unreadable, "fetch request template result type \(resultType) is unknown")
            }
            guard (fetchLimit ?? 0) >= 0, (fetchBatchSize ?? 0) >= 0 else {
                throw ModelError(.unreadable, "fetch request template fetchLimit or fetchBatchSize is negative")
            }
            return FetchRequestTemplate(
                entityName: entityName, predicateFormat: predicateFormat, includesSubentities: includesSubentities,
                resultType: type, fetchLimit: fetchLimit ?? 0, fetchBatchSize: fetchBatchSize ?? 0)
        }
    }

    struct Entity: Codable {
        var name: String
        var parent: String?
        var isAbstract: Bool
        var properties: [Property]
        var uniquenessConstraints: [[String]]
        var indexes: [Index]
        var representedClassName: String?
        var renamingIdentifier: String?
        var versionHashModifier: String?
        var userInfo: [String: String]
        var fetchedProperties: [FetchedProperty]

        init(_ entity: EntityDescription) {
            name = entity.name
            parent = entity.superentityName
            isAbstract = entity.isAbstract
            properties = entity.ownProperties.map(Property.init)
            uniquenessConstraints = entity.uniquenessConstraints
            indexes = entity.indexes.map(Index.init)
            representedClassName = entity.representedClassName
            renamingIdentifier = entity.renamingIdentifier
            versionHashModifier = entity.versionHashModifier
            userInfo = entity.userInfo
            fetchedProperties = entity.fetchedProperties.map(FetchedProperty.init)
        }

        func decoded() throws -> EntityDescription {
            EntityDescription(
                name, parent: parent, isAbstract: isAbstract,
                properties: try properties.map { try $0.decoded(entity: name) },
                uniquenessConstraints: uniquenessConstraints, indexes: indexes.map { $0.decoded() },
                representedClassName: representedClassName, renamingIdentifier: renamingIdentifier,
                versionHashModifier: versionHashModifier, userInfo: userInfo,
                fetchedProperties: fetchedProperties.map { $0.decoded() })
        }
    }

    struct Index: Codable {
        struct Element: Codable {
            var property: String
            var ascending: Bool
        }
        var name: String
        var elements: [Element]

        init(_ index: FetchIndexDescription) {
            name = index.name
            elements = index.elements.map { Element(property: $0.property, ascending: $0.ascending) }
        }

        func decoded() -> FetchIndexDescription {
            FetchIndexDescription(name: name, elements: elements.map { .init($0.property, ascending: $0.ascending) })
        }
    }

    struct FetchedProperty: Codable {
        var name: String
        var entityName: String
        var predicateFormat: String
        var userInfo: [String: String]

        init(_ property: FetchedPropertyDescription) {
            name = property.name
            entityName = property.entityName
            predicateFormat = property.predicateFormat
            userInfo = property.userInfo
        }

        func decoded() -> FetchedPropertyDescription {
            FetchedPropertyDescription(
                name, entityName: entityName, predicateFormat: predicateFormat, userInfo: userInfo)
        }
    }
}
