import Foundation

/// A migration that cannot be planned or run: a change that cannot be inferred, a mapping model
/// that does not parse or does not fit the models, existing rows that break the new model, a store
/// newer than the model opening it.
///
/// A migration that throws leaves the store as it was. Tests match on ``code``
/// (`catch MigrationError.Code.inferenceFailed`); people read ``description``, which names the
/// store, the entities and properties involved and the way out. ``changes`` lists every change a
/// mapping model is needed for, so one error reports them all.
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, in the user's terms, with the way out.
    public var message: String
    /// The store, when known.
    public var store: String?
    /// For ``Code/inferenceFailed``: each change that needs a mapping model, one line each
    /// (`Person.age: type String → Integer 32 cannot be inferred`). Other codes may list the
    /// problems found (the rows breaking a constraint, the entities a mapping names).
    public var changes: [String]
    /// The error underneath (a driver's ``StoreError``, a ``ModelError``, a policy's own error).
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, store: String? = nil, changes: [String] = [],
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.store = store
        self.changes = changes
        self.underlying = underlying
    }

    public var description: String {
        var text = store.map { "store '\($0)': \(message)" } ?? message
        if !changes.isEmpty { text += ": " + changes.joined(separator: "; ") }
        if let underlying { text += " (\(underlying))" }
        return text
    }

    /// The same error naming `store`, unless it names one already.
    func naming(store name: String?) -> MigrationError {
        var copy = self
        if copy.store == nil { copy.store = name }
        return copy
    }
}

extension MigrationError {
    /// The kind of a ``MigrationError``; new kinds may be added without breaking `switch`es.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case inferenceFailed, invalidMapping, unreadableMapping, mappingModelNotFound, sourceModelNotFound
            case olderModel, constraintViolation, validation, valueConversion, policy, insufficientSpace, cancelled
            case unsupported, backupLocationTaken
        }
        private let kind: Kind
        /// A change between the models that inference cannot map; ``MigrationError/changes`` lists them.
        public static var inferenceFailed: Self { Self(kind: .inferenceFailed) }
        /// A mapping model that does not fit the models: it names entities or properties they lack,
        /// or its expressions do not evaluate.
        public static var invalidMapping: Self { Self(kind: .invalidMapping) }
        /// A mapping model file that does not parse.
        public static var unreadableMapping: Self { Self(kind: .unreadableMapping) }
        /// The models differ, no mapping model was given and inference was not allowed.
        public static var mappingModelNotFound: Self { Self(kind: .mappingModelNotFound) }
        /// The model the store was written with is not known (not embedded, not among the versions given).
        public static var sourceModelNotFound: Self { Self(kind: .sourceModelNotFound) }
        /// The store was written with a newer model than the one opening it.
        public static var olderModel: Self { Self(kind: .olderModel) }
        /// Existing rows break a uniqueness constraint of the new model.
        public static var constraintViolation: Self { Self(kind: .constraintViolation) }
        /// Existing rows break a rule of the new model (a required value without a default).
        public static var validation: Self { Self(kind: .validation) }
        /// A stored value does not convert to the new attribute type (an integer too wide).
        public static var valueConversion: Self { Self(kind: .valueConversion) }
        /// A migration policy is not registered, or threw.
        public static var policy: Self { Self(kind: .policy) }
        /// Not enough free disk space for the copy (and backup).
        public static var insufficientSpace: Self { Self(kind: .insufficientSpace) }
        /// The migration was cancelled (``MigrationManager/cancelMigration(_:)``).
        public static var cancelled: Self { Self(kind: .cancelled) }
        /// A store or driver that cannot be migrated this way.
        public static var unsupported: Self { Self(kind: .unsupported) }
        /// The backup location holds something that is not a backup of this store, or a backup of
        /// it that could not be moved aside; nothing was changed.
        public static var backupLocationTaken: Self { Self(kind: .backupLocationTaken) }

        /// Lets `catch MigrationError.Code.inferenceFailed` match.
        public static func ~= (code: Self, error: any Error) -> Bool { (error as? MigrationError)?.code == code }

        public var description: String { "\(kind)" }
    }
}
