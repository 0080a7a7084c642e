import Foundation
import Strata
import Testing

@Suite("Predicate errors")
struct PredicateErrorTests {
    /// Malformed formats and the column the error points at.
    static let malformed: [(String, Int)] = [
        ("", 1), ("   ", 4), ("a ==", 5), ("== 1", 1), ("a == 1 AND", 11), ("a == 1 OR OR b == 2", 11),
        ("(a == 1", 8), ("a == 1)", 7), ("a == (1", 8), ("a === 1", 5), ("a == 'unterminated", 6),
        ("a == \"unterminated", 6), ("a IN {1, 2", 11), ("a IN {1,, 2}", 9), ("a BETWEEN {1}", 11),
        ("a BETWEEN {1, 2, 3}", 11), ("name", 5), ("name foo", 6), ("a == 1 b == 2", 8), ("a ==[x] 1", 6),
        ("a ==[c 1", 8), ("a ==[] 1", 6), ("AND == 1", 1), ("a == IN", 6), ("NOT", 4), ("ANY", 4), ("ANY a", 6),
        ("a == 1 AND NOT", 15), ("a.", 3), ("a..b == 1", 3), ("a == #", 6), ("a == $", 6), ("a == @", 6),
        ("a == 0x", 6), ("a == 12abc", 6), ("a == 1.2.3", 10), ("a == 'x' ~ 1", 10), ("a ^ 1", 3),
        ("SUBQUERY(a, x, TRUEPREDICATE).@count == 1", 13), ("SUBQUERY(a, $x TRUEPREDICATE)", 16),
        ("CAST(1) == a", 1), ("CAST(1, 2) == a", 1), ("a == {1 2}", 9), ("TERNARY(a, 1, 2) == 1", 10),
        ("(a == 1) + 1 == 2", 10), ("-(a == 1)", 2), ("a + == 1", 5), ("a == 1 AND (b == 2 OR)", 22),
        ("a.@count.b == 1", 10), ("a.@count.@count == 1", 10), ("a == '\\u12'", 7), ("lowercase:(a b) == 1", 14),
        ("a == 'x' ==[c] 'y'", 10), ("a == %x", 6),
    ]

    @Test("malformed formats throw a syntax error with the column", arguments: malformed)
    func syntaxErrors(format: String, column: Int) throws {
        do {
            _ = try FetchPredicate(format: format)
            Issue.record("parsed: \(format)")
        } catch let error as FetchPredicateError {
            #expect(error.code == .syntax)
            #expect(error.column == column, "\(error)")
            #expect(error.found != nil)
            #expect(error.expected != nil)
            #expect(error.offset == column - 1)
        }
    }

    @Test("an error names what was found and what was expected")
    func errorDetails() throws {
        let error = try #require(throws: FetchPredicateError.self) {
            try FetchPredicate(format: "name == 'x' AND age >")
        }
        #expect(error.column == 22)
        #expect(error.found == "end of input")
        #expect(error.expected == "an expression")
        #expect(error.description == "predicate syntax error at column 22: expected an expression, found end of input")
        let other = try #require(throws: FetchPredicateError.self) { try FetchPredicate(format: "name == 'x' age > 3") }
        #expect(other.found == "'age'")
        #expect(other.description.contains("AND, OR"))
    }

    @Test("errors on later lines give the line and the column in it")
    func multiline() throws {
        let error = try #require(throws: FetchPredicateError.self) { try FetchPredicate(format: "a == 1 AND\n  b ==") }
        #expect(error.line == 2)
        #expect(error.column == 7)
        #expect(error.description.contains("line 2, column 7"))
    }

    @Test(
        "unsupported parts of Apple's language say so",
        arguments: [
            "FUNCTION(name, 'uppercaseString') == 'A'", "FETCH(x, y, NO) == 1", "items[FIRST] == 1",
            "items[0].name == 'x'",
            "items.@distinctUnionOfObjects.name == 1", "CAST(a, 'NSColor') == 1", "frobnicate:(a) == 1",
            "lowercase:(a, b) == 1", "now(1) == 1", "@unionOfArrays.x == 1",
        ])
    func unsupported(format: String) {
        #expect(predicateErrorCode { _ = try FetchPredicate(format: format) } == .unsupported)
    }

    @Test(
        "format arguments: missing, extra and of the wrong kind",
        arguments: [
            ("a == %@", [any PredicateArgument & Sendable]()),
            ("a == %@", [1, 2] as [any PredicateArgument & Sendable]),
            ("%K == 1", [3] as [any PredicateArgument & Sendable]),
            ("a == %d", ["x"] as [any PredicateArgument & Sendable]),
            ("a == %f", ["x"] as [any PredicateArgument & Sendable]),
            ("a == %s", [1] as [any PredicateArgument & Sendable]),
            ("%K == 1", ["a b"] as [any PredicateArgument & Sendable]),
            ("%K == 1", ["a..b"] as [any PredicateArgument & Sendable]),
            ("%K == 1", [""] as [any PredicateArgument & Sendable]),
            ("a == %d", [1.5] as [any PredicateArgument & Sendable]),
            ("a IN %@", [StoreValue.unfetched] as [any PredicateArgument & Sendable]),
        ])
    func argumentErrors(format: String, arguments: [any PredicateArgument & Sendable]) {
        #expect(
            predicateErrorCode { _ = try FetchPredicate(format: format, argumentArray: arguments) } == .invalidArgument)
    }

    @Test("CAST of a constant that does not convert is a type mismatch at parse time")
    func castMismatch() {
        #expect(predicateErrorCode { _ = try FetchPredicate(format: "a == CAST('x', 'NSNumber')") } == .typeMismatch)
        #expect(predicateErrorCode { _ = try FetchPredicate(format: "a == CAST('nope', 'NSUUID')") } == .typeMismatch)
        #expect(predicateErrorCode { _ = try FetchPredicate(format: "a == CAST({1}, 'NSDate')") } == nil)
    }

    @Test(
        "nesting deeper than the limit throws tooDeep instead of crashing",
        arguments: [
            "parentheses", "not", "minus", "braces", "functions", "subqueries",
        ])
    func depthLimit(kind: String) {
        let depth = FetchPredicate.maximumNestingDepth + 10
        let format: String
        switch kind {
        case "parentheses":
            format = String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
        case "not": format = String(repeating: "NOT ", count: depth) + "a == 1"
        case "minus": format = "a == " + String(repeating: "-", count: depth) + "1"
        case "braces": format = "a IN " + String(repeating: "{", count: depth) + String(repeating: "}", count: depth)
        case "functions":
            format = String(repeating: "abs:(", count: depth) + "1" + String(repeating: ")", count: depth) + " == 1"
        default:
            format =
                String(repeating: "SUBQUERY(a, $x, ", count: depth) + "TRUEPREDICATE"
                + String(repeating: ").@count > 0", count: depth)
        }
        #expect(predicateErrorCode { _ = try FetchPredicate(format: format) } == .tooDeep)
    }

    /// Runs `body` on a thread of its own with a stack of `stackSize` bytes and waits for it.
    static func onThread<T: Sendable>(stackSize: Int, _ body: @escaping @Sendable () -> T) -> T {
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            result.withLock { $0 = body() }
            done.signal()
        }
        thread.stackSize = stackSize
        thread.start()
        done.wait()
        // The thread stored its result before signalling.
        return result.withLock { $0! }
    }

    @Test(
        "on a thread with a small stack, deep nesting throws tooDeep before the stack runs out",
        arguments: [
            "parentheses", "subqueries",
        ])
    func smallStack(kind: String) {
        let depth = FetchPredicate.maximumNestingDepth - 1
        let format =
            kind == "parentheses"
            ? String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
            : String(repeating: "SUBQUERY(a, $x, ", count: depth) + "TRUEPREDICATE"
                + String(repeating: ").@count > 0", count: depth)
        let code = Self.onThread(stackSize: 512 * 1024) {
            predicateErrorCode { _ = try FetchPredicate(format: format) }
        }
        #expect(code == .tooDeep)
    }

    @Test("nesting up to the limit parses and evaluates (on a thread whose stack holds it)")
    func depthWithinLimit() throws {
        let parsed = Self.onThread(stackSize: 64 * 1024 * 1024) { () -> Bool in
            (try? Self.parseToTheLimit()) ?? false
        }
        #expect(parsed)
    }

    /// Parses, evaluates and reprints predicates nested one level under the limit; `true` when
    /// every answer is right (it runs on a thread of its own, where `#expect` cannot record).
    static func parseToTheLimit() throws -> Bool {
        let depth = FetchPredicate.maximumNestingDepth - 1
        let format = String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
        let p = try FetchPredicate(format: format)
        let nots = try FetchPredicate(format: String(repeating: "NOT ", count: depth) + "a == 1")
        return try p.evaluate(with: ["a": StoreValue.integer(1)])
            && FetchPredicate(format: p.predicateFormat) == p
            && nots.evaluate(with: ["a": StoreValue.integer(1)]) == (depth % 2 == 0)
    }

    @Test("huge flat inputs parse without recursion")
    func hugeFlatInput() throws {
        let terms = (0..<20_000).map { "a == \($0)" }.joined(separator: " OR ")
        let p = try FetchPredicate(format: terms)
        #expect(try p.evaluate(with: ["a": StoreValue.integer(19_999)]))
        let sum = "a == " + (0..<200).map(String.init).joined(separator: " + ")
        #expect(try FetchPredicate(format: sum).evaluate(with: ["a": StoreValue.integer(19_900)]))
        let longSum = "a == " + (0..<20_000).map(String.init).joined(separator: " * ")
        #expect(predicateErrorCode { _ = try FetchPredicate(format: longSum) } == .tooDeep)
        let list = "a IN {" + (0..<50_000).map(String.init).joined(separator: ", ") + "}"
        #expect(try FetchPredicate(format: list).evaluate(with: ["a": StoreValue.integer(49_999)]))
    }

    @Test("codes match with ~= in catch clauses")
    func codePattern() {
        do {
            _ = try FetchPredicate(format: "a ==")
            Issue.record("parsed")
        } catch FetchPredicateError.Code.syntax {
            // expected
        } catch {
            Issue.record("wrong error \(error)")
        }
    }
}
