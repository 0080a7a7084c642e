import Foundation

/// A fetch that runs on its context's queue and reports progress, can be cancelled, and hands its
/// objects to a completion block (Core Data's `NSAsynchronousFetchRequest`).
///
/// ```swift
/// var request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])
/// request.fetchBatchSize = 500
/// let result = try context.execute(AsynchronousFetchRequest(fetchRequest: request) { result in
///     // On the context's queue: result.finalResult, or result.operationError.
/// })
/// result.progress.fractionCompleted   // from any thread
/// result.cancel()                     // stops before the next batch
/// ```
public struct AsynchronousFetchRequest: Sendable {
    /// The fetch: its objects are loaded ``FetchRequest/fetchBatchSize`` at a time (all at once
    /// when 0), and progress and cancellation are counted and checked between batches.
    public var fetchRequest: FetchRequest
    /// Called on the context's queue when the fetch ends: finished, failed or cancelled.
    public var completionBlock: (@Sendable (AsynchronousFetchResult) -> Void)?

    /// Creates a request.
    public init(fetchRequest: FetchRequest, completionBlock: (@Sendable (AsynchronousFetchResult) -> Void)? = nil) {
        self.fetchRequest = fetchRequest
        self.completionBlock = completionBlock
    }
}

/// The running or finished fetch of an ``AsynchronousFetchRequest`` (Core Data's
/// `NSAsynchronousFetchResult`).
///
/// ``progress`` and ``cancel()`` may be used from any thread. ``finalResult`` holds managed
/// objects: read it on the context's executor (in the completion block, or inside `perform`).
public final class AsynchronousFetchResult: @unchecked Sendable {
    // @unchecked Sendable: `state` is read and written only under `lock`; `progress` is
    // Foundation's thread-safe Progress; the objects in `state` are handed out only to code that
    // the documentation above confines to the context's executor.
    private struct State {
        var objects: [ManagedObject]?
        var error: (any Error)?
        var isFinished = false
    }

    /// The request.
    public let fetchRequest: AsynchronousFetchRequest
    /// The progress: `totalUnitCount` is the number of objects matched (`-1` until known),
    /// `completedUnitCount` those loaded so far. Cancelling it cancels the fetch.
    public let progress: Progress
    /// The context the fetch runs in.
    public private(set) weak var managedObjectContext: ManagedObjectContext?
    private let lock = NSLock()
    private var state = State()

    init(_ request: AsynchronousFetchRequest, context: ManagedObjectContext) {
        fetchRequest = request
        progress = Progress(totalUnitCount: -1)
        managedObjectContext = context
    }

    /// The objects, once the fetch finished without error or cancellation; `nil` before.
    public var finalResult: [ManagedObject]? { lock.withLock { state.objects } }

    /// Why the fetch ended without a result: the store's error, or `CancellationError` after
    /// ``cancel()``; `nil` while it runs and after success.
    public var operationError: (any Error)? { lock.withLock { state.error } }

    /// Whether the fetch has ended (finished, failed or cancelled).
    public var isFinished: Bool { lock.withLock { state.isFinished } }

    /// Stops the fetch before its next batch; the completion block still runs, with
    /// ``operationError`` a `CancellationError`.
    public func cancel() { progress.cancel() }

    func finish(objects: [ManagedObject]?, error: (any Error)?) {
        lock.withLock {
            state.objects = objects
            state.error = error
            state.isFinished = true
        }
    }
}

extension ManagedObjectContext {
    /// Starts an asynchronous fetch on the context's queue and returns at once (Core Data's
    /// `execute(_:)` of an `NSAsynchronousFetchRequest`).
    ///
    /// The fetch runs as work scheduled with `perform(_:)`, so the context must not be
    /// used from another thread until it ends (join it with ``performAndWait(_:)``).
    ///
    /// - Throws: ``StoreError/Code/invalidRequest`` when the request's entity is not in the model;
    ///   other errors (the store's, a predicate's) reach ``AsynchronousFetchResult/operationError``.
    public func execute(_ request: AsynchronousFetchRequest) throws -> AsynchronousFetchResult {
        _ = try entity(named: request.fetchRequest.entityName)
        let result = AsynchronousFetchResult(request, context: self)
        perform { [self] in
            var objects: [ManagedObject] = []
            do {
                try forEachBatch(of: request.fetchRequest, progress: result.progress) { objects += $0 }
                result.finish(objects: objects, error: nil)
            } catch {
                result.finish(objects: nil, error: error)
            }
            request.completionBlock?(result)
        }
        return result
    }

    /// The objects a request matches, in batches of ``FetchRequest/fetchBatchSize`` (one batch
    /// when it is 0), each loaded when the sequence reaches it.
    ///
    /// The first step reads the matching IDs (as ``fetchBatchFaulting(_:)`` does); each batch's
    /// objects are made and loaded inside ``performAndWait(_:)`` when the walk reaches it, so the
    /// sequence may be walked from any task; use the objects on the context's executor (inside
    /// `perform`/`performAndWait`, or anywhere for a context confined to the walking thread or a
    /// main-queue context on the main actor). Stopping the walk (or cancelling its task) stops the
    /// fetch before the next batch. The sequence keeps no batch it handed out: objects of walked
    /// batches that nothing else holds and that have no changes leave the context at its next
    /// sweep (unless ``retainsRegisteredObjects`` is set).
    ///
    /// - Returns: A sequence that throws the store's error (or a predicate's) where it happens.
    public func fetchBatches(_ request: FetchRequest) -> AsyncThrowingStream<[ManagedObject], any Error> {
        let cursor = BatchCursor(context: self, request: request)
        return AsyncThrowingStream { try await cursor.next() }
    }

    /// Fetches `request` and hands its objects to `body` a batch at a time, counting them in
    /// `progress` and stopping with `CancellationError` when it is cancelled.
    ///
    /// The fetch reads the matching IDs (as ``fetchBatchFaulting(_:)`` does) and makes each
    /// batch's objects only when it is reached, so no batch exists before its turn.
    func forEachBatch(of request: FetchRequest, progress: Progress, _ body: ([ManagedObject]) throws -> Void) throws {
        if progress.isCancelled { throw CancellationError() }
        let storage = try batchFaultingStorage(request, keeping: nil)
        progress.totalUnitCount = Int64(storage.ids.count)
        var done = 0
        for batch in 0..<storage.batchCount {
            if progress.isCancelled { throw CancellationError() }
            let objects = try storage.loadedBatch(batch)
            try body(objects)
            done += objects.count
            progress.completedUnitCount = Int64(done)
        }
    }
}

/// The state of a ``ManagedObjectContext/fetchBatches(_:)`` walk: the IDs of the fetch and how
/// far the walk got.
private final class BatchCursor: @unchecked Sendable {
    // @unchecked Sendable: `state` is used only under `lock`, inside the context's performAndWait;
    // the objects it makes never leave except as the batch handed to the walker, whom the
    // documentation of fetchBatches confines to the context's executor.
    private struct State {
        var storage: BatchFaultingStorage?
        var next = 0
        var done = false
    }

    private weak var context: ManagedObjectContext?
    private let request: FetchRequest
    private let lock = NSLock()
    private var state = State()

    init(context: ManagedObjectContext, request: FetchRequest) {
        self.context = context
        self.request = request
    }

    func next() async throws -> [ManagedObject]? {
        try Task.checkCancellation()
        guard let context else { return nil }
        return try context.performAndWait {
            try lock.withLock { () throws -> [ManagedObject]? in
                if state.done { return nil }
                do {
                    let storage = try state.storage ?? context.batchFaultingStorage(request, keeping: nil)
                    state.storage = storage
                    guard state.next < storage.batchCount else {
                        state.done = true
                        state.storage = nil
                        return nil
                    }
                    let batch = try storage.loadedBatch(state.next)
                    state.next += 1
                    return batch
                } catch {
                    state.done = true
                    state.storage = nil
                    throw error
                }
            }
        }
    }
}
