import Foundation
import StrataTesting
import Testing

/// The parsers of data from files and users, in a child process: mutated valid inputs, inputs
/// damaged in their structure, and generated ones. A result or a typed error passes.
@Suite("Parser fuzzing")
struct ParserFuzzTests {
    @Test("JSON interchange files parse, check and import or give a typed error")
    func json() throws {
        try FuzzHarness.run("json", seed: 0x15_0001, cases: 2_000)
    }

    @Test("Xcode model contents files load or give a ModelError, and a loaded model survives its archive")
    func modelXML() throws {
        try FuzzHarness.run("model-xml", seed: 0x30DE_0001, cases: 2_000)
    }

    @Test("embedded model archives decode or give a ModelError")
    func modelArchive() throws {
        try FuzzHarness.run("model-archive", seed: 0x30DE_0002, cases: 2_000)
    }

    @Test(
        "Apple model caches (keyed archives) decode or give a typed error",
        .enabled(if: FuzzHarness.corpus != nil, "STRATA_CORPUS is not set"))
    func modelCache() throws {
        try FuzzHarness.run("model-cache", seed: 0x30DE_0003, cases: 1_000)
    }

    @Test("SQLite stores with a damaged Z_METADATA open or give a typed error")
    func sqliteMetadata() throws {
        try FuzzHarness.run("sqlite-metadata", seed: 0x5017_0003, cases: 1_000)
    }

    @Test("XML stores with a damaged metadata property list open or give a typed error")
    func xmlMetadata() throws {
        try FuzzHarness.run("xml-metadata", seed: 0x0C0D_0003, cases: 1_000)
    }

    @Test("ISO 8601 timestamps parse or are refused, and every date written reads back")
    func iso8601() throws {
        try FuzzHarness.run("iso8601", seed: 0x8601_0001, cases: 3_000)
    }

    @Test("store locations parse or give a usage error")
    func storeLocation() throws {
        try FuzzHarness.run("store-location", seed: 0x10CA_0001, cases: 2_000)
    }

    @Test("%K key paths parse or give a predicate error, print back to the same predicate, and fetch")
    func keyPath() throws {
        try FuzzHarness.run("keypath", seed: 0x4B_0001, cases: 2_000)
    }
}
