import Foundation
import Synchronization

/// A store attached to a coordinator: its driver, location, configuration, options and metadata.
///
/// Thread safety: `Sendable`. Writes (``StoreDriver/apply(_:)``, key allocation) are serialized by
/// an internal lock; reads are serialized too unless the driver declares
/// ``DriverCapabilities/concurrentReads``.
public final class PersistentStore: Sendable, CustomStringConvertible {
    /// The store's type.
    public let type: StoreType
    /// Where the store lives, if anywhere.
    public let url: URL?
    /// The configuration it was attached with (`nil`: every entity).
    public let configurationName: String?
    /// The options it was attached with.
    public let options: StoreOptions
    /// The driver.
    public let driver: any StoreDriver
    /// The numbers of the entities the store holds.
    public let entityNumbers: Set<Int32>
    /// `entityNumbers` as flags indexed by entity number, for checks on every fetched row.
    private let holdsEntity: [Bool]
    private let metadataState: Locked<StoreMetadata>
    private let writeLock = Locked<Void>(())
    private let readLock = Locked<Void>(())
    private let closed = Atomic<Bool>(false)

    init(
        type: StoreType, url: URL?, configurationName: String?, options: StoreOptions, driver: any StoreDriver,
        metadata: StoreMetadata, entityNumbers: Set<Int32>
    ) {
        self.type = type
        self.url = url
        self.configurationName = configurationName
        self.options = options
        self.driver = driver
        self.metadataState = Locked(metadata)
        self.entityNumbers = entityNumbers
        var flags = [Bool](repeating: false, count: Int(entityNumbers.max() ?? 0) + 1)
        for number in entityNumbers where number >= 0 { flags[Int(number)] = true }
        self.holdsEntity = flags
    }

    /// Whether the store holds rows of the entity numbered `number`.
    func holds(entityNumber number: Int32) -> Bool {
        number >= 0 && Int(number) < holdsEntity.count && holdsEntity[Int(number)]
    }

    /// The store's UUID, as used in object URIs.
    public var identifier: String { metadataState.withLock { $0.uuid } }

    /// The store's metadata as last loaded or saved.
    public var metadata: StoreMetadata { metadataState.withLock { $0 } }

    /// Whether saves to this store are refused.
    public var isReadOnly: Bool { options.isReadOnly }

    /// Whether the store has been removed from its coordinator.
    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// A name for messages: the path, or the type.
    public var displayName: String { url?.storeName ?? "\(type.name) store" }

    public var description: String { "\(type.name) store \(displayName)" }

    /// Replaces the metadata, writing it through the driver.
    public func setMetadata(_ metadata: StoreMetadata) throws {
        try ensureOpen()
        if isReadOnly { throw StoreError(.readOnly, "the store was opened read-only", store: displayName) }
        try write {
            try driver.saveMetadata(metadata)
            metadataState.withLock { $0 = metadata }
        }
    }

    func updateCachedMetadata(_ metadata: StoreMetadata) { metadataState.withLock { $0 = metadata } }

    func read<T>(_ body: () throws -> T) throws -> T {
        try ensureOpen()
        if driver.capabilities.contains(.concurrentReads) { return try body() }
        return try readLock.withLock { _ in try body() }
    }

    func write<T>(_ body: () throws -> T) throws -> T {
        try ensureOpen()
        return try writeLock.withLock { _ in
            if driver.capabilities.contains(.concurrentReads) { return try body() }
            return try readLock.withLock { _ in try body() }
        }
    }

    func close() throws {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try writeLock.withLock { _ in try driver.close() }
    }

    private func ensureOpen() throws {
        if isClosed { throw StoreError(.closed, "the store was removed from its coordinator", store: displayName) }
    }
}
