import BenchPeers
import Foundation
import StrataTools

/// Every contender by identifier. Strata contenders come from ``KnownDriver``: a driver that is
/// not linked into this build is skipped, and the report says so.
enum ContenderCatalog {
    static let strata = KnownDriver.allCases.map { "strata-\($0.rawValue)" }
    /// Each driver called through the driver protocol directly (``DriverBenchContender``).
    static let driverLevel = KnownDriver.allCases.map { "driver-\($0.rawValue)" }
    static let peers = ["sqlite-c", "lmdb-c", "libpq-c", "grdb"]
    static let all = strata + driverLevel + peers

    /// The driver of a `strata-…` or `driver-…` contender.
    static func kind(_ id: String) -> KnownDriver? {
        for prefix in ["strata-", "driver-"] where id.hasPrefix(prefix) {
            return KnownDriver(rawValue: String(id.dropFirst(prefix.count)))
        }
        return nil
    }
    /// The child that only builds the dataset: its peak memory is the floor under every contender's.
    static let baseline = "baseline"

    /// Why `id` cannot run in this build, or `nil` when it can.
    static func unavailableReason(_ id: String) -> String? {
        if id == "libpq-c", KnownDriver.postgresServer == nil { return KnownDriver.postgres.unavailableReason }
        return kind(id)?.unavailableReason
    }

    /// Whether `id` needs the PostgreSQL server the run starts.
    static func needsPostgres(_ id: String) -> Bool { id == "libpq-c" || kind(id) == .postgres }

    static func make(_ id: String) throws -> any BenchContender {
        switch id {
        case "sqlite-c": return SQLiteCContender()
        case "lmdb-c": return LMDBCContender()
        case "libpq-c": return LibPQCContender()
        case "grdb": return GRDBContender()
        default:
            let contender: (any BenchContender)? =
                switch kind(id) {
                case let kind? where id.hasPrefix("strata-"): try StrataBenchContender(kind: kind)
                case let kind?: try DriverBenchContender(kind: kind)
                case nil: nil
                }
            guard let contender else {
                throw BenchError("contender '\(id)' is not available: \(unavailableReason(id) ?? "unknown contender")")
            }
            return contender
        }
    }
}
