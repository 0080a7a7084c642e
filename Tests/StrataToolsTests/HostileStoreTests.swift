import Foundation
import Strata
import StrataSQLite
import StrataTesting
import Testing

/// Writes a SQLite file shaped like a Core Data store without a model cache, whose only entity
/// (number 1) is named `entity` and whose table `ZNOTE` has the column `column`.
private func writeHostileStore(at url: URL, entity: String, column: String) throws {
    func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
    let connection = try SQLiteConnection(path: url.path, mode: .readWriteCreate)
    defer { connection.close() }
    try connection.execute(
        "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
    try connection.execute("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
    try connection.execute(
        "CREATE TABLE ZNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, \(quoted(column)) VARCHAR)")
    try connection.execute("INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT) VALUES (1, 1, 1)")
    let row = try connection.prepare("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (1, ?, 0, 1)")
    try row.bind([.text(entity)])
    try row.step()
}

@Suite("strata with stores whose names carry SQL")
struct HostileStoreTests {
    @Test("inspect and convert refuse a store whose entity or column names carry SQL, and nothing is attached")
    func inspectAndConvert() throws {
        let directory = try TemporaryDirectory()
        let target = directory.file("attached.db")
        let attach = "x); ATTACH DATABASE '\(target.path)' AS p; --"
        let stores = [
            (
                "entity",
                try { () -> URL in
                    let url = directory.file("entity.sqlite")
                    try writeHostileStore(at: url, entity: "Note" + attach, column: "ZTITLE")
                    return url
                }()
            ),
            (
                "column",
                try { () -> URL in
                    let url = directory.file("column.sqlite")
                    try writeHostileStore(at: url, entity: "Note", column: "ZTITLE" + attach)
                    return url
                }()
            ),
        ]
        for (what, url) in stores {
            let inspect = try runStrata(["inspect", url.path])
            #expect(inspect.status == 1, "\(what): \(inspect.stdout) \(inspect.stderr)")
            #expect(inspect.stderr.contains("not an identifier"), "\(what): \(inspect.stderr)")
            for format in ["sqlite", "xml"] {
                let output = directory.file("\(what)-copy.\(format)")
                let convert = try runStrata(["convert", url.path, "\(format):\(output.path)", "--quiet"])
                #expect(convert.status == 1, "\(what) to \(format): \(convert.stdout) \(convert.stderr)")
                #expect(convert.stderr.contains("not an identifier"), "\(what) to \(format): \(convert.stderr)")
                #expect(!FileManager.default.fileExists(atPath: output.path), "\(what) to \(format)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }
}
