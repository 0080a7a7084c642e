import Foundation
import Synchronization

/// The usual stack in one object (Core Data's `NSPersistentContainer`): a model, a coordinator,
/// the stores its descriptions name, a main-queue ``viewContext`` that merges the saves of other
/// contexts automatically, and background contexts.
///
/// ```swift
/// let container = PersistentContainer(name: "Library", managedObjectModel: model)
/// container.persistentStoreDescriptions = [PersistentStoreDescription(type: .sqlite, url: storeURL)]
/// try container.loadPersistentStores()
/// try await container.performBackgroundTask { context in
///     let book = try context.insertNewObject(forEntityName: "Book")
///     book["title"] = "Dune"
///     try context.save()
/// }
/// ```
///
/// Thread safety: `Sendable`. ``viewContext`` is a main-queue context (use it on the main queue
/// or inside its `perform`); each background context has its own queue.
public final class PersistentContainer: Sendable {
    /// The container's name: the default store's file name, and the model's name when the
    /// container loads the model itself.
    public let name: String
    /// The model.
    public let managedObjectModel: ManagedObjectModel
    /// The coordinator every context of the container uses.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    private let descriptions: Locked<[PersistentStoreDescription]>
    private let view: ManagedObjectContext

    /// Creates a container for `model`, with one SQLite store named after the container in
    /// ``defaultDirectoryURL()`` (change ``persistentStoreDescriptions`` before loading).
    public init(name: String, managedObjectModel model: ManagedObjectModel) {
        self.name = name
        self.managedObjectModel = model
        self.persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let url = Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite")
        self.descriptions = Locked([PersistentStoreDescription(url: url)])
        let view = ManagedObjectContext(coordinator: persistentStoreCoordinator, concurrencyType: .mainQueue)
        view.name = "\(name).viewContext"
        // Set before any other thread can see the context, so its confinement does not apply yet.
        view.mergeInbox.isEnabled.store(true, ordering: .relaxed)
        persistentStoreCoordinator.mergingContexts.add(view)
        self.view = view
    }

    /// Creates a container whose model is loaded from `<name>.xcdatamodeld` (or `.xcdatamodel`),
    /// looked for in `directory` (default: the current directory) and then in the main bundle's
    /// resources.
    ///
    /// - Throws: ``ModelError`` when no such model is found or it does not load.
    public convenience init(name: String, modelDirectory directory: URL? = nil) throws {
        var candidates: [URL] = []
        for base in [
            directory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath), Bundle.main.resourceURL,
        ].compactMap({ $0 }) {
            candidates.append(base.appendingPathComponent("\(name).xcdatamodeld"))
            candidates.append(base.appendingPathComponent("\(name).xcdatamodel"))
        }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
            throw ModelError(
                .unreadable,
                "no model named \(name) (\(name).xcdatamodeld or \(name).xcdatamodel) in \(candidates.map { $0.deletingLastPathComponent().path }.joined(separator: " or ")); pass the model with init(name:managedObjectModel:)"
            )
        }
        self.init(name: name, managedObjectModel: try ManagedObjectModel(contentsOf: found))
    }

    /// Where containers put their stores by default: `$XDG_DATA_HOME` (or `~/.local/share`) on
    /// Linux, Application Support elsewhere (Core Data's `defaultDirectoryURL()`).
    public class func defaultDirectoryURL() -> URL {
        #if os(Linux)
            if let data = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !data.isEmpty {
                return URL(fileURLWithPath: data, isDirectory: true)
            }
            return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(
                ".local/share", isDirectory: true)
        #else
            return FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
        #endif
    }

    /// The stores ``loadPersistentStores()`` attaches, in order.
    public var persistentStoreDescriptions: [PersistentStoreDescription] {
        get { descriptions.withLock { $0 } }
        set { descriptions.withLock { $0 = newValue } }
    }

    /// The main-queue context for the user interface (Core Data's `viewContext`). It merges the
    /// saves of the container's other contexts automatically
    /// (``ManagedObjectContext/automaticallyMergesChangesFromParent`` is on; Core Data leaves it
    /// off).
    public var viewContext: ManagedObjectContext { view }

    /// Attaches every store of ``persistentStoreDescriptions`` that is not attached yet, creating
    /// directories for file stores as needed.
    ///
    /// - Returns: The stores attached by this call.
    /// - Throws: The first failure (``StoreError``, naming the store), after which the stores
    ///   attached before it stay attached; load again once the cause is fixed.
    @discardableResult
    public func loadPersistentStores() throws -> [PersistentStore] {
        var loaded: [PersistentStore] = []
        for description in persistentStoreDescriptions {
            if let url = description.url, persistentStoreCoordinator.persistentStore(for: url) != nil { continue }
            loaded.append(try load(description))
        }
        return loaded
    }

    /// ``loadPersistentStores()`` on a background thread.
    @discardableResult
    public func loadPersistentStores() async throws -> [PersistentStore] {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try self.loadPersistentStores() as [PersistentStore] })
            }
        }
    }

    /// Attaches each store and calls `completionHandler` with its description and the error, if
    /// any (Core Data's form); on a background thread for descriptions that ask for it.
    public func loadPersistentStores(
        completionHandler: @escaping @Sendable (PersistentStoreDescription, (any Error)?) -> Void
    ) {
        for description in persistentStoreDescriptions {
            let work: @Sendable () -> Void = {
                do {
                    if let url = description.url, self.persistentStoreCoordinator.persistentStore(for: url) != nil {
                        completionHandler(description, nil)
                        return
                    }
                    _ = try self.load(description)
                    completionHandler(description, nil)
                } catch {
                    completionHandler(description, error)
                }
            }
            if description.shouldAddStoreAsynchronously { DispatchQueue.global().async(execute: work) } else { work() }
        }
    }

    private func load(_ description: PersistentStoreDescription) throws -> PersistentStore {
        guard let type = StoreType.named(description.type) else {
            throw StoreError(
                .invalidRequest,
                "no store type named '\(description.type)' is registered; link its driver and use its type once (for SQLite: import StrataSQLite and StoreType.sqlite), or give the description a StoreType",
                store: description.url?.storeName)
        }
        if let url = description.url, url.isFileURL, !description.isReadOnly {
            let directory = url.deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw StoreError(
                    .io, "cannot create the store's directory \(directory.path): \(error.localizedDescription)",
                    store: url.path, underlying: error)
            }
        }
        return try persistentStoreCoordinator.addPersistentStore(
            type: type, configuration: description.configuration, at: description.url, options: description.options)
    }

    /// A new private-queue context on the container's coordinator (Core Data's
    /// `newBackgroundContext()`).
    public func newBackgroundContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(coordinator: persistentStoreCoordinator, concurrencyType: .privateQueue)
        context.name = "\(name).background"
        return context
    }

    /// Runs `block` with a new background context on that context's queue and returns at once
    /// (Core Data's `performBackgroundTask(_:)`).
    public func performBackgroundTask(_ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` with a new background context on that context's queue and returns its result.
    public func performBackgroundTask<T: Sendable>(_ block: @escaping @Sendable (ManagedObjectContext) throws -> T)
        async throws -> T
    {
        let context = newBackgroundContext()
        return try await context.perform { try block(context) }
    }
}
