import Foundation
import Logging

/// Where a store's driver tells what it does to its engine: SQL statements (SQLite, PostgreSQL),
/// LMDB write transactions, XML file writes. It logs through swift-log, so an app's logging backend gets it.
///
/// Off unless asked for: set ``StoreOptions/log`` with a `Logger` of your own, or start the process
/// with `STRATA_SQL_DEBUG` set, as Core Data's `-com.apple.CoreData.SQLDebug` argument:
///
/// | `STRATA_SQL_DEBUG` | Logged |
/// |---|---|
/// | unset, `0` | nothing |
/// | `1` | each statement or transaction, at `debug` |
/// | `2` | also the bound values (SQLite: the statement with its parameters filled in; PostgreSQL: after it, `-- $1 = 42`), at `trace` |
/// | `3` (or more) | also how long each took, at `trace` |
///
/// A value that is not a number turns logging off. A driver decides what to log when the store
/// opens; with logging off it does no work for it.
///
/// Thread safety: `Sendable` (a `Logger` and a level).
public struct StoreLog: Sendable, Hashable {
    /// How much a driver logs.
    public enum Detail: Int, Sendable, Comparable, CaseIterable {
        /// Nothing.
        case off = 0
        /// Each statement or transaction.
        case statements = 1
        /// Statements with their bound values.
        case values = 2
        /// Statements with their values and how long each took.
        case timings = 3

        /// The detail a `STRATA_SQL_DEBUG` value asks for: numbers from 0 (3 and above are
        /// ``timings``), anything else ``off``.
        public init(environmentValue: String?) {
            guard let value = environmentValue?.trimmingCharacters(in: .whitespaces), let number = Int(value),
                number > 0
            else {
                self = .off
                return
            }
            self = Detail(rawValue: min(number, Detail.timings.rawValue)) ?? .off
        }

        public static func < (lhs: Detail, rhs: Detail) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The logger messages go to.
    public let logger: Logger
    /// How much is logged.
    public let detail: Detail

    /// Logs to `logger` with `detail`; the logger's level is lowered to what `detail` needs
    /// (`debug` for statements, `trace` for values and timings).
    public init(logger: Logger, detail: Detail) {
        var logger = logger
        switch detail {
        case .off: break
        case .statements: logger.logLevel = min(logger.logLevel, .debug)
        case .values, .timings: logger.logLevel = .trace
        }
        self.logger = logger
        self.detail = detail
    }

    /// No logging.
    public static let off = StoreLog(
        logger: Logger(label: "strata.store", factory: { _ in SwiftLogNoOpLogHandler() }), detail: .off)

    /// The log `STRATA_SQL_DEBUG` asks for, for the store named `store` (its path or URL without a
    /// password): a `Logger` labelled `strata.store` with the store in its metadata.
    public static func environment(store: String) -> StoreLog {
        let detail = Detail(environmentValue: ProcessInfo.processInfo.environment["STRATA_SQL_DEBUG"])
        guard detail > .off else { return .off }
        var logger = Logger(label: "strata.store")
        logger[metadataKey: "store"] = "\(store)"
        return StoreLog(logger: logger, detail: detail)
    }

    /// Whether anything is logged.
    @inlinable public var isOn: Bool { detail > .off }

    /// Logs a statement or an engine operation (at `debug`; at `trace` when values are logged,
    /// since `text` then carries them).
    public func statement(_ text: @autoclosure () -> String) {
        guard isOn else { return }
        logger.log(level: detail >= .values ? .trace : .debug, "\(text())")
    }

    /// Logs how long an operation took, when ``detail`` asks for timings.
    public func timing(_ what: @autoclosure () -> String, seconds: Double) {
        guard detail >= .timings else { return }
        logger.trace("\(what()) took \(String(format: "%.3f", seconds * 1000)) ms")
    }

    /// Runs `body`, logging `what` first and, with timings, how long `body` took.
    public func logged<T>(_ what: @autoclosure () -> String, _ body: () throws -> T) rethrows -> T {
        guard isOn else { return try body() }
        let text = what()
        statement(text)
        guard detail >= .timings else { return try body() }
        let start = DispatchTime.now().uptimeNanoseconds
        defer { timing(text, seconds: Double(DispatchTime.now().uptimeNanoseconds &- start) / 1e9) }
        return try body()
    }

    public static func == (lhs: StoreLog, rhs: StoreLog) -> Bool {
        lhs.detail == rhs.detail && lhs.logger.label == rhs.logger.label
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(detail)
        hasher.combine(logger.label)
    }
}
