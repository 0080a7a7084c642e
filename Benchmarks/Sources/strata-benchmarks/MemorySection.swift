import BenchPeers
import Foundation
import StrataTools

/// What the memory section measured: objects at rest per driver, and each contender's peak
/// resident growth over W1–W2 (``MemoryAtRest``), each in a child process of its own.
struct MemorySectionResult: Codable {
    /// Objects held at rest, and the rows of W1–W2.
    var rows: Int
    /// Objects at rest, by driver (``KnownDriver/rawValue``).
    var atRest: [String: MemoryAtRest.Objects] = [:]
    /// Peak resident growth over W1–W2 in bytes, by contender.
    var peakGrowth: [String: Int64] = [:]
}

/// The memory section: runs the children and turns their figures into tables and targets.
enum MemorySection {
    /// Child `at-rest-<driver>`: objects at rest on one driver.
    static let atRestPrefix = "at-rest-"
    /// Child `peak-<contender>`: one contender's peak growth over W1–W2.
    static let peakPrefix = "peak-"
    /// DESIGN: at most this many bytes per live object at rest.
    static let bytesPerObjectLimit = 400.0
    /// Peak growth over W1–W2 at most this many times sqlite-c's.
    static let peakLimit = 2.5
    /// The drivers whose store lives in the process's memory: their W1–W2 peak holds the store
    /// itself, so it is reported against sqlite-c's, not judged.
    static let storeInMemory: Set<KnownDriver> = [.memory, .xml]

    /// Runs the child `id` if it is one of this section's; `false` when it is not.
    static func runChild(_ id: String, options: Options) throws -> Bool {
        if id.hasPrefix(atRestPrefix) {
            guard let kind = KnownDriver(rawValue: String(id.dropFirst(atRestPrefix.count))) else {
                throw BenchError("unknown driver in \(id)")
            }
            let work = try ChildProcess.workDirectory()
            defer { try? FileManager.default.removeItem(at: work) }
            let objects = try MemoryAtRest.objects(kind, rows: options.rows, in: work)
            FileHandle.standardOutput.write(try JSONEncoder().encode(objects))
            return true
        }
        if id.hasPrefix(peakPrefix) {
            let contender = try ContenderCatalog.make(String(id.dropFirst(peakPrefix.count)))
            let dataset = BenchDataset(rows: options.rows)
            let work = try ChildProcess.workDirectory()
            defer { try? FileManager.default.removeItem(at: work) }
            let growth = try MemoryAtRest.peakGrowth(contender, dataset: dataset, in: work)
            FileHandle.standardOutput.write(try JSONEncoder().encode([growth]))
            return true
        }
        return false
    }

    /// Objects at rest on the drivers of the Strata contenders among `contenders`, and the
    /// W1–W2 peak of every contender among them (durability variants left out: they differ in
    /// when they sync, not in what they hold).
    static func run(contenders: [String], options: Options, log: (String) -> Void) throws -> MemorySectionResult {
        var result = MemorySectionResult(rows: options.rows)
        log("running the memory section (\(options.rows) objects)")
        for kind in KnownDriver.allCases where contenders.contains("strata-\(kind.rawValue)") {
            let objects = try JSONDecoder().decode(
                MemoryAtRest.Objects.self, from: ChildProcess.output(atRestPrefix + kind.rawValue, options: options))
            guard objects.objects == options.rows else {
                throw BenchError("\(kind.rawValue) held \(objects.objects) objects at rest, not \(options.rows)")
            }
            log(String(format: "  %@: %.0f bytes per object at rest", kind.rawValue, objects.bytesPerObject))
            result.atRest[kind.rawValue] = objects
        }
        for id in contenders where !ContenderCatalog.isDurabilityVariant(id) {
            let values = try JSONDecoder().decode(
                [Int64].self, from: ChildProcess.output(peakPrefix + id, options: options))
            guard let growth = values.first else { throw BenchError("\(peakPrefix + id) reported nothing") }
            log("  \(id): peak growth over W1–W2 \(BenchReport.bytes(growth))")
            result.peakGrowth[id] = growth
        }
        return result
    }

    static func markdown(_ memory: MemorySectionResult) -> String {
        var lines = [
            "### Memory\n",
            "Objects at rest: \(memory.rows) items fetched into a context, every attribute read, the context alive; "
                + "resident growth ÷ objects (the anonymous part, heap without mapped files, beside it).\n",
            "| driver | bytes per object | anonymous bytes per object |", "|---|---:|---:|",
        ]
        for kind in KnownDriver.allCases {
            guard let objects = memory.atRest[kind.rawValue] else { continue }
            lines.append(
                String(
                    format: "| %@ | %.0f | %.0f |", kind.rawValue, objects.bytesPerObject,
                    objects.anonymousBytesPerObject))
        }
        lines += [
            "\nPeak resident growth over W1–W2 (insert \(memory.rows) rows and save, fetch them back), over the "
                + "resident set with the dataset generated:\n",
            "| contender | peak growth | ÷ sqlite-c |", "|---|---:|---:|",
        ]
        let reference = memory.peakGrowth["sqlite-c"].map(Double.init)
        for (id, growth) in memory.peakGrowth.sorted(by: { $0.value < $1.value }) {
            let ratio = reference.map { $0 > 0 ? String(format: "%.2fx", Double(growth) / $0) : "" } ?? ""
            lines.append("| \(id) | \(BenchReport.bytes(growth)) | \(ratio) |")
        }
        return lines.joined(separator: "\n")
    }

    static func targets(_ memory: MemorySectionResult?) -> [CheckResult] {
        let kinds = KnownDriver.allCases
        guard let memory else {
            return [
                CheckResult(
                    source: "memory", target: "memory: at most 400 bytes per live object at rest, on every driver",
                    status: .notMeasured, figure: "the memory section runs in child processes (not with --in-process)"),
                CheckResult(
                    source: "memory", target: "memory: peak resident growth over W1–W2 ≤ 2.5x sqlite-c's",
                    status: .notMeasured, figure: "the memory section runs in child processes (not with --in-process)"),
            ]
        }
        var results: [CheckResult] = []
        let size = memory.rows == 100_000 ? "" : " (at \(memory.rows) objects; the target names 100,000)"
        for kind in kinds {
            let target = "memory: at most 400 bytes per live object at rest on \(kind.rawValue)"
            guard let objects = memory.atRest[kind.rawValue] else {
                results.append(
                    .init(
                        source: "memory", target: target, status: .notMeasured,
                        figure: "strata-\(kind.rawValue) was not run"))
                continue
            }
            results.append(
                .init(
                    source: "memory", target: target,
                    status: objects.bytesPerObject <= bytesPerObjectLimit ? .met : .notMet,
                    figure: String(
                        format: "%.0f bytes per object (%.0f anonymous), %d objects", objects.bytesPerObject,
                        objects.anonymousBytesPerObject, objects.objects) + size))
        }
        for kind in kinds {
            let id = "strata-\(kind.rawValue)"
            let inMemory = storeInMemory.contains(kind)
            let target =
                "memory: peak resident growth over W1–W2 on \(kind.rawValue) ≤ 2.5x sqlite-c's"
                + (inMemory ? " (information: the store itself lives in memory)" : "")
            guard let growth = memory.peakGrowth[id], let reference = memory.peakGrowth["sqlite-c"], reference > 0
            else {
                results.append(
                    .init(
                        source: "memory", target: target, status: .notMeasured,
                        figure: memory.peakGrowth[id] == nil ? "\(id) was not run" : "sqlite-c was not run"))
                continue
            }
            let ratio = Double(growth) / Double(reference)
            results.append(
                .init(
                    source: "memory", target: target,
                    status: inMemory ? .info : ratio <= peakLimit ? .met : .notMet,
                    figure: "\(id) \(BenchReport.bytes(growth)) / sqlite-c \(BenchReport.bytes(reference)) = "
                        + String(format: "%.2fx", ratio) + size, ratio: ratio))
        }
        return results
    }
}
