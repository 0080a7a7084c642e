import Foundation
import Logging
import Strata
import Synchronization

/// A swift-log destination that keeps every message with its level, for tests of ``StoreLog``.
///
/// Thread safety: `Sendable`; the messages sit behind a `Mutex`.
public final class LogCapture: Sendable {
    private let messages = Mutex<[(level: Logger.Level, text: String)]>([])

    public init() {}

    /// Every message so far, oldest first.
    public var lines: [(level: Logger.Level, text: String)] { messages.withLock { $0 } }

    /// A logger whose messages this capture keeps.
    public func logger() -> Logger {
        Logger(label: "strata.test") { _ in Handler(capture: self) }
    }

    /// A store log of `detail` into this capture.
    public func storeLog(_ detail: StoreLog.Detail) -> StoreLog { StoreLog(logger: logger(), detail: detail) }

    /// Saves three `Item`s of the conformance model into a new store of `type` at `url` with this
    /// capture's log at `detail`, and returns what was logged.
    public func save(into type: StoreType, at url: URL, detail: StoreLog.Detail) throws -> [(
        level: Logger.Level, text: String
    )] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: type, at: url, options: StoreOptions(log: storeLog(detail)))
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<3 {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["int64"] = index
        }
        try context.save()
        return lines
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.messages.withLock { $0.append((event.level, "\(event.message)")) }
        }
    }
}
