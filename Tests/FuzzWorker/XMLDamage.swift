import Foundation
import StrataTesting

/// Format-aware damage to an XML store in Core Data's layout (docs/formats/xml.md): object ids and
/// idrefs, attribute values and types, entity and relationship types, the database info and the
/// metadata property list, deep nesting; and raw damage to the bytes.
enum XMLDamage {
    static func damage(_ url: URL, _ random: inout SeededGenerator) throws -> String {
        var bytes = Array(try Data(contentsOf: url))
        var done: [String] = []
        for _ in 0..<(Int.random(in: 0..<4, using: &random) == 0 ? 2 : 1) {
            done.append(edit(&bytes, &random))
        }
        try Data(bytes).write(to: url)
        return done.joined(separator: "; ")
    }

    /// Damages only the metadata property list.
    static func metadataOnly(_ url: URL, _ random: inout SeededGenerator) throws -> String {
        var bytes = Array(try Data(contentsOf: url))
        let what =
            Int.random(in: 0..<4, using: &random) == 0
            ? nest(&bytes, &random, plistOnly: true) : metadata(&bytes, &random)
        try Data(bytes).write(to: url)
        return what
    }

    static func edit(_ bytes: inout [UInt8], _ random: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<14, using: &random) {
        case 0, 1:
            return replaceField(&bytes, open: " id=\"", close: "\"", "id", &random) { random in
                [
                    "z\(ByteDamage.interestingInteger(using: &random))", "z", "", "zz1", "z-1", "x5", "z1", "z0", "z01",
                    "z 1",
                ]
                .randomElement(using: &random)!  // a literal, non-empty list
            }
        case 2, 3:
            return replaceField(&bytes, open: "idrefs=\"", close: "\"", "idrefs", &random) { random in
                switch Int.random(in: 0..<6, using: &random) {
                case 0: "z\(ByteDamage.interestingInteger(using: &random))"
                case 1: ""
                case 2: Array(repeating: "z1", count: Int.random(in: 2...50, using: &random)).joined(separator: " ")
                case 3: (1...Int.random(in: 1...60, using: &random)).map { "z\($0)" }.joined(separator: " ")
                case 4: "z1  z2\tz3"
                default: "z\(Int.random(in: 1...60, using: &random)) zq"
                }
            }
        case 4, 5:
            return replaceField(&bytes, open: ">", close: "</attribute>", "attribute value", &random) { random in
                switch Int.random(in: 0..<9, using: &random) {
                case 0: "\(ByteDamage.interestingInteger(using: &random))"
                case 1:
                    // non-empty literal
                    ["1e309", "-1e309", "nan", "inf", "0x10", "1.5e", "--1", " 7 "].randomElement(using: &random)!
                case 2: ""
                case 3: "!!!not base64!!!"
                case 4: String(repeating: "A", count: Int.random(in: 1...100_000, using: &random))
                case 5: "&#0;"
                case 6: "&#xD800;"
                case 7: "<![CDATA[x]]>"
                default: "\(Double.random(in: -1e20...1e20, using: &random))"
                }
            }
        case 6:
            return replaceField(&bytes, open: "type=\"", close: "\"", "type", &random) { random in
                [
                    "int16", "int32", "int64", "decimal", "double", "float", "string", "bool", "date", "binary", "uuid",
                    "uri",
                    "transformable", "objectID", "ITEM", "TAG", "VEHICLE", "CAR", "NOPE", "", "0/1", "1/1", "0/0",
                    "1/0",
                    "-1/5", "5/2", "0/\(ByteDamage.interestingInteger(using: &random))", "x/y",
                ].randomElement(using: &random)!  // non-empty literal
            }
        case 7:
            return replaceField(&bytes, open: "destination=\"", close: "\"", "destination", &random) { random in
                ["ITEM", "TAG", "EMPLOYEE", "VEHICLE", "NOPE", ""].randomElement(using: &random)!  // non-empty literal
            }
        case 8:
            let field = ["version", "UUID", "nextObjectID"].randomElement(using: &random)!  // non-empty literal
            return replaceField(&bytes, open: "<\(field)>", close: "</\(field)>", field, &random) { random in
                ["\(ByteDamage.interestingInteger(using: &random))", "", "x", "0", "-1", "\(Int64.max)9"].randomElement(
                    using: &random)!  // non-empty literal
            }
        case 9, 10:
            return metadata(&bytes, &random)
        case 11:
            return nest(&bytes, &random)
        default:
            return "raw " + ByteDamage.damage(&bytes, using: &random)
        }
    }

    /// The value ranges between `open` and the next `close`; for a one-character `open`, between
    /// each `close` and the last `open` before it (the text of an element).
    static func fields(_ bytes: [UInt8], open: String, close: String) -> [Range<Int>] {
        let start = Array(open.utf8)
        let end = Array(close.utf8)
        var result: [Range<Int>] = []
        if start.count == 1 {
            var index = 0
            while let found = find(end, in: bytes, from: index) {
                if let opening = bytes[..<found].lastIndex(of: start[0]) { result.append(opening + 1..<found) }
                index = found + end.count
            }
            return result
        }
        var index = 0
        while let found = find(start, in: bytes, from: index) {
            let valueStart = found + start.count
            guard let valueEnd = find(end, in: bytes, from: valueStart) else { break }
            result.append(valueStart..<valueEnd)
            index = valueEnd
        }
        return result
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, bytes.count >= needle.count, from <= bytes.count - needle.count else { return nil }
        var index = from
        let last = bytes.count - needle.count
        while index <= last {
            if bytes[index] == needle[0] && bytes[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// Replaces one field's value with `make()`'s text.
    static func replaceField(
        _ bytes: inout [UInt8], open: String, close: String, _ name: String, _ random: inout SeededGenerator,
        _ make: (inout SeededGenerator) -> String
    ) -> String {
        let ranges = fields(bytes, open: open, close: close).filter { $0.count < 5_000 }
        guard !ranges.isEmpty else { return "no \(name) field; raw " + ByteDamage.damage(&bytes, using: &random) }
        let range = ranges[Int.random(in: 0..<ranges.count, using: &random)]
        let old = String(decoding: bytes[range], as: UTF8.self)
        let new = make(&random)
        bytes.replaceSubrange(range, with: Array(new.utf8))
        return "\(name) '\(old.prefix(40))' → '\(new.prefix(40))'\(new.count > 40 ? " (\(new.count) chars)" : "")"
    }

    /// Damages the metadata property list: one node replaced (`PlistDamage`), or a scalar's text.
    static func metadata(_ bytes: inout [UInt8], _ random: inout SeededGenerator) -> String {
        guard let range = fields(bytes, open: "<metadata>", close: "</metadata>").first else {
            return "no metadata; raw " + ByteDamage.damage(&bytes, using: &random)
        }
        if Bool.random(using: &random), let edited = PlistDamage.structured(Array(bytes[range]), &random) {
            // Drop the XML declaration and doctype: the plist sits inside the store's document.
            var plist = edited.bytes
            if let start = find(Array("<plist".utf8), in: plist, from: 0) { plist.removeSubrange(0..<start) }
            bytes.replaceSubrange(range, with: plist)
            return "metadata \(edited.what)"
        }
        // non-empty literal
        let scalar = ["integer", "string", "data", "real", "date", "key"].randomElement(using: &random)!
        var inner = Array(bytes[range])
        let what = replaceField(&inner, open: "<\(scalar)>", close: "</\(scalar)>", "metadata \(scalar)", &random) {
            random in
            [
                "\(ByteDamage.interestingInteger(using: &random))", "", "x", "====", "2024-13-45T99:99:99Z", "1e999",
                "-0",
                "99999999999999999999999",
            ].randomElement(using: &random)!  // non-empty literal
        }
        bytes.replaceSubrange(range, with: inner)
        return what
    }

    /// Nests elements deeply inside an object or the metadata.
    static func nest(_ bytes: inout [UInt8], _ random: inout SeededGenerator, plistOnly: Bool = false) -> String {
        let depth = [10, 255, 256, 257, 1_000, 10_000, 100_000][Int.random(in: 0..<7, using: &random)]
        let (open, close, anchor) = [
            ("<array>", "</array>", "<plist version=\"1.0\">"),
            ("<dict><key>k</key>", "</dict>", "<plist version=\"1.0\">"),
            ("<object type=\"ITEM\" id=\"z999\">", "</object>", "<database>"),
            ("<attribute name=\"string\" type=\"string\">", "</attribute>", "<object type=\"ITEM\""),
        ][Int.random(in: 0..<(plistOnly ? 2 : 4), using: &random)]
        guard let at = find(Array(anchor.utf8), in: bytes, from: 0),
            let end = bytes[at...].firstIndex(of: UInt8(ascii: ">"))
        else { return "no \(anchor); nothing nested" }
        let position = end + 1
        let nested = String(repeating: open, count: depth) + String(repeating: close, count: depth)
        bytes.insert(contentsOf: Array(nested.utf8), at: position)
        return "\(depth) × \(open) after \(anchor)"
    }
}
