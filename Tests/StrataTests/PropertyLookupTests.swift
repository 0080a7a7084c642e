import Foundation
import Strata
import Testing

/// `EntityDescription.index(ofProperty:)` finds a slot by comparing a name's two words first, then
/// a length-and-first-byte hint, then the names (entities of up to 12 properties), or by a table
/// (larger ones): every way of spelling a key must find its slot either way.
@Suite("Property lookup by name")
struct PropertyLookupTests {
    static let names = [
        "id", "name", "nameX", "email", "age", "größe", "a_rather_long_property_name", "a_rather_long_property_nam3",
        "créé", "score",
    ]

    /// An entity of ``names`` followed by `padding` more properties (past 12 in all, lookups hash).
    static func entity(padding: Int) throws -> EntityDescription {
        let padded = names + (0..<padding).map { "pad\($0)" }
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Thing", properties: padded.map { .attribute($0, .string) })
        ])
        return try #require(model.entity(named: "Thing"))
    }

    @Test("a String is two words, which the lookup compares before the names")
    func stringIsTwoWords() {
        #expect(MemoryLayout<String>.size == 16)
    }

    @Test(
        "literal, built, copied and bridged spellings of every name find its slot; others find none",
        arguments: [0, 8])
    func everySpelling(padding: Int) throws {
        let entity = try Self.entity(padding: padding)
        #expect(entity.properties.count == Self.names.count + padding)
        for (slot, name) in Self.names.enumerated() {
            let built = String(name.prefix(1)) + String(name.dropFirst())
            let decoded = String(decoding: Array(name.utf8), as: UTF8.self)
            let fromSubstring = String(("<" + name + ">").dropFirst().dropLast())
            let bridged = NSString(string: name) as String
            for spelling in [name, built, decoded, fromSubstring, bridged] {
                #expect(entity.index(ofProperty: spelling) == slot, "\(spelling)")
            }
        }
        // Another Unicode normalization of a name is the same Swift string, so the same slot.
        #expect(entity.index(ofProperty: "cre\u{301}e\u{301}") == Self.names.firstIndex(of: "créé"))
        #expect(entity.index(ofProperty: "gro\u{308}ße") == Self.names.firstIndex(of: "größe"))
        // Same length and first byte as real names, or a prefix of one: no slot.
        for stranger in ["ix", "namf", "emai", "a_rather_long_property_nam4", "gröse", "", "crée"] {
            #expect(entity.index(ofProperty: stranger) == nil, "\(stranger)")
        }
    }
}
