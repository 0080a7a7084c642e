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

    @Test("damaged Apple-written SQLite stores give a typed error or a result", .enabled(if: FuzzHarness.corpus != nil, "STRATA_CORPUS is not set"))
    func appleSQLite() throws {
        try FuzzHarness.run("apple-sqlite", seed: 0x5017_0002, cases: 1_000)
    }

    @Test("damaged Strata-written XML stores give a typed error or a result, never a crash or a hang")
    func xml() throws {
        try FuzzHarness.run("xml", seed: 0x0C0D_0001, cases: 2_000)
    }

    @Test("damaged Xcode-written XML stores give a typed error or a result", .enabled(if: FuzzHarness.corpus != nil, "STRATA_CORPUS is not set"))
    func appleXML() throws {
        try FuzzHarness.run("apple-xml", seed: 0x0C0D_0002, cases: 500)
    }

    @Test("damaged LMDB stores give a typed error or a result, never a crash or a hang")
    func lmdb() throws {
        try FuzzHarness.run("lmdb", seed: 0x1D0B_0001, cases: 2_000)
    }
}
