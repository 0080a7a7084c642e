import Foundation
import Strata
import Testing

// Predicate answers as Foundation's in-memory evaluation gives them. Each test
// names its source (docs/predicates.md, "Where the rules come from"):
// - [Realm]: realm-cocoa PRs #3599, #3613, #5200 (Realm changed its engine to match Foundation)
//   and their QueryTests.m assertions;
// - [radar]: openradar reports of Foundation's output (lionheart/openradar-mirror);
// - [GNUstep]: libs-base Tests/base/NSPredicate/*.m, whose headers state OS X behaviour;
// - [Foundation]: Apple's Foundation read through a third party's decompilation
//   (NSComparisonPredicateOperator, NSEqualityPredicateOperator, NSBetweenPredicateOperator,
//   NSInPredicateOperator, NSSubstringPredicateOperator, NSMatchingPredicateOperator,
//   _NSPredicateOperatorUtilities), with Apportable's open Foundation port agreeing;
// - [Apple doc]: Apple's documentation (Predicate Format String Syntax; -[NSString isEqualToString:]).

private func matches(_ format: String, _ value: StoreValue, _ arguments: any PredicateArgument...) throws -> Bool {
    try FetchPredicate(format: format, argumentArray: arguments).evaluate(with: value)
}

private func matches(_ format: String, _ row: [String: StoreValue], _ arguments: any PredicateArgument...) throws
    -> Bool
{
    try FetchPredicate(format: format, argumentArray: arguments).evaluate(with: row)
}

@Suite("Predicates answer as Foundation does")
struct PredicateFoundationTests {
    // MARK: Empty strings

    @Test(
        "[Realm #3599/#5200, radar 20626872, Foundation rangeOfString] an empty string never matches BEGINSWITH, ENDSWITH or CONTAINS",
        arguments: ["BEGINSWITH", "ENDSWITH", "CONTAINS"], ["", "[c]", "[d]", "[cd]"])
    func emptySubstring(op: String, options: String) throws {
        for subject in ["abc", "", "é"] {
            #expect(try !matches("SELF \(op)\(options) ''", .string(subject)), "'\(subject)' \(op)\(options) ''")
        }
        #expect(try !matches("'' IN\(options) SELF", .string("abc")))
        #expect(try matches("SELF \(op)\(options) 'b'", .string("b")))
    }

    @Test("[radar 20626872] SELF CONTAINS '' filters every string out, the empty one included")
    func emptyContainsFilter() throws {
        let predicate = try FetchPredicate(format: "SELF CONTAINS ''")
        #expect(try [StoreValue.string("Hi"), .null, .string("")].filter { try predicate.evaluate(with: $0) }.isEmpty)
    }

    @Test("[Realm #3613/#5200] nil on the right of BEGINSWITH, ENDSWITH, CONTAINS, LIKE and MATCHES is false")
    func nilPattern() throws {
        for op in ["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "BEGINSWITH[cd]"] {
            #expect(try !matches("SELF \(op) nil", .string("abc")), "\(op)")
            #expect(try !matches("SELF \(op) 'a'", .null), "nil \(op)")
        }
    }

    @Test("[Foundation NSMatchingPredicateOperator] an empty LIKE or MATCHES pattern matches nothing, not even ''")
    func emptyPatterns() throws {
        for subject in ["", "abc"] {
            #expect(try !matches("SELF LIKE ''", .string(subject)))
            #expect(try !matches("SELF MATCHES ''", .string(subject)))
        }
        #expect(try matches("SELF LIKE '*'", .string("")))
        #expect(try matches("SELF MATCHES '.*'", .string("")))
    }

    // MARK: nil on either side

    @Test(
        "[Foundation NSComparisonPredicateOperator] nil <= nil and nil >= nil are true; < and > with nil, and one nil, are false"
    )
    func nilOrdering() throws {
        let row: [String: StoreValue] = ["a": .null, "b": .null, "n": .integer(3)]
        #expect(
            try matches("a <= b", row) && matches("a >= b", row) && matches("a <= nil", row) && matches("nil >= a", row)
        )
        #expect(try !matches("a < b", row) && !matches("a > b", row))
        for op in ["<", "<=", ">", ">="] {
            #expect(
                try !matches("a \(op) n", row) && !matches("n \(op) a", row) && !matches("n \(op) nil", row), "\(op)")
        }
    }

    @Test(
        "[Foundation NSEqualityPredicateOperator] nil == nil, nil != value; every operator with one nil side is false except !="
    )
    func nilEverywhere() throws {
        let row: [String: StoreValue] = ["a": .null, "s": .string("x")]
        #expect(
            try matches("a == nil", row) && matches("nil == a", row) && matches("a != s", row) && matches("s != a", row)
        )
        #expect(try !matches("a == s", row) && !matches("a != nil", row))
        for format in [
            "a IN {'x'}", "a IN s", "s IN a", "a CONTAINS 'x'", "s CONTAINS a", "a BETWEEN {1, 2}", "a LIKE '*'",
            "a MATCHES '.*'",
        ] {
            #expect(try !matches(format, row), "\(format)")
        }
    }

    // MARK: BETWEEN

    @Test("[Foundation NSBetweenPredicateOperator] BETWEEN takes its bounds in either order")
    func betweenReversed() throws {
        #expect(try matches("SELF BETWEEN {10, 1}", .integer(5)))
        #expect(try matches("SELF BETWEEN {1, 10}", .integer(10)))
        #expect(try !matches("SELF BETWEEN {10, 1}", .integer(11)))
        #expect(try matches("SELF BETWEEN {'m', 'a'}", .string("c")))
    }

    // MARK: Kinds and equality

    @Test(
        "[Foundation isEqual:] == between different kinds is false and != true, never an error; ordering them is an error"
    )
    func mixedKinds() throws {
        #expect(try !matches("SELF == '34'", .integer(34)))
        #expect(try matches("SELF != '34'", .integer(34)))
        #expect(try !matches("SELF == 34", .string("34")))
        #expect(try !matches("SELF == CAST(0, 'NSDate')", .integer(0)))
        #expect(try matches("SELF == 1", .bool(true)))  // NSNumber: YES isEqual: 1
        #expect(throws: FetchPredicateError.self) { try matches("SELF < 9", .string("10")) }
        #expect(throws: FetchPredicateError.self) { try matches("SELF BEGINSWITH 'a'", .integer(1)) }
        #expect(throws: FetchPredicateError.self) { try matches("3 IN SELF", .string("a3")) }
    }

    @Test("[Foundation NSInPredicateOperator containsObject:] IN with mixed types tests isEqual: member by member")
    func inMixedTypes() throws {
        #expect(try matches("SELF IN {1, '1'}", .integer(1)))
        #expect(try matches("SELF IN {1, '1'}", .string("1")))
        #expect(try !matches("SELF IN {2, '1'}", .integer(1)))
        #expect(try matches("SELF IN {'a', CAST(0, 'NSDate'), 1.0}", .integer(1)))
    }

    @Test(
        "[Foundation NSInPredicateOperator containsObject:] membership in a collection ignores [c] and [d]; a substring in a string does not"
    )
    func inIgnoresOptions() throws {
        #expect(try !matches("SELF IN[c] {'ANN', 'BOB'}", .string("Ann")))
        #expect(try matches("SELF IN {'Ann', 'BOB'}", .string("Ann")))
        #expect(try !matches("{'ANN'} CONTAINS[c] SELF", .string("ann")))
        #expect(try matches("'NN' IN[c] SELF", .string("Ann")))
        #expect(try matches("SELF CONTAINS[c] 'NN'", .string("Ann")))
    }

    @Test(
        "[Apple doc isEqualToString:, Foundation isEqual:] == without options compares literally: composed and decomposed é differ"
    )
    func literalEquality() throws {
        let decomposed = StoreValue.string("e\u{301}")
        #expect(try !matches("SELF == %@", decomposed, "\u{e9}"))
        #expect(try matches("SELF != %@", decomposed, "\u{e9}"))
        #expect(try !matches("SELF IN %@", decomposed, ["\u{e9}"]))
        #expect(try matches("SELF == %@", decomposed, "e\u{301}"))
        // With options Foundation compares non-literally (CFStringCompareWithOptions): they are equal.
        #expect(try matches("SELF ==[c] %@", decomposed, "\u{e9}"))
        // Ordering (compare:) and substring search (rangeOfString:) are not literal either.
        #expect(try matches("SELF <= %@", decomposed, "\u{e9}") && matches("SELF >= %@", decomposed, "\u{e9}"))
        #expect(try matches("SELF BEGINSWITH %@", decomposed, "\u{e9}"))
    }

    // MARK: [c] and [d]

    @Test(
        "[Realm QueryTests, Apple doc] [d] ignores diacritics, composed or decomposed",
        arguments: [("t\u{fc}v", "tuv"), ("tu\u{308}v", "tuv"), ("t\u{fb}v", "tuv"), ("t\u{fc}v", "tu\u{308}v")])
    func diacritics(subject: String, pattern: String) throws {
        #expect(try matches("SELF ==[d] %@", .string(subject), pattern))
        #expect(try matches("SELF CONTAINS[d] 'u'", .string(subject)))
        #expect(try matches("SELF BEGINSWITH[d] 'tu'", .string(subject)))
        #expect(try matches("SELF LIKE[d] 't?v'", .string(subject)))
    }

    @Test("[Foundation CFStringCompareFlags] [c] folds Unicode case (Ü, ß) and, with [d], width (Ａ is A)")
    func caseAndWidth() throws {
        #expect(try matches("SELF CONTAINS[c] 'Ü'", .string("t\u{fc}v")))  // Realm asserts 0: a Realm limitation
        #expect(try matches("SELF ==[c] 'STRASSE'", .string("straße")))
        #expect(try matches("SELF ==[c] 'abc'", .string("\u{ff21}bc")))
        #expect(try matches("SELF BEGINSWITH[d] 'A'", .string("\u{ff21}bc")))
        #expect(try !matches("SELF == 'Abc'", .string("\u{ff21}bc")))
    }

    // MARK: LIKE and MATCHES

    @Test(
        "[GNUstep likeWildcards.m, Foundation UREGEX_DOTALL] LIKE's * and ? match line breaks; other regex characters are literal"
    )
    func likeAndNewlines() throws {
        #expect(try matches("SELF LIKE 'a*'", .string("a\nb")))
        #expect(try matches("SELF LIKE 'a?b'", .string("a\nb")))
        #expect(try matches("SELF LIKE '*b'", .string("a\n\nb")))
        #expect(try !matches("SELF LIKE 'a|x'", .string("x")))
        #expect(try matches("SELF LIKE %@", .string("a*b"), "a\\*b"))
        #expect(try !matches("SELF LIKE %@", .string("axb"), "a\\*b"))
    }

    @Test(
        "[Foundation _NSPredicateOperatorUtilities] LIKE and MATCHES compare NFKC forms: composed and decomposed é match, ﬁ is fi"
    )
    func likeNormalizes() throws {
        #expect(try matches("SELF LIKE %@", .string("e\u{301}"), "\u{e9}"))
        #expect(try matches("SELF LIKE '?'", .string("e\u{301}")))
        #expect(try matches("SELF MATCHES %@", .string("caf\u{e9}"), "cafe\u{301}"))
        #expect(try matches("SELF LIKE 'fi'", .string("\u{fb01}")))
    }

    @Test(
        "[GNUstep matchesLineAnchors.m, Apple doc] MATCHES matches the whole string; ^ $ match at line breaks, . matches one"
    )
    func matchesAnchoring() throws {
        #expect(try !matches("SELF MATCHES '^b$'", .string("a\nb")))
        #expect(try matches("SELF MATCHES '.*^b$'", .string("a\nb")))
        #expect(try matches("SELF MATCHES 'a.b'", .string("a\nb")))
        #expect(try !matches("SELF MATCHES 'b'", .string("abc")))
        #expect(try matches("SELF MATCHES[c] 'A.C'", .string("abc")))
    }

    // MARK: Quantifiers

    @Test("[radar 16299844] ALL over an empty collection is true; ANY false")
    func emptyQuantifiers() throws {
        let row: [String: StoreValue] = ["tags": .references([])]
        #expect(try matches("ALL tags IN %@", row, ["a"]))
        #expect(try !matches("ANY tags IN %@", row, ["a"]))
    }
}
