import Foundation
import Strata
import Synchronization

/// A driver that wraps another, records every call it passes on, and can make chosen calls fail.
///
/// Use it to check what the core asks of a driver (one fault batch per fetch, push-down used,
/// O(k) saves) and how the core behaves when a real driver fails at a chosen moment. An injected
/// failure is thrown *instead of* calling the wrapped driver, so the store stays exactly as it was,
/// as a failed atomic ``StoreDriver/apply(_:)`` would leave it. Everything else reaches the real
/// engine underneath.
///
/// Open stores through ``RecordingDriver/storeType(wrapping:)``, then reach the driver of an attached
/// store with `store.driver as? RecordingDriver`.
///
/// Thread safety: `Sendable`; the log and the queued failures sit behind one `Mutex`.
public final class RecordingDriver: StoreDriver {
    /// The kinds of call a ``RecordingDriver`` records and can fail.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        case loadMetadata, saveMetadata, fetch, rows, relatedRows, allocatePrimaryKeys, apply, execute, close
    }

    /// One recorded call.
    public struct Call: Sendable, CustomStringConvertible {
        /// What was called.
        public var operation: Operation
        /// How many rows, IDs or keys the call carried (inserts + updates + deletes for `apply`).
        public var size: Int
        /// For fetches: whether the driver applied the predicate, sort and page.
        public var applied: (predicate: Bool, sort: Bool, page: Bool)?

        public var description: String { "\(operation)(\(size))" }
    }

    /// The wrapped driver.
    public let wrapped: any StoreDriver
    private let state = Locked<
        (calls: [Call], failures: [Operation: [any Error]], hooks: [Operation: [@Sendable () -> Void]])
    >(
        ([], [:], [:]))

    /// Wraps `driver`.
    public init(wrapping driver: any StoreDriver) { self.wrapped = driver }

    /// A store type whose drivers are ``RecordingDriver``s around the drivers `type` makes. It has
    /// `type`'s name, so stores record the same type; it is not registered by name.
    public static func storeType(wrapping type: StoreType) -> StoreType {
        StoreType(name: type.name, factory: Factory(wrapped: type.factory))
    }

    /// Every call so far, oldest first.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// Forgets the calls recorded so far.
    public func clearCalls() { state.withLock { $0.calls.removeAll() } }

    /// The recorded calls of one kind.
    public func calls(_ operation: Operation) -> [Call] { calls.filter { $0.operation == operation } }

    /// Makes the next call of `operation` throw `error` without reaching the wrapped driver.
    /// Several queued failures are thrown by successive calls.
    public func failNext(_ operation: Operation, with error: any Error) {
        state.withLock { $0.failures[operation, default: []].append(error) }
    }

    /// Runs `hook` once, after the wrapped driver answers the next call of `operation` and before
    /// that answer returns (for a fetch in parts: before the first part is handed over). Use it to
    /// make another thread act between a read and its use, deterministically.
    public func afterNext(_ operation: Operation, run hook: @escaping @Sendable () -> Void) {
        state.withLock { $0.hooks[operation, default: []].append(hook) }
    }

    private func runHook(_ operation: Operation) {
        let hook = state.withLock { s -> (@Sendable () -> Void)? in
            guard var queued = s.hooks[operation], !queued.isEmpty else { return nil }
            let first = queued.removeFirst()
            s.hooks[operation] = queued
            return first
        }
        hook?()
    }

    private func record(_ operation: Operation, size: Int) throws {
        let failure = state.withLock { s -> (any Error)? in
            s.calls.append(Call(operation: operation, size: size))
            guard var queued = s.failures[operation], !queued.isEmpty else { return nil }
            let first = queued.removeFirst()
            s.failures[operation] = queued
            return first
        }
        if let failure { throw failure }
    }

    private func noteApplied(_ result: StoreFetchResult) {
        state.withLock { s in
            guard let last = s.calls.indices.last else { return }
            s.calls[last].applied = (result.appliedPredicate, result.appliedSort, result.appliedPage)
        }
    }

    public var capabilities: DriverCapabilities { wrapped.capabilities }

    public func loadMetadata() throws -> StoreMetadata {
        try record(.loadMetadata, size: 0)
        return try wrapped.loadMetadata()
    }

    public func saveMetadata(_ metadata: StoreMetadata) throws {
        try record(.saveMetadata, size: metadata.values.count)
        try wrapped.saveMetadata(metadata)
    }

    public func fetch(_ request: StoreFetch) throws -> StoreFetchResult {
        try record(.fetch, size: request.limit ?? -1)
        let result = try wrapped.fetch(request)
        noteApplied(result)
        runHook(.fetch)
        return result
    }

    public func fetch(_ request: StoreFetch, inParts body: (inout StoreFetchResult) throws -> Void) throws {
        try record(.fetch, size: request.limit ?? -1)
        var noted = false
        try wrapped.fetch(request) { part in
            if !noted {
                noteApplied(part)
                noted = true
                runHook(.fetch)
            }
            try body(&part)
        }
    }

    public func rows(for ids: [RowID]) throws -> [RowSnapshot] {
        try record(.rows, size: ids.count)
        let rows = try wrapped.rows(for: ids)
        runHook(.rows)
        return rows
    }

    public func relatedRows(_ request: RelatedRowsRequest) throws -> [RowID: [RowID]] {
        try record(.relatedRows, size: request.sources.count)
        let members = try wrapped.relatedRows(request)
        runHook(.relatedRows)
        return members
    }

    /// Recorded (and failed) as a ``Operation/relatedRows`` call: the members with their rows.
    public func relatedRowsWithDestinations(_ request: RelatedRowsRequest) throws -> RelatedRows {
        try record(.relatedRows, size: request.sources.count)
        let related = try wrapped.relatedRowsWithDestinations(request)
        runHook(.relatedRows)
        return related
    }

    public func allocatePrimaryKeys(forEntity entity: Int32, count: Int) throws -> ClosedRange<Int64> {
        try record(.allocatePrimaryKeys, size: count)
        return try wrapped.allocatePrimaryKeys(forEntity: entity, count: count)
    }

    public func apply(_ batch: ChangeBatch) throws -> CommitResult {
        try record(.apply, size: batch.inserts.count + batch.updates.count + batch.deletes.count)
        return try wrapped.apply(batch)
    }

    /// Recorded as one `apply` (its size 0); a failure queued for `apply` fails the whole.
    public func apply(inParts next: (_ first: Bool) throws -> ChangeBatch?) throws -> CommitResult {
        try record(.apply, size: 0)
        return try wrapped.apply(inParts: next)
    }

    public func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult {
        try record(.execute, size: 0)
        return try wrapped.execute(request)
    }

    public func observeRemoteChanges(_ handler: @escaping @Sendable (RemoteChanges) -> Void) throws {
        try wrapped.observeRemoteChanges(handler)
    }

    public func close() throws {
        try record(.close, size: 0)
        try wrapped.close()
    }

    private struct Factory: StoreDriverFactory {
        let wrapped: any StoreDriverFactory

        func makeDriver(_ request: StoreOpenRequest) throws -> any StoreDriver {
            RecordingDriver(wrapping: try wrapped.makeDriver(request))
        }

        func metadata(at url: URL, options: StoreOptions) throws -> StoreMetadata? {
            try wrapped.metadata(at: url, options: options)
        }

        func recoverModel(at url: URL, options: StoreOptions) throws -> RecoveredModel? {
            try wrapped.recoverModel(at: url, options: options)
        }
    }
}
