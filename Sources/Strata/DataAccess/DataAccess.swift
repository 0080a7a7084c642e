import Foundation

/// A small read/write layer over a ``PersistentContainer``, in the spirit of Skopelos: reads run
/// on the view context, writes on one private writer context whose saves reach the store and,
/// merged automatically, the view context. Calls chain:
///
/// ```swift
/// let data = DataAccess(container: container)
/// data.writeSync { context in
///     let user = try User.create(in: context)
///     user.name = "Ada"
/// }.read { context in
///     print(try User.count(in: context))
/// }
/// ```
///
/// A write's changes are saved when its block returns; when the block or the save throws, the
/// writer's changes are rolled back and the error goes to ``handle(_:)`` (override it, or set
/// ``errorHandler``). The `async` forms throw instead.
///
/// Thread safety: `Sendable`. Blocks run on the context's executor; `writeSync` and `read` wait.
open class DataAccess: @unchecked Sendable {
    // @unchecked Sendable: the container and writer are Sendable; `errorHandler` is set up before
    // the layer is shared (document says so) and read only when an error is reported.

    /// The container.
    public let container: PersistentContainer
    /// The private context every write runs on.
    public let writerContext: ManagedObjectContext
    /// Called with the errors of `read`, `writeSync` and `writeAsync` blocks (by ``handle(_:)``);
    /// set it before the layer is shared between threads.
    public var errorHandler: (@Sendable (any Error) -> Void)?

    /// Creates the layer over `container`, whose stores should be loaded.
    public init(container: PersistentContainer) {
        self.container = container
        self.writerContext = container.newBackgroundContext()
        writerContext.name = "\(container.name).writer"
    }

    /// What happens to an error of a `read` or `write` block: calls ``errorHandler``; override
    /// to do otherwise.
    open func handle(_ error: any Error) {
        errorHandler?(error)
    }

    /// Runs `body` with the view context and waits (Skopelos' `read`).
    @discardableResult
    public func read(_ body: (ManagedObjectContext) throws -> Void) -> Self {
        let view = container.viewContext
        view.performAndWait {
            do {
                try body(view)
            } catch {
                handle(error)
            }
        }
        return self
    }

    /// Runs `body` with the writer context, saves its changes, and waits (Skopelos' `writeSync`).
    @discardableResult
    public func writeSync(_ body: (ManagedObjectContext) throws -> Void) -> Self {
        let writer = writerContext
        writer.performAndWait {
            do {
                try body(writer)
                if writer.hasChanges { try writer.save() }
            } catch {
                writer.rollback()
                handle(error)
            }
        }
        return self
    }

    /// Runs `body` with the writer context and saves its changes without waiting; `completion`
    /// runs on the main queue with the error, if any (Skopelos' `writeAsync`).
    @discardableResult
    public func writeAsync(
        _ body: @escaping @Sendable (ManagedObjectContext) throws -> Void,
        completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) -> Self {
        let writer = writerContext
        writer.perform {
            var failure: (any Error)?
            do {
                try body(writer)
                if writer.hasChanges { try writer.save() }
            } catch {
                writer.rollback()
                failure = error
                self.handle(error)
            }
            if let completion {
                let reported = failure
                DispatchQueue.main.async { completion(reported) }
            }
        }
        return self
    }

    /// Runs `body` with the view context and returns its result; throws its error.
    public func read<T: Sendable>(_ body: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        let view = container.viewContext
        return try await view.perform { try body(view) }
    }

    /// Runs `body` with the writer context, saves its changes and returns its result; throws its
    /// error (the changes are rolled back).
    public func write<T: Sendable>(_ body: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        let writer = writerContext
        return try await writer.perform {
            do {
                let result = try body(writer)
                if writer.hasChanges { try writer.save() }
                return result
            } catch {
                writer.rollback()
                throw error
            }
        }
    }
}
