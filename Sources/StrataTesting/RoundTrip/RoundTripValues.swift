import Foundation
import Strata

/// The values the round-trip generator stores: ordinary ones, and the extremes each type has
/// (empty and long strings, combining characters, characters XML cannot carry, NaN and ±infinity,
/// `-0.0`, the limits of every integer width, dates far in the past and future, empty and large
/// binaries, the nil and all-ones UUIDs).
enum RoundTripValues {
    /// Strings with something to get wrong.
    static let strings: [String] = [
        "", " ", "  leading and trailing  ", "\t", "a\nb", "a\r\nb", "\r", "line\u{2028}separator",
        "é", "e\u{301}", "Z\u{335}\u{321}\u{34D}a\u{306}\u{31B}l\u{35C}g\u{337}o", "ﬁ", "ß", "İ", "ǅ",
        "\u{0}", "nul\u{0}inside", "\u{1}\u{1F}\u{7F}", scalars(0xFFFE, 0xFFFF), "\u{FEFF}bom", scalars(0xFDD0),
        "😀", "👩‍👩‍👧‍👦", "🇫🇷", "𝄞", "\u{202E}rtl", "שלום", "مرحبا", "日本語", "한국어",
        "<a & b>", "]]>", "&amp;", "\"quoted\" 'single'", "'; DROP TABLE ZITEM; --", "\\", "%", "_", "%_\\",
        "NULL", "null", "nan", "inf", "-0", "1e400", "z1", "x-coredata://A/B/p1",
    ]

    /// A string of the given scalars (the compiler takes no literal of a noncharacter like U+FFFE).
    static func scalars(_ values: UInt32...) -> String {
        var text = ""
        for value in values { text.unicodeScalars.append(Unicode.Scalar(value) ?? "?") }
        return text
    }

    static func string<G: RandomNumberGenerator>(_ rng: inout G) -> String {
        switch Int.random(in: 0..<20, using: &rng) {
        case 0..<9: return strings.randomElement(using: &rng)!  // non-empty list
        case 9..<11:
            // Long: several kilobytes, with a multi-byte character at a random place.
            let count = Int.random(in: 1_000...20_000, using: &rng)
            var text = String(repeating: "abcdefghij", count: count / 10)
            text.insert("é", at: text.index(text.startIndex, offsetBy: Int.random(in: 0...text.count, using: &rng)))
            return text
        case 11..<13:
            // Random scalars from the whole range, surrogates excluded.
            let count = Int.random(in: 1...12, using: &rng)
            var text = ""
            for _ in 0..<count {
                var value = UInt32.random(in: 0...0x10FFFF, using: &rng)
                if (0xD800...0xDFFF).contains(value) { value = 0x41 }
                text.unicodeScalars.append(Unicode.Scalar(value)!)  // surrogates replaced above
            }
            return text
        default:
            let words = ["alpha", "beta", "gamma", "delta", "Ωmega", "naïve", "zoë"]
            // non-empty list
            return (0..<Int.random(in: 1...4, using: &rng)).map { _ in words.randomElement(using: &rng)! }
                .joined(separator: " ")
        }
    }

    static func integer<G: RandomNumberGenerator>(_ type: AttributeType, _ rng: inout G) -> Int64 {
        let range = type.integerRange ?? Int64.min...Int64.max
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return range.lowerBound
        case 1: return range.upperBound
        case 2: return 0
        case 3: return [-1, 1].randomElement(using: &rng)!  // non-empty list
        default: return Int64.random(in: range, using: &rng)
        }
    }

    static func double<G: RandomNumberGenerator>(_ rng: inout G) -> Double {
        switch Int.random(in: 0..<14, using: &rng) {
        case 0: return .nan
        case 1: return .infinity
        case 2: return -.infinity
        case 3: return -0.0
        case 4: return 0
        case 5: return .leastNonzeroMagnitude
        case 6: return -.greatestFiniteMagnitude
        case 7: return 0.1
        case 8: return Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &rng))  // any bits, NaNs too
        default: return Double.random(in: -1e6...1e6, using: &rng)
        }
    }

    static func float<G: RandomNumberGenerator>(_ rng: inout G) -> Double {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return Double(Float.nan)
        case 1: return Double(Float.infinity)
        case 2: return -0.0
        case 3: return Double(Float.leastNonzeroMagnitude)
        case 4: return Double(Float.greatestFiniteMagnitude)
        case 5: return Double(Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng)))
        default: return Double(Float.random(in: -1e4...1e4, using: &rng))
        }
    }

    static func decimal<G: RandomNumberGenerator>(_ rng: inout G) -> Decimal {
        let texts = [
            "0", "-1", "0.1", "3.14159265358979323846264338327950288", "-0.000000000000000000000000001",
            "12345678901234567890123456789012345678", "1e100", "-1e-100", "99999999999999999999.99",
        ]
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<5: return Decimal(string: texts.randomElement(using: &rng)!)!  // non-empty list of decimal texts
        case 5: return Decimal.greatestFiniteMagnitude
        case 6: return -Decimal.greatestFiniteMagnitude
        default:
            return Decimal(
                sign: Bool.random(using: &rng) ? .minus : .plus, exponent: Int.random(in: -20...20, using: &rng),
                significand: Decimal(Int64.random(in: 0...Int64.max, using: &rng)))
        }
    }

    static func date<G: RandomNumberGenerator>(_ rng: inout G) -> Date {
        let seconds: Double
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: seconds = Date.distantPast.timeIntervalSinceReferenceDate
        case 1: seconds = Date.distantFuture.timeIntervalSinceReferenceDate
        case 2: seconds = -1e11  // about 1200 BC... far before year 1
        case 3: seconds = 1e12  // after year 10000
        case 4: seconds = 0
        case 5: seconds = 0.0000001
        case 6: seconds = -978_307_200  // 1970-01-01
        default:
            // non-empty list
            seconds =
                Double.random(in: -4e9...4e9, using: &rng).rounded(.down) + [0, 0.25, 0.001].randomElement(using: &rng)!
        }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    static func binary<G: RandomNumberGenerator>(_ rng: inout G) -> Data {
        switch Int.random(in: 0..<30, using: &rng) {
        case 0..<3: return Data()
        case 3: return Data(repeating: 0, count: Int.random(in: 1...64, using: &rng))
        case 4:
            // Large: up to a quarter mebibyte of random bytes.
            var bytes = [UInt8](repeating: 0, count: Int.random(in: 64 * 1024...256 * 1024, using: &rng))
            for index in stride(from: 0, to: bytes.count, by: 8) {
                let word = rng.next()
                for offset in 0..<min(8, bytes.count - index) {
                    bytes[index + offset] = UInt8(truncatingIfNeeded: word >> (8 * offset))
                }
            }
            return Data(bytes)
        default:
            return Data((0..<Int.random(in: 1...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
    }

    static func uuid<G: RandomNumberGenerator>(_ rng: inout G) -> UUID {
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        case 1: return UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))
        default:
            var bytes = [UInt8](repeating: 0, count: 16)
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &rng) }
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        }
    }

    static let uris = [
        "https://example.com/a?b=c&d=e#f", "file:///tmp/a%20b/c.txt", "urn:isbn:0451450523", "mailto:a@example.com",
        "x-coredata://4BEF3DBA-E830-4FC0-B07F-8316ADEBE424/Item/p1", "data:,Hello%2C%20World", "a:b",
        "https://example.com/%E2%9C%93?q=%3C%3E", "ftp://user:pass@host:21/path;type=a",
    ]

    static func uri<G: RandomNumberGenerator>(_ rng: inout G) -> URL {
        if Int.random(in: 0..<6, using: &rng) == 0 {
            return URL(
                string: "https://example.com/"
                    + String(repeating: "segment/", count: Int.random(in: 10...400, using: &rng)))!  // ASCII path
        }
        return URL(string: uris.randomElement(using: &rng)!)!  // valid URI texts
    }

    /// A random value of `attribute`'s type, in the form the graph sets it.
    static func value<G: RandomNumberGenerator>(for attribute: AttributeDescription, _ rng: inout G) -> RoundTripValue {
        switch attribute.type {
        case .integer16, .integer32, .integer64: return .store(.integer(integer(attribute.type, &rng)))
        case .double: return .store(.double(double(&rng)))
        case .float: return .store(.double(float(&rng)))
        case .decimal: return .store(.decimal(decimal(&rng)))
        case .string: return .store(.string(string(&rng)))
        case .boolean: return .store(.bool(Bool.random(using: &rng)))
        case .date: return .store(.date(date(&rng)))
        case .binaryData: return .store(.binary(binary(&rng)))
        case .uuid: return .store(.uuid(uuid(&rng)))
        case .uri: return .store(.uri(uri(&rng)))
        case .transformable:
            if attribute.valueTransformerName == nil { return .store(.binary(binary(&rng))) }
            return .strings((0..<Int.random(in: 0...4, using: &rng)).map { _ in string(&rng) })
        case .undefined, .objectID, .composite: return .store(.null)
        }
    }

    /// A value of a type for a unique constraint: different for every `serial`.
    static func unique<G: RandomNumberGenerator>(for type: AttributeType, serial: Int, _ rng: inout G) -> StoreValue {
        switch type {
        // non-empty list
        case .string: .string("u\(serial)-" + ["", "é", "e\u{301}", " ", "\u{0}"].randomElement(using: &rng)!)
        case .integer16, .integer32, .integer64: .integer(Int64(serial) * 37 - 500)
        // well-formed text
        case .uuid: .uuid(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012X", serial))!)
        default: .null
        }
    }

    /// The simplest value of a type (what the shrinker tries instead of an extreme one).
    static func simplest(for type: AttributeType) -> StoreValue {
        switch type {
        case .integer16, .integer32, .integer64: .integer(0)
        case .double, .float: .double(0)
        case .decimal: .decimal(0)
        case .string: .string("a")
        case .boolean: .bool(false)
        case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
        case .binaryData, .transformable: .binary(Data([1]))
        case .uuid: .uuid(UUID(uuidString: "00000000-0000-4000-8000-000000000001")!)  // well-formed text
        case .uri: .uri(URL(string: "a:b")!)  // valid URI text
        case .undefined, .objectID, .composite: .null
        }
    }
}
