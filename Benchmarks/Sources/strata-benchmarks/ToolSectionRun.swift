import BenchPeers
import Foundation
import StrataTesting
import StrataTools

#if canImport(Glibc)
    import Glibc
#endif

/// The tool section (`--tool`): runs ``ToolSection``'s workloads at each size, each in a child
/// process of its own, and turns them into a table and targets. Children are named
/// `tool-OPERATION:DRIVER` and get the size's source store with `--store` and N with `--rows`.
enum ToolSectionRun {
    /// The prefix of the section's child names.
    static let childPrefix = "tool-"

    /// The sizes run by default.
    static let defaultSizes = [10_000, 100_000]

    // MARK: - Parent

    /// Runs the section at `sizes` (N items each); the PostgreSQL server is started when none is
    /// named and the driver is linked.
    static func run(sizes: [Int], options: Options, log: (String) -> Void) throws -> ToolSectionResult {
        var result = ToolSectionResult(sizes: sizes)
        var server: PostgreSQLTestServer?
        if KnownDriver.postgres.storeType != nil, KnownDriver.postgresServer == nil {
            do {
                let started = try PostgreSQLTestServer(durable: true, settings: ["autovacuum = off"])
                server = started
                setenv(KnownDriver.postgresServerVariable, started.url(schema: "public").absoluteString, 1)
            } catch {
                result.skipped.append("postgres: no server (\(error))")
            }
        }
        defer {
            if let server {
                server.stop()
                unsetenv(KnownDriver.postgresServerVariable)
            }
        }
        var drivers: [KnownDriver] = []
        for kind in ToolSection.drivers {
            if let reason = kind.unavailableReason {
                if !result.skipped.contains(where: { $0.hasPrefix("\(kind.rawValue):") }) {
                    result.skipped.append("\(kind.rawValue): \(reason)")
                }
            } else {
                drivers.append(kind)
            }
        }
        let work = try ChildProcess.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }  // benchmark files only
        for n in sizes {
            let directory = work.appendingPathComponent("size-\(n)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            log(
                "  tool section: building a SQLite store of \(n) items and \(ToolSection.storeRows(n) - n) graph rows"
            )
            let source = try ToolSection.buildSource(rows: n, in: directory)
            _ = try ToolSection.modelFile(in: directory)
            for kind in drivers {
                let operations: [String] =
                    kind == .memory
                    ? ["W1", "W1-objects", "convert", "import"]
                    : ["W1", "W1-objects", "convert", "read", "export", "validate", "import"]
                for operation in operations {
                    // The source is a SQLite file.
                    var rounds: [[String: Double]] = []
                    for _ in 0..<max(1, options.rounds) {
                        rounds.append(
                            try child("\(childPrefix)\(operation):\(kind.rawValue)", rows: n, store: source.url!))
                    }
                    func run(_ operation: String, _ key: String) -> ToolSectionResult.Run {
                        let samples = rounds.map { $0[key] ?? 0 }
                        var run = ToolSectionResult.Run(
                            operation: operation, driver: kind.rawValue, rows: n, ms: median(samples),
                            peakBytes: Int64(rounds.map { $0["peak"] ?? 0 }.max() ?? 0))
                        run.samples = samples
                        run.cpuMs = median(rounds.map { $0["cpuMs"] ?? 0 })
                        return run
                    }
                    let measured = run(operation, "ms")
                    result.runs.append(measured)
                    if rounds[0]["readMs"] != nil {
                        // An in-memory copy is read back by the child that made it.
                        result.runs.append(run("read", "readMs"))
                    }
                    log(
                        "    \(operation) \(kind.rawValue) \(n): \(format(measured.ms)) (cpu \(format(measured.cpuMs))), peak \(measured.peakBytes / 1_048_576) MiB"
                    )
                }
                if kind == .postgres {
                    for location in [
                        ToolSection.copy(kind, rows: n, in: directory),
                        ToolSection.imported(kind, rows: n, in: directory),
                    ] {
                        try? kind.removeStore(at: location?.url)  // best effort: a throwaway benchmark schema
                    }
                }
            }
            try? FileManager.default.removeItem(at: directory)  // benchmark files only
        }
        return result
    }

    private static func format(_ ms: Double) -> String { String(format: "%.0f ms", ms) }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// Runs one child and returns the figures it printed.
    private static func child(_ id: String, rows: Int, store: URL) throws -> [String: Double] {
        try JSONDecoder().decode([String: Double].self, from: ChildProcess.output(id, rows: rows, store: store))
    }

    // MARK: - Child

    /// Runs the child `id` (`tool-OPERATION:DRIVER`) and prints its figures as a JSON object: `ms`,
    /// `cpuMs` (the process's user and system time), `peak` (bytes), and for memory's convert
    /// `readMs`.
    static func runChild(_ id: String, options: Options) throws {
        let parts = id.dropFirst(childPrefix.count).split(separator: ":").map(String.init)
        guard parts.count == 2, let kind = KnownDriver(rawValue: parts[1]), let source = options.store else {
            throw BenchError("\(id): expected tool-OPERATION:DRIVER with --store SOURCE")
        }
        let n = options.rows
        let directory = source.deletingLastPathComponent()
        let sourceLocation = StoreLocation(scheme: .sqlite, url: source)
        guard let copy = ToolSection.copy(kind, rows: n, in: directory),
            let imported = ToolSection.imported(kind, rows: n, in: directory)
        else { throw BenchError("\(id): no location for \(kind.rawValue)") }
        var figures: [String: Double] = [:]
        switch parts[0] {
        case "W1": figures["ms"] = try ToolSection.w1(kind, rows: n, in: directory)
        case "W1-objects": figures["ms"] = try ToolSection.w1Objects(kind, rows: n, in: directory)
        case "convert":
            figures["ms"] = try ToolSection.convert(sourceLocation, to: copy)
            // An in-memory copy lives in this process only: read it back here.
            if kind == .memory { figures["readMs"] = try ToolSection.readBack(copy, rows: n) }
        case "read": figures["ms"] = try ToolSection.readBack(copy, rows: n)
        case "export":
            figures["ms"] = try ToolSection.export(
                copy, to: directory.appendingPathComponent("export-\(kind.rawValue).json"), rows: n)
        case "validate": figures["ms"] = try ToolSection.validate(copy)
        case "import":
            figures["ms"] = try ToolSection.importFile(
                directory.appendingPathComponent("export-sqlite.json"), into: imported,
                model: directory.appendingPathComponent("Bench.json"), rows: n)
        default: throw BenchError("\(id): unknown operation '\(parts[0])'")
        }
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        figures["cpuMs"] =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000
        figures["peak"] = Double(peakResidentBytes())
        FileHandle.standardOutput.write(try JSONEncoder().encode(figures))
    }

    /// This process's own resident-set high-water mark (`VmHWM` of /proc/self/status, which
    /// starts afresh at exec), in bytes; getrusage's `ru_maxrss` when /proc is not there. The
    /// rusage figure survives exec on Linux, so a child would report its parent's peak when that
    /// is higher: here the parent builds the store of N rows just before.
    static func peakResidentBytes() -> Int64 {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int64(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        {
            return kilobytes * 1_024
        }
        return ChildProcess.peakResidentBytes()
    }

    // MARK: - Targets and report

    /// The section's targets: per driver, converting ≤ 2x the driver's W1 (`strata-X`, objects
    /// through a context, as in the main table) + the read-back at every size, with the same
    /// against the driver-level W1 (`driver-X`) for information; per operation and driver, time
    /// per row at the largest size ≤ 2x at the smallest (O(n)); peak memory for information.
    static func checks(_ tool: ToolSectionResult?) -> [CheckResult] {
        let convertTarget =
            "tool: converting a store to each driver ≤ 2x that driver's W1 (strata-X) at the same size + reading the copy back"
        let driverTarget =
            "tool: the same against the driver-level W1 (driver-X: one apply of N rows, no objects)"
        let linearTarget =
            "tool: convert, export, import and validate are O(n) (time per row at the largest size ≤ 2x at the smallest)"
        guard let tool, let smallest = tool.sizes.first, let largest = tool.sizes.last else {
            return [convertTarget, linearTarget].map {
                .init(source: "tool", target: $0, status: .notMeasured, figure: "run with --tool")
            }
        }
        var results: [CheckResult] = []
        let drivers = ToolSection.drivers.map(\.rawValue).filter { driver in tool.runs.contains { $0.driver == driver }
        }
        for (reference, target, info) in [("W1-objects", convertTarget, false), ("W1", driverTarget, true)] {
            for driver in drivers {
                var figures: [String] = []
                var met = true
                for n in tool.sizes {
                    guard let convert = tool.run("convert", driver, n), let w1 = tool.run(reference, driver, n),
                        let read = tool.run("read", driver, n)
                    else {
                        figures.append("\(n): not measured")
                        met = false
                        continue
                    }
                    let limit = 2 * w1.ms + read.ms
                    met = met && convert.ms <= limit
                    figures.append(
                        String(
                            format: "%d rows: %.0f ms %@ 2 × %.0f + %.0f = %.0f ms", n, convert.ms,
                            convert.ms <= limit ? "≤" : ">", w1.ms, read.ms, limit))
                }
                results.append(
                    .init(
                        source: "tool", target: "\(target): \(driver)", status: info ? .info : met ? .met : .notMet,
                        figure: figures.joined(separator: "; ") + " (medians)"))
            }
        }
        if smallest < largest {
            var slow: [String] = []
            var figures: [String] = []
            for driver in drivers {
                for operation in ["convert", "export", "import", "validate"] {
                    guard let a = tool.run(operation, driver, smallest), let b = tool.run(operation, driver, largest)
                    else { continue }
                    let ratio = (b.ms / Double(largest)) / max(a.ms / Double(smallest), 1e-9)
                    figures.append(String(format: "\(operation) \(driver) %.2fx", ratio))
                    if ratio > 2 { slow.append(operation + " " + driver) }
                }
            }
            results.append(
                .init(
                    source: "tool", target: linearTarget, status: slow.isEmpty ? .met : .notMet,
                    figure: "per-row time at \(largest) ÷ at \(smallest): " + figures.joined(separator: ", ")
                        + (slow.isEmpty ? "" : "; above 2x: " + slow.joined(separator: ", "))))
        } else {
            results.append(
                .init(
                    source: "tool", target: linearTarget, status: .notMeasured,
                    figure: "one size run; give --tool-rows two or more"))
        }
        let peaks = drivers.map { driver in
            driver + ": "
                + ["convert", "export", "import", "validate"].compactMap { operation in
                    let sizes = tool.sizes.compactMap { n in
                        tool.run(operation, driver, n).map { "\($0.peakBytes / 1_048_576)" }
                    }
                    return sizes.isEmpty ? nil : "\(operation) \(sizes.joined(separator: "/")) MiB"
                }.joined(separator: ", ")
        }
        results.append(
            .init(
                source: "tool",
                target:
                    "tool: peak resident memory per operation at \(tool.sizes.map(String.init).joined(separator: "/")) rows",
                status: .info, figure: peaks.joined(separator: "; ")))
        return results
    }

    /// The section's table, for results.md.
    static func markdown(_ tool: ToolSectionResult) -> String {
        let method: String = """
            A SQLite store of N items plus N/100 parents with 10 children each (1.11 N rows) converted to each \
            driver; the copy read back (the verification's read), exported, validated; the SQLite copy's export \
            imported into a new store of each driver; W1-objects is the strata-X W1 (N objects saved through a \
            context), W1 the driver-X one (one apply of N rows). Each in a child process; wall-clock medians of the \
            rounds, the child's processor time (all threads, with its start) and its peak resident set.

            """
        let sizes: [String] = tool.sizes.map { "\($0) rows" }
        var lines: [String] = ["### The tool at scale (strata convert, export, import, validate)\n", method]
        lines.append("| operation | driver | " + sizes.joined(separator: " | ") + " |")
        lines.append("|---|---|" + String(repeating: "---:|", count: sizes.count))
        for driver in ToolSection.drivers.map(\.rawValue) {
            for operation in ["W1-objects", "W1", "convert", "read", "export", "import", "validate"] {
                let cells = tool.sizes.map { n in
                    tool.run(operation, driver, n).map {
                        String(
                            format: "%.0f ms (cpu %.0f), %d MiB", $0.ms, $0.cpuMs, $0.peakBytes / 1_048_576)
                    } ?? "–"
                }
                guard cells.contains(where: { $0 != "–" }) else { continue }
                lines.append("| \(operation) | \(driver) | " + cells.joined(separator: " | ") + " |")
            }
        }
        if !tool.skipped.isEmpty { lines.append("\nSkipped: " + tool.skipped.joined(separator: "; ") + ".") }
        return lines.joined(separator: "\n") + "\n"
    }
}
