import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataXML

/// A save copies the bytes of key chunks no change touched from the file it replaces: the file
/// must come out exactly as if every object had been encoded.
@Suite("XML chunk reuse")
struct XMLChunkReuseTests {
    let model = ConformanceModel.model

    /// `count` employees with keys from `first`, as one insert batch.
    private func inserts(_ keys: ClosedRange<Int64>, salt: String = "") throws -> ChangeBatch {
        let employee = try #require(model.entity(named: "Employee"))
        var batch = ChangeBatch()
        for key in keys {
            var values = employee.defaultValues
            values[employee.index(ofProperty: "name")!] = .string("employee \(key)\(salt) <&>")  // in the model
            values[employee.index(ofProperty: "age")!] = .integer(key % 90)  // in the model
            batch.inserts.append(
                RowSnapshot(id: RowID(entity: employee.entityNumber, primaryKey: key), version: 1, values: values))
        }
        return batch
    }

    /// An update of the name of the `entity` row with `key`.
    private func rename(_ driver: XMLDriver, _ entity: String = "Employee", key: Int64, to name: String) throws
        -> ChangeBatch
    {
        let description = try #require(model.entity(named: entity))
        let slot = try #require(description.index(ofProperty: "name"))
        let row = try #require(try driver.rows(for: [RowID(entity: description.entityNumber, primaryKey: key)]).first)
        var values = row.values
        values[slot] = .string(name)
        var batch = ChangeBatch()
        batch.updates.append(RowUpdate(id: row.id, expectedVersion: row.version, values: values, changedSlots: [slot]))
        return batch
    }

    /// The file must hold exactly what encoding the driver's whole state gives.
    private func expectWholeEncoding(_ driver: XMLDriver, _ url: URL, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let bytes = try Data(contentsOf: url)
        let text = String(decoding: bytes, as: UTF8.self)
        let open = try #require(text.range(of: "<nextObjectID>"))
        let close = try #require(text.range(of: "</nextObjectID>"))
        let next = try #require(Int64(text[open.upperBound..<close.lowerBound]))
        var writer = XMLByteWriter()
        try XMLStoreEncoder(model: model).write(
            driver.engine.snapshot, nextObjectID: next, store: url.path, to: &writer, cores: 1)
        #expect(
            Data(writer.buffer) == bytes, "the saved file differs from a whole encoding", sourceLocation: sourceLocation
        )
    }

    @Test("saves after opening and after saving copy untouched chunks and write the same bytes as a whole encoding")
    func sameBytes() throws {
        let directory = try TemporaryDirectory(prefix: "xml-reuse")
        let url = directory.file("store.xml")
        var driver = try XMLTestSupport.driver(at: url)
        _ = try driver.apply(try inserts(1...20_000))
        #expect(driver.lastSaveCopiedBytes == 0)  // a new file: nothing to copy from
        try expectWholeEncoding(driver, url)

        // After a save: one changed row re-encodes one chunk; the rest is copied.
        _ = try driver.apply(try rename(driver, key: 5_000, to: "renamed & moved"))
        let size = try Data(contentsOf: url).count
        #expect(driver.lastSaveCopiedBytes > size * 3 / 4)
        try expectWholeEncoding(driver, url)

        // Inserts into a new chunk, deletes emptying a chunk, and an update, in one batch.
        var batch = try inserts(30_000...30_010, salt: " new")
        batch.updates = try rename(driver, key: 20_000, to: "last").updates
        let employee = try #require(model.entity(named: "Employee"))
        for key in Int64(8_192)..<12_288 {  // the whole of chunk 2
            let row = try #require(try driver.rows(for: [RowID(entity: employee.entityNumber, primaryKey: key)]).first)
            batch.deletes.append(RowDelete(id: row.id, expectedVersion: row.version))
        }
        _ = try driver.apply(batch)
        #expect(driver.lastSaveCopiedBytes > 0)
        try expectWholeEncoding(driver, url)
        try driver.close()

        // Reopened: the positions come from the lines the load saw.
        driver = try XMLTestSupport.driver(at: url)
        _ = try driver.apply(try rename(driver, key: 1, to: "first"))
        #expect(driver.lastSaveCopiedBytes > 0)
        try expectWholeEncoding(driver, url)
        try driver.close()
        let reopened = try XMLTestSupport.driver(at: url, options: StoreOptions(isReadOnly: true))
        let rows = try XMLTestSupport.allRows(reopened, model: model)
        #expect(rows.count == 20_000 - 4_096 + 11)
        let nameSlot = try #require(employee.index(ofProperty: "name"))
        #expect(rows[RowID(entity: employee.entityNumber, primaryKey: 1)]?.values[nameSlot] == .string("first"))
        #expect(
            rows[RowID(entity: employee.entityNumber, primaryKey: 5_000)]?.values[nameSlot]
                == .string("renamed & moved"))
        #expect(rows[RowID(entity: employee.entityNumber, primaryKey: 9_000)] == nil)
        try reopened.close()
    }

    @Test("a store file replaced behind the driver's back is not copied from")
    func replacedFile() throws {
        let directory = try TemporaryDirectory(prefix: "xml-reuse-replaced")
        let url = directory.file("store.xml")
        let driver = try XMLTestSupport.driver(at: url)
        _ = try driver.apply(try inserts(1...10_000))
        // Another file with the same keys and other names, renamed over the store.
        let other = directory.file("other.xml")
        let stranger = try XMLTestSupport.driver(at: other)
        _ = try stranger.apply(try inserts(1...10_000, salt: " (stranger)"))
        try stranger.close()
        #expect(Glibc.rename(other.path, url.path) == 0)
        _ = try driver.apply(try rename(driver, key: 1, to: "mine"))
        #expect(driver.lastSaveCopiedBytes == 0)
        try expectWholeEncoding(driver, url)
        #expect(try !XMLTestSupport.text(url).contains("stranger"))
        try driver.close()
    }

    @Test("objects laid out by someone else are not copied when markup could mislead the search for chunks")
    func foreignLayout() throws {
        let directory = try TemporaryDirectory(prefix: "xml-reuse-foreign")
        let z1 =
            "        <object type=\"TAG\" id=\"z1\"><attribute name=\"name\" type=\"string\">one</attribute></object>"
        let z8192 =
            "        <object type=\"TAG\" id=\"z8192\"><attribute name=\"name\" type=\"string\">farther</attribute></object>"
        let layouts = [
            // A comment among the objects (it could hold text that looks like an object).
            "comment": [
                z1, "        <!-- <object type=\"TAG\" id=\"z4096\"> -->",
                "        <object type=\"TAG\" id=\"z4096\"><attribute name=\"name\" type=\"string\">far</attribute></object>",
                z8192,
            ],
            // Chunk 1 (z4096) starts on the line where z1 (chunk 0) ends.
            "shared line": [
                z1.replacingOccurrences(of: "</object>", with: ""),
                "        </object><object type=\"TAG\" id=\"z4096\"><attribute name=\"name\" type=\"string\">far</attribute></object>",
                z8192,
            ],
        ]
        for (name, lines) in layouts {
            let url = try XMLTestSupport.write(
                XMLTestSupport.appleStyle(lines.joined(separator: "\n"), nextObjectID: 9_000), in: directory,
                name: "\(name).xml")
            let driver = try XMLTestSupport.driver(at: url)
            _ = try driver.apply(try rename(driver, "Tag", key: 8_192, to: "changed"))
            #expect(driver.lastSaveCopiedBytes == 0, "\(name)")
            try expectWholeEncoding(driver, url)
            // Now in our own layout: the next save copies the chunks it did not change.
            _ = try driver.apply(try rename(driver, "Tag", key: 1, to: "uno"))
            #expect(driver.lastSaveCopiedBytes > 0, "\(name)")
            try expectWholeEncoding(driver, url)
            try driver.close()
        }
    }

    @Test("a file written elsewhere, one object per line, is copied from as it is")
    func foreignCopied() throws {
        let directory = try TemporaryDirectory(prefix: "xml-reuse-lines")
        let objects = """
                <object type="TAG" id="z1"><attribute name="name" type="string">one</attribute></object>
                <object type="TAG" id="z2"><attribute name="name" type="string">two</attribute></object>
                <object type="TAG" id="z4096"><attribute name="name" type="string">far</attribute></object>
            """
        let url = try XMLTestSupport.write(XMLTestSupport.appleStyle(objects, nextObjectID: 9_000), in: directory)
        let driver = try XMLTestSupport.driver(at: url)
        _ = try driver.apply(try rename(driver, "Tag", key: 4_096, to: "changed"))
        #expect(driver.lastSaveCopiedBytes > 0)
        let text = try XMLTestSupport.text(url)
        #expect(
            text.contains(
                "<object type=\"TAG\" id=\"z1\"><attribute name=\"name\" type=\"string\">one</attribute></object>"))
        try driver.close()
        let reopened = try XMLTestSupport.driver(at: url, options: StoreOptions(isReadOnly: true))
        let tag = try #require(model.entity(named: "Tag"))
        let slot = try #require(tag.index(ofProperty: "name"))
        let rows = try XMLTestSupport.allRows(reopened, model: model)
        #expect(rows.count == 3)
        #expect(rows[RowID(entity: tag.entityNumber, primaryKey: 2)]?.values[slot] == .string("two"))
        #expect(rows[RowID(entity: tag.entityNumber, primaryKey: 4_096)]?.values[slot] == .string("changed"))
        try reopened.close()
    }
}
