import Foundation

/// An error reported by libpq or the server, kept intact in ``Strata/StoreError/underlying``.
///
/// `sqlState` is the server's five-character SQLSTATE code (`23505` unique violation, `40P01`
/// deadlock, `57014` statement timeout, …) when the server answered; connection failures have
/// none and set `connectionLost`.
public struct PostgreSQLError: Error, Sendable, CustomStringConvertible {
    /// The SQLSTATE code, when the server sent one.
    public var sqlState: String?
    /// The server's or libpq's message (never contains a password: libpq does not echo them).
    public var message: String
    /// The server's detail line, if any.
    public var detail: String?
    /// Whether the connection to the server is gone (the server stopped or restarted, the network
    /// failed); the pool replaces such connections.
    public var connectionLost: Bool

    /// Creates an error.
    public init(sqlState: String? = nil, message: String, detail: String? = nil, connectionLost: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.connectionLost = connectionLost
    }

    public var description: String {
        var text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        if let detail, !detail.isEmpty { text += " (\(detail))" }
        if let sqlState { text += " [SQLSTATE \(sqlState)]" }
        return text
    }

    /// The class of the SQLSTATE (its first two characters), e.g. `23` integrity constraint.
    var sqlStateClass: String? { sqlState.map { String($0.prefix(2)) } }

    /// A deadlock or serialization failure: the transaction was rolled back and may be retried
    /// as it was.
    var isRetryableTransactionFailure: Bool { sqlState == "40P01" || sqlState == "40001" }
}
