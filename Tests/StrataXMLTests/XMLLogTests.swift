import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

@Suite("XML store logging")
struct XMLLogTests {
    @Test("each save is logged with its size, and with its duration at the timings level; nothing when off")
    func savesAreLogged() throws {
        let directory = try TemporaryDirectory(prefix: "xml-log")
        let statements = try LogCapture().save(into: .xml, at: directory.file("statements.xml"), detail: .statements)
        #expect(
            statements.contains { $0.level == .debug && $0.text.contains("3 inserts, 0 updates, 0 deletes") },
            "\(statements.map(\.text))")
        #expect(!statements.contains { $0.text.contains(" took ") })

        let timed = try LogCapture().save(into: .xml, at: directory.file("timed.xml"), detail: .timings)
        #expect(timed.contains { $0.text.contains("3 inserts") && $0.text.contains(" took ") })

        let silent = try LogCapture().save(into: .xml, at: directory.file("silent.xml"), detail: .off)
        #expect(silent.isEmpty)
    }
}
