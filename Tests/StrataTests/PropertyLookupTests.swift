import Foundation
import Strata
import Testing

/// `EntityDescription.index(ofProperty:)` finds a slot by comparing a name's two words first, then
/// a length-and-first-byte hint, then the names: every way of spelling a key must find its slot.
@Suite("Property lookup by name")
struct PropertyLookupTests {
    static let names = [
        "id", "name", "nameX", "email", "age", "größe", "a_rather_long_property_name", "a_rather_long_property_nam3",
        "créé", "score",
    ]

    static func entity() throws -> EntityDescription {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Thing", properties: names.map { .attribute($0, .string) })
        ])
        return try #require(model.entity(named: "Thing"))
    }

    @Test("a String is two words, which the lookup compares before the names")
    func stringIsTwoWords() {
        #expect(MemoryLayout<String>.size == 16)
    }

    @Test("literal, built, copied and bridged spellings of every name find its slot; others find none")
    func everySpelling() throws {
        let entity = try Self.entity()
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
