import Foundation
import StrataTesting
import Testing

/// Runs a target of `strata-fuzz-worker` through ``CaseWorker`` and turns what it found into test
/// issues: one per distinct failure (same crash site, same message), each with its cases and the
/// command that replays one alone.
enum FuzzHarness {
    /// The worker executable, built beside the test bundle.
    static func worker() throws -> URL {
        var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        var folder = Bundle.main.bundleURL
        for _ in 0..<4 {
            candidates.append(folder)
            folder.deleteLastPathComponent()
        }
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        candidates.append(root.appendingPathComponent(".build/debug"))
        for directory in candidates {
            let url = directory.appendingPathComponent("strata-fuzz-worker")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw CaseWorkerError.notBuilt
    }

    /// The corpus folder, when `STRATA_CORPUS` names one.
    static var corpus: String? { ProcessInfo.processInfo.environment["STRATA_CORPUS"] }

    /// Runs cases `0..<cases` of `target` with `seed` and records an issue per distinct failure.
    ///
    /// - Returns: The report, for tests that check the outcomes too.
    @discardableResult
    static func run(_ target: String, seed: UInt64, cases: Int, timeout: Double = 10) throws -> CaseWorker.Report {
        let directory = try TemporaryDirectory(prefix: "fuzz-\(target)")
        var worker = CaseWorker(executable: try worker()) { first, end in
            ["run", target, "--seed", "\(seed)", "--from", "\(first)", "--to", "\(end)"]
        }
        worker.timeout = timeout
        // Base stores and damaged copies go in the test's directory, even those of a crashed child.
        worker.environment["TMPDIR"] = directory.url.path
        let report = try worker.run(cases: 0..<cases)
        let outcomes = report.outcomes.sorted { $0.value > $1.value }.prefix(8).map { "\($0.value) \($0.key)" }
        print(
            "fuzz \(target) seed \(seed): \(report.total) cases, \(report.passed) passed, \(report.failures.count) failed,"
                + " \(report.starts) worker starts; outcomes: \(outcomes.joined(separator: ", "))")
        for group in report.failureGroups {
            let examples = group.failures.prefix(5).map { "\($0.index)" }.joined(separator: ", ")
            let first = group.failures[0]
            Issue.record(
                """
                \(target): \(group.failures.count) case\(group.failures.count == 1 ? "" : "s") \(first.kind): \(group.signature)
                seed \(seed), cases \(examples)\(group.failures.count > 5 ? ", …" : "")
                replay: scripts/fuzz.sh --replay \(target)/\(seed)/\(first.index)
                case \(first.index): \(first.what)
                \(first.detail.split(separator: "\n").prefix(24).joined(separator: "\n"))
                """)
        }
        return report
    }
}

extension CaseWorkerError {
    static var notBuilt: CaseWorkerError {
        CaseWorkerError(description: "strata-fuzz-worker is not built; run swift build --build-tests")
    }
}
