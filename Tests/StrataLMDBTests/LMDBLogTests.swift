import Foundation
import Strata
import StrataLMDB
import StrataTesting
import Testing

@Suite("LMDB store logging")
struct LMDBLogTests {
    @Test("each save is logged with its size, and with its duration at the timings level; nothing when off")
    func savesAreLogged() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-log")
        let statements = try LogCapture().save(into: .lmdb, at: directory.file("statements.lmdb"), detail: .statements)
        #expect(
            statements.contains { $0.level == .debug && $0.text.contains("3 inserts, 0 updates, 0 deletes") },
            "\(statements.map(\.text))")
        #expect(!statements.contains { $0.text.contains(" took ") })

        let timed = try LogCapture().save(into: .lmdb, at: directory.file("timed.lmdb"), detail: .timings)
        #expect(timed.contains { $0.text.contains("3 inserts") && $0.text.contains(" took ") })

        let silent = try LogCapture().save(into: .lmdb, at: directory.file("silent.lmdb"), detail: .off)
        #expect(silent.isEmpty)
    }
}
