import BenchPeers
import Foundation
import StrataTools

/// The parallel-readers results, by driver.
struct ParallelSectionResult: Codable {
    var drivers: [ParallelReadersResult] = []
}

/// The parallel-readers workload (``ParallelReaders``): two contexts on one coordinator fetching on
/// two threads against one doing the same work alone, on every driver whose Strata contender
/// runs, each driver in a child process of its own (`--child parallel-<driver>`).
enum ParallelSection {
    static let prefix = "parallel-"
    /// DESIGN: two readers on two cores read at least this much faster than one.
    static let limit = 1.7
    /// The drivers the target names; the others are reported for information.
    static let judged: Set<KnownDriver> = [.sqlite, .lmdb]

    /// Runs the child `id` if it is one of this section's; `false` when it is not.
    static func runChild(_ id: String, options: Options) throws -> Bool {
        guard id.hasPrefix(prefix) else { return false }
        guard let kind = KnownDriver(rawValue: String(id.dropFirst(prefix.count))) else {
            throw BenchError("unknown driver in \(id)")
        }
        FileHandle.standardOutput.write(try JSONEncoder().encode(try run(kind, options: options)))
        return true
    }

    private static func run(_ kind: KnownDriver, options: Options) throws -> ParallelReadersResult {
        let work = try ChildProcess.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        return try ParallelReaders.run(kind, rows: options.rows, rounds: options.rounds, in: work)
    }

    /// Runs the workload on the drivers of the Strata contenders among `contenders`, with as many
    /// rounds as the pooled passes of the workloads have (at most 100).
    static func run(contenders: [String], options given: Options, log: (String) -> Void) throws
        -> ParallelSectionResult
    {
        var options = given
        options.rounds = min(given.rounds * given.passes, 100)
        var result = ParallelSectionResult()
        for kind in KnownDriver.allCases where contenders.contains("strata-\(kind.rawValue)") {
            log("running parallel readers on \(kind.rawValue) (\(options.rows) objects, \(options.rounds) rounds)")
            let driver =
                options.inProcess
                ? try run(kind, options: options)
                : try JSONDecoder().decode(
                    ParallelReadersResult.self, from: ChildProcess.output(prefix + kind.rawValue, options: options))
            log(
                String(
                    format: "  two readers ÷ one: %.2fx (minimums)", speedup(driver.oneReaderMs, driver.twoReadersMs)))
            result.drivers.append(driver)
        }
        return result
    }

    /// Throughput of two readers over one: one reader's minimum ÷ two readers' minimum.
    static func speedup(_ one: [Double], _ two: [Double]) -> Double {
        guard let a = one.min(), let b = two.min(), b > 0 else { return 0 }
        return a / b
    }

    static func markdown(_ parallel: ParallelSectionResult) -> String {
        guard let first = parallel.drivers.first else { return "" }
        var lines = [
            "### Parallel readers\n",
            "The same work, \(2 * first.unitsPerReader) fetches of all \(first.rows) items (every attribute read, a new "
                + "context each), by one reader thread, then by two threads at once doing half each, every context on one "
                + "coordinator; the driver-level rows call the store's driver's `fetch` directly. Throughput is one "
                + "reader's time ÷ two readers' time (2.00 when nothing is shared); CPU ÷ wall is how many cores the "
                + "readers kept busy.\n",
            "| driver | level | one reader, min ms | two readers, min ms | throughput (min) | throughput (median) | CPU ÷ wall, one | CPU ÷ wall, two |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        func busy(_ cpu: [Double], _ wall: [Double]) -> String {
            let pairs = zip(cpu, wall).filter { $0.1 > 0 }.map { $0.0 / $0.1 }
            return pairs.isEmpty ? "" : String(format: "%.2f", Check.median(pairs))
        }
        for d in parallel.drivers {
            for (level, one, two, cpuOne, cpuTwo) in [
                ("objects", d.oneReaderMs, d.twoReadersMs, d.oneReaderCPUMs, d.twoReadersCPUMs),
                ("driver", d.driverOneReaderMs, d.driverTwoReadersMs, d.driverOneReaderCPUMs, d.driverTwoReadersCPUMs),
            ] {
                let medianSpeedup = Check.median(two) > 0 ? Check.median(one) / Check.median(two) : 0
                lines.append(
                    "| \(d.driver) | \(level) | \(BenchReport.milliseconds(one.min() ?? 0)) | "
                        + "\(BenchReport.milliseconds(two.min() ?? 0)) | "
                        + String(format: "%.2fx | %.2fx", speedup(one, two), medianSpeedup)
                        + " | \(busy(cpuOne, one)) | \(busy(cpuTwo, two)) |")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func targets(_ parallel: ParallelSectionResult?) -> [CheckResult] {
        var results: [CheckResult] = []
        for kind in KnownDriver.allCases {
            let judgedHere = judged.contains(kind)
            let target =
                "parallel readers: two contexts reading on two threads ≥ 1.7x the throughput of one, on \(kind.rawValue)"
            guard let d = parallel?.drivers.first(where: { $0.driver == kind.rawValue }) else {
                if judgedHere {
                    results.append(
                        .init(
                            source: "parallel readers", target: target, status: .notMeasured,
                            figure: "strata-\(kind.rawValue) was not run"))
                }
                continue
            }
            let r = speedup(d.oneReaderMs, d.twoReadersMs)
            let m = Check.median(d.twoReadersMs) > 0 ? Check.median(d.oneReaderMs) / Check.median(d.twoReadersMs) : 0
            let driverLevel = speedup(d.driverOneReaderMs, d.driverTwoReadersMs)
            let size = d.rows == 100_000 ? "" : " (at \(d.rows) objects)"
            results.append(
                .init(
                    source: "parallel readers", target: target + (judgedHere ? "" : " (information)"),
                    status: judgedHere ? (r >= limit ? .met : .notMet) : .info,
                    figure: "min one reader \(Check.ms(d.oneReaderMs.min() ?? 0)) / two readers "
                        + "\(Check.ms(d.twoReadersMs.min() ?? 0)) = \(String(format: "%.2f", r))x; "
                        + String(format: "medians %.2fx; the driver alone %.2fx", m, driverLevel) + size,
                    ratio: r, medianRatio: m))
        }
        return results
    }
}
