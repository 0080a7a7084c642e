import Foundation

/// A failure of a store: a conflicting save, a missing or corrupt file, a closed store, an engine
/// error. Drivers throw it; the coordinator and contexts pass it on.
///
/// Tests match on ``code`` (`catch StoreError.Code.conflict`); people read ``description``, which
/// names the store and the next step. The engine's own error stays intact in ``underlying``.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, in the user's terms, with the way out where there is one.
    public var message: String
    /// The store, when known (its location or identifier).
    public var store: String?
    /// The objects involved (for conflicts: the stale ones).
    public var objectIDs: [ManagedObjectID]
    /// The engine's own error, kept intact.
    public var underlying: (any Error & Sendable)?
    /// For ``Code/conflict`` raised by a save under the ``MergePolicy/error`` policy: each
    /// conflicting object with its changed keys and its cached, persisted and new snapshots.
    public var mergeConflicts: [MergeConflict]

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, store: String? = nil, objectIDs: [ManagedObjectID] = [],
        underlying: (any Error & Sendable)? = nil, mergeConflicts: [MergeConflict] = []
    ) {
        self.code = code
        self.message = message
        self.store = store
        self.objectIDs = objectIDs
        self.underlying = underlying
        self.mergeConflicts = mergeConflicts
    }

    public var description: String {
        var text = store.map { "store '\($0)': \(message)" } ?? message
        if let underlying { text += " (\(underlying))" }
        return text
    }
}

extension StoreError {
    /// The kind of a ``StoreError``; new kinds may be added without breaking `switch`es.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case notFound, conflict, corrupt, unsupported, closed, io, readOnly, modelMismatch, locked, full
            case constraint, crossStore, partialCommit, invalidRequest, notDurable, timedOut
        }
        private let kind: Kind
        /// A store, file, row or object that does not exist.
        public static var notFound: Self { Self(kind: .notFound) }
        /// A save that names row versions older than the store holds (optimistic locking).
        public static var conflict: Self { Self(kind: .conflict) }
        /// Data that does not parse or breaks the format's rules.
        public static var corrupt: Self { Self(kind: .corrupt) }
        /// A request the driver or store cannot serve.
        public static var unsupported: Self { Self(kind: .unsupported) }
        /// Use of a store after it was closed or removed.
        public static var closed: Self { Self(kind: .closed) }
        /// A file-system or engine failure.
        public static var io: Self { Self(kind: .io) }
        /// A write to a store opened read-only.
        public static var readOnly: Self { Self(kind: .readOnly) }
        /// A store whose model does not match the coordinator's.
        public static var modelMismatch: Self { Self(kind: .modelMismatch) }
        /// A store locked by another writer past its timeout.
        public static var locked: Self { Self(kind: .locked) }
        /// A store that is full (disk, map size).
        public static var full: Self { Self(kind: .full) }
        /// A unique constraint violated in the store.
        public static var constraint: Self { Self(kind: .constraint) }
        /// A relationship between objects in different stores.
        public static var crossStore: Self { Self(kind: .crossStore) }
        /// A save over several stores that failed after an earlier store had committed.
        public static var partialCommit: Self { Self(kind: .partialCommit) }
        /// A request that does not fit the model (unknown entity, bad key path).
        public static var invalidRequest: Self { Self(kind: .invalidRequest) }
        /// A change that reached the store (readers see it, the save counts as done) but that the
        /// file system did not confirm durable (a failed directory fsync): a system crash may
        /// still lose it. Thrown by ``StoreDriver/apply(_:)`` only after applying the whole batch.
        public static var notDurable: Self { Self(kind: .notDurable) }

        /// A statement that ran past the store's statement timeout, or a wait for a connection of a
        /// busy pool that ran past the store's timeout (a database server's store). Nothing was
        /// changed; the request may be tried again.
        public static var timedOut: Self { Self(kind: .timedOut) }

        /// Lets `catch StoreError.Code.conflict` match.
        public static func ~= (code: Self, error: any Error) -> Bool { (error as? StoreError)?.code == code }

        public var description: String { "\(kind)" }
    }
}
