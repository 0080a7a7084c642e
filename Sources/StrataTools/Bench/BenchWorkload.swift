import Foundation

/// One benchmark workload (W1–W8, docs/benchmarks.md). Every contender, Strata on each driver and the
/// peers, runs the same workloads on the same data (``BenchDataset``).
public enum BenchWorkload: String, CaseIterable, Codable, Sendable, Comparable {
    /// W1: insert N rows and save them in one transaction.
    case insert = "W1"
    /// W2: fetch all N rows with every attribute.
    case fetchAll = "W2"
    /// W2 read the `Any?` way, `item["age"] as? Int`: for Strata only, to show what the runtime's
    /// casts add to the typed reads W2 uses. No target applies to it.
    case fetchAllAny = "W2-any"
    /// W3 cold: 10,000 random lookups by ID through the driver (Strata: row cache emptied first).
    case lookupCold = "W3-cold"
    /// W3 warm: the same 10,000 lookups again (Strata: row cache hits).
    case lookupWarm = "W3-warm"
    /// W4: the rows whose age is between 30 and 40 (about 10%), sorted by name.
    case filtered = "W4"
    /// W5: update one attribute (score) of every row and save; the fetch is included.
    case update = "W5"
    /// W6: delete every row and save; the fetch is included where the contender needs one.
    case delete = "W6"
    /// W7 without prefetching: fetch 1,000 parents and walk their 10 children each by faulting.
    case graphFaulting = "W7-fault"
    /// W7 with prefetching: the same walk with the children loaded together with the parents.
    case graphPrefetch = "W7-prefetch"
    /// W8: change one attribute of 10 loaded rows and save, in a store of N rows.
    case saveFew = "W8"
    /// W8 in a store of 1,000 rows: the reference for "saving k objects costs O(k)".
    case saveFewSmall = "W8-1k"

    /// A one-line description for tables and docs.
    public var summary: String {
        switch self {
        case .insert: "insert N rows, save in one transaction"
        case .fetchAll: "fetch all N rows, every attribute"
        case .fetchAllAny: "W2, each value read as `item[key] as? T` (Strata)"
        case .lookupCold: "10,000 random lookups by ID through the driver"
        case .lookupWarm: "the same 10,000 lookups, warm (row cache hits)"
        case .filtered: "age between 30 and 40 (~10%), sorted by name"
        case .update: "update one attribute of every row, save"
        case .delete: "delete every row, save"
        case .graphFaulting: "1,000 parents, walk 10 children each by faulting"
        case .graphPrefetch: "1,000 parents, walk 10 children each, prefetched"
        case .saveFew: "save 10 changed rows in a store of N rows"
        case .saveFewSmall: "save 10 changed rows in a store of 1,000 rows"
        }
    }

    private var order: Int { Self.allCases.firstIndex(of: self)! }  // every case is in allCases

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.order < rhs.order }
}

/// What one run of a workload touched: how many rows, and a checksum of the values read, the same
/// for every contender when they read the same data (checked by the harness and the tests).
public struct BenchOutcome: Sendable, Hashable, Codable {
    /// Rows inserted, read, updated or deleted.
    public var rows: Int
    /// A checksum of what was read (0 for write-only workloads).
    public var checksum: Int64

    /// Creates an outcome.
    public init(rows: Int, checksum: Int64 = 0) {
        self.rows = rows
        self.checksum = checksum
    }
}

/// The timings of one workload over several rounds.
public struct BenchMeasurement: Sendable, Codable, Hashable {
    /// The workload.
    public var workload: BenchWorkload
    /// Rows touched by one run.
    public var rows: Int
    /// The checksum of the last run.
    public var checksum: Int64
    /// Milliseconds of each round, in order.
    public var samplesMs: [Double]

    /// Creates a measurement.
    public init(workload: BenchWorkload, rows: Int, checksum: Int64, samplesMs: [Double]) {
        self.workload = workload
        self.rows = rows
        self.checksum = checksum
        self.samplesMs = samplesMs
    }

    /// The median of the samples, in milliseconds.
    public var medianMs: Double {
        let sorted = samplesMs.sorted()
        guard !sorted.isEmpty else { return 0 }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    /// The fastest sample, in milliseconds.
    public var minMs: Double { samplesMs.min() ?? 0 }

    /// Rows per second at the median.
    public var rowsPerSecond: Double { medianMs > 0 ? Double(rows) / (medianMs / 1000) : 0 }
}
