import Foundation
import Strata

/// A failure of a `strata` command, with the exit status the tool reports.
///
/// - ``Kind-swift.enum/usage``: the user asked for something impossible (a missing file, an unknown
///   driver or entity, a malformed predicate); the tool prints one line and exits 64.
/// - ``Kind-swift.enum/failure``: the work failed (a corrupt store, an engine error, invalid data);
///   the tool names the store and the cause and exits 1.
/// - ``Kind-swift.enum/difference``: the work ran and found problems (a conversion that does not
///   verify, a store that does not validate); exits 2.
public struct ToolError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Kind: Sendable, Hashable {
        case usage, failure, difference
    }

    /// The kind.
    public var kind: Kind
    /// One line (or several, for lists of problems) naming the problem.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// A user mistake (exit 64).
    public static func usage(_ message: String) -> ToolError { ToolError(.usage, message) }
    /// A runtime failure (exit 1).
    public static func failure(_ message: String) -> ToolError { ToolError(.failure, message) }

    /// The process exit status for this error.
    public var exitCode: Int32 {
        switch kind {
        case .usage: 64
        case .failure: 1
        case .difference: 2
        }
    }

    public var description: String { message }

    /// Wraps any error from the library layers into a ``ToolError``: predicate and model-file
    /// errors are user mistakes, store errors are failures naming the store.
    public static func wrapping(_ error: any Error, store: String? = nil) -> ToolError {
        switch error {
        case let error as ToolError: return error
        case let error as FetchPredicateError: return .usage("\(error)")
        case let error as StoreError:
            if error.store == nil, let store { return .failure("store '\(store)': \(error)") }
            return .failure("\(error)")
        case let error as ObjectValidationError: return .failure("\(store.map { "store '\($0)': " } ?? "")\(error)")
        default:
            return .failure("\(store.map { "store '\($0)': " } ?? "")\(error)")
        }
    }
}
