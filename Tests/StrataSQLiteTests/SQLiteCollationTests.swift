import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataSQLite

/// The driver's `COLLATE STRATA`: Swift `String` order, with a byte-wise fast path where ASCII
/// bytes decide it.
@Suite("SQLite collation")
struct SQLiteCollationTests {
    static func order(_ x: String, _ y: String) -> Int32? {
        let a = Array(x.utf8)
        let b = Array(y.utf8)
        return a.withUnsafeBytes { first in b.withUnsafeBytes { second in asciiOrder(first, second) } }
    }

    static func stringOrder(_ x: String, _ y: String) -> Int32 { x < y ? -1 : (x == y ? 0 : 1) }

    /// Two random strings of `alphabet`, up to `maxLength` scalars each; half the time the second
    /// starts with the first, so prefixes are compared too.
    static func randomPair(
        _ alphabet: [Unicode.Scalar], maxLength: Int, using generator: inout SeededGenerator
    ) -> (String, String) {
        func random() -> String {
            let length = Int.random(in: 0...maxLength, using: &generator)
            return String(
                String.UnicodeScalarView((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        let x = random()
        return (x, Bool.random(using: &generator) ? x + random() : random())
    }

    @Test("ASCII strings order byte by byte exactly as Swift orders them (seed 20261129, 20,000 pairs)")
    func asciiMatchesString() {
        var generator = SeededGenerator(seed: 20_261_129)
        print("collation fuzz: seed 20261129, 20000 pairs")
        let alphabet = Array(" !09AZaz_~-.\u{7F}\u{01}".unicodeScalars)
        for _ in 0..<20_000 {
            let (x, y) = Self.randomPair(alphabet, maxLength: 6, using: &generator)
            #expect(Self.order(x, y) == Self.stringOrder(x, y), "\(x.debugDescription) vs \(y.debugDescription)")
            #expect(Self.order(y, x) == Self.stringOrder(y, x), "\(y.debugDescription) vs \(x.debugDescription)")
        }
    }

    @Test("bytes decide only where ASCII decides: a non-ASCII byte at or after the first difference falls back")
    func nonASCIIFallsBack() {
        #expect(Self.order("ae\u{301}", "af") == nil, "a combining mark right after the differing byte")
        #expect(Self.order("é", "e") == nil)
        #expect(Self.order("abc", "abç") == nil)
        #expect(Self.order("ab中x", "ac") == nil)
        #expect(Self.order("a", "a\u{301}") == nil, "the longer goes on with a combining mark")
        #expect(Self.order("中a", "中b") == nil, "a common prefix that is not ASCII")
        // Non-ASCII after the character that decides changes nothing.
        #expect(Self.order("abx中", "ac") == -1)
        #expect(Self.order("ac", "abxe\u{301}") == 1)
        #expect(Self.order("ab", "abc中") == -1)
        // What the fallback answers: canonical equivalence and scalar order, not bytes.
        #expect(Self.stringOrder("ae\u{301}", "af") == 1, "é sorts after f, although e < f byte-wise")
        #expect(Self.stringOrder("e\u{301}", "é") == 0)
    }

    @Test("whatever the bytes decide is Swift's order, with marks and non-ASCII about (seed 20261130, 40,000 pairs)")
    func mixedMatchesString() {
        var generator = SeededGenerator(seed: 20_261_130)
        print("collation fuzz with marks: seed 20261130, 40000 pairs")
        // Letters, combining marks that compose with them or not, precomposed letters, a CJK
        // character, a Hangul jamo pair that composes, and ASCII punctuation.
        let alphabet = Array("aceEf-0z~\u{301}\u{327}\u{308}éçÅ中\u{1100}\u{1161}".unicodeScalars)
        var decided = 0
        var fellBack = 0
        for _ in 0..<40_000 {
            let (x, y) = Self.randomPair(alphabet, maxLength: 5, using: &generator)
            for (a, b) in [(x, y), (y, x)] {
                if let order = Self.order(a, b) {
                    decided += 1
                    #expect(order == Self.stringOrder(a, b), "\(a.debugDescription) vs \(b.debugDescription)")
                } else {
                    fellBack += 1
                }
            }
        }
        // Both paths ran: the property above is not vacuous.
        #expect(decided > 10_000)
        #expect(fellBack > 10_000)
    }

    @Test("empty strings and prefixes: the shorter first, equal strings 0")
    func edges() {
        #expect(Self.order("", "") == 0)
        #expect(Self.order("", "a") == -1)
        #expect(Self.order("ab", "a") == 1)
        #expect(Self.order("abc", "abc") == 0)
    }
}
