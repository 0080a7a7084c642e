import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

/// Damaged or hostile files: numbers at the edges of 64 bits and nesting without end become
/// corrupt errors naming the store, or open and refuse only what cannot be done; never a trap.
@Suite("XML hostile files")
struct XMLHostileFileTests {
    /// A Tag object with id `id` (and `pk` when given).
    static func tag(_ id: String, pk: String? = nil) -> String {
        "<object type=\"TAG\" id=\"\(id)\"\(pk.map { " pk=\"\($0)\"" } ?? "")><attribute name=\"name\" type=\"string\">t</attribute></object>"
    }

    @Test(
        "object ids and keys that are not positive 64-bit numbers are refused as corrupt",
        arguments: [
            ("z0", nil), ("z-1", nil), ("z9223372036854775808", nil), ("z99999999999999999999999", nil), ("z", nil),
            ("z1", "0"), ("z1", "-4"), ("z1", "9223372036854775808"),
        ] as [(String, String?)])
    func badIDs(_ id: String, _ pk: String?) throws {
        let directory = try TemporaryDirectory(prefix: "xml-bad-id")
        let url = try XMLTestSupport.write(XMLTestSupport.appleStyle(Self.tag(id, pk: pk)), in: directory)
        let error = try #require(XMLTestSupport.openError(url))
        #expect(error.code == .corrupt)
        #expect(error.store == url.path)
        #expect(
            error.message.contains(pk == nil ? "expected an object id" : "expected a positive integer in pk"),
            "\(error.message)")
    }

    @Test(
        "a file whose ids reach Int64.max opens, saves, and refuses to allocate a key with a corrupt error",
        arguments: [
            (Self.tag("z9223372036854775807"), 200),
            (Self.tag("z5", pk: "9223372036854775807"), 200),
            (Self.tag("z5"), Int.max),
        ])
    func idsAtTheLimit(_ objects: String, _ nextObjectID: Int) throws {
        let directory = try TemporaryDirectory(prefix: "xml-max-id")
        let url = try XMLTestSupport.write(
            XMLTestSupport.appleStyle(objects, nextObjectID: nextObjectID), in: directory)
        let model = ConformanceModel.model
        let tag = try #require(model.entity(named: "Tag"))
        let driver = try XMLTestSupport.driver(at: url)
        let row = try #require(try driver.fetch(StoreFetch(entity: tag)).rows.first)
        var values = row.values
        values[0] = .string("still saves")
        var batch = ChangeBatch()
        batch.updates = [RowUpdate(id: row.id, expectedVersion: row.version, values: values, changedSlots: [0])]
        _ = try driver.apply(batch)
        do {
            let keys = try driver.allocatePrimaryKeys(forEntity: tag.entityNumber, count: 1)
            Issue.record("handed out \(keys) past Int64.max")
        } catch let error as StoreError {
            #expect(error.code == .corrupt)
            #expect(error.store == url.path)
            #expect(error.message.contains("used up"), "\(error.message)")
        }
        try driver.close()
        #expect(try XMLTestSupport.text(url).contains("still saves"))
    }

    @Test("a reservation near Int64.max stops at it instead of wrapping")
    func reservationSaturates() throws {
        let directory = try TemporaryDirectory(prefix: "xml-near-max")
        let url = try XMLTestSupport.write(
            XMLTestSupport.appleStyle(Self.tag("z5"), nextObjectID: Int(Int64.max - 10)), in: directory)
        let tag = try #require(ConformanceModel.model.entity(named: "Tag"))
        let driver = try XMLTestSupport.driver(at: url)
        let keys = try driver.allocatePrimaryKeys(forEntity: tag.entityNumber, count: 4)
        #expect(keys == (Int64.max - 10)...(Int64.max - 7))
        #expect(
            storeErrorCode { _ = try driver.allocatePrimaryKeys(forEntity: tag.entityNumber, count: 10) } == .corrupt)
        try driver.close()
        #expect(try XMLTestSupport.text(url).contains("<nextObjectID>9223372036854775807</nextObjectID>"))
    }

    @Test("metadata nested without end is refused as corrupt at a fixed depth", arguments: [100, 100_000])
    func deepMetadata(_ depth: Int) throws {
        let directory = try TemporaryDirectory(prefix: "xml-deep-metadata")
        let nested = String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth)
        let text = XMLTestSupport.appleStyle(Self.tag("z1")).replacingOccurrences(
            of: "<metadata></metadata>", with: "<metadata><plist version=\"1.0\">\(nested)</plist></metadata>")
        let url = try XMLTestSupport.write(text, in: directory)
        let error = try #require(XMLTestSupport.openError(url))
        #expect(error.code == .corrupt)
        #expect(error.message.contains("nested at most 64 deep"), "\(error.message.prefix(300))")
        #expect(storeErrorCode { _ = try XMLDriverFactory().metadata(at: url, options: StoreOptions()) } == .corrupt)
        #expect(
            storeErrorCode { _ = try XMLDriverFactory().recoverModel(at: url, options: StoreOptions()) } == .corrupt)
    }

    @Test("metadata nested as deep as allowed still opens")
    func allowedMetadataDepth() throws {
        let directory = try TemporaryDirectory(prefix: "xml-ok-metadata")
        // The top dictionary and 62 arrays: 63 levels of containers.
        let nested =
            String(repeating: "<array>", count: 62) + "<integer>1</integer>" + String(repeating: "</array>", count: 62)
        let text = XMLTestSupport.appleStyle(Self.tag("z1")).replacingOccurrences(
            of: "<metadata></metadata>",
            with: "<metadata><plist version=\"1.0\"><dict><key>deep</key>\(nested)</dict></plist></metadata>")
        let url = try XMLTestSupport.write(text, in: directory)
        #expect(XMLTestSupport.openError(url) == nil)
    }
}
