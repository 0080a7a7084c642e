import Foundation
import Strata
import StrataPostgreSQL

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
/// (``StoreDriver/scanRows(_:_:)``) and written as ``ChangeBatch`` inserts with their own IDs and
/// ``ChangeBatch/Durability/deferred`` durability, then made durable by one empty immediate change
/// set at the end, so an atomic destination (XML) writes its file once instead of once per batch.
/// The source is read and digested on a thread of its own, up to two batches ahead of the writer
/// (``ConversionSourceReader``), so reading overlaps with writing. Memory: four batches of rows at
/// most, plus what the drivers hold themselves (an XML or in-memory store holds its whole graph;
/// the writer is released before the copy is verified). The copy is verified by reading it back
/// in batches and comparing per-entity digests (``ContentDigest``).
///
/// A file-backed destination is never removed or truncated first: the copy is written under a
/// temporary name beside the destination's file (symbolic links followed), closed and verified,
/// and only then put in its place in one `rename(2)` (``FileReplacement``: fsynced, with the old
/// file's mode and owner, the directory fsynced). A PostgreSQL destination is built the same way
/// in a temporary schema and moved into the destination's schema in one transaction
/// (`PostgreSQLDriverFactory.install(_:over:)`). A failure or a kill at any moment leaves the old
/// destination or the complete new one; a failure removes the temporary store.
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
        var options = options
        if options.configuration == nil { options.configuration = resolved.configuration }
        let entities: [EntityDescription]
        do {
            entities = try model.entities(forConfiguration: options.configuration)
        } catch {
            throw ToolError.usage("\(error)")
        }
        _ = try destination.storeType()
        if destination.scheme == .memory && destination.exists {
            throw ToolError.usage("the in-memory store '\(destination)' already exists in this process; name another")
        }
        if destination.exists && !options.overwrite {
            throw ToolError.usage("'\(destination.displayName)' already exists; pass --overwrite to replace it")
        }
        let target = try destination.url.flatMap {
            destination.isFileBacked ? try FileReplacement.target(of: $0.path) : nil
        }
        if let target {
            if source.isFileBacked, let path = source.url?.path, isSameFile(path, target) {
                throw ToolError.usage(
                    "the source and the destination are the same store ('\(source)' and '\(destination)' name one file)"
                )
            }
            try checkReplaceable(target, store: destination.displayName)
        }
        let reader = try StoreOpener.openDriver(
            source, model: model, configuration: options.configuration, readOnly: true)
        defer { try? reader.close() }
        let sourceStream = RowStream(driver: reader, batchSize: options.batchSize)

        // Pass 1: counts, for the progress total (count push-down where the driver has it).
        var totals: [String: Int] = [:]
        for entity in entities {
            totals[entity.name] = try read(source) { try sourceStream.count(of: entity) }
        }

        var working = target.map { temporaryLocation(beside: $0, scheme: destination.scheme) } ?? destination
        if destination.isOnServer, let url = destination.url {
            working = StoreLocation(
                scheme: .postgres,
                url: try write(destination) { try PostgreSQLDriverFactory.temporaryLocation(beside: url) })
        }
        do {
            // The writer lives only inside copy(): an atomic destination's graph is freed before
            // the verification reads the copy back.
            let sourceDigests = try copy(
                entities, model: model, from: source, reader, sourceStream, to: destination, working: working,
                totals: totals, options: options)
            // Verify the working copy before it takes the destination's name: a copy that does not
            // even open is removed, never left in place.
            let report = try verify(
                working, model: model, configuration: options.configuration, entities: entities, against: sourceDigests)
            // A complete copy takes the destination's place even when verification found a
            // difference (a value the destination cannot hold): the report says which.
            if let target, let file = working.url { try install(file.path, over: target, overwrite: options.overwrite) }
            if destination.isOnServer, let temporary = working.url, let url = destination.url {
                try PostgreSQLDriverFactory.install(temporary, over: url)
            }
            return report
        } catch {
            if working != destination { removeStoreFiles(working) }
            throw ToolError.wrapping(error, store: destination.displayName)
        }
    }

    /// Copies every row of `entities` into a new store at `working` and returns the source's
    /// digests. Batches are deferred (``ChangeBatch/Durability/deferred``) and made durable by one
    /// empty immediate change set before the store is closed. Primary keys need no reservation:
    /// every driver raises its key counter past the keys inserted (``StoreDriver`` rule 10).
    private static func copy(
        _ entities: [EntityDescription], model: ManagedObjectModel, from source: StoreLocation,
        _ reader: any StoreDriver, _ sourceStream: RowStream, to destination: StoreLocation, working: StoreLocation,
        totals: [String: Int], options: ConversionOptions
    ) throws -> [String: ContentDigest] {
        let total = totals.values.reduce(0, +)
        var sourceDigests: [String: ContentDigest] = [:]
        let writer = try StoreOpener.openDriver(
            working, model: model, configuration: options.configuration, readOnly: false, create: true)
        do {
            try writeMetadata(from: reader, to: writer, model: model, entities: entities, store: working)
            // The source is read and digested on a thread of its own, a batch or two ahead.
            let sourceReader = ConversionSourceReader(
                driver: reader, entities: entities, model: model, batchSize: sourceStream.batchSize, source: source)
            sourceReader.start()
            do {
                var copied = 0
                var entityCopied = 0
                reading: while true {
                    switch sourceReader.next() {
                    case .rows(let index, let rows):
                        var batch = ChangeBatch()
                        batch.inserts = rows
                        batch.durability = .deferred
                        _ = try write(destination) { try writer.apply(batch) }
                        copied += rows.count
                        entityCopied += rows.count
                        options.progress?(
                            ConversionProgress(
                                entity: entities[index].name, entityCopied: entityCopied,
                                entityTotal: totals[entities[index].name] ?? 0, copied: copied, total: total))
                    case .entityDone(let index, let digest):
                        if entityCopied == 0 {
                            options.progress?(
                                ConversionProgress(
                                    entity: entities[index].name, entityCopied: 0, entityTotal: 0, copied: copied,
                                    total: total))
                        }
                        sourceDigests[entities[index].name] = digest
                        entityCopied = 0
                    case .finished: break reading
                    case .failed(let error): throw error
                    }
                }
            } catch {
                sourceReader.stop()
                throw error
            }
            sourceReader.wait()
            try restateMemberOrders(entities, model: model, from: source, sourceStream, to: destination, writer)
            // Every deferred batch reaches the disk here, in one write for an atomic store.
            _ = try write(destination) { try writer.apply(ChangeBatch()) }
            try writer.close()
        } catch {
            // The copy already failed and its working files are removed by the caller; the error
            // thrown is the one to report, and a close that fails too changes nothing kept.
            try? writer.close()  // see above: the working copy is discarded
            throw error
        }
        return sourceDigests
    }

    /// Writes the order of every ordered one-to-many relationship (and ordered to-many without
    /// inverse) again, once every row is copied. A store may keep such an order in the members'
    /// rows (SQLite's `Z_FOK_` column), and a member copied after its owner had no row to take its
    /// place when the owner's batch was applied. Each owner is updated with its own values
    /// (version 1, as inserted), restating only those relationships.
    private static func restateMemberOrders(
        _ entities: [EntityDescription], model: ManagedObjectModel, from source: StoreLocation, _ stream: RowStream,
        to destination: StoreLocation, _ writer: any StoreDriver
    ) throws {
        for entity in entities {
            let slots = MemberOrders.restatedSlots(of: entity, model: model)
            guard !slots.isEmpty else { continue }
            try read(source) {
                try stream.forEachBatch(of: entity) { rows in
                    var batch = ChangeBatch()
                    batch.updates = rows.map {
                        RowUpdate(id: $0.id, expectedVersion: 1, values: $0.values, changedSlots: slots)
                    }
                    batch.durability = .deferred
                    _ = try write(destination) { try writer.apply(batch) }
                }
            }
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

    /// A fresh hidden name beside the destination's file `target`, with the same extension.
    static func temporaryLocation(beside target: String, scheme: KnownDriver) -> StoreLocation {
        StoreLocation(
            scheme: scheme,
            url: URL(
                fileURLWithPath: FileReplacement.temporaryPath(
                    beside: target, tag: "converting", keepingExtension: true)))
    }

    /// Files a store at `url` may consist of: SQLite's journal files, the XML driver's `.lock`
    /// file and LMDB's `-lock` file beside the main file.
    static func storeFiles(_ url: URL) -> [URL] {
        [url] + companionSuffixes.map { URL(fileURLWithPath: url.path + $0) }
    }

    static let companionSuffixes = ["-wal", "-shm", "-journal", ".lock", "-lock"]

    /// Journals that may hold committed data of the store beside them (SQLite's write-ahead log
    /// and rollback journal): a store with a non-empty one is not whole without it.
    static let journalSuffixes = ["-wal", "-journal"]

    private static func removeStoreFiles(_ location: StoreLocation) {
        guard let url = location.url else { return }
        if location.isOnServer {
            // Best effort on a schema of our own making: one left behind is named "…__converting_…".
            try? PostgreSQLDriverFactory.removeStore(at: url)
            return
        }
        // Best effort on a path of our own making: a file left behind is hidden and harmless.
        for file in storeFiles(url) { try? FileManager.default.removeItem(at: file) }
    }

    /// Whether `a` and `b` name one existing file (device and inode), whatever links lead there.
    private static func isSameFile(_ a: String, _ b: String) -> Bool {
        var first = stat()
        var second = stat()
        return stat(a, &first) == 0 && stat(b, &second) == 0 && first.st_dev == second.st_dev
            && first.st_ino == second.st_ino
    }

    /// Whether a file exists at `path` with at least one byte.
    private static func hasContent(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_size > 0
    }

    /// Refuses to replace a destination whose journal beside it is not empty: the new file would
    /// meet the old store's journal (SQLite would apply it to the new file), and removing the
    /// journal first would drop the old store's last commits.
    private static func checkReplaceable(_ target: String, store: String) throws {
        for suffix in journalSuffixes where hasContent(target + suffix) {
            throw ToolError.usage(
                "'\(store)' has a non-empty \(suffix) file: it is open in another process or was not closed cleanly. Close it (opening and closing it once, e.g. with strata inspect, recovers it) and convert again"
            )
        }
    }

    /// Puts the verified working store at `file` in place of `target` (``FileReplacement``), then
    /// removes the working store's lock files. The old store's `-shm` (and an empty `-wal`) stay:
    /// SQLite checks and rebuilds them, while removing them could pull them from under a
    /// connection that opened the new store in the meantime.
    private static func install(_ file: String, over target: String, overwrite: Bool) throws {
        // Closed by its writer and verifier, the working store is one file; a journal still holding
        // data would be left behind by the rename.
        for suffix in journalSuffixes where hasContent(file + suffix) {
            throw ToolError.failure(
                "the converted store still has a non-empty \(suffix) file after closing; the destination was left as it was"
            )
        }
        try checkReplaceable(target, store: target)
        try FileReplacement.install(file, over: target, overwrite: overwrite)
        // The working store's lock and journal files are its own (the journals checked empty above).
        for suffix in companionSuffixes { unlink(file + suffix) }
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
