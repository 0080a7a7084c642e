import Foundation
import Strata

/// Opens XML stores (``StoreType/xml``).
///
/// - A writer takes the store's lock (`<store file>.lock`, advisory, beside the file the path
///   names with symbolic links followed) before reading the file, waiting up to
///   ``StoreOptions/timeout`` for another writer; then it reads the file whole. A missing file is
///   created at the first save (or the first key allocation) unless
///   ``StoreOptions/createIfMissing`` is false.
/// - A read-only open (``StoreOptions/isReadOnly``) takes no lock and reads the last complete save.
public struct XMLDriverFactory: StoreDriverFactory {
    /// Creates the factory.
    public init() {}

    public func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
        guard let url = request.url, url.isFileURL else {
            throw StoreError(
                .invalidRequest, "an XML store needs a file URL; pass one to addPersistentStore(type: .xml, at:)",
                store: request.url?.absoluteString)
        }
        let options = request.options
        if !FileManager.default.fileExists(atPath: url.path), options.isReadOnly || !options.createIfMissing {
            throw StoreError(
                .notFound,
                "no XML store at this path; check the path, or open it writable with createIfMissing to create one",
                store: url.path)
        }
        let file = try XMLStoreFile(url: url, writer: !options.isReadOnly, timeout: options.timeout)
        let loaded: XMLStoreLoader.Loaded
        var layout: XMLChunkLayout?
        do {
            if FileManager.default.fileExists(atPath: url.path) {
                // The file's identity before and after reading it: the same, or no layout (R2).
                let before = FileIdentity(path: url.path)
                let loader = XMLStoreLoader(
                    model: request.model, entities: Set(request.entities.map(\.entityNumber)), path: url.path,
                    storeType: StoreType.xmlName, names: XMLNames(model: request.model))
                loaded = try loader.load()
                if let starts = loaded.chunkStarts, let before, before == FileIdentity(path: url.path) {
                    layout = XMLChunkLayout(file: before, positions: .firstObjects(starts))
                }
            } else {
                loaded = XMLStoreLoader.Loaded(
                    state: AtomicStoreEngine.State(metadata: StoreMetadata(storeType: StoreType.xmlName)),
                    nextObjectID: 1)
            }
        } catch {
            file.unlock()
            throw error
        }
        let engine = AtomicStoreEngine(model: request.model, storeName: url.path, state: loaded.state)
        return XMLDriver(
            engine: engine, file: file, nextObjectID: loaded.nextObjectID, isReadOnly: options.isReadOnly,
            layout: options.isReadOnly ? nil : layout, log: request.log)
    }

    /// Reads `<databaseInfo>` only; `nil` when there is no file.
    public func metadata(at url: URL, options: StoreOptions) throws -> StoreMetadata? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let info = try XMLDocumentScanner(path: url.path).scan(infoOnly: true)
        return XMLMetadataCoding.metadata(from: info, storeType: StoreType.xmlName)
    }

    /// The store file and its lock file (`<file>.lock`, beside the file symbolic links lead to).
    public func storeFiles(at url: URL, options: StoreOptions) -> [URL] {
        [url, URL(fileURLWithPath: url.path + ".lock")]
    }

    /// Infers a model from the file (``XMLModelInference``); open the store read-only with it.
    public func recoverModel(at url: URL, options: StoreOptions) throws -> RecoveredModel? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return RecoveredModel(model: try XMLModelInference.inferModel(path: url.path), source: .inferred)
    }
}

extension StoreType {
    /// The name XML stores record as their type (Core Data's `NSXMLStoreType`).
    public static let xmlName = "XML"

    /// The XML store type: Core Data's XML store layout, an atomic store.
    public static var xml: StoreType {
        let type = StoreType(name: xmlName, factory: XMLDriverFactory())
        register(type)
        return type
    }
}
