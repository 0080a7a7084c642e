import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

@Suite("XML reader fuzzing")
struct XMLFuzzTests {
    static let tokens: [String] = [
        "<", ">", "&", "&amp;", "&#0;", "&#x1;", "]]>", "z99999", "z0", "\"", "'", "<object type=\"TAG\" id=\"z1\">",
        "</object>", "<!DOCTYPE database [<!ENTITY a \"aaaaaaaa\">]>", "&a;", "\u{0}", "<![CDATA[x]]>",
        "idrefs=\"z1 z2 z3\"", "type=\"int16\"", "99999999999999999999", "<attribute name=\"name\" type=\"string\">",
        "</attribute>", "<relationship name=\"items\" type=\"0/0\" destination=\"ITEM\" idrefs=\"z2\"/>", "<!-- c -->",
        "<?pi x?>", "<plist version=\"1.0\"><dict><key>k</key></dict></plist>", "\u{FEFF}", "é", "\r\n", "<dict>",
        "<data>!</data>",
    ]

    static func mutate(_ bytes: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard !bytes.isEmpty else { break }
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 1: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...40, using: &random)))
            case 2:
                let end = min(bytes.count, at + Int.random(in: 1...80, using: &random))
                bytes.insert(contentsOf: bytes[at..<end], at: Int.random(in: 0...bytes.count, using: &random))
            // tokens is not empty
            case 3: bytes.insert(contentsOf: Array(tokens.randomElement(using: &random)!.utf8), at: at)
            case 4: bytes.removeSubrange(at...)
            default:
                if let digit = bytes[at...].firstIndex(where: { (0x30...0x39).contains($0) }) {
                    bytes[digit] = UInt8.random(in: 0x30...0x39, using: &random)
                }
            }
        }
        return bytes
    }

    @Test("mutated corpus and generated stores never crash the reader: they open or fail with a StoreError")
    func fuzz() throws {
        let directory = try TemporaryDirectory(prefix: "xml-fuzz")
        var seeds: [(bytes: [UInt8], model: ManagedObjectModel)] = []
        let generated = try XMLTestSupport.seededStore(in: directory)
        seeds.append((Array(try Data(contentsOf: generated)), ConformanceModel.model))
        let sample = XMLTestSupport.appleStyle(
            #"""
            <object type="TAG" id="z1"><attribute name="name" type="string">a &amp; b</attribute><relationship name="items" type="0/0" destination="ITEM" idrefs="z2"></relationship></object>
            <object type="ITEM" id="z2"><attribute name="date" type="date">445103622.25</attribute><attribute name="binary" type="binary">AAEC</attribute><relationship name="tags" type="0/0" destination="TAG" idrefs="z1"></relationship></object>
            """#)
        seeds.append((Array(sample.utf8), ConformanceModel.model))
        if let corpus = XMLCorpusTests.corpus {
            let url = URL(fileURLWithPath: corpus).appendingPathComponent(
                "xml/alemar11__CoreDataPlus__V2toV3.xcmapping.xml")
            let model = try #require(try XMLDriverFactory().recoverModel(at: url, options: StoreOptions())).model
            seeds.append((Array(try Data(contentsOf: url)), model))
        }
        // A fixed seed and count; STRATA_FUZZ_SEED and STRATA_FUZZ_RUNS run others (the suite in
        // StrataReliabilityTests covers damaged XML stores at length, in a child process).
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["STRATA_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x0C0D_F022
        let count = environment["STRATA_FUZZ_RUNS"].flatMap(Int.init) ?? 1_500
        print("XML reader fuzzing: seed \(seed), \(count) runs")
        var random = SeededGenerator(seed: seed)
        let url = directory.file("fuzzed.xml")
        var runs = 0
        var opened = 0
        while runs < count {
            let (bytes, model) = seeds.randomElement(using: &random)!  // seeds is not empty
            try Data(Self.mutate(bytes, &random)).write(to: url)
            runs += 1
            do {
                let driver = try XMLTestSupport.driver(at: url, model: model, options: StoreOptions(isReadOnly: true))
                _ = try XMLTestSupport.allRows(driver, model: model)
                try driver.close()
                opened += 1
            } catch let error as StoreError {
                #expect(error.code == .corrupt, "seed \(seed), run \(runs): \(error)")
                #expect(error.message.hasPrefix(url.path + ":"), "seed \(seed), run \(runs): \(error.message)")
            }
            do {
                _ = try XMLDriverFactory().recoverModel(at: url, options: StoreOptions())
            } catch let error as StoreError {
                #expect(error.code == .corrupt || error.code == .unsupported, "seed \(seed), run \(runs): \(error)")
            }
        }
        #expect(runs > 50, "fuzzing ran \(runs) files")
        #expect(opened < runs, "some mutations are refused (\(opened) of \(runs) opened)")
        #expect(opened > 0 || runs < 20, "some mutations still open (\(opened) of \(runs))")
    }
}
