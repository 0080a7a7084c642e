import Foundation
import StrataTesting
import Testing

/// Damaged stores of every file driver, in a child process: each case copies a valid store, damages
/// it (format-aware and raw), then runs `strata inspect`, `export` and `validate` on it, opens it,
/// fetches, fires faults, walks relationships, changes, saves and reopens. A typed error or a
/// result passes; a signal, a hang (10 s) or an error of another type fails, with its seed and case.
@Suite("Damaged-store fuzzing")
struct DamagedStoreFuzzTests {
    @Test("damaged Strata-written SQLite stores give a typed error or a result, never a crash or a hang")
    func sqlite() throws {
        try FuzzHarness.run("sqlite", seed: 0x5017_0001, cases: 2_000)
    }

    @Test(
        "damaged Apple-written SQLite stores give a typed error or a result",
        .enabled(if: FuzzHarness.corpus != nil, "STRATA_CORPUS is not set"))
    func appleSQLite() throws {
        try FuzzHarness.run("apple-sqlite", seed: 0x5017_0002, cases: 1_000)
    }

    @Test("damaged Strata-written XML stores give a typed error or a result, never a crash or a hang")
    func xml() throws {
        try FuzzHarness.run("xml", seed: 0x0C0D_0001, cases: 2_000)
    }

    @Test(
        "damaged Xcode-written XML stores give a typed error or a result",
        .enabled(if: FuzzHarness.corpus != nil, "STRATA_CORPUS is not set"))
    func appleXML() throws {
        try FuzzHarness.run("apple-xml", seed: 0x0C0D_0002, cases: 500)
    }

    @Test("damaged LMDB stores give a typed error or a result, never a crash or a hang")
    func lmdb() throws {
        try FuzzHarness.run("lmdb", seed: 0x1D0B_0001, cases: 2_000)
    }
}

/// The `strata` binary itself on damaged stores: the library calls the damaged-store cases make
/// are the ones behind these commands, and this checks the command layer on top: an exit status of
/// docs/cli.md (64 when the damage leaves no model and `--model` is the way out) with a message on
/// standard error, never a signal.
@Suite("strata on damaged stores")
struct DamagedStoreCommandTests {
    @Test(
        "strata inspect, export and validate on damaged stores exit 0, 1, 2 or 64 with a message, never a signal",
        arguments: [
            ("sqlite", "sqlite"), ("xml", "xml"), ("lmdb", "lmdb"),
        ])
    func commands(_ target: String, _ scheme: String) throws {
        let seed: UInt64 = 0xC11_0000 + UInt64(["sqlite", "xml", "lmdb"].firstIndex(of: target) ?? 0)
        print("strata on damaged \(target) stores: seed \(seed)")
        let directory = try TemporaryDirectory(prefix: "fuzz-commands")
        let kept = directory.file("kept")
        var worker = CaseWorker(executable: try FuzzHarness.worker()) { first, end in
            ["run", target, "--seed", "\(seed)", "--from", "\(first)", "--to", "\(end)", "--keep", kept.path]
        }
        worker.environment["TMPDIR"] = directory.url.path
        _ = try worker.run(cases: 0..<25)
        let strata = try ChildProcess.executable("strata")
        var checked = 0
        for case_ in 0..<25 {
            let folder = kept.appendingPathComponent("\(case_)")
            guard
                let file = try FileManager.default.contentsOfDirectory(atPath: folder.path).first(where: {
                    !$0.hasSuffix("-lock")
                })
            else { continue }
            let store = "\(scheme):\(folder.appendingPathComponent(file).path)"
            for command in [
                ["inspect", store], ["export", store, "--output", directory.file("out.json").path],
                ["validate", store],
            ] {
                let run = try ChildProcess.run(strata, command, killAfter: nil)
                let label = "seed \(seed), case \(case_): strata \(command[0])"
                #expect(
                    !run.killed && [0, 1, 2, 64].contains(run.status),
                    "\(label) exited \(run.status)\(run.killed ? " (signal)" : ""): \(run.errors.suffix(400))")
                if run.status != 0 {
                    #expect(run.errors.hasPrefix("strata \(command[0]): "), "\(label): \(run.errors.prefix(300))")
                }
            }
            checked += 1
        }
        #expect(checked == 25, "\(checked) damaged stores were kept")
    }
}
