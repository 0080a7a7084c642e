import Foundation
import Strata

/// What `strata inspect` reports about a store.
public struct StoreReport: Sendable {
    /// One entity of the store's model.
    public struct Entity: Sendable {
        /// The entity's name.
        public var name: String
        /// The parent entity's name, if any.
        public var parent: String?
        /// Whether the entity is abstract.
        public var isAbstract: Bool
        /// Objects of exactly this entity.
        public var count: Int
        /// The entity's own relationships.
        public var relationships: [RelationshipDescription]
    }

    /// The driver's name (`SQLite`, `XML`, `LMDB`, `InMemory`).
    public var driver: String
    /// The store's location.
    public var location: String
    /// The store format version the metadata records, if any.
    public var formatVersion: String?
    /// The store UUID.
    public var uuid: String
    /// The version hash of the model used to read the store.
    public var modelVersionHash: String
    /// Where that model came from (`embedded`, `modelCache`, `inferred`, `--model`).
    public var modelSource: String
    /// Whether a `--model` given matches the store's model; `nil` when none was given.
    public var matchesGivenModel: Bool?
    /// The entities, in model order.
    public var entities: [Entity]
    /// Files making up the store, with their sizes in bytes.
    public var files: [(path: String, bytes: Int64)]
    /// Metadata keys, sorted.
    public var metadataKeys: [String]

    /// Objects in all.
    public var totalCount: Int { entities.reduce(0) { $0 + $1.count } }

    /// The coordinator's default row cache limit.
    public static let defaultRowCacheLimit = 100_000

    /// A row cache limit that holds the whole store, capped at ten times the default.
    public var suggestedRowCacheLimit: Int { min(max(totalCount, 1_000), Self.defaultRowCacheLimit * 10) }

    /// The report as `inspect --json` prints it (docs/formats/json.md).
    public var json: JSONValue {
        .object([
            ("driver", .string(driver)), ("location", .string(location)), ("formatVersion", .optional(formatVersion)),
            ("uuid", .string(uuid)),
            (
                "model",
                .object([
                    ("versionHash", .string(modelVersionHash)), ("source", .string(modelSource)),
                    ("matchesGivenModel", matchesGivenModel.map(JSONValue.bool) ?? .null),
                ])
            ),
            (
                "entities",
                .array(
                    entities.map { entity in
                        .object([
                            ("name", .string(entity.name)), ("parent", .optional(entity.parent)),
                            ("abstract", .bool(entity.isAbstract)),
                            ("count", .int(entity.count)),
                            (
                                "relationships",
                                .array(
                                    entity.relationships.map { r in
                                        .object([
                                            ("name", .string(r.name)),
                                            ("destination", .string(r.destinationEntityName)),
                                            ("inverse", .optional(r.inverseName)), ("toMany", .bool(r.isToMany)),
                                            ("ordered", .bool(r.isOrdered)),
                                            ("deleteRule", .string(r.deleteRule.xcodeName)),
                                        ])
                                    })
                            ),
                        ])
                    })
            ),
            ("totalCount", .int(totalCount)),
            ("files", .array(files.map { .object([("path", .string($0.path)), ("bytes", .int($0.bytes))]) })),
            (
                "rowCache",
                .object([
                    ("defaultLimit", .int(Self.defaultRowCacheLimit)),
                    ("fitsDefault", .bool(totalCount <= Self.defaultRowCacheLimit)),
                    ("suggestedLimit", .int(suggestedRowCacheLimit)),
                ])
            ),
            ("metadataKeys", .array(metadataKeys.map(JSONValue.string))),
        ])
    }

    /// The report for people.
    public var lines: [String] {
        var out = [
            "Store:          \(location)", "Driver:         \(driver)", "Format version: \(formatVersion ?? "-")",
            "UUID:           \(uuid)",
            "Model:          \(modelVersionHash.prefix(16)) (\(modelSource))"
                + (modelSource == "--model"
                    ? "" : matchesGivenModel.map { $0 ? ", matches --model" : ", DIFFERS from --model" } ?? ""),
            "",
        ]
        var table = TextTable(headers: ["ENTITY", "PARENT", "OBJECTS"], rightAligned: [2])
        for entity in entities {
            table.append([
                entity.name + (entity.isAbstract ? " (abstract)" : ""), entity.parent ?? "-", String(entity.count),
            ])
        }
        out += table.lines
        out.append("")
        let relationships = entities.flatMap { entity in entity.relationships.map { (entity.name, $0) } }
        if !relationships.isEmpty {
            var table = TextTable(headers: ["RELATIONSHIP", "DESTINATION", "INVERSE", "KIND", "DELETE RULE"])
            for (owner, r) in relationships {
                table.append([
                    "\(owner).\(r.name)", r.destinationEntityName, r.inverseName ?? "-",
                    r.isToMany ? (r.isOrdered ? "ordered to-many" : "to-many") : "to-one", r.deleteRule.xcodeName,
                ])
            }
            out += table.lines
            out.append("")
        }
        for file in files { out.append("File:           \(file.path) (\(file.bytes) bytes)") }
        out.append("Objects:        \(totalCount)")
        out.append(
            "Row cache:      \(totalCount <= Self.defaultRowCacheLimit ? "the whole store fits the default limit (\(Self.defaultRowCacheLimit) rows)" : "larger than the default limit; consider rowCacheLimit: \(suggestedRowCacheLimit)")"
        )
        return out
    }
}

/// Reads a store's identity, model, counts and files (`strata inspect`).
public enum StoreInspector {
    /// Inspects the store at `location`.
    ///
    /// - Throws: ``ToolError``: usage for a missing store or model; failure when the store does not open.
    public static func inspect(_ location: StoreLocation, modelPath: String? = nil) throws -> StoreReport {
        let resolved = try StoreOpener.resolveModel(at: location, modelPath: modelPath)
        let model = resolved.model
        let driver = try StoreOpener.openDriver(
            location, model: model, configuration: resolved.configuration, readOnly: true)
        defer { try? driver.close() }
        let metadata = try StoreConverter.read(location) { try driver.loadMetadata() }
        let stream = RowStream(driver: driver)
        let held = Set(((try? model.entities(forConfiguration: resolved.configuration)) ?? model.entities).map(\.name))
        var entities: [StoreReport.Entity] = []
        for entity in model.entities {
            // Entities of other configurations live in other stores: none here.
            let count =
                held.contains(entity.name) ? try StoreConverter.read(location) { try stream.count(of: entity) } : 0
            entities.append(
                .init(
                    name: entity.name, parent: entity.superentityName, isAbstract: entity.isAbstract, count: count,
                    relationships: entity.ownProperties.compactMap(\.relationship)))
        }
        let versionKeys = ["StrataStoreFormatVersion", "StrataFormatVersion", "NSPersistenceFrameworkVersion"]
        let formatVersion = versionKeys.lazy.compactMap { key -> String? in
            switch metadata.values[key] {
            case .string(let s): s
            case .integer(let i): String(i)
            case .double(let d): String(d)
            default: nil
            }
        }.first
        return StoreReport(
            driver: location.scheme.driverName, location: location.description, formatVersion: formatVersion,
            uuid: metadata.uuid, modelVersionHash: model.versionHash.hexString, modelSource: resolved.source,
            matchesGivenModel: resolved.matchesGivenModel, entities: entities, files: files(of: location),
            metadataKeys: metadata.values.keys.sorted())
    }

    /// The files of a store and their sizes (a directory's files for directory stores).
    static func files(of location: StoreLocation) -> [(path: String, bytes: Int64)] {
        guard location.isFileBacked, let url = location.url else { return [] }
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return [] }
        func size(_ path: String) -> Int64 {
            ((try? manager.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
        }
        if isDirectory.boolValue {
            let names = ((try? manager.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
            return names.map { name in
                let path = url.appendingPathComponent(name).path
                return (path, size(path))
            }
        }
        return StoreConverter.storeFiles(url).filter { manager.fileExists(atPath: $0.path) }.map {
            ($0.path, size($0.path))
        }
    }
}
