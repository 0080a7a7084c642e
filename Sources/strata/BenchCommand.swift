import ArgumentParser
import Foundation
import StrataTools

/// `strata bench`: the workloads W1–W8 (docs/benchmarks.md) over Strata's drivers on the user's machine.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract:
            "Time the standard workloads (insert, fetch, lookups, filtered fetch, update, delete, graph walk, small saves) on Strata's drivers.",
        discussion: """
            Drivers not linked into this build are skipped and listed. Peers (raw SQLite, raw LMDB, GRDB) \
            are compared in the separate benchmarks package: scripts/bench.sh (docs/benchmarks.md).

            Examples:
              strata bench
              strata bench --drivers sqlite,lmdb --rows 10000 --json
            """)

    @Option(help: "Comma-separated drivers: memory, sqlite, xml, lmdb (default: every linked driver).")
    var drivers: String?

    @Option(help: "Rows of the main workloads, 1,000 to 1,000,000.")
    var rows: Int = 100_000

    @Option(help: "Rounds per workload; medians and minimums are over the rounds.")
    var rounds: Int = 3

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        guard (1_000...1_000_000).contains(rows) else {
            throw ValidationError("--rows must be between 1000 and 1000000 (got \(rows))")
        }
        guard (1...100).contains(rounds) else {
            throw ValidationError("--rounds must be between 1 and 100 (got \(rounds))")
        }
        if let drivers, case .failure(let error) = KnownDriver.parseList(drivers) {
            throw ValidationError(error.message)
        }
    }

    func run() throws {
        var kinds: [KnownDriver] = []
        if let drivers, case .success(let parsed) = KnownDriver.parseList(drivers) { kinds = parsed }
        do {
            let report = try StrataBench.run(drivers: kinds, rows: rows, rounds: rounds) { line in
                FileHandle.standardError.write(Data("strata bench: \(line)\n".utf8))
            }
            if json {
                print(try report.flatJSON())
                return
            }
            print("Strata on \(report.contenders.count) driver(s), \(rows) rows, median of \(rounds) round(s):\n")
            print(report.markdownTable())
            for c in report.contenders {
                print("\n\(c.id): \(c.settings); store after W1: \(BenchReport.bytes(c.bytesOnDisk))")
            }
            for s in report.skipped { print("skipped \(s.id): \(s.reason)") }
        } catch {
            FileHandle.standardError.write(Data("strata bench: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
