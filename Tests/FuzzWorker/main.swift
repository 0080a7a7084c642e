// strata-fuzz-worker: runs numbered fuzz cases for the reliability suite, and the save loops its
// kill tests kill. The suite (Tests/StrataReliabilityTests) spawns it through `CaseWorker`, so that
// a trap ends one case instead of the test run; `scripts/fuzz.sh` runs it for long campaigns and
// replays one case.
//
// Usage:
//   strata-fuzz-worker run TARGET --seed S [--from N] [--to M] [--corpus DIR] [--keep DIR]
//       Runs cases N..<M (default N..<N+1) of TARGET; --keep copies each case's files (the damaged
//       store, the input) to DIR/<case>/ before running it. Case k of seed S is the same on every run, so
//       `--from k --to k+1` replays it alone. Prints "begin k WHAT", then "pass k OUTCOME" or
//       "fail k WHY" (see CaseWorker in StrataTesting).
//   strata-fuzz-worker targets
//       Lists the targets, one per line, with what they do.
//   strata-fuzz-worker campaign --minutes N [--targets a,b] [--seed S] [--batch B] [--corpus DIR]
//       Runs batches of B cases (default 500) of each target in turn with seeds S, S+1, … in
//       children of itself until N minutes have passed; prints every failure with its replay line.
//   strata-fuzz-worker save-loop|key-loop|metadata-loop DRIVER PATH
//       Saves to the store at PATH until killed (KillLoops.swift says what each loop writes).
//   strata-fuzz-worker migration-seed|migration-open|migration-pause|migration-check DRIVER PATH …
//       Writes a store to migrate, migrates it on open (the migration kill test kills this), or
//       says whether it is entirely the old version or entirely the new (MigrationKill.swift).
import Foundation
import StrataTools

KnownDriver.registerAll()
let arguments = Array(CommandLine.arguments.dropFirst())

func usage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("strata-fuzz-worker: \(message)\n".utf8))
    exit(64)
}

func option(_ name: String, in list: [String]) -> String? {
    guard let index = list.firstIndex(of: name), index + 1 < list.count else { return nil }
    return list[index + 1]
}

switch arguments.first {
case "run":
    guard arguments.count >= 2 else { usage("run TARGET --seed S [--from N] [--to M] [--corpus DIR]") }
    guard let seed = option("--seed", in: arguments).flatMap(UInt64.init) else { usage("run needs --seed S") }
    let first = option("--from", in: arguments).flatMap(Int.init) ?? 0
    let end = option("--to", in: arguments).flatMap(Int.init) ?? first + 1
    let corpus = option("--corpus", in: arguments) ?? ProcessInfo.processInfo.environment["STRATA_CORPUS"]
    guard let make = FuzzTargets.all[arguments[1]] else {
        usage("unknown target '\(arguments[1])'; targets: \(FuzzTargets.all.keys.sorted().joined(separator: ", "))")
    }
    do {
        let setup = try TargetSetup(corpus: corpus.map { URL(fileURLWithPath: $0) })
        let target = try make(setup)
        let keep = option("--keep", in: arguments).map { URL(fileURLWithPath: $0) }
        withExtendedLifetime(setup) { CaseRunner.run(target, seed: seed, cases: first..<end, keep: keep) }
    } catch {
        usage("target '\(arguments[1])' could not start: \(error)")
    }
case "campaign":
    exit(
        Campaign.run(
            arguments, corpus: option("--corpus", in: arguments) ?? ProcessInfo.processInfo.environment["STRATA_CORPUS"]
        ))
case "targets":
    for name in FuzzTargets.all.keys.sorted() { print("\(name)\t\(FuzzTargets.summaries[name] ?? "")") }
case "save-loop", "key-loop", "metadata-loop":
    guard arguments.count == 3 else { usage("\(arguments[0]) DRIVER PATH") }
    do {
        try KillLoops.run(arguments[0], driver: arguments[1], path: URL(fileURLWithPath: arguments[2]))
    } catch {
        FileHandle.standardError.write(Data("strata-fuzz-worker: \(error)\n".utf8))
        exit(1)
    }
case "migration-seed", "migration-open", "migration-pause", "migration-check":
    do {
        try MigrationKill.run(arguments)
    } catch {
        FileHandle.standardError.write(Data("strata-fuzz-worker: \(error)\n".utf8))
        exit(1)
    }
default:
    usage(
        "usage: strata-fuzz-worker run TARGET --seed S [--from N] [--to M] | campaign --minutes N | targets | save-loop|key-loop|metadata-loop DRIVER PATH | migration-seed|migration-open|migration-pause|migration-check DRIVER PATH …"
    )
}
