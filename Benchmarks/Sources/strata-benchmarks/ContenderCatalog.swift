import BenchPeers
import Foundation
import StrataTools

/// Every contender by identifier. Strata contenders come from ``DriverKind``: a driver that is
/// not linked into this build is skipped, and the report says so.
enum ContenderCatalog {
    static let strata = DriverKind.allCases.map { "strata-\($0.rawValue)" }
    static let peers = ["sqlite-c", "lmdb-c", "grdb"]
    static let all = strata + peers
    /// The child that only builds the dataset: its peak memory is the floor under every contender's.
    static let baseline = "baseline"

    /// Why `id` cannot run in this build, or `nil` when it can.
    static func unavailableReason(_ id: String) -> String? {
        guard id.hasPrefix("strata-"), let kind = DriverKind(rawValue: String(id.dropFirst("strata-".count))) else { return nil }
        return kind.storeType == nil
            ? "the \(kind.storeTypeName) driver is not linked into this build (store type '\(kind.storeTypeName)' is not registered)"
            : nil
    }

    static func make(_ id: String) throws -> any BenchContender {
        switch id {
        case "sqlite-c": return SQLiteCContender()
        case "lmdb-c": return LMDBCContender()
        case "grdb": return GRDBContender()
        default:
            guard id.hasPrefix("strata-"), let kind = DriverKind(rawValue: String(id.dropFirst("strata-".count))),
                let contender = try StrataBenchContender(kind: kind)
            else { throw BenchError("contender '\(id)' is not available: \(unavailableReason(id) ?? "unknown contender")") }
            return contender
        }
    }
}
