import Foundation
import Strata
import Testing

@Suite("Predicate evaluation")
struct PredicateEvaluationTests {
    /// Formats evaluated against ada (see ``PeopleFixture``) and the answer.
    static let onAda: [(String, Bool)] = [
        // Comparisons and numbers across types
        ("age == 36", true), ("age = 36", true), ("age == 36.0", true), ("age != 36", false), ("age <> 35", true),
        ("age < 37", true), ("age <= 36", true), ("age =< 35", false), ("age > 35.5", true), ("age >= 36", true),
        ("age => 37", false), ("36 == age", true), ("37 > age", true), ("age BETWEEN {30, 40}", true),
        ("age BETWEEN {36, 36}", true), ("age BETWEEN {37, 40}", false), ("age BETWEEN {40, 30}", true),
        ("age IN {35, 36, 37}", true), ("age IN {1, 2}", false), ("age IN {}", false),
        ("salary == 1234.5", true), ("salary > 1234", true), ("salary < CAST('1234.51', 'NSDecimalNumber')", true),
        ("height > 1.6", true), ("height < 2", true), ("active == YES", true), ("active == 1", true),
        ("active == TRUE", true), ("active != NO", true), ("active == 0", false), ("active > 0", true),
        // Strings
        ("name == 'Ada'", true), ("name == 'ada'", false), ("name ==[c] 'ada'", true), ("name !=[c] 'ADA'", false),
        ("name !=[c] 'grace'", true), ("name < 'B'", true), ("name <[c] 'b'", true), ("name > 'Zed'", false),
        ("name BEGINSWITH 'A'", true), ("name BEGINSWITH 'a'", false), ("name BEGINSWITH[c] 'a'", true),
        ("name BEGINSWITH ''", false), ("name ENDSWITH 'da'", true), ("name ENDSWITH[c] 'DA'", true),
        ("name CONTAINS 'd'", true), ("name CONTAINS 'x'", false), ("name CONTAINS[c] 'D'", true),
        ("city == 'Zurich'", false), ("city ==[d] 'Zurich'", true), ("city ==[cd] 'zurich'", true),
        ("city BEGINSWITH[d] 'Zu'", true), ("city CONTAINS[cd] 'URI'", true), ("city LIKE[d] 'Zur*'", true),
        ("name LIKE 'A*'", true), ("name LIKE 'A?a'", true), ("name LIKE 'A?'", false), ("name LIKE '*'", true),
        ("name LIKE 'a*'", false), ("name LIKE[c] 'a*'", true), ("name LIKE '*d*'", true), ("name LIKE 'Ada*'", true),
        ("email LIKE '*@*.com'", true), ("email LIKE '*@*.org'", false), ("email LIKE '?*@example.com'", true),
        ("name MATCHES 'A.a'", true), ("name MATCHES 'A'", false), ("name MATCHES '[A-Z][a-z]+'", true),
        ("name MATCHES 'ad.'", false), ("name MATCHES[c] 'ad.'", true), ("email MATCHES '.+@.+\\\\..+'", true),
        ("'x' IN name", false), ("'d' IN name", true), ("'D' IN[c] name", true), ("name IN {'Ada', 'Bo'}", true),
        ("name IN[c] {'ada', 'bo'}", false), ("name IN {'ada', 'bo'}", false),
        // nil
        ("nickname == nil", true), ("nickname != nil", false), ("nil == nickname", true), ("name == nil", false),
        ("name != nil", true), ("nickname < 5", false), ("nickname > 5", false), ("nickname BEGINSWITH 'a'", false),
        ("nickname LIKE '*'", false), ("nickname IN {1, 2}", false), ("nickname BETWEEN {1, 2}", false),
        ("nickname MATCHES '.*'", false), ("nickname CONTAINS 'a'", false), ("name CONTAINS nil", false),
        // Relationships
        ("department.name == 'Engineering'", true), ("department.name BEGINSWITH[c] 'eng'", true),
        ("department.head.name == 'Grace'", true), ("department.budget > 1000000", true),
        ("department.head.department.name == 'Engineering'", true), ("department != nil", true),
        ("ANY friends.name == 'Alan'", true), ("ANY friends.name == 'Bob'", false), ("SOME friends.age > 44", true),
        ("ALL friends.age > 40", true), ("ALL friends.age > 41", false), ("NONE friends.age > 50", true),
        ("NONE friends.age > 42", false), ("ANY friends.age BETWEEN {44, 46}", true),
        ("ANY friends.name IN {'Grace', 'Bob'}", true), ("ANY friends.nickname == nil", true),
        ("ANY friends.name LIKE[c] 'g*'", true), ("ALL friends.active == YES", false),
        ("'Alan' IN friends.name", true), ("'Bob' IN friends.name", false), ("friends.name CONTAINS 'Grace'", true),
        ("ANY friends.friends.name == 'Ada'", true), ("ANY department.members.name == 'Alan'", true),
        // Collection operators
        ("friends.@count == 2", true), ("friends.@count > 2", false), ("friends.@sum.age == 86", true),
        ("friends.@avg.age == 43", true), ("friends.@min.age == 41", true), ("friends.@max.age == 45", true),
        ("friends.@max.name == 'Grace'", true), ("department.members.@count == 3", true),
        ("department.members.@avg.age > 40", true), ("friends.age.@sum == 86", true), ("friends.age.@max == 45", true),
        ("{1, 2, 3}.@sum == 6", true), ("{1, 2, 3}.@avg == 2", true), ("{}.@count == 0", true),
        ("{3, 1, 2}.@min == 1", true), ("{'b', 'a'}.@max == 'b'", true),
        // Subqueries
        ("SUBQUERY(friends, $f, $f.age > 40).@count == 2", true),
        ("SUBQUERY(friends, $f, $f.age > 42).@count == 1", true),
        ("SUBQUERY(friends, $f, $f.age > age).@count == 2", true),
        ("SUBQUERY(friends, $f, $f.name == 'Grace' AND $f.age > age).@count == 1", true),
        ("SUBQUERY(friends, $f, ANY $f.friends.name == 'Ada').@count == 1", true),
        ("SUBQUERY(friends, $f, SUBQUERY($f.friends, $g, $g.age < 40).@count > 0).@count == 1", true),
        ("SUBQUERY(friends, $f, $f.active == NO).@count == 0", false),
        // SELF, logic and constants
        ("SELF == SELF", true), ("SELF != nil", true), ("TRUEPREDICATE", true), ("FALSEPREDICATE", false),
        ("NOT FALSEPREDICATE", true), ("age > 30 AND name == 'Ada'", true), ("age > 40 OR name == 'Ada'", true),
        ("age > 40 AND name == 'Ada'", false), ("NOT age > 40", true), ("!(age > 30)", false),
        ("age > 40 OR (name == 'Ada' AND active == YES)", true),
        ("(age > 40 OR name == 'Ada') AND active == NO", false),
        ("NOT NOT age == 36", true),
        // Arithmetic and functions
        ("age + 4 == 40", true), ("age - 6 == 30", true), ("age * 2 == 72", true), ("age / 4 == 9", true),
        ("age / 5 == 7.2", true), ("2 ** 3 == 8", true), ("-age == -36", true), ("age + height > 37.6", true),
        ("modulus:by:(age, 5) == 1", true), ("abs:(-3) == 3", true), ("sqrt:(16) == 4", true),
        ("lowercase(name) == 'ada'", true), ("uppercase:(name) == 'ADA'", true), ("ceiling:(1.2) == 2", true),
        ("floor:(1.8) == 1", true), ("trunc:(-1.8) == -1", true), ("ln:(1) == 0", true), ("log:(100) == 2", true),
        ("exp:(0) == 1", true), ("raise:toPower:(2, 10) == 1024", true), ("sum:({1, 2}) == 3", true),
        ("count:(friends) == 2", true), ("max:(friends.age) == 45", true), ("average:({2, 4}) == 3", true),
        ("median:({5, 1, 3}) == 3", true), ("stddev:({2, 4, 4, 4, 5, 5, 7, 9}) == 2", true),
        ("bitwiseAnd:with:(6, 3) == 2", true), ("bitwiseOr:with:(6, 3) == 7", true),
        ("bitwiseXor:with:(6, 3) == 5", true), ("leftshift:by:(1, 4) == 16", true),
        ("rightshift:by:(16, 2) == 4", true),
        ("onesComplement:(0) == -1", true), ("noindex:(age) == 36", true), ("now() > CAST(0, 'NSDate')", true),
        ("random() < 1", true), ("random:(5) < 5", true), ("birthday < CAST(0, 'NSDate')", true),
        ("birthday + 31536000 == CAST(0, 'NSDate')", true), ("CAST(birthday, 'NSNumber') == -31536000", true),
        ("CAST('36', 'NSNumber') == age", true), ("CAST(age, 'NSString') == '36'", true),
        ("TERNARY(age > 30, 'old', 'young') == 'old'", true), ("TERNARY(age > 40, 1, 2) == 2", true),
        ("nickname + 1 == nil", true), ("id == CAST('00000000-0000-0000-0000-000000000001', 'NSUUID')", true),
    ]

    @Test("predicates evaluate against an object graph", arguments: onAda)
    func evaluatesOnAda(format: String, expected: Bool) throws {
        let people = PeopleFixture()
        #expect(try evaluate(format, people.ada) == expected)
    }

    @Test("quantifiers over empty collections: ANY false, ALL true, NONE true")
    func emptyCollections() throws {
        let grace = PeopleFixture().grace
        #expect(try !evaluate("ANY friends.age > 0", grace))
        #expect(try evaluate("ALL friends.age > 1000", grace))
        #expect(try evaluate("NONE friends.age > 0", grace))
        #expect(try evaluate("friends.@count == 0", grace))
        #expect(try evaluate("friends.@sum.age == 0", grace))
        #expect(try evaluate("friends.@avg.age == nil", grace))
        #expect(try evaluate("friends.@max.age == nil", grace))
        #expect(try evaluate("SUBQUERY(friends, $f, TRUEPREDICATE).@count == 0", grace))
    }

    @Test("a nil to-one relationship reads nil through its key path")
    func nilToOne() throws {
        let edsger = PeopleFixture().edsger
        #expect(try evaluate("department == nil", edsger))
        #expect(try evaluate("department.name == nil", edsger))
        #expect(try !evaluate("department.name == 'Engineering'", edsger))
        #expect(try !evaluate("department.budget > 0", edsger))
    }

    @Test("objects compare by identity with references and with each other")
    func references() throws {
        let people = PeopleFixture()
        #expect(try evaluate("department == %@", people.ada, RowID(entity: 2, primaryKey: 100)))
        #expect(try !evaluate("department == %@", people.ada, RowID(entity: 2, primaryKey: 101)))
        #expect(try evaluate("SELF IN %@", people.ada, [RowID(entity: 1, primaryKey: 1)]))
        #expect(try evaluate("%@ IN friends", people.ada, RowID(entity: 1, primaryKey: 3)))
        #expect(try evaluate("friends CONTAINS %@", people.ada, RowID(entity: 1, primaryKey: 2)))
        #expect(try evaluate("ANY friends == department.head", people.ada))
    }

    @Test("dictionaries of store values evaluate; a missing key is nil")
    func dictionaries() throws {
        let row: [String: StoreValue] = ["title": .string("A Title"), "count": .integer(3)]
        #expect(try evaluate("title == 'A Title'", row))
        #expect(try evaluate("count == 3.0", row))
        #expect(try evaluate("missing == nil", row))
        #expect(try !evaluate("missing == 'x'", row))
    }

    @Test("values collections: CONTAINS, IN, ANY and operators")
    func scalarCollections() throws {
        let object = TaggedObject(
            tags: [.string("swift"), .string("Linux")], scores: [.integer(3), .double(4.5), .null])
        #expect(try evaluate("tags CONTAINS 'swift'", object))
        #expect(try !evaluate("tags CONTAINS[c] 'linux'", object))  // membership ignores [c], as containsObject:
        #expect(try !evaluate("tags CONTAINS 'linux'", object))
        #expect(try evaluate("'Linux' IN tags", object))
        #expect(try evaluate("ANY tags BEGINSWITH 'sw'", object))
        #expect(try evaluate("scores.@sum == 7.5", object))
        #expect(try evaluate("scores.@count == 3", object))
        #expect(try evaluate("scores.@max == 4.5", object))
        #expect(try evaluate("ANY scores == nil", object))
        #expect(try evaluate("tags == {'swift', 'Linux'}", object))
        #expect(try !evaluate("tags == {'Linux', 'swift'}", object))
    }

    @Test("SELF of plain values: filtering a list of strings")
    func selfValues() throws {
        let pitches = ["Do", "Re", "Mi", "Fa", "So", "La"].map(StoreValue.string)
        let predicate = try FetchPredicate(format: "SELF == 'Do'")
        #expect(try pitches.filter { try predicate.evaluate(with: $0) } == [.string("Do")])
        let like = try FetchPredicate(format: "SELF LIKE[c] '?a'")
        #expect(try pitches.filter { try like.evaluate(with: $0) }.count == 2)
        #expect(try evaluate("SELF BETWEEN {1, 5}", StoreValue.integer(3)))
        #expect(try evaluate("SELF CONTAINS %@", StoreValue.string("AABBBAA"), "BBB"))
        #expect(try evaluate("%@ IN SELF", StoreValue.string("AABBBAA"), "BBB"))
    }

    @Test(
        "LIKE wildcards and escapes",
        arguments: [
            ("abc", "a*", true), ("a", "a*", true), ("a\nb", "a*", true), ("axb", "a?b", true), ("ab", "a?b", false),
            ("axxb", "a?b", false), ("a.b", "a.b", true), ("axb", "a.b", false), ("a+b", "a+b", true),
            ("aab", "a+b", false),
            ("a(b", "a(b", true), ("[ab]", "[ab]", true), ("a", "[ab]", false), ("x", "a|x", false),
            ("a$^b", "a$^b", true),
            ("a*b", "a\\*b", true), ("axb", "a\\*b", false), ("a?", "a\\?", true), ("ab", "a\\?", false),
            ("a\\b", "a\\\\b", true), ("", "*", true), ("", "?", false), ("aaa", "*a*a*a*", true),
            ("aa", "*a*a*a*", false),
            ("mississippi", "m*iss*pi", true), ("mississippi", "m*iss*ps", false), ("🎉x", "?x", true), ("é", "?", true),
        ])
    func like(string: String, pattern: String, expected: Bool) throws {
        #expect(try evaluate("SELF LIKE %@", StoreValue.string(string), pattern) == expected)
    }

    @Test(
        "MATCHES matches the whole string; ^ and $ also match at line breaks",
        arguments: [
            ("a\nb", ".*^b$", true), ("a\nb", "^a$.*", true), ("a\nb", "a$\\nb", true), ("a\nb", "a\\n^b", true),
            ("ab", "^ab$", true), ("a\nb", "^b$", false), ("a\nb", "^a$", false), ("a\nb", "a.b", true),
            ("abc", "a|abc", true), ("abc", "b", false), ("2024-01-02", "\\d{4}-\\d{2}-\\d{2}", true), ("", "", false),
        ])
    func matches(string: String, pattern: String, expected: Bool) throws {
        #expect(try evaluate("SELF MATCHES %@", StoreValue.string(string), pattern) == expected)
    }

    @Test(
        "case and diacritic folding is Unicode-aware",
        arguments: [
            ("ÉCOLE", "école", "==[c]", true), ("ÉCOLE", "ecole", "==[c]", false), ("ÉCOLE", "ecole", "==[cd]", true),
            ("naïve", "naive", "==[d]", true), ("Ångström", "angstrom", "==[cd]", true),
            ("ΣΟΦΊΑ", "σοφία", "==[c]", true),
            ("straße", "STRASSE", "==[c]", true), ("résumé", "RESUME", "BEGINSWITH[cd]", true),
            ("Café", "CAFE", "ENDSWITH[c]", false),
            ("e\u{301}", "\u{e9}", "==", false), ("e\u{301}", "\u{e9}", "==[c]", true),
            ("İstanbul", "istanbul", "BEGINSWITH[cd]", true),
        ])
    func folding(lhs: String, rhs: String, op: String, expected: Bool) throws {
        #expect(try evaluate("SELF \(op) %@", StoreValue.string(lhs), rhs) == expected)
    }

    @Test(
        "numbers compare across integer, double, decimal and Boolean",
        arguments: [
            (StoreValue.integer(1), StoreValue.double(1.0), true), (.integer(1), .decimal(1), true),
            (.bool(true), .integer(1), true),
            (.bool(false), .double(0), true), (.double(0.1), .decimal(Decimal(string: "0.1")!), true),
            (.integer(Int64.max), .double(9.223372036854775807e18), false), (.integer(2), .double(2.5), false),
            (.double(.nan), .double(.nan), false), (.decimal(Decimal(string: "2.50")!), .double(2.5), true),
        ])
    func numericEquality(a: StoreValue, b: StoreValue, expected: Bool) throws {
        #expect(try StoreValue.predicateEqual(a, b) == expected)
    }

    @Test("numeric ordering across types")
    func numericOrdering() throws {
        #expect(try StoreValue.predicateOrder(.integer(2), .double(2.5)) == .orderedAscending)
        #expect(try StoreValue.predicateOrder(.decimal(3), .integer(2)) == .orderedDescending)
        #expect(try StoreValue.predicateOrder(.bool(true), .double(0.5)) == .orderedDescending)
        #expect(try StoreValue.predicateOrder(.double(.nan), .integer(1)) == nil)
        #expect(try StoreValue.predicateOrder(.null, .integer(1)) == nil)
        #expect(try StoreValue.predicateOrder(.integer(Int64.max), .double(9.3e18)) == .orderedAscending)
        #expect(
            try StoreValue.predicateOrder(.string("a"), .string("B"), options: .caseInsensitive) == .orderedAscending)
        #expect(try StoreValue.predicateOrder(.string("a"), .string("B")) == .orderedDescending)
    }

    @Test("format arguments evaluate like literals (GNUstep's record checks)")
    func argumentEvaluation() throws {
        let record: [String: StoreValue] = ["Name": .string("John"), "Age": .integer(34)]
        #expect(try evaluate("%K == %@", record, "Name", "John"))
        #expect(try evaluate("%K MATCHES[c] %@", record, "Name", "john"))
        #expect(try evaluate("%K BEGINSWITH %@", record, "Name", "Jo"))
        #expect(try evaluate("%K == %d", record, "Age", 34))
        #expect(try evaluate("%K < %d", record, "Age", 40))
        #expect(try evaluate("%K <= %@", record, "Age", 34))
        #expect(try evaluate("%K != %@", record, "Age", 20))
        #expect(try evaluate("%K BETWEEN %@", record, "Age", [20, 40]))
        #expect(try evaluate("%K < %f", record, "Age", 40.5))
        #expect(try evaluate("%f > %K", record, 40.5, "Age"))
        #expect(try !evaluate("%@ > %@", record, 1, 1))
    }

    @Test("substitution variables: from the evaluation, from withSubstitutionVariables, and missing")
    func variables() throws {
        let ada = PeopleFixture().ada
        let template = try FetchPredicate(format: "age > $MIN AND name IN $NAMES")
        #expect(try template.evaluate(with: ada, substitutionVariables: ["MIN": 30, "NAMES": ["Ada", "Bo"]]))
        #expect(try !template.evaluate(with: ada, substitutionVariables: ["MIN": 40, "NAMES": ["Ada"]]))
        let bound = try template.withSubstitutionVariables(["MIN": 30, "NAMES": ["Ada", "Bo"]])
        #expect(bound.predicateFormat == #"age > 30 AND name IN {"Ada", "Bo"}"#)
        #expect(try bound.evaluate(with: ada))
        #expect(predicateErrorCode { _ = try template.evaluate(with: ada) } == .missingVariable)
        let partial = try template.withSubstitutionVariables(["MIN": 30])
        #expect(partial.predicateFormat == "age > 30 AND name IN $NAMES")
        let keyed = try FetchPredicate(format: "$K == 'Ada'").withSubstitutionVariables(["K": PredicateKeyPath("name")])
        #expect(keyed.predicateFormat == #"name == "Ada""#)
        let member = try FetchPredicate(format: "$D.name == 'Engineering'").withSubstitutionVariables([
            "D": PredicateKeyPath("department")
        ])
        #expect(member == (try FetchPredicate(format: "department.name == 'Engineering'")))
        #expect(try member.evaluate(with: ada))
    }

    @Test("subquery variables are not substituted")
    func subqueryVariablesStayBound() throws {
        let p = try FetchPredicate(format: "SUBQUERY(friends, $f, $f.age > $MIN).@count == 2")
        let bound = try p.withSubstitutionVariables(["f": 1, "MIN": 40])
        #expect(bound.predicateFormat == "SUBQUERY(friends, $f, $f.age > 40).@count == 2")
        #expect(try bound.evaluate(with: PeopleFixture().ada))
    }

    @Test("key paths the predicate reads")
    func keyPaths() throws {
        #expect(
            try FetchPredicate(format: "name == 'x' AND department.name == 'y'").keyPaths == [
                "name", "department.name",
            ])
        #expect(
            try FetchPredicate(format: "items.@sum.price > 5 AND tags.@count > 1").keyPaths == [
                "items", "items.price", "tags",
            ])
        #expect(
            try FetchPredicate(
                format: "SUBQUERY(items, $i, $i.price > 5 AND $i.kind.name == 'a' AND age > 1).@count > 0"
            ).keyPaths
                == ["items", "items.price", "items.kind.name", "age"])
        #expect(try FetchPredicate(format: "TRUEPREDICATE").keyPaths.isEmpty)
        #expect(try FetchPredicate(format: "lowercase(name) == $X").keyPaths == ["name"])
    }

    @Test(
        "evaluation errors are thrown, never a silent false",
        arguments: [
            ("name < CAST(0, 'NSDate')", FetchPredicateError.Code.typeMismatch), ("name > 3", .typeMismatch),
            ("age BEGINSWITH 'a'", .typeMismatch), ("birthday LIKE 'x'", .typeMismatch),
            ("friends.age > 3", .typeMismatch),
            ("ANY name == 'x'", .typeMismatch), ("name.length > 3", .typeMismatch),
            ("name MATCHES '(['", .invalidRegularExpression),
            ("age == $UNBOUND", .missingVariable), ("nosuchkey == 1", .unknownKeyPath), ("age / 0 == 1", .typeMismatch),
            ("id < CAST('00000000-0000-0000-0000-000000000001', 'NSUUID')", .typeMismatch), ("age IN 5", .typeMismatch),
            ("name.@sum == 1", .typeMismatch), ("uppercase:(age) == 'x'", .typeMismatch),
            ("friends.@sum.name == 1", .typeMismatch),
            ("age CONTAINS 3", .typeMismatch), ("age BETWEEN 3", .typeMismatch),
            ("modulus:by:(age, 0) == 1", .typeMismatch),
        ])
    func evaluationErrors(format: String, code: FetchPredicateError.Code) throws {
        let ada = PeopleFixture().ada
        let predicate = try FetchPredicate(format: format)
        #expect(predicateErrorCode { _ = try predicate.evaluate(with: ada) } == code)
    }

    @Test("short-circuit: AND stops at the first false, OR at the first true")
    func shortCircuit() throws {
        let ada = PeopleFixture().ada
        #expect(try !evaluate("FALSEPREDICATE AND name > 3", ada))
        #expect(try evaluate("TRUEPREDICATE OR name > 3", ada))
    }

    @Test("expression values can be read on their own")
    func expressionValues() throws {
        let ada = PeopleFixture().ada
        #expect(try FetchExpression(format: "age * 2").value(with: ada) == .integer(72))
        #expect(try FetchExpression(format: "friends.@avg.age").value(with: ada) == .double(43))
        #expect(
            try FetchExpression(format: "friends").value(with: ada)
                == .references([RowID(entity: 1, primaryKey: 2), RowID(entity: 1, primaryKey: 3)]))
        #expect(try FetchExpression(format: "{1, 2}.@sum").value(with: ada) == .integer(3))
    }
}
