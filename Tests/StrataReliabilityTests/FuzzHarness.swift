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
        print("fuzz \(target) seed \(seed): \(report.total) cases, \(report.passed) passed, \(report.failures.count) failed,"
            + " \(report.starts) worker starts; outcomes: \(outcomes.joined(separator: ", "))")
        for group in groups(report.failures) {
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

    /// Failures with the same crash site or message.
    static func groups(_ failures: [CaseWorker.Failure]) -> [(signature: String, failures: [CaseWorker.Failure])] {
        var order: [String] = []
        var byKey: [String: [CaseWorker.Failure]] = [:]
        for failure in failures {
            let key = signature(failure)
            if byKey[key] == nil { order.append(key) }
            byKey[key, default: []].append(failure)
        }
        return order.map { ($0, byKey[$0] ?? []) }
    }

    /// The crash site (the runtime's message and the first frame in the project's sources), or the
    /// failure message with numbers removed.
    static func signature(_ failure: CaseWorker.Failure) -> String {
        let lines = failure.detail.split(separator: "\n").map(String.init)
        guard failure.kind != "fail" else {
            // Paths and numbers differ from case to case; the words around them name the failure.
            let words = failure.detail.split(separator: " ").filter { !$0.contains("/") }.joined(separator: " ")
            return String(words.filter { !$0.isNumber }.prefix(160))
        }
        let message = lines.first { $0.contains("Fatal error") || $0.contains("Program crashed") } ?? lines.first ?? failure.kind
        var cleaned = message.replacingOccurrences(of: "*** ", with: "").replacingOccurrences(of: " ***", with: "")
        if let address = cleaned.range(of: " at 0x") { cleaned = String(cleaned[..<address.lowerBound]) }
        // Frames of the crashed thread: "  3 [ra] 0x… symbol + 12 in image at /path/file.swift:48:79".
        let frames = lines.drop { !$0.contains(" crashed:") }.dropFirst().prefix { !$0.hasPrefix("Thread ") && $0 != "..." }
            .filter { $0.contains(" 0x") }
        // A function repeated down the stack is a recursion that ran out of stack.
        let functions = frames.compactMap { frame -> String? in
            guard let start = frame.range(of: #"0x[0-9a-f]+ "#, options: .regularExpression),
                let end = frame.range(of: " + ", range: start.upperBound..<frame.endIndex)
            else { return nil }
            return String(frame[start.upperBound..<end.lowerBound])
        }
        let counts = Dictionary(functions.map { ($0, 1) }, uniquingKeysWith: +)
        if let (function, count) = counts.max(by: { $0.value < $1.value }), count >= 10 {
            return "\(cleaned): recursion, \(function) repeated \(count) times"
        }
        // The first frame in the project's own sources, else the first frame at all (a C library).
        let location = frames.lazy.compactMap { line -> String? in
            guard let at = line.range(of: " at /") else { return nil }
            let path = line[line.index(before: at.upperBound)...].split(separator: "/")
            guard let top = path.firstIndex(where: { $0 == "Sources" || $0 == "Drivers" }) else { return nil }
            return path[top...].joined(separator: "/")
        }.first ?? functions.first.map { "\($0) (\(frames.first?.components(separatedBy: " in ").last ?? "?"))" }
        return [String(cleaned.prefix(200)), location].compactMap { $0 }.joined(separator: " at ")
    }
}

extension CaseWorkerError {
    static var notBuilt: CaseWorkerError {
        CaseWorkerError(description: "strata-fuzz-worker is not built; run swift build --build-tests")
    }
}
