import Foundation
import Strata
import Testing

@Suite("Predicate parser")
struct PredicateParserTests {
    @Test(
        "every comparison operator spelling parses to its operator",
        arguments: [
            ("a = 1", ComparisonOperator.equal), ("a == 1", .equal), ("a != 1", .notEqual), ("a <> 1", .notEqual),
            ("a < 1", .lessThan), ("a <= 1", .lessThanOrEqual), ("a =< 1", .lessThanOrEqual), ("a > 1", .greaterThan),
            ("a >= 1", .greaterThanOrEqual), ("a => 1", .greaterThanOrEqual), ("a LIKE 'x'", .like),
            ("a MATCHES 'x'", .matches), ("a BEGINSWITH 'x'", .beginsWith), ("a ENDSWITH 'x'", .endsWith),
            ("a CONTAINS 'x'", .contains), ("a IN {1}", .in), ("a BETWEEN {1, 2}", .between),
            ("a like 'x'", .like), ("a beginswith 'x'", .beginsWith), ("a between {1, 2}", .between),
        ])
    func operators(format: String, op: ComparisonOperator) throws {
        let predicate = try FetchPredicate(format: format)
        guard case .comparison(let comparison) = predicate else {
            Issue.record("not a comparison: \(predicate)")
            return
        }
        #expect(comparison.op == op)
        #expect(comparison.lhs == .keyPath("a"))
    }

    @Test(
        "comparison options parse from brackets",
        arguments: [
            ("name ==[c] 'x'", ComparisonOptions.caseInsensitive), ("name LIKE[d] 'x'", .diacriticInsensitive),
            ("name BEGINSWITH[cd] 'x'", ComparisonOptions([.caseInsensitive, .diacriticInsensitive])),
            ("name CONTAINS[n] 'x'", .normalized),
            ("name ENDSWITH[dc] 'x'", ComparisonOptions([.caseInsensitive, .diacriticInsensitive])),
            ("name !=[C] 'x'", .caseInsensitive),
            ("name MATCHES 'x'", ComparisonOptions()),
        ])
    func options(format: String, options: ComparisonOptions) throws {
        guard case .comparison(let comparison) = try FetchPredicate(format: format) else {
            Issue.record("not a comparison")
            return
        }
        #expect(comparison.options == options)
    }

    @Test(
        "literals parse to store values",
        arguments: [
            ("a == 42", StoreValue.integer(42)), ("a == -42", .integer(-42)), ("a == 3.5", .double(3.5)),
            ("a == 1e3", .double(1000)), ("a == 2.5E-1", .double(0.25)), ("a == 0x1F", .integer(31)),
            ("a == 0o17", .integer(15)), ("a == 0b101", .integer(5)), ("a == nil", .null), ("a == NULL", .null),
            ("a == Nil", .null), ("a == YES", .bool(true)), ("a == TRUE", .bool(true)), ("a == no", .bool(false)),
            ("a == FALSE", .bool(false)), ("a == 'single'", .string("single")), ("a == \"double\"", .string("double")),
            ("a == \"tab\\there\"", .string("tab\there")), ("a == 'it\\'s'", .string("it's")),
            ("a == \"say \\\"hi\\\"\"", .string("say \"hi\"")), ("a == \"\\u00e9\"", .string("é")),
            ("a == 'back\\\\slash'", .string("back\\slash")), ("a == \"50%%\"", .string("50%")),
            ("a == '%@'", .string("%@")), ("a == 'a\\*b'", .string("a\\*b")),
            ("a == CAST(0, 'NSDate')", .date(Date(timeIntervalSinceReferenceDate: 0))),
            ("a == CAST(86400.5, \"NSDate\")", .date(Date(timeIntervalSinceReferenceDate: 86400.5))),
            ("a == CAST('12', 'NSNumber')", .integer(12)),
            (
                "a == CAST('00000000-0000-0000-0000-000000000001', 'NSUUID')",
                .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!)
            ),
            ("a == CAST('1.25', 'NSDecimalNumber')", .decimal(Decimal(string: "1.25")!)),
            ("a == CAST('2/p7', 'RowID')", .reference(RowID(entity: 2, primaryKey: 7))),
            ("a == 99999999999999999999", .double(1e20)),
        ])
    func literals(format: String, value: StoreValue) throws {
        guard case .comparison(let comparison) = try FetchPredicate(format: format) else {
            Issue.record("not a comparison")
            return
        }
        #expect(comparison.rhs == .constant(value))
    }

    @Test("reserved words are case-insensitive")
    func reservedWordsCaseInsensitive() throws {
        let upper = try FetchPredicate(format: "a == 1 AND NOT b == 2 OR ANY c IN {1}")
        let lower = try FetchPredicate(format: "a == 1 and not b == 2 or any c in {1}")
        let mixed = try FetchPredicate(format: "a == 1 And Not b == 2 Or Any c In {1}")
        #expect(upper == lower)
        #expect(upper == mixed)
    }

    @Test("AND binds tighter than OR, and chains flatten")
    func precedence() throws {
        let predicate = try FetchPredicate(format: "a == 1 OR b == 2 AND c == 3 OR d == 4")
        guard case .or(let parts) = predicate else {
            Issue.record("not an OR")
            return
        }
        #expect(parts.count == 3)
        if case .and(let inner) = parts[1] { #expect(inner.count == 2) } else { Issue.record("middle is not AND") }
    }

    @Test("symbolic logic operators equal the words")
    func symbolicLogic() throws {
        #expect(
            try FetchPredicate(format: "a == 1 && b == 2 || !(c == 3)")
                == FetchPredicate(format: "a == 1 AND b == 2 OR NOT (c == 3)"))
    }

    @Test("NONE is NOT ANY; SOME is ANY")
    func quantifiers() throws {
        #expect(try FetchPredicate(format: "NONE tags == 'x'") == FetchPredicate(format: "NOT ANY tags == 'x'"))
        #expect(try FetchPredicate(format: "SOME tags == 'x'") == FetchPredicate(format: "ANY tags == 'x'"))
        guard case .comparison(let all) = try FetchPredicate(format: "ALL ages > 3") else {
            Issue.record("not a comparison")
            return
        }
        #expect(all.modifier == .all)
    }

    @Test("parentheses group either predicates or expressions")
    func parenthesesDisambiguate() throws {
        let expression = try FetchPredicate(format: "(a + 1) * 2 > (b)")
        guard case .comparison(let comparison) = expression else {
            Issue.record("not a comparison")
            return
        }
        #expect(
            comparison.lhs
                == .function(
                    "multiply:by:",
                    [.function("add:to:", [.keyPath("a"), .constant(.integer(1))]), .constant(.integer(2))]))
        #expect(comparison.rhs == .keyPath("b"))
        #expect(try FetchPredicate(format: "((a == 1))") == FetchPredicate(format: "a == 1"))
        #expect(try FetchPredicate(format: "(a == 1) AND ((b) == (2))") == FetchPredicate(format: "a == 1 AND b == 2"))
    }

    @Test("arithmetic has the usual precedence, ** groups to the right")
    func arithmetic() throws {
        let sum = try FetchExpression(format: "1 + 2 * 3")
        #expect(
            sum
                == .function(
                    "add:to:",
                    [
                        .constant(.integer(1)),
                        .function("multiply:by:", [.constant(.integer(2)), .constant(.integer(3))]),
                    ]))
        let power = try FetchExpression(format: "2 ** 3 ** 2")
        #expect(
            power
                == .function(
                    "raise:toPower:",
                    [
                        .constant(.integer(2)),
                        .function("raise:toPower:", [.constant(.integer(3)), .constant(.integer(2))]),
                    ]))
        let left = try FetchExpression(format: "10 - 4 - 3")
        #expect(
            left
                == .function(
                    "from:subtract:",
                    [
                        .function("from:subtract:", [.constant(.integer(10)), .constant(.integer(4))]),
                        .constant(.integer(3)),
                    ]))
        #expect(
            try FetchExpression(format: "-age")
                == .function("from:subtract:", [.constant(.integer(0)), .keyPath("age")]))
    }

    @Test(
        "key paths, SELF, variables and collection operators",
        arguments: [
            ("department.name", FetchExpression.keyPath("department.name")),
            ("SELF", .evaluatedObject), ("self", .evaluatedObject), ("SELF.name", .keyPath("name")),
            ("$x", .variable("x")), ("$x.age", .member(.variable("x"), "age")),
            ("items.@count", .collection(.count, of: .keyPath("items"), keyPath: nil)),
            ("items.@sum.price", .collection(.sum, of: .keyPath("items"), keyPath: "price")),
            ("a.items.@avg.unit.price", .collection(.average, of: .keyPath("a.items"), keyPath: "unit.price")),
            ("@max.age", .collection(.max, of: .evaluatedObject, keyPath: "age")),
            (
                "{1, 2}.@count",
                .collection(.count, of: .aggregate([.constant(.integer(1)), .constant(.integer(2))]), keyPath: nil)
            ),
            ("#IN", .keyPath("IN")), ("#self.name", .keyPath("self.name")), ("order.date", .keyPath("order.date")),
            ("now()", .function("now", [])), ("lowercase:(name)", .function("lowercase:", [.keyPath("name")])),
            ("lowercase(name)", .function("lowercase:", [.keyPath("name")])),
            ("modulus:by:(age, 3)", .function("modulus:by:", [.keyPath("age"), .constant(.integer(3))])),
            ("abs:(-3)", .function("abs:", [.constant(.integer(-3))])), ("random()", .function("random", [])),
            ("random:(10)", .function("random:", [.constant(.integer(10))])),
            ("sum:({1, 2})", .function("sum:", [.aggregate([.constant(.integer(1)), .constant(.integer(2))])])),
            (
                "CAST(birth, 'NSNumber')",
                .function("castObject:toType:", [.keyPath("birth"), .constant(.string("NSNumber"))])
            ),
            (
                "SUBQUERY(items, $i, $i.price > 5).@count",
                .collection(
                    .count,
                    of: .subquery(
                        collection: .keyPath("items"), variable: "i",
                        predicate: .comparison(
                            ComparisonPredicate(.member(.variable("i"), "price"), .greaterThan, .constant(.integer(5))))
                    ), keyPath: nil)
            ),
            (
                "TERNARY(a > 1, 'big', 'small')",
                .ternary(
                    .comparison(ComparisonPredicate(.keyPath("a"), .greaterThan, .constant(.integer(1)))),
                    .constant(.string("big")), .constant(.string("small")))
            ),
        ])
    func expressions(format: String, expected: FetchExpression) throws {
        #expect(try FetchExpression(format: format) == expected)
    }

    @Test("format arguments fill %@, %K and the numeric specifiers")
    func formatArguments() throws {
        let p = try FetchPredicate(
            format: "%K == %@ AND age > %d AND h < %f AND n == %ld AND m == %lld AND u == %u AND s == %s AND i == %i",
            "name", "Ada", 30, 1.5, 7, Int64(8), UInt(9), "str", Int32(10))
        #expect(
            p.predicateFormat
                == #"name == "Ada" AND age > 30 AND h < 1.5 AND n == 7 AND m == 8 AND u == 9 AND s == "str" AND i == 10"#
        )
    }

    @Test("%@ with an array, a set, nil, a date, a key path object")
    func objectArguments() throws {
        #expect(try FetchPredicate(format: "a IN %@", [1, 2, 3]).predicateFormat == "a IN {1, 2, 3}")
        #expect(try FetchPredicate(format: "a IN %@", Set(["x"])).predicateFormat == #"a IN {"x"}"#)
        #expect(try FetchPredicate(format: "a == %@", Optional<String>.none).predicateFormat == "a == nil")
        #expect(
            try FetchPredicate(format: "a == %@", Date(timeIntervalSinceReferenceDate: 10)).predicateFormat
                == #"a == CAST(10.0, "NSDate")"#)
        #expect(try FetchPredicate(format: "%@ == 1", PredicateKeyPath("a.b")).predicateFormat == "a.b == 1")
        #expect(
            try FetchPredicate(format: "%K == 1", PredicateKeyPath("items.@count")).predicateFormat
                == "items.@count == 1")
        #expect(
            try FetchPredicate(format: "a == %@", RowID(entity: 3, primaryKey: 12)).predicateFormat
                == #"a == CAST("3/p12", "RowID")"#)
    }

    @Test("a quoted %@ is a literal string, not an argument")
    func quotedSpecifier() throws {
        let p = try FetchPredicate(format: "SELF == '%@'")
        #expect(try !p.evaluate(with: StoreValue.string("Do")))
        #expect(try p.evaluate(with: StoreValue.string("%@")))
    }

    @Test("%K accepts a reserved word as a key")
    func keyArgumentReservedWord() throws {
        let p = try FetchPredicate(format: "%K == 1", "in")
        #expect(p == .comparison(ComparisonPredicate(.keyPath("in"), .equal, .constant(.integer(1)))))
        #expect(p.predicateFormat == "#in == 1")
    }

    @Test("the same reserved-word key written with # reads back")
    func escapedKeyword() throws {
        let p = try FetchPredicate(format: "#AND == 'x' AND #between.#like > 1")
        #expect(p.keyPaths == ["AND", "between.like"])
    }

    @Test("whitespace and newlines between tokens do not matter")
    func whitespace() throws {
        #expect(try FetchPredicate(format: "  a\n==\t1\r\nAND\nb>2 ") == FetchPredicate(format: "a == 1 AND b > 2"))
    }

    @Test("Unicode keys and strings parse")
    func unicode() throws {
        let p = try FetchPredicate(format: "größe == 'Größe 🎉'")
        #expect(p == .comparison(ComparisonPredicate(.keyPath("größe"), .equal, .constant(.string("Größe 🎉")))))
    }

    @Test("TRUEPREDICATE and FALSEPREDICATE")
    func constants() throws {
        #expect(try FetchPredicate(format: "TRUEPREDICATE") == .truePredicate)
        #expect(try FetchPredicate(format: "falsepredicate") == .falsePredicate)
        #expect(
            try FetchPredicate(format: "NOT TRUEPREDICATE OR FALSEPREDICATE")
                == .or([.not(.truePredicate), .falsePredicate]))
    }

    @Test("Swift operators build the same trees as the format")
    func swiftOperators() throws {
        let a = try FetchPredicate(format: "a == 1")
        let b = try FetchPredicate(format: "b == 2")
        let c = try FetchPredicate(format: "c == 3")
        #expect((a && b && c) == (try FetchPredicate(format: "a == 1 AND b == 2 AND c == 3")))
        #expect((a || b) == (try FetchPredicate(format: "a == 1 OR b == 2")))
        #expect(!a == (try FetchPredicate(format: "NOT a == 1")))
    }
}
