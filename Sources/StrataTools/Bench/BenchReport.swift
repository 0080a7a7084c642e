import Foundation

/// The results of a benchmark run: what `strata bench` prints and the benchmarks package extends.
public struct BenchReport: Sendable, Codable {
    /// N.
    public var rows: Int
    /// Rounds per workload.
    public var rounds: Int
    /// One result per contender that ran.
    public var contenders: [ContenderResult]
    /// Contenders that did not run, with the reason (a driver not linked into this build).
    public var skipped: [Skipped]

    /// A contender that did not run.
    public struct Skipped: Sendable, Codable, Hashable {
        /// The contender or driver.
        public var id: String
        /// Why.
        public var reason: String

        /// Creates an entry.
        public init(id: String, reason: String) {
            self.id = id
            self.reason = reason
        }
    }

    /// Creates a report.
    public init(rows: Int, rounds: Int, contenders: [ContenderResult] = [], skipped: [Skipped] = []) {
        self.rows = rows
        self.rounds = rounds
        self.contenders = contenders
        self.skipped = skipped
    }

    /// The result of contender `id`.
    public func contender(_ id: String) -> ContenderResult? { contenders.first { $0.id == id } }

    /// The flat JSON form: `{"rows": N, "rounds": R, "results": [{"driver": "memory", "workload":
    /// "W1", "medianMs": 12.3, "minMs": 11.9, "rows": N, "rowsPerSecond": …}], "skipped": […]}`.
    /// `driver` is the driver's name for Strata contenders (`memory`, `sqlite`) and the
    /// contender's identifier for peers (`sqlite-c`, `grdb`).
    public func flatJSON(extra: [String: Any] = [:]) throws -> String {
        var results: [[String: Any]] = []
        for c in contenders {
            let driver = c.id.hasPrefix("strata-") ? String(c.id.dropFirst("strata-".count)) : c.id
            for m in c.measurements {
                results.append([
                    "driver": driver, "contender": c.id, "workload": m.workload.rawValue,
                    "medianMs": Self.rounded(m.medianMs), "minMs": Self.rounded(m.minMs), "rows": m.rows,
                    "rowsPerSecond": Self.rounded(m.rowsPerSecond),
                ])
            }
        }
        var object: [String: Any] = ["rows": rows, "rounds": rounds, "results": results]
        object["skipped"] = skipped.map { ["driver": $0.id, "reason": $0.reason] }
        object["contenders"] = contenders.map { c -> [String: Any] in
            var entry: [String: Any] = [
                "id": c.id, "engine": c.engine, "settings": c.settings, "bytesOnDisk": c.bytesOnDisk,
            ]
            if let peak = c.peakMemoryBytes { entry["peakMemoryBytes"] = peak }
            return entry
        }
        for (key, value) in extra { object[key] = value }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// A Markdown table, workloads down and contenders across, each cell the median in
    /// milliseconds and the rows per second at the median.
    public func markdownTable() -> String {
        var lines = ["| workload | " + contenders.map(\.id).joined(separator: " | ") + " |"]
        lines.append("|---|" + contenders.map { _ in "---:|" }.joined())
        for workload in BenchWorkload.allCases {
            let cells = contenders.map { c -> String in
                guard let m = c.measurement(workload) else { return "–" }
                return "\(Self.milliseconds(m.medianMs)) ms · \(Self.rate(m.rowsPerSecond))/s"
            }
            if cells.allSatisfy({ $0 == "–" }) { continue }
            lines.append("| \(workload.rawValue) | " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    /// Milliseconds with three significant figures (at least one decimal under 100).
    public static func milliseconds(_ ms: Double) -> String {
        if ms >= 100 { return String(format: "%.0f", ms) }
        if ms >= 10 { return String(format: "%.1f", ms) }
        if ms >= 1 { return String(format: "%.2f", ms) }
        return String(format: "%.3f", ms)
    }

    /// A rate as 1.2k, 3.4M.
    public static func rate(_ perSecond: Double) -> String {
        if perSecond >= 1e6 { return String(format: "%.1fM", perSecond / 1e6) }
        if perSecond >= 1e3 { return String(format: "%.1fk", perSecond / 1e3) }
        return String(format: "%.0f", perSecond)
    }

    /// Bytes as KiB/MiB.
    public static func bytes(_ count: Int64) -> String {
        if count >= 1 << 20 { return String(format: "%.1f MiB", Double(count) / 1_048_576) }
        if count >= 1 << 10 { return String(format: "%.1f KiB", Double(count) / 1024) }
        return "\(count) B"
    }

    static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}

/// `strata bench`: the workloads over Strata's drivers, no peers.
public enum StrataBench {
    /// Runs the workloads on `drivers` (every linked driver when empty) with `rows` rows.
    ///
    /// Drivers not linked into this build, and PostgreSQL without a server
    /// (``KnownDriver/postgresServerVariable``), are listed in ``BenchReport/skipped``.
    public static func run(
        drivers: [KnownDriver], rows: Int, rounds: Int, progress: ((String) -> Void)? = nil
    ) throws -> BenchReport {
        let wanted = drivers.isEmpty ? KnownDriver.available : drivers
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let runner = BenchRunner(
            dataset: BenchDataset(rows: rows), rounds: rounds, workDirectory: work, progress: progress)
        var report = BenchReport(rows: rows, rounds: rounds)
        for kind in wanted {
            guard let contender = try StrataBenchContender(kind: kind) else {
                report.skipped.append(.init(id: kind.rawValue, reason: kind.unavailableReason ?? "not available"))
                continue
            }
            report.contenders.append(try runner.run(contender))
        }
        return report
    }
}
