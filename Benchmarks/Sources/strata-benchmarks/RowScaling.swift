import BenchPeers
import Foundation
import StrataTools

/// One contender at one store size in the scaling run.
struct ScalingPoint: Codable {
    var contender: String
    var rows: Int
    /// Milliseconds per round, by workload (``BenchWorkload/rawValue``).
    var samplesMs: [String: [Double]]
    /// Objects one run of each workload touches (N for W1 and W2, the lookups for W3, 10 for W8).
    var objects: [String: Int]

    /// Microseconds per object at the fastest round of `workload`.
    func microsecondsPerObject(_ workload: BenchWorkload) -> Double? {
        guard let fastest = samplesMs[workload.rawValue]?.min(), let count = objects[workload.rawValue], count > 0
        else { return nil }
        return fastest * 1_000 / Double(count)
    }
}

/// What the scaling run measured.
struct RowScalingResult: Codable {
    var sizes: [Int]
    var rounds: Int
    var points: [ScalingPoint] = []
    /// Contenders and sizes that did not run, with the reason.
    var skipped: [String] = []
    /// Each contender's settings, by identifier.
    var settings: [String: String] = [:]

    func point(_ contender: String, _ rows: Int) -> ScalingPoint? {
        points.first { $0.contender == contender && $0.rows == rows }
    }

    /// The contenders with at least one point, in run order.
    var contenders: [String] {
        var seen: [String] = []
        for p in points where !seen.contains(p.contender) { seen.append(p.contender) }
        return seen
    }
}

/// `--scaling`: W1, W2, W3 and W8 at several store sizes for every contender, each contender and
/// size in a child process of its own (`--child scaling/<rows>/<contender>`), so time per object
/// can be charted against rows: flat where the work is O(n) (W1, W2), W8 flat in n (O(k)).
enum RowScaling {
    static let workloads: [BenchWorkload] = [.insert, .fetchAll, .lookupCold, .lookupWarm, .saveFew]
    static let defaultSizes = [10_000, 100_000, 1_000_000]
    /// Above this size only the SQLite and LMDB contenders run (the target names them).
    static let largestForEveryContender = 1_000_000
    static let prefix = "scaling/"

    /// Runs the child `id` if it is one of this section's; `false` when it is not.
    static func runChild(_ id: String, options: Options) throws -> Bool {
        guard id.hasPrefix(prefix) else { return false }
        let parts = id.dropFirst(prefix.count).split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let rows = Int(parts[0]) else { throw BenchError("bad scaling child '\(id)'") }
        let work = try ChildProcess.workDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let point = try measure(String(parts[1]), rows: rows, rounds: options.rounds, in: work)
        FileHandle.standardOutput.write(try JSONEncoder().encode(point))
        return true
    }

    /// Runs W1, W2, W3-cold, W3-warm and W8 `rounds` times on fresh stores of `rows` rows, checking
    /// every answer against the dataset.
    static func measure(_ id: String, rows: Int, rounds: Int, in directory: URL) throws -> ScalingPoint {
        let dataset = BenchDataset(rows: rows, parents: 0)
        let contender = try ContenderCatalog.make(id)
        var samples: [String: [Double]] = [:]
        func check(_ w: BenchWorkload, _ got: BenchOutcome, _ want: BenchOutcome) throws {
            guard got.rows == want.rows, want.checksum == 0 || got.checksum == want.checksum else {
                throw BenchError(
                    "\(id) \(w.rawValue) at \(rows) rows: touched \(got.rows) rows (checksum \(got.checksum)), expected \(want.rows) (checksum \(want.checksum))"
                )
            }
        }
        func timed(_ w: BenchWorkload, want: BenchOutcome, _ body: () throws -> BenchOutcome) throws {
            let (outcome, ms) = try BenchClock.measure(body)
            try check(w, outcome, want)
            samples[w.rawValue, default: []].append(ms)
        }
        for round in 1...max(rounds, 1) {
            let store = directory.appendingPathComponent("round-\(round)")
            try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: store) }
            try contender.open(in: store)
            try timed(.insert, want: BenchOutcome(rows: rows)) { try contender.insert(dataset.rows[...]) }
            try timed(.fetchAll, want: dataset.expectedFetchAll) { try contender.fetchAll() }
            try contender.prepareColdLookups()
            try timed(.lookupCold, want: dataset.expectedLookups) {
                try contender.lookUp(dataset.lookupIDs, warm: false)
            }
            try timed(.lookupWarm, want: dataset.expectedLookups) {
                try contender.lookUp(dataset.lookupIDs, warm: true)
            }
            var total = 0.0
            for ids in dataset.changeSets {
                try contender.loadForChange(ids)
                let (outcome, ms) = try BenchClock.measure { try contender.saveChanged() }
                try check(.saveFew, outcome, BenchOutcome(rows: ids.count))
                total += ms
            }
            samples[BenchWorkload.saveFew.rawValue, default: []].append(total / Double(dataset.changeSets.count))
            try contender.close()
        }
        let objects: [String: Int] = [
            BenchWorkload.insert.rawValue: rows, BenchWorkload.fetchAll.rawValue: rows,
            BenchWorkload.lookupCold.rawValue: dataset.lookupIDs.count,
            BenchWorkload.lookupWarm.rawValue: dataset.lookupIDs.count,
            BenchWorkload.saveFew.rawValue: dataset.changeSets.first?.count ?? 10,
        ]
        return ScalingPoint(contender: id, rows: rows, samplesMs: samples, objects: objects)
    }

    /// Why `id` does not run at `rows` rows, or `nil`: above 1,000,000 rows only SQLite and LMDB
    /// run, and only when the disk and memory look large enough.
    static func skipReason(_ id: String, rows: Int) -> String? {
        if let reason = ContenderCatalog.unavailableReason(id) { return reason }
        let peerEngines = ["sqlite-c": "sqlite", "grdb": "sqlite", "lmdb-c": "lmdb", "libpq-c": "postgres"]
        let engine = ContenderCatalog.kind(id)?.engine ?? peerEngines[id]
        guard rows > largestForEveryContender else { return nil }
        guard engine == "sqlite" || engine == "lmdb" else {
            return "above \(largestForEveryContender) rows only the SQLite and LMDB contenders run"
        }
        // Estimates from the 100,000-row run: store and WAL on disk, dataset and objects in memory.
        let diskPerRow: Int64 = engine == "lmdb" ? 300 : 500
        let memoryPerRow: Int64 = id.hasPrefix("strata-") ? 1_500 : id.hasPrefix("driver-") ? 800 : 600
        let needDisk = Int64(rows) * diskPerRow
        let needMemory = Int64(rows) * memoryPerRow
        let freeDisk = freeDiskBytes()
        let freeMemory = availableMemoryBytes()
        if let freeDisk, needDisk > freeDisk * 8 / 10 {
            return "needs about \(BenchReport.bytes(needDisk)) of disk; \(BenchReport.bytes(freeDisk)) free"
        }
        if let freeMemory, needMemory > freeMemory * 8 / 10 {
            return "needs about \(BenchReport.bytes(needMemory)) of memory; \(BenchReport.bytes(freeMemory)) available"
        }
        return nil
    }

    /// Free bytes on the file system of the temporary directory, where the stores go.
    static func freeDiskBytes() -> Int64? {
        let attributes = try? FileManager.default.attributesOfFileSystem(
            forPath: FileManager.default.temporaryDirectory.path)
        return (attributes?[.systemFreeSize] as? NSNumber)?.int64Value
    }

    /// `MemAvailable` from /proc/meminfo.
    static func availableMemoryBytes() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix("MemAvailable:") }
        return line.flatMap { Int64($0.split(separator: " ").dropFirst().first ?? "") }.map { $0 * 1024 }
    }

    /// Every contender of `contenders` at every size of `sizes`, smallest first.
    static func run(contenders: [String], sizes: [Int], options: Options, log: (String) -> Void) throws
        -> RowScalingResult
    {
        var result = RowScalingResult(sizes: sizes, rounds: options.rounds)
        let variants = contenders.filter(ContenderCatalog.isDurabilityVariant)
        if !variants.isEmpty {
            let note =
                "\(variants.joined(separator: ", ")): left out, the scaling run uses each driver's benchmark durability"
            log("scaling: \(note)")
            result.skipped.append(note)
        }
        for rows in sizes {
            for id in contenders where !ContenderCatalog.isDurabilityVariant(id) {
                if let reason = skipReason(id, rows: rows) {
                    log("scaling: skipping \(id) at \(rows) rows: \(reason)")
                    result.skipped.append("\(id) at \(rows) rows: \(reason)")
                    continue
                }
                log("scaling: \(id) at \(rows) rows, \(options.rounds) round\(options.rounds == 1 ? "" : "s")")
                let (point, ms) = try BenchClock.measure {
                    try JSONDecoder().decode(
                        ScalingPoint.self, from: ChildProcess.output("\(prefix)\(rows)/\(id)", options: options))
                }
                log(String(format: "  done in %.1f s", ms / 1_000))
                result.points.append(point)
                if result.settings[id] == nil { result.settings[id] = try ContenderCatalog.make(id).settings }
            }
        }
        return result
    }

    static func markdown(_ result: RowScalingResult, machine: Machine, checks: [CheckResult]) -> String {
        let contenders = result.contenders
        var out = [
            "## Scaling: time per object against rows\n",
            "Machine: \(machine.summary). \(result.rounds) round\(result.rounds == 1 ? "" : "s") per size; "
                + "microseconds per object at the fastest round (W1, W2: per row; W3: per lookup of 10,000; W8: per "
                + "changed object of 10).\n",
        ]
        for w in workloads {
            out.append("### \(w.rawValue): \(w.summary)\n")
            var lines = ["| rows | " + contenders.joined(separator: " | ") + " |"]
            lines.append("|---:|" + contenders.map { _ in "---:|" }.joined())
            for rows in result.sizes {
                let cells = contenders.map { id in
                    result.point(id, rows)?.microsecondsPerObject(w).map { String(format: "%.3g", $0) } ?? "–"
                }
                lines.append("| \(rows) | " + cells.joined(separator: " | ") + " |")
            }
            out.append(lines.joined(separator: "\n") + "\n")
        }
        out.append(
            "Settings: " + contenders.map { "\($0): \(result.settings[$0] ?? "")" }.joined(separator: "; ") + ".\n")
        if !result.skipped.isEmpty { out.append("Skipped: " + result.skipped.joined(separator: "; ") + ".\n") }
        if !checks.isEmpty { out.append("### Targets\n\n" + Check.markdown(checks)) }
        return out.joined(separator: "\n") + "\n"
    }

    /// W8 flat in n for every Strata contender but XML, whose driver rewrites the whole file at
    /// every save (a target: < 2x from the smallest store to the largest, the growth of the
    /// driver alone and of the raw engine beside it); how much time per object grew from the
    /// smallest to the largest for every contender (information: flat is O(n)).
    static func targets(_ result: RowScalingResult) -> [CheckResult] {
        var checks: [CheckResult] = []
        let rawEngines = ["memory": nil, "sqlite": "sqlite-c", "lmdb": "lmdb-c", "postgres": "libpq-c", "xml": nil]
        /// `id`'s W8 at its largest size ÷ at its smallest, with the sizes.
        func saveGrowth(_ id: String) -> (ratio: Double, small: Int, large: Int)? {
            let sizes = result.sizes.filter { result.point(id, $0) != nil }
            guard let small = sizes.first, let large = sizes.last, small < large,
                let a = result.point(id, large)?.microsecondsPerObject(.saveFew),
                let b = result.point(id, small)?.microsecondsPerObject(.saveFew), b > 0
            else { return nil }
            return (a / b, small, large)
        }
        for id in result.contenders {
            let sizes = result.sizes.filter { result.point(id, $0) != nil }
            guard let small = sizes.first, let large = sizes.last, small < large,
                let first = result.point(id, small), let last = result.point(id, large)
            else { continue }
            if let kind = ContenderCatalog.kind(id), id.hasPrefix("strata-"),
                let a = last.samplesMs[BenchWorkload.saveFew.rawValue],
                let b = first.samplesMs[BenchWorkload.saveFew.rawValue]
            {
                let beside = ["driver-\(kind.rawValue)", rawEngines[kind.rawValue] ?? nil].compactMap { $0 }.compactMap
                {
                    other in saveGrowth(other).map { "\(other) \(String(format: "%.2f", $0.ratio))x" }
                }
                let note = beside.isEmpty ? "" : "; the same growth for " + beside.joined(separator: ", ")
                var check = Check.compare(
                    "scaling", "\(id): saving 10 changed objects in \(large) rows < 2x in \(small) rows (O(k))",
                    "W8 at \(large)", a, "W8 at \(small)", b, limit: 2, strict: true, note: note)
                if kind == .xml {
                    check.target += " (information: the XML driver rewrites the whole file at every save)"
                    check.status = .info
                }
                checks.append(check)
            }
            let growth = workloads.compactMap { w -> String? in
                guard let a = last.microsecondsPerObject(w), let b = first.microsecondsPerObject(w), b > 0 else {
                    return nil
                }
                return "\(w.rawValue) \(String(format: "%.2f", a / b))x"
            }
            checks.append(
                .init(
                    source: "scaling",
                    target: "\(id): time per object at \(large) rows ÷ at \(small) rows (1.00x: flat)",
                    status: .info, figure: growth.joined(separator: ", ")))
        }
        return checks
    }
}
