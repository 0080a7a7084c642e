import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataSQLite

/// The driver's `COLLATE STRATA`: Swift `String` order, with a byte-wise fast path for ASCII.
@Suite("SQLite collation")
struct SQLiteCollationTests {
    static func order(_ x: String, _ y: String) -> Int32? {
        let a = Array(x.utf8)
        let b = Array(y.utf8)
        return a.withUnsafeBytes { first in b.withUnsafeBytes { second in asciiOrder(first, second) } }
    }

    static func stringOrder(_ x: String, _ y: String) -> Int32 { x < y ? -1 : (x == y ? 0 : 1) }

    @Test("ASCII strings order byte by byte exactly as Swift orders them (seed 20261129, 20,000 pairs)")
    func asciiMatchesString() {
        var generator = SeededGenerator(seed: 20_261_129)
        print("collation fuzz: seed 20261129, 20000 pairs")
        let alphabet = Array(" !09AZaz_~-.\u{7F}\u{01}".unicodeScalars)
        for _ in 0..<20_000 {
            func random() -> String {
                let length = Int.random(in: 0...6, using: &generator)
                return String(
                    String.UnicodeScalarView((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
            }
            let x = random()
            let y = Bool.random(using: &generator) ? x + random() : random()
            #expect(Self.order(x, y) == Self.stringOrder(x, y), "\(x.debugDescription) vs \(y.debugDescription)")
            #expect(Self.order(y, x) == Self.stringOrder(y, x), "\(y.debugDescription) vs \(x.debugDescription)")
        }
    }

    @Test("a string with any byte above 0x7F takes the String comparison")
    func nonASCIIFallsBack() {
        #expect(Self.order("ae\u{301}", "af") == nil)
        #expect(Self.order("é", "e") == nil)
        #expect(Self.order("abc", "abç") == nil)
        // What the fallback answers: canonical equivalence and scalar order, not bytes.
        #expect(Self.stringOrder("ae\u{301}", "af") == 1, "é sorts after f, although e < f byte-wise")
        #expect(Self.stringOrder("e\u{301}", "é") == 0)
    }

    @Test("empty strings and prefixes: the shorter first, equal strings 0")
    func edges() {
        #expect(Self.order("", "") == 0)
        #expect(Self.order("", "a") == -1)
        #expect(Self.order("ab", "a") == 1)
        #expect(Self.order("abc", "abc") == 0)
    }
}
