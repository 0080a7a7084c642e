import Foundation
import Strata

/// What to convert and how.
public struct ConversionOptions {
    /// A model file for sources that hold no model of their own.
    public var modelPath: String?
    /// Copy only the entities of this configuration.
    public var configuration: String?
    /// Replace an existing destination.
    public var overwrite = false
    /// Rows per change set.
    public var batchSize = 1_000
    /// Called as rows are copied.
    public var progress: ((ConversionProgress) -> Void)?

    /// Creates options.
    public init(
        modelPath: String? = nil, configuration: String? = nil, overwrite: Bool = false, batchSize: Int = 1_000,
        progress: ((ConversionProgress) -> Void)? = nil
    ) {
        self.modelPath = modelPath
        self.configuration = configuration
        self.overwrite = overwrite
        self.batchSize = batchSize
        self.progress = progress
    }
}

/// Copies a store to another driver, keeping primary keys and the store UUID (so object URIs stay
/// meaningful), then verifies the copy entity by entity.
///
/// The copy goes straight through the driver protocol: rows are read in batches
/// (``RowStream``) and written as ``ChangeBatch`` inserts with their own IDs, so memory stays
/// bounded by one entity's IDs and one batch of rows. A file-backed destination is written under
/// a temporary name beside it and renamed into place only when every row is in; a failure removes
/// the temporary store, leaving nothing behind.
public enum StoreConverter {
    /// Converts `source` into `destination` and verifies the result.
    ///
    /// - Returns: The verification report; check ``ConversionReport/isVerified``.
    @discardableResult
    /// - Throws: ``ToolError``: usage for a missing source, an existing destination without
    ///   `overwrite`, an unknown configuration or driver; failure when a driver fails.
    public static func convert(
        from source: StoreLocation, to destination: StoreLocation, options: ConversionOptions = ConversionOptions()
    ) throws -> ConversionReport {
        if source.isFileBacked || source.url != nil, source == destination {
            throw ToolError.usage("the source and the destination are the same store ('\(source)')")
        }
        let resolved = try StoreOpener.resolveModel(at: source, modelPath: options.modelPath)
        let model = resolved.model
        let entities: [EntityDescription]
        do {
            entities = try model.entities(forConfiguration: options.configuration)
        } catch {
            throw ToolError.usage("\(error)")
        }
        _ = try destination.storeType()
        if destination.exists && !destination.isFileBacked {
            throw ToolError.usage("the in-memory store '\(destination)' already exists in this process; name another")
        }
        if destination.exists && !options.overwrite {
            throw ToolError.usage("'\(destination.displayName)' already exists; pass --overwrite to replace it")
        }
        let reader = try StoreOpener.openDriver(source, model: model, configuration: options.configuration, readOnly: true)
        defer { try? reader.close() }
        let sourceStream = RowStream(driver: reader, batchSize: options.batchSize)

        // Pass 1: counts and the largest key of each inheritance hierarchy.
        var totals: [String: Int] = [:]
        var maxKeys: [String: Int64] = [:]
        for entity in entities {
            let ids = try read(source) { try sourceStream.ids(of: entity) }
            totals[entity.name] = ids.count
            if let last = ids.last { maxKeys[entity.rootEntityName] = max(maxKeys[entity.rootEntityName] ?? 0, last.primaryKey) }
        }
        let total = totals.values.reduce(0, +)

        let working = destination.isFileBacked ? temporaryLocation(beside: destination) : destination
        var sourceDigests: [String: ContentDigest] = [:]
        do {
            let writer = try StoreOpener.openDriver(
                working, model: model, configuration: options.configuration, readOnly: false, create: true)
            do {
                try writeMetadata(from: reader, to: writer, model: model, entities: entities, store: working)
                for (root, maxKey) in maxKeys where maxKey > 0 {
                    // Reserve the copied keys so the destination never hands them out again.
                    if let entity = model.entity(named: root) {
                        _ = try write(destination) { try writer.allocatePrimaryKeys(forEntity: entity.entityNumber, count: Int(maxKey)) }
                    }
                }
                var copied = 0
                for entity in entities {
                    var digest = ContentDigest(entity: entity, model: model)
                    var entityCopied = 0
                    let entityTotal = totals[entity.name] ?? 0
                    try read(source) {
                        try sourceStream.forEachBatch(of: entity) { rows in
                            var batch = ChangeBatch()
                            batch.inserts = rows
                            _ = try write(destination) { try writer.apply(batch) }
                            digest.add(rows)
                            copied += rows.count
                            entityCopied += rows.count
                            options.progress?(
                                ConversionProgress(
                                    entity: entity.name, entityCopied: entityCopied, entityTotal: entityTotal, copied: copied,
                                    total: total))
                        }
                    }
                    if entityTotal == 0 {
                        options.progress?(
                            ConversionProgress(entity: entity.name, entityCopied: 0, entityTotal: 0, copied: copied, total: total))
                    }
                    sourceDigests[entity.name] = digest
                }
                try writer.close()
            } catch {
                try? writer.close()
                throw error
            }
            // Verify the working copy before it takes the destination's name: a copy that does not
            // even open is removed, never left in place.
            let report = try verify(
                working, model: model, configuration: options.configuration, entities: entities, against: sourceDigests)
            if working != destination { try moveIntoPlace(working, destination, overwrite: options.overwrite) }
            return report
        } catch {
            if working != destination { removeStoreFiles(working) }
            throw ToolError.wrapping(error, store: destination.displayName)
        }
    }

    /// Compares the destination's counts and digests with the source's.
    static func verify(
        _ destination: StoreLocation, model: ManagedObjectModel, configuration: String?, entities: [EntityDescription],
        against sourceDigests: [String: ContentDigest]
    ) throws -> ConversionReport {
        let driver = try StoreOpener.openDriver(destination, model: model, configuration: configuration, readOnly: true)
        defer { try? driver.close() }
        let stream = RowStream(driver: driver)
        var report = ConversionReport()
        for entity in entities {
            var digest = ContentDigest(entity: entity, model: model)
            try read(destination) { try stream.forEachBatch(of: entity) { digest.add($0) } }
            let source = sourceDigests[entity.name] ?? ContentDigest(entity: entity, model: model)
            report.entities.append(
                .init(
                    name: entity.name, sourceCount: source.count, destinationCount: digest.count,
                    sourceDigest: source.hexString, destinationDigest: digest.hexString))
        }
        return report
    }

    /// Gives the destination the source's identity and the model.
    private static func writeMetadata(
        from reader: any StoreDriver, to writer: any StoreDriver, model: ManagedObjectModel,
        entities: [EntityDescription], store: StoreLocation
    ) throws {
        let old = try reader.loadMetadata()
        var new = try writer.loadMetadata()
        new.uuid = old.uuid
        new.entityVersionHashes = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.versionHash) })
        for (key, value) in old.values where new.values[key] == nil { new.values[key] = value }
        new.values[StoreMetadata.modelVersionHashKey] = .data(model.versionHash)
        new.values[StoreMetadata.modelKey] = .data(try model.encodedRepresentation())
        try writer.saveMetadata(new)
    }

    /// Runs a read, naming the store in any error.
    static func read<T>(_ store: StoreLocation, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw ToolError.wrapping(error, store: store.displayName) }
    }

    private static func write<T>(_ store: StoreLocation, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw ToolError.wrapping(error, store: store.displayName) }
    }

    /// A fresh hidden name in the destination's folder, with the same extension.
    static func temporaryLocation(beside destination: StoreLocation) -> StoreLocation {
        guard let url = destination.url else { return destination }
        let folder = url.deletingLastPathComponent()
        let ext = url.pathExtension
        let name = ".\(url.deletingPathExtension().lastPathComponent).converting-\(UUID().uuidString.prefix(8))"
        let temporary = folder.appendingPathComponent(ext.isEmpty ? name : "\(name).\(ext)")
        return StoreLocation(scheme: destination.scheme, url: temporary)
    }

    /// Files a store at `url` may consist of: SQLite's journal files, the XML driver's `.lock`
    /// file and LMDB's `-lock` file beside the main file.
    static func storeFiles(_ url: URL) -> [URL] {
        [url] + ["-wal", "-shm", "-journal", ".lock", "-lock"].map { URL(fileURLWithPath: url.path + $0) }
    }

    private static func removeStoreFiles(_ location: StoreLocation) {
        guard let url = location.url else { return }
        for file in storeFiles(url) { try? FileManager.default.removeItem(at: file) }
    }

    private static func moveIntoPlace(_ working: StoreLocation, _ destination: StoreLocation, overwrite: Bool) throws {
        guard let from = working.url, let to = destination.url else { return }
        let manager = FileManager.default
        if overwrite { for file in storeFiles(to) where manager.fileExists(atPath: file.path) { try manager.removeItem(at: file) } }
        for (source, target) in zip(storeFiles(from), storeFiles(to)) where manager.fileExists(atPath: source.path) {
            try manager.moveItem(at: source, to: target)
        }
    }
}

/// How a conversion verified, entity by entity.
public struct ConversionReport: Sendable {
    /// One entity's comparison.
    public struct Entity: Sendable {
        /// The entity's name.
        public var name: String
        /// Objects of exactly this entity in the source.
        public var sourceCount: Int
        /// Objects of exactly this entity in the destination.
        public var destinationCount: Int
        /// The source's content digest (``ContentDigest``).
        public var sourceDigest: String
        /// The destination's content digest.
        public var destinationDigest: String
        /// Whether counts and digests are equal.
        public var matches: Bool { sourceCount == destinationCount && sourceDigest == destinationDigest }
    }

    /// The entities, in model order.
    public var entities: [Entity] = []

    /// Whether every entity matches.
    public var isVerified: Bool { entities.allSatisfy(\.matches) }

    /// The verification table.
    public var table: TextTable {
        var table = TextTable(headers: ["ENTITY", "SOURCE", "DEST", "DIGEST", "RESULT"], rightAligned: [1, 2])
        for entity in entities {
            table.append([
                entity.name, String(entity.sourceCount), String(entity.destinationCount),
                String(entity.destinationDigest.prefix(12)), entity.matches ? "ok" : "DIFFERENT",
            ])
        }
        return table
    }
}
