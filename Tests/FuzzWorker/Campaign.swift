import Foundation
import StrataTesting

/// Long fuzz campaigns outside CI (`scripts/fuzz.sh --minutes N`): runs batches of cases of every
/// target in turn, each batch with the next seed, in children of this executable supervised by
/// `CaseWorker`, until the time is up. A clock decides when to stop here, never in tests.
enum Campaign {
    /// Prints a line at once (print is buffered when standard output is a file or a pipe).
    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    static func run(_ arguments: [String], corpus: String?) -> Int32 {
        let minutes = option("--minutes", in: arguments).flatMap(Double.init) ?? 10
        let batch = option("--batch", in: arguments).flatMap(Int.init) ?? 500
        var targets =
            option("--targets", in: arguments).map { $0.split(separator: ",").map(String.init) }
            ?? FuzzTargets.all.keys.sorted()
        if corpus == nil { targets.removeAll { ["apple-sqlite", "apple-xml", "model-cache"].contains($0) } }
        let unknown = targets.filter { FuzzTargets.all[$0] == nil }
        guard unknown.isEmpty else {
            say("unknown targets: \(unknown.joined(separator: ", ")); see strata-fuzz-worker targets")
            return 64
        }
        let firstSeed =
            option("--seed", in: arguments).flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let deadline = Date().addingTimeInterval(minutes * 60)
        say(
            "campaign: \(minutes) min, targets \(targets.joined(separator: ", ")), seeds from \(firstSeed), \(batch) cases a batch"
        )
        var seed = firstSeed
        var cases = 0
        var failed: [String] = []
        while Date() < deadline {
            for target in targets where Date() < deadline {
                let batchSeed = seed
                var worker = CaseWorker(executable: executable) { first, end in
                    ["run", target, "--seed", "\(batchSeed)", "--from", "\(first)", "--to", "\(end)"]
                        + (corpus.map { ["--corpus", $0] } ?? [])
                }
                worker.backtraces = 20
                do {
                    let report = try worker.run(cases: 0..<batch)
                    cases += report.total
                    say("\(target) seed \(batchSeed): \(report.passed) passed, \(report.failures.count) failed")
                    for group in report.failureGroups {
                        let first = group.failures[0]
                        let line =
                            "  \(group.failures.count) \(first.kind): \(group.signature)\n"
                            + "    replay: scripts/fuzz.sh --replay \(target)/\(batchSeed)/\(first.index)  (\(first.what.prefix(120)))"
                        say(line)
                        failed.append(line)
                    }
                } catch {
                    say("\(target) seed \(batchSeed): the worker could not run: \(error)")
                    failed.append("\(target): \(error)")
                }
                seed &+= 1
            }
        }
        say("campaign done: \(cases) cases, \(failed.count) distinct failures")
        return failed.isEmpty ? 0 : 1
    }
}
