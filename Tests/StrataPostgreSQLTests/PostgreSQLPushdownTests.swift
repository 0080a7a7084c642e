import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataPostgreSQL

@Suite("PostgreSQL pushdown")
struct PostgreSQLPushdownTests {
    static let layout = StoreLayout(
        model: ConformanceModel.model, schema: "s", entities: ConformanceModel.model.entities)

    static func translate(_ entity: String, _ format: String) throws -> (
        sql: String?, exact: Bool, translator: QueryTranslator
    ) {
        var translator = QueryTranslator(layout: layout, strings: true)
        let description = try #require(ConformanceModel.model.entity(named: entity))
        let (sql, exact) = translator.whereClause(try FetchPredicate(format: format), description, "t0")
        return (sql, exact, translator)
    }

    @Test("corpus predicates: exact in SQL, narrowed in SQL and finished by the driver, or left to the core")
    func inventory() throws {
        var narrowed: [String] = []
        var untouched: [String] = []
        var leftToCore: [String] = []
        for (entity, format) in PredicateCorpus.entries {
            let (sql, exact, _) = try Self.translate(entity, format)
            guard !exact else { continue }
            let name = "\(entity): \(format)"
            if sql == nil { untouched.append(name) } else { narrowed.append(name) }
            let description = try #require(ConformanceModel.model.entity(named: entity))
            if CompiledRowPredicate(try FetchPredicate(format: format), entity: description) == nil {
                leftToCore.append(name)
            }
        }
        let exactCount = PredicateCorpus.entries.count - narrowed.count - untouched.count
        print("exact in SQL: \(exactCount) of \(PredicateCorpus.entries.count)")
        print(
            "narrowed in SQL, finished with the evaluator (\(narrowed.count)):\n  " + narrowed.joined(separator: "\n  ")
        )
        print("not narrowed in SQL (\(untouched.count)):\n  " + untouched.joined(separator: "\n  "))
        print("answered by the core, not the driver (\(leftToCore.count)):\n  " + leftToCore.joined(separator: "\n  "))
        #expect(exactCount == 57)
        #expect(untouched == Self.notNarrowed)
        #expect(leftToCore == Self.leftToCore)
    }

    /// MATCHES (ICU's syntax is not PostgreSQL's), SUBQUERY, aggregates other than @count,
    /// arithmetic, a decimal against a double (the evaluator's Decimal-to-double conversion is its
    /// own) and NONE over string operators (a prefilter cannot be negated).
    static let notNarrowed = [
        "Employee: name MATCHES '[A-Z].*'", "Employee: name MATCHES[c] 'a.*'",
        "Employee: NONE mentees.name BEGINSWITH 'A'",
        "Employee: SUBQUERY(mentees, $m, $m.age > 30).@count >= 2", "Employee: mentees.@max.age > 45",
        "Employee: mentees.@avg.age < 40", "Employee: mentees.@sum.age > 100", "Employee: mentees.@min.age == 20",
        "Employee: age * 2 > 80", "Employee: age + 10 == 44", "Employee: -age < -50", "Employee: age / 7 > 4",
        "Department: SUBQUERY(employees, $e, $e.salary == nil).@count > 0", "Item: decimal > 4.5",
        "Item: NONE tags.name ==[cd] 'eclat'",
    ]
    /// What the driver cannot finish itself (relationships or arithmetic in the predicate).
    static let leftToCore = [
        "Employee: department.name BEGINSWITH[c] 's'", "Employee: NONE mentees.name BEGINSWITH 'A'",
        "Employee: SUBQUERY(mentees, $m, $m.age > 30).@count >= 2", "Employee: mentees.@max.age > 45",
        "Employee: mentees.@avg.age < 40", "Employee: mentees.@sum.age > 100", "Employee: mentees.@min.age == 20",
        "Employee: age * 2 > 80", "Employee: age + 10 == 44", "Employee: -age < -50", "Employee: age / 7 > 4",
        "Department: ANY employees.name ==[c] 'DAN'",
        "Department: SUBQUERY(employees, $e, $e.salary == nil).@count > 0",
        "Item: NONE tags.name ==[cd] 'eclat'",
    ]

    @Test("case and diacritic folding of plain ASCII text is ASCII lower-casing, as the prefilters assume")
    func asciiFolding() {
        for value in 2...127 where value != 13 {
            let text = String(UnicodeScalar(UInt8(value)))
            let lower = text.lowercased()
            #expect(ComparisonOptions.caseInsensitive.fold(text) == lower, "\(value)")
            #expect(ComparisonOptions.diacriticInsensitive.fold(text) == text, "\(value)")
            #expect(ComparisonOptions([.caseInsensitive, .diacriticInsensitive]).fold(text) == lower, "\(value)")
        }
    }

    @Test("LIKE patterns become PostgreSQL's, literals escaped and folded one by one")
    func likePatterns() {
        #expect(QueryTranslator.likePattern("a*b?c", folding: []) == "a%b_c")
        #expect(QueryTranslator.likePattern("100%_\\x\\*", folding: []) == "100\\%\\_x*")
        #expect(QueryTranslator.likePattern("AB*", folding: .caseInsensitive) == "ab%")
        #expect(QueryTranslator.likePattern("trailing\\", folding: []) == "trailing\\\\")
    }

    @Test("identifiers are quoted and every value is a parameter")
    func quotingAndBinding() throws {
        let (sql, exact, translator) = try Self.translate(
            "Employee", "name == \"x'); DROP TABLE \\\"ZEMPLOYEE\\\"; --\" AND department.name == 'R' AND age > 30")
        #expect(exact)
        let text = try #require(sql)
        #expect(!text.contains("DROP"))
        #expect(text.contains("t0.\"ZNAME\""))
        #expect(text.contains("r1.\"ZNAME\""))
        #expect(translator.joins == ["LEFT JOIN \"s\".\"ZDEPARTMENT\" r1 ON r1.\"Z_PK\" = t0.\"ZDEPARTMENT\""])
        #expect(translator.parameters.count == 3)
        #expect(text.contains("$1") && text.contains("$2") && text.contains("$3"))
    }

    @Test("integers compare with fractions and huge doubles exactly, as the evaluator does")
    func integerAgainstDouble() throws {
        #expect(try Self.translate("Employee", "age < 27.5").sql == "(t0.\"ZAGE\" <= $1)")
        #expect(try Self.translate("Employee", "age == 27.5").sql == "(FALSE)")
        #expect(try Self.translate("Employee", "age != 27.5").sql == "(TRUE)")
        #expect(try Self.translate("Employee", "age < 1e300").sql == "(t0.\"ZAGE\" IS NOT NULL)")
        #expect(try Self.translate("Employee", "age > 1e300").sql == "(FALSE)")
        // A double column against an integer beyond 2^53 is left to the evaluator.
        #expect(try !Self.translate("Employee", "salary > 9007199254740993").exact)
    }
}
