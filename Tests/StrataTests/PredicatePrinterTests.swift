import Foundation
import Strata
import Testing

@Suite("Predicate printer")
struct PredicatePrinterTests {
    /// Input format and Apple-style canonical output.
    static let canonical: [(String, String)] = [
        ("a < 1", "a < 1"), ("a <= 1", "a <= 1"), ("a > 1", "a > 1"), ("a >= 1", "a >= 1"),
        ("a = 1", "a == 1"), ("a != 1", "a != 1"), ("a <> 1", "a != 1"), ("a =< 1", "a <= 1"), ("a => 1", "a >= 1"),
        ("name beginswith[c] 'a' and age > 30", #"name BEGINSWITH[c] "a" AND age > 30"#),
        ("name ENDSWITH[cd] \"z\"", #"name ENDSWITH[cd] "z""#),
        ("name LIKE[c] 'a*b?'", #"name LIKE[c] "a*b?""#), ("name MATCHES '[a-z]+'", #"name MATCHES "[a-z]+""#),
        ("name CONTAINS[d] 'e'", #"name CONTAINS[d] "e""#), ("name ==[c] 'x'", #"name ==[c] "x""#),
        ("age BETWEEN {20, 30}", "age BETWEEN {20, 30}"), ("age IN {1,2 , 3}", "age IN {1, 2, 3}"),
        ("a == 1 OR b == 2 AND c == 3", "a == 1 OR (b == 2 AND c == 3)"),
        ("(a == 1 OR b == 2) AND c == 3", "(a == 1 OR b == 2) AND c == 3"),
        ("a == 1 AND (b == 2 AND c == 3)", "a == 1 AND (b == 2 AND c == 3)"),
        ("a == 1 && b == 2 && c == 3", "a == 1 AND b == 2 AND c == 3"),
        ("!(a == 1)", "NOT a == 1"), ("NOT (a == 1 OR b == 2)", "NOT (a == 1 OR b == 2)"),
        ("not not a == 1", "NOT NOT a == 1"),
        ("TRUEPREDICATE", "TRUEPREDICATE"), ("falsepredicate", "FALSEPREDICATE"),
        ("any friends.age > 40", "ANY friends.age > 40"), ("SOME friends.age > 40", "ANY friends.age > 40"),
        ("ALL friends.age > 40", "ALL friends.age > 40"), ("NONE friends.age > 40", "NOT ANY friends.age > 40"),
        ("friends.@count > 1", "friends.@count > 1"), ("items.@sum.price < 10.5", "items.@sum.price < 10.5"),
        ("items.@avg.price == 2", "items.@avg.price == 2"), ("@count == 2", "@count == 2"),
        ("SUBQUERY(friends, $f, $f.age > 40).@count > 1", "SUBQUERY(friends, $f, $f.age > 40).@count > 1"),
        ("SELF == 'Do'", #"SELF == "Do""#), ("self.name == 'x'", #"name == "x""#),
        ("a == nil", "a == nil"), ("a == NULL", "a == nil"), ("a == YES", "a == YES"), ("a == false", "a == NO"),
        ("a == 1.0", "a == 1.0"), ("a == 0.1", "a == 0.1"), ("a == 1e20", "a == 1e+20"), ("a == -5", "a == -5"),
        ("a == 0x10", "a == 16"), ("a == 'it''s'", ""), ("a == \"it's\"", #"a == "it's""#),
        ("a == 'say \"hi\"'", #"a == "say \"hi\"""#), ("a == 'back\\\\slash'", #"a == "back\\slash""#),
        ("a == 'line\\nbreak'", #"a == "line\nbreak""#), ("a == '100%%'", #"a == "100%%""#),
        ("a + 1 > b * 2", "a + 1 > b * 2"), ("(a + 1) * 2 > 0", "(a + 1) * 2 > 0"),
        ("a - (b - c) == 0", "a - (b - c) == 0"), ("a ** 2 == 4", "a ** 2 == 4"), ("-a == 1", "0 - a == 1"),
        ("a / 2 == 1", "a / 2 == 1"), ("a == 3 - -2", "a == 3 - (-2)"),
        ("lowercase(name) == 'x'", #"lowercase:(name) == "x""#), ("now() > d", "now() > d"),
        ("modulus:by:(a, 2) == 0", "modulus:by:(a, 2) == 0"), ("abs:(a) < 2", "abs:(a) < 2"),
        ("CAST(d, 'NSNumber') > 5", #"CAST(d, "NSNumber") > 5"#),
        ("d > CAST(0, 'NSDate')", #"d > CAST(0.0, "NSDate")"#),
        ("TERNARY(a > 1, 2, 3) == 2", "TERNARY(a > 1, 2, 3) == 2"),
        ("$x.age > 3", "$x.age > 3"), ("age > $MIN", "age > $MIN"),
        ("#in == 1", "#in == 1"), ("a.#and == 1", "a.#and == 1"),
        ("{1, 'a', nil}.@count == 3", #"{1, "a", nil}.@count == 3"#),
    ]

    @Test("predicates print in Apple's canonical style", arguments: canonical.filter { !$0.1.isEmpty })
    func printsCanonically(input: String, output: String) throws {
        #expect(try FetchPredicate(format: input).predicateFormat == output)
    }

    @Test("parse → print → parse gives an equal tree", arguments: canonical.map(\.0).filter { !$0.contains("''") })
    func roundTrips(input: String) throws {
        let first = try FetchPredicate(format: input)
        let second = try FetchPredicate(format: first.predicateFormat)
        #expect(first == second)
        #expect(first.predicateFormat == second.predicateFormat)
    }

    @Test(
        "constants without literals print as CAST and read back",
        arguments: [
            StoreValue.date(Date(timeIntervalSinceReferenceDate: 725_846_400.25)),
            .date(Date(timeIntervalSinceReferenceDate: -1e9)),
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), .decimal(Decimal(string: "12.345")!),
            .binary(Data([0, 1, 2, 255])), .uri(URL(string: "https://example.com/a?b=%20")!),
            .reference(RowID(entity: 4, primaryKey: 99)), .integer(.min), .integer(.max), .double(.infinity),
            .double(-.infinity), .double(.leastNonzeroMagnitude), .double(-0.5), .string("%@ \u{1} \"q\" \\ é"),
            .bool(true),
        ])
    func constantRoundTrip(value: StoreValue) throws {
        let predicate = FetchPredicate.comparison(ComparisonPredicate(.keyPath("a"), .equal, .constant(value)))
        let reparsed = try FetchPredicate(format: predicate.predicateFormat)
        #expect(reparsed == predicate, "\(predicate.predicateFormat)")
    }

    @Test("programmatic trees print in a form that parses back")
    func programmaticTrees() throws {
        let trees: [FetchPredicate] = [
            .and([
                .comparison(ComparisonPredicate(.keyPath("a"), .equal, .constant(.integer(1)))),
                .or([.constant(true), .not(.constant(false))]),
            ]),
            .comparison(
                ComparisonPredicate(.member(.function("now", []), "year"), .greaterThan, .constant(.integer(1)))),
            .comparison(
                ComparisonPredicate(
                    .collection(.max, of: .member(.variable("x"), "items"), keyPath: "price"), .lessThan,
                    .constant(.double(3.5)))),
            .comparison(ComparisonPredicate(.keyPath("a"), .in, .aggregate([]))),
            .comparison(
                ComparisonPredicate(
                    .function(
                        "multiply:by:",
                        [.function("add:to:", [.keyPath("a"), .keyPath("b")]), .constant(.integer(-2))]), .equal,
                    .constant(.integer(0)))),
        ]
        for tree in trees {
            #expect(try FetchPredicate(format: tree.predicateFormat) == tree, "\(tree.predicateFormat)")
        }
    }

    @Test("empty and one-part compounds print what they mean")
    func degenerateCompounds() {
        #expect(FetchPredicate.and([]).predicateFormat == "TRUEPREDICATE")
        #expect(FetchPredicate.or([]).predicateFormat == "FALSEPREDICATE")
        #expect(FetchPredicate.and([.truePredicate]).predicateFormat == "TRUEPREDICATE")
    }

    @Test("description is the predicate format")
    func description() throws {
        let p = try FetchPredicate(format: "a == 1")
        #expect("\(p)" == "a == 1")
        #expect(try FetchExpression(format: "a + 1").expressionFormat == "a + 1")
    }

    @Test("GNUstep's classic: a substituted LIKE prints with its operands grouped")
    func substitutedLikeFormat() throws {
        let p = try FetchPredicate(format: "%K like %@+$b+$c", "single", "b\"")
        #expect(p.predicateFormat == #"single LIKE ("b\"" + $b) + $c"#)
        let bound = try p.withSubstitutionVariables(["b": "val_for_$b", "c": "val_for_$c"])
        #expect(bound.predicateFormat == #"single LIKE ("b\"" + "val_for_$b") + "val_for_$c""#)
    }
}
