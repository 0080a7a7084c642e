import BenchPeers
import Foundation
import StrataTools

/// Every contender by identifier. Strata contenders come from ``KnownDriver``: a driver that is
/// not linked into this build is skipped, and the report says so.
enum ContenderCatalog {
    /// The second durability each file engine is measured at, so SQLite and LMDB can be compared
    /// at matched durability (docs/benchmarks.md, "Durability settings"): SQLite syncing its WAL
    /// at every commit, against LMDB's default (sync on commit); LMDB without the meta-page sync,
    /// against SQLite's WAL with `synchronous=NORMAL` (the benchmarks' default).
    static let durabilities: [KnownDriver: BenchDurability] = [
        .sqlite: BenchDurability(
            name: "syncfull", values: ["synchronous": "FULL"],
            settings: "journal_mode=WAL, synchronous=FULL (the WAL synced at every commit)"),
        .lmdb: BenchDurability(
            name: "nometasync", values: ["sync": "meta"],
            settings:
                "sync=meta (MDB_NOMETASYNC: data pages synced at every commit, the meta page at the next one)"),
    ]

    /// `strata-<driver>`, each followed by its other durability when it has one.
    static let strata = identifiers("strata-")
    /// Each driver called through the driver protocol directly (``DriverBenchContender``).
    static let driverLevel = identifiers("driver-")
    static let peers = ["sqlite-c", "lmdb-c", "libpq-c", "grdb"]
    static let all = strata + driverLevel + peers

    private static func identifiers(_ prefix: String) -> [String] {
        KnownDriver.allCases.flatMap { kind in
            [prefix + kind.rawValue] + (durabilities[kind].map { ["\(prefix)\(kind.rawValue)-\($0.name)"] } ?? [])
        }
    }

    /// The driver of a `strata-…` or `driver-…` contender, and its durability when not the default.
    static func parse(_ id: String) -> (kind: KnownDriver, durability: BenchDurability?)? {
        for prefix in ["strata-", "driver-"] where id.hasPrefix(prefix) {
            let rest = id.dropFirst(prefix.count)
            if let kind = KnownDriver(rawValue: String(rest)) { return (kind, nil) }
            for (kind, durability) in durabilities where rest == "\(kind.rawValue)-\(durability.name)" {
                return (kind, durability)
            }
        }
        return nil
    }

    /// The driver of a `strata-…` or `driver-…` contender.
    static func kind(_ id: String) -> KnownDriver? { parse(id)?.kind }

    /// Whether `id` runs at a durability other than its driver's benchmark default.
    static func isDurabilityVariant(_ id: String) -> Bool { parse(id)?.durability != nil }

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
                switch parse(id) {
                case (let kind, let durability)? where id.hasPrefix("strata-"):
                    try StrataBenchContender(kind: kind, durability: durability)
                case (let kind, let durability)?: try DriverBenchContender(kind: kind, durability: durability)
                case nil: nil
                }
            guard let contender else {
                throw BenchError("contender '\(id)' is not available: \(unavailableReason(id) ?? "unknown contender")")
            }
            return contender
        }
    }
}
