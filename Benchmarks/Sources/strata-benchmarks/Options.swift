import Foundation
import StrataTools

/// Command-line options of `strata-benchmarks` (parsed by hand: the package needs no parser).
struct Options {
    var rows = 100_000
    var rounds = 5
    /// Times the whole list of contenders runs, one after another; each contender's rounds of all
    /// passes are pooled, so a slow spell on the machine falls on every contender alike.
    var passes = 1
    var contenders: [String] = ContenderCatalog.all
    var output: URL
    var check = false
    var checkFile: URL?
    var child: String?
    var inProcess = false
    /// The XML store a memory-at-rest child opens.
    var store: URL?
    /// Run the contexts section too.
    var contexts = false
    /// A PostgreSQL writer child's store and saves (the scaling run).
    var writerURL: URL?
    var writerSaves = 0
    /// Saves per writer process in the PostgreSQL writer-processes run.
    var scalingSaves = 200
    /// Run the migration section too.
    var migration = false
    /// Run the results section too.
    var results = false
    /// Rows of the results section's batched walk.
    var walkRows = 1_000_000
    /// Run the scaling run (W1, W2, W3, W8 at ``scalingRows``) instead of the workloads.
    var scaling = false
    /// Store sizes of the scaling run.
    var scalingRows = RowScaling.defaultSizes
    /// The tool section's sizes (`--tool`, `--tool-rows`), or `nil` when it does not run.
    var toolSizes: [Int]?

    static let usage = """
        usage: strata-benchmarks [--rows N] [--rounds R] [--passes P] [--contenders a,b,…] [--out DIR] [--check]
               strata-benchmarks --scaling [--scaling-rows a,b,…] [--rounds R] [--contenders a,b,…] [--check]
               strata-benchmarks --check-file results.json

          --rows N         rows of W1–W6 and W8, 1000…1000000 (default 100000)
          --rounds R       rounds per workload; medians and minimums are over them (default 5)
          --passes P       run the contender list P times in turn and pool each contender's rounds
                           (P × R samples per workload; default 1); steadier ratios on a busy machine
          --contenders …   any of \(ContenderCatalog.all.joined(separator: ", ")) (default: all)
          --out DIR        where results.md, results.json, chart.svg go (default Benchmarks/results)
          --check          after running, judge the targets on ratios of minimums; exit 1 if one is not met
          --check-file F   only judge the targets on an earlier results.json (or scaling.json)
          --in-process     run every contender in this process (no peak-memory or memory figures)
          --contexts       also run the contexts section (child saves, merges, DataAccess, a view
                           context's memory over 100 fetch-and-drop cycles), on SQLite
          --migration      also run the migration section (adding an optional attribute to a SQLite
                           store of 1,000,000 rows against ALTER TABLE by hand; a copying LMDB
                           migration's peak memory at 100,000 and 1,000,000 rows); with
                           --contenders none, only the sections run
          --scaling-saves N saves per writer process in the PostgreSQL writer run (default 200)
          --results        also run the results section (batch insert against raw C inserts, a
                           fetched results controller against a refetch, on SQLite; peak memory of
                           walking --walk-rows rows with fetchBatchSize 500, on SQLite and LMDB)
          --walk-rows N    rows of the batched walk, 1000…10000000 (default 1000000)
          --scaling        instead of the workloads: W1, W2, W3 and W8 at each size of
                           --scaling-rows for every contender, charted as time per object against
                           rows (scaling.md, scaling.json, scaling.svg)
          --scaling-rows … store sizes of --scaling, each 1000…10000000 (default 10000,100000,1000000);
                           above 1000000 only the SQLite and LMDB contenders run, when the disk and
                           memory allow

          --tool           also run the tool section (strata convert, export, import and validate at
                           10,000 and 100,000 rows on every driver, each in a child process, against
                           the driver's W1 and the read-back of the copy)
          --tool-rows A,B  the tool section's sizes, each 1000…1000000 (implies --tool)

        The memory section (objects at rest per driver, each contender's peak over W1–W2) and the
        parallel readers (two contexts on two threads against one) run with every run not
        --in-process, on the drivers whose strata- contender is among the contenders. The XML
        section (open and save against libxml2's reader and write + fsync) runs when strata-xml or
        driver-xml is among the contenders. PostgreSQL contenders (strata-postgres, driver-postgres,
        libpq-c) run on a throwaway server the run starts (initdb and pg_ctl, durable defaults, a
        free loopback port), or on the server STRATA_BENCH_POSTGRES names; with strata-postgres, the
        writer-processes run (1, 2 and 4 writer processes) follows.
        """

    static func parse(_ arguments: [String]) throws -> Options {
        let defaultOut =
            FileManager.default.fileExists(atPath: "Benchmarks/Package.swift")
            ? "Benchmarks/results" : "benchmark-results"
        var options = Options(output: URL(fileURLWithPath: defaultOut))
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let v = rest.popFirst() else { throw BenchError("\(flag) needs a value\n\(usage)") }
            return v
        }
        while let arg = rest.popFirst() {
            switch arg {
            case "--rows":
                guard
                    let n = Int(
                        try value(arg).replacingOccurrences(of: ",", with: "").replacingOccurrences(of: "_", with: "")),
                    (1_000...1_000_000).contains(n)
                else { throw BenchError("--rows must be a number from 1000 to 1000000") }
                options.rows = n
            case "--rounds":
                guard let n = Int(try value(arg)), (1...100).contains(n) else {
                    throw BenchError("--rounds must be 1…100")
                }
                options.rounds = n
            case "--passes":
                guard let n = Int(try value(arg)), (1...20).contains(n) else {
                    throw BenchError("--passes must be 1…20")
                }
                options.passes = n
            case "--contenders":
                let given = try value(arg)
                let list =
                    given == "none" ? [] : given.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                for id in list where !ContenderCatalog.all.contains(id) && id != ContenderCatalog.baseline {
                    throw BenchError(
                        "unknown contender '\(id)'; known: \(ContenderCatalog.all.joined(separator: ", "))")
                }
                options.contenders = list
            case "--out": options.output = URL(fileURLWithPath: try value(arg))
            case "--check": options.check = true
            case "--check-file": options.checkFile = URL(fileURLWithPath: try value(arg))
            case "--child": options.child = try value(arg)
            case "--in-process": options.inProcess = true
            case "--contexts": options.contexts = true
            case "--migration": options.migration = true
            case "--results": options.results = true
            case "--walk-rows":
                guard
                    let n = Int(
                        try value(arg).replacingOccurrences(of: ",", with: "").replacingOccurrences(of: "_", with: "")),
                    (1_000...10_000_000).contains(n)
                else { throw BenchError("--walk-rows must be a number from 1000 to 10000000") }
                options.walkRows = n
            case "--scaling": options.scaling = true
            case "--scaling-rows":
                let sizes = try value(arg).split(separator: ",").map {
                    Int($0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: ""))
                }
                guard !sizes.isEmpty, sizes.allSatisfy({ $0.map { (1_000...10_000_000).contains($0) } ?? false })
                else {
                    throw BenchError("--scaling-rows must be a comma-separated list of numbers from 1000 to 10000000")
                }
                options.scalingRows = Array(Set(sizes.compactMap { $0 })).sorted()
            case "--tool": options.toolSizes = options.toolSizes ?? ToolSectionRun.defaultSizes
            case "--tool-rows":
                let sizes = try value(arg).split(separator: ",").map {
                    Int($0.replacingOccurrences(of: "_", with: "").trimmingCharacters(in: .whitespaces))
                }
                guard !sizes.isEmpty, sizes.allSatisfy({ $0.map { (1_000...1_000_000).contains($0) } ?? false }) else {
                    throw BenchError("--tool-rows takes sizes from 1000 to 1000000, separated by commas")
                }
                options.toolSizes = sizes.compactMap { $0 }.sorted()
            case "--store": options.store = URL(fileURLWithPath: try value(arg))
            case "--writer-url": options.writerURL = URL(string: try value(arg))
            case "--writer-saves":
                guard let n = Int(try value(arg)), n > 0 else {
                    throw BenchError("--writer-saves must be a positive number")
                }
                options.writerSaves = n
            case "--scaling-saves":
                guard let n = Int(try value(arg)), (1...100_000).contains(n) else {
                    throw BenchError("--scaling-saves must be 1…100000")
                }
                options.scalingSaves = n
            case "-h", "--help": throw BenchError(usage)
            default: throw BenchError("unknown option '\(arg)'\n\(usage)")
            }
        }
        return options
    }
}
