import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@Suite("Compiled row predicates")
struct CompiledRowPredicateTests {
    @Test("compiled predicates accept exactly the rows the evaluator accepts, and decline what they cannot read")
    func agreesWithEvaluator() throws {
        let stack = try TestStack(seeded: true)
        let model = ConformanceModel.model
        var compiledCount = 0
        for (entityName, format) in PredicateCorpus.entries {
            let entity = try #require(model.entity(named: entityName))
            let predicate = try FetchPredicate(format: format)
            let rows = try stack.store.driver.fetch(StoreFetch(entity: entity)).rows
            guard let compiled = CompiledRowPredicate(predicate, entity: entity) else { continue }
            compiledCount += 1
            let lookup: (RowID) -> RowSnapshot? = { id in rows.first { $0.id == id } }
            for row in rows {
                let expected = try predicate.evaluate(with: RowView(row, model: model, lookup: lookup))
                #expect(try compiled.matches(row.values) == expected, "\(entityName) [\(format)] row \(row.id)")
            }
        }
        #expect(compiledCount > 40)
    }

    @Test("relationship key paths, quantifiers and dotted paths do not compile")
    func declines() throws {
        let employee = try #require(ConformanceModel.model.entity(named: "Employee"))
        for format in [
            "department == nil", "department.name == 'x'", "ANY mentees.age > 3", "mentees.@count > 1", "age + 1 > 3",
        ] {
            #expect(CompiledRowPredicate(try FetchPredicate(format: format), entity: employee) == nil, "\(format)")
        }
        #expect(
            CompiledRowPredicate(try FetchPredicate(format: "age > 3 AND name BEGINSWITH[cd] 'a'"), entity: employee)
                != nil)
    }

    @Test("a type mismatch throws as the evaluator does")
    func typeMismatchThrows() throws {
        let employee = try #require(ConformanceModel.model.entity(named: "Employee"))
        let compiled = try #require(
            CompiledRowPredicate(try FetchPredicate(format: "name > %@", Date()), entity: employee))
        var values = employee.defaultValues
        values[employee.index(ofProperty: "name")!] = .string("x")  // in the model
        #expect(throws: FetchPredicateError.self) { try compiled.matches(values) }
    }
}
