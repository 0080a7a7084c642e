/// A failure of the SQLite driver: a store that cannot be opened, a statement the engine rejects,
/// or store content (a compressed model cache, a keyed archive, the fixed tables) that is corrupt
/// or uses a feature Strata does not read.
///
/// Tests match on ``code``; people read ``description``, which names the store file when known.
/// The driver's own error type until the core's `StoreError` exists; it will be mapped onto it.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem this is.
    public var code: Code
    /// What went wrong, in the user's terms.
    public var message: String
    /// The store file involved, when known.
    public var file: String?
    /// SQLite's extended result code, when the engine reported the failure.
    public var resultCode: Int32?
    /// The error underneath (a ``ModelError`` for a model the core rejected), kept intact.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, file: String? = nil, resultCode: Int32? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.file = file
        self.resultCode = resultCode
        self.underlying = underlying
    }

    /// This error with ``file`` set to `file` unless it already names one.
    public func naming(file: String) -> SQLiteError {
        var copy = self
        if copy.file == nil { copy.file = file }
        return copy
    }

    public var description: String {
        var text = file.map { "store '\($0)': \(message)" } ?? message
        if let resultCode { text += " (SQLite result code \(resultCode))" }
        if let underlying { text += ": \(underlying)" }
        return text
    }
}

extension SQLiteError {
    /// The kind of a ``SQLiteError``; new kinds may be added without breaking `switch`es.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable { case cannotOpen, engine, corrupt, notFound, unsupported, misuse }
        private let kind: Kind
        /// The store file could not be opened (missing, unreadable, not a database).
        public static var cannotOpen: Self { Self(kind: .cannotOpen) }
        /// SQLite rejected a statement or failed while running it.
        public static var engine: Self { Self(kind: .engine) }
        /// Stored content does not decode: bad DEFLATE data, a malformed archive or model cache.
        public static var corrupt: Self { Self(kind: .corrupt) }
        /// Something the store should hold is missing (a fixed table, a model).
        public static var notFound: Self { Self(kind: .notFound) }
        /// The store uses a feature Strata does not read (for example composite attributes).
        public static var unsupported: Self { Self(kind: .unsupported) }
        /// The API was used wrongly (a finalized statement, a column index out of range).
        public static var misuse: Self { Self(kind: .misuse) }

        /// Lets `catch SQLiteError.Code.corrupt` match.
        public static func ~= (code: Self, error: any Error) -> Bool { (error as? SQLiteError)?.code == code }

        public var description: String { "\(kind)" }
    }
}
