import CLMDB
import Foundation
import Strata

/// Opens LMDB stores: one file (plus `<file>-lock`), or an LMDB directory holding `data.mdb`.
///
/// Options are read with ``LMDBOptions``. Opening checks that the file is an LMDB environment,
/// that its format version is one this build reads, and that it was laid out for the same
/// entities; each failure is a ``StoreError`` naming the store and what to do.
public struct LMDBDriverFactory: StoreDriverFactory {
    /// The format version this build writes and reads (docs/formats/lmdb.md).
    public static let formatVersion: UInt32 = 1

    /// Creates the factory.
    public init() {}

    public func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
        guard let url = request.url else {
            throw StoreError(.invalidRequest, "an LMDB store needs a file URL", store: StoreType.lmdbName)
        }
        return try open(url: url, model: request.model, options: request.options)
    }

    public func metadata(at url: URL, options: StoreOptions) throws -> StoreMetadata? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        var readOnly = options
        readOnly.isReadOnly = true
        let probe = try ManagedObjectModel(entities: [])
        let environment = try Self.environment(url: url, options: readOnly)
        defer { EnvironmentRegistry.release(environment) }
        return try environment.read { txn -> StoreMetadata? in
            guard let meta = try environment.database("meta", create: false, in: txn) else { return nil }
            _ = probe
            return try LMDBDriver.readMetadata(txn, meta, store: url.path)
        }
    }

    /// Strata does not yet embed its model in LMDB stores itself; when a caller stored one under
    /// ``StoreMetadata/modelKey`` it is kept faithfully, and the core's model decoder (when it
    /// lands) reads it. Until then the driver cannot tell the model.
    public func recoverModel(at url: URL, options: StoreOptions) throws -> RecoveredModel? { nil }

    /// A single-file store and its `-lock` file, or an LMDB directory.
    public func storeFiles(at url: URL, options: StoreOptions) -> [URL] {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return [url]
        }
        return [url, URL(fileURLWithPath: url.path + "-lock")]
    }

    /// Puts the new single-file store in place: over the old file, or as `data.mdb` of an LMDB
    /// directory. Refused with `.locked` while a driver of this process has the old store open.
    public func replaceStore(at destination: URL, withStoreFrom source: URL, options: StoreOptions) throws {
        let location = try LMDBLocation.resolve(destination.standardizedFileURL.path)
        if EnvironmentRegistry.isOpen(location) {
            throw StoreError(
                .locked, "the store is open in this process; close it before replacing it", store: location.path)
        }
        try StoreFileOperations.replace(location.dataFile, with: source.path, companionSuffixes: ["-lock"])
    }

    /// Opens a store with `model`.
    public func open(url: URL, model: ManagedObjectModel, options: StoreOptions) throws -> LMDBDriver {
        let environment = try Self.environment(url: url, options: options)
        do {
            let layout = DatabaseLayout(model: model)
            let databases = try Self.prepare(environment, layout: layout, readOnly: options.isReadOnly)
            let driver = LMDBDriver(
                environment: environment, layout: layout, databases: databases, storeName: url.standardizedFileURL.path,
                log: options.log ?? .environment(store: url.standardizedFileURL.path))
            try driver.checkLayout(readOnly: options.isReadOnly)
            return driver
        } catch {
            EnvironmentRegistry.release(environment)
            throw error
        }
    }

    static func environment(url: URL, options: StoreOptions) throws -> LMDBEnvironment {
        let given = url.standardizedFileURL.path
        let lmdb = try LMDBOptions(options, store: given)
        let location = try LMDBLocation.resolve(given)
        if !location.exists {
            if !options.createIfMissing || options.isReadOnly {
                throw StoreError(
                    .notFound, "no LMDB store exists here; check the path, or open with createIfMissing", store: given)
            }
            let parent = (location.path as NSString).deletingLastPathComponent
            if !FileManager.default.isWritableFile(atPath: parent) {
                throw StoreError(
                    .io,
                    "permission denied: cannot create the store in \(parent); choose a writable directory or fix its permissions",
                    store: given)
            }
        } else if !location.isDirectory {
            if !FileManager.default.isReadableFile(atPath: location.path) {
                throw StoreError(
                    .io, "permission denied: the store file is not readable; fix its owner or mode", store: given)
            }
            if !options.isReadOnly && !FileManager.default.isWritableFile(atPath: location.path) {
                throw StoreError(
                    .io,
                    "permission denied: the store file is not writable; fix its owner or mode, or open it read-only",
                    store: given)
            }
        }
        try location.checkDataFile()
        return try EnvironmentRegistry.acquire(location, options: lmdb, readOnly: options.isReadOnly)
    }

    /// Opens (creating when writable) every named database and, for a new store, writes the format
    /// version and layout.
    static func prepare(_ environment: LMDBEnvironment, layout: DatabaseLayout, readOnly: Bool) throws
        -> LMDBDriver.Databases
    {
        let dupFlags = MDB_DUPSORT | MDB_DUPFIXED
        let names: [(String, Int32)] =
            [("meta", 0), ("refs", dupFlags), ("links", dupFlags), ("orders", 0), ("index", dupFlags)]
            + layout.roots.values.sorted { $0.number < $1.number }.map { ($0.databaseName, 0) }
        func open(_ txn: LMDBTransaction, create: Bool) throws -> [String: MDB_dbi]? {
            var opened: [String: MDB_dbi] = [:]
            for (name, flags) in names {
                guard let dbi = try environment.database(name, flags: flags, create: create, in: txn) else {
                    return nil
                }
                opened[name] = dbi
            }
            return opened
        }
        // Handles opened in a read transaction survive only when it commits.
        var handles = try environment.read(commit: true) { txn -> [String: MDB_dbi]? in
            guard let opened = try open(txn, create: false) else { return nil }
            try checkFormat(txn, opened["meta"]!, store: environment.path)  // opened holds every name
            return opened
        }
        if handles == nil {
            if readOnly {
                throw StoreError(
                    .corrupt,
                    "the file is an LMDB environment but not a Strata store (its databases are missing); check the path",
                    store: environment.path)
            }
            handles = try environment.write { txn in
                // open(create: true) returns every handle.
                let opened = try open(txn, create: true)!
                let meta = opened["meta"]!
                if try txn.get(meta, Array("format".utf8)) == nil {
                    var writer = ByteWriter()
                    writer.appendLittleEndian(formatVersion)
                    try txn.put(meta, Array("format".utf8), writer.bytes)
                    try txn.put(meta, Array("layout".utf8), Array(layout.signature.utf8))
                    try LMDBDriver.writeMetadata(StoreMetadata(storeType: StoreType.lmdbName), txn, meta)
                } else {
                    try checkFormat(txn, meta, store: environment.path)
                }
                return opened
            }
        }
        // Both branches above set handles with every name.
        let all = handles!
        environment.remember(all)
        return LMDBDriver.Databases(
            meta: all["meta"]!, refs: all["refs"]!, links: all["links"]!, orders: all["orders"]!, index: all["index"]!,
            rows: Dictionary(uniqueKeysWithValues: layout.roots.values.map { ($0.number, all[$0.databaseName]!) }))
    }

    private static func checkFormat(_ txn: LMDBTransaction, _ meta: MDB_dbi, store: String) throws {
        guard let raw = try txn.get(meta, Array("format".utf8)) else {
            throw StoreError(
                .corrupt, "the LMDB environment has no Strata format version; it is not a Strata store", store: store)
        }
        var reader = ByteReader(raw)
        let version = (try? reader.littleEndian(UInt32.self)) ?? 0
        guard version == formatVersion else {
            throw StoreError(
                .unsupported,
                "the store has LMDB format version \(version); this build of Strata reads version \(formatVersion). Open it with the Strata version that wrote it, or convert it",
                store: store)
        }
    }
}

extension StoreType {
    /// The name LMDB stores record as their type.
    public static let lmdbName = "LMDB"

    /// The LMDB store type: Strata's own binary layout on LMDB.
    public static var lmdb: StoreType {
        let type = StoreType(name: lmdbName, factory: LMDBDriverFactory())
        register(type)
        return type
    }
}
