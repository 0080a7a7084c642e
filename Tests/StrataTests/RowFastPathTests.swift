import Foundation
import Strata
import StrataTesting
import Testing

/// The shortcuts drivers take per row (numeric comparisons, string sorts, compiled expressions)
/// against the general code they stand in for.
@Suite("Row fast paths")
struct RowFastPathTests {
    static let employee = ConformanceModel.model.entity(named: "Employee")!  // in the model
    static let ageSlot = employee.index(ofProperty: "age")!  // in the model
    static let salarySlot = employee.index(ofProperty: "salary")!  // in the model
    static let nameSlot = employee.index(ofProperty: "name")!  // in the model

    static func row(_ number: Int64, age: StoreValue, salary: StoreValue, name: StoreValue) -> RowSnapshot {
        var values = employee.defaultValues
        values[ageSlot] = age
        values[salarySlot] = salary
        values[nameSlot] = name
        return RowSnapshot(id: RowID(entity: employee.entityNumber, primaryKey: number), version: 1, values: values)
    }

    static func randomValue(_ generator: inout SeededGenerator) -> StoreValue {
        switch Int.random(in: 0..<7, using: &generator) {
        case 0: .null
        case 1: .double(.nan)
        case 2: .double(Double(Int.random(in: -5...5, using: &generator)) / 2)
        case 3: .bool(Bool.random(using: &generator))
        case 4: .integer(.max)
        default: .integer(Int64.random(in: -5...5, using: &generator))
        }
    }

    @Test("integer and double comparisons answer as the evaluator for every mix of values")
    func numericComparisons() throws {
        var generator = SeededGenerator(seed: 42)
        let rows = (0..<300).map { index in
            Self.row(
                Int64(index + 1), age: Self.randomValue(&generator), salary: Self.randomValue(&generator),
                name: .string("x"))
        }
        let formats = [
            "age == 3", "age != 3", "age < 0", "age <= -2", "age > 2", "age >= 5", "age BETWEEN {-2, 2}",
            "salary == 1.5", "salary != 1.5", "salary < 0.5", "salary <= -1.0", "salary > 2.0", "salary >= 0.0",
            "salary BETWEEN {-1.5, 1.5}", "age == 1.5", "salary > 2", "NOT (age > 1) OR salary < 0.5",
        ]
        let integerForms = try formats.filter {
            CompiledRowPredicate(try FetchPredicate(format: $0), entity: Self.employee)?.integerComparison != nil
        }
        #expect(
            integerForms == [
                "age == 3", "age != 3", "age < 0", "age <= -2", "age > 2", "age >= 5", "age BETWEEN {-2, 2}",
                "salary > 2",
            ])
        for format in formats {
            let predicate = try FetchPredicate(format: format)
            let compiled = try #require(CompiledRowPredicate(predicate, entity: Self.employee))
            if let integer = compiled.integerComparison {
                for row in rows {
                    guard case .integer(let value) = row.values[integer.slot] else { continue }
                    #expect(integer.matches(value) == (try compiled.matches(row.values)), "\(format) on \(value)")
                }
            }
            for row in rows {
                let view = RowView(row, model: ConformanceModel.model) { _ in nil }
                let expected = Result { try predicate.evaluate(with: view) }
                let found = Result { try compiled.matches(row.values) }
                switch (expected, found) {
                case (.success(let a), .success(let b)):
                    #expect(a == b, "\(format) on \(row.values[Self.ageSlot]), \(row.values[Self.salarySlot])")
                case (.failure, .failure): break
                default: Issue.record("\(format): evaluator \(expected), compiled \(found)")
                }
            }
        }
    }

    /// `rows` sorted by the name slot with `key`'s own value comparison, ties by row ID.
    static func referenceSort(_ rows: [RowSnapshot], by key: SortKey) throws -> [RowSnapshot] {
        try rows.sorted { a, b in
            switch try key.compareValues(a.values[nameSlot], b.values[nameSlot]) {
            case .orderedAscending: true
            case .orderedDescending: false
            case .orderedSame: a.id < b.id
            }
        }
    }

    @Test("sorting by a string slot orders as the sort key's comparison does, nil first, ties by row ID")
    func stringSort() throws {
        var generator = SeededGenerator(seed: 7)
        let pieces = [
            "a", "B", "ab", "abcdefgh", "abcdefghi", "abcdefgi", "é", "e\u{301}", "Zoë", "\u{0}", "a\u{0}", "", "zz",
            // Around the sixteen bytes the keys hold: equal there, shorter, longer, NUL-padded.
            "abcdefghijklmnop", "abcdefghijklmnoq", "abcdefghijklmno", "name-1234", "name-12345", "\u{0}\u{0}",
        ]
        let rows = (0..<1_000).map { index -> RowSnapshot in
            let name: StoreValue =
                Int.random(in: 0..<10, using: &generator) == 0
                // non-empty
                ? .null : .string(pieces.randomElement(using: &generator)! + pieces.randomElement(using: &generator)!)
            return Self.row(Int64(1_000 - index), age: .null, salary: .null, name: name)
        }
        for ascending in [true, false] {
            let key = SortKey("name", ascending: ascending)
            #expect(try RowSorter.sort([], by: [key], model: ConformanceModel.model) { _ in nil }.isEmpty)
            let sorted = try RowSorter.sort(rows, by: [key], model: ConformanceModel.model) { _ in nil }
            let reference = try Self.referenceSort(rows, by: key)
            if let first = sorted.indices.first(where: { sorted[$0].id != reference[$0].id }) {
                let show = { (rows: [RowSnapshot]) in
                    rows[first..<min(first + 4, rows.count)].map { "\($0.id) \($0.values[Self.nameSlot])" }
                }
                Issue.record(
                    "ascending \(ascending), first difference at \(first): \(show(sorted)) against \(show(reference))")
            }
        }
    }

    @Test("sorting short ASCII strings of rows in row-ID order (keys alone decide) orders as the sort key does")
    func shortASCIISort() throws {
        let seed: UInt64 = 11
        var generator = SeededGenerator(seed: seed)
        // Few letters and NUL, lengths 0–16: many equal texts, prefixes and NUL-padded look-alikes.
        let alphabet: [Character] = ["a", "b", "B", "\u{0}", "-", "9"]
        let rows = (0..<2_000).map { index -> RowSnapshot in
            let length = Int.random(in: 0...16, using: &generator)
            let name = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            return Self.row(Int64(index + 1), age: .null, salary: .null, name: .string(name))
        }
        for ascending in [true, false] {
            let key = SortKey("name", ascending: ascending)
            let sorted = try RowSorter.sort(rows, by: [key], model: ConformanceModel.model) { _ in nil }
            let reference = try Self.referenceSort(rows, by: key)
            #expect(sorted.map(\.id) == reference.map(\.id), "seed \(seed), ascending \(ascending)")
        }
    }

    @Test("compiled expressions give the evaluator's values, integer overflow and nil included")
    func expressions() throws {
        var generator = SeededGenerator(seed: 99)
        let formats = [
            "age + 1", "age - salary", "age * 3", "salary * salary", "age * 4611686018427387904", "age + salary + 1",
            "abs:(age)", "now()",
        ]
        for format in formats {
            let expression = try FetchExpression(format: format)
            let compiled = try #require(CompiledRowExpression(expression, entity: Self.employee), "\(format)")
            for index in 0..<200 {
                let row = Self.row(
                    Int64(index + 1), age: Self.randomValue(&generator), salary: Self.randomValue(&generator),
                    name: .null)
                let view = RowView(row, model: ConformanceModel.model) { _ in nil }
                let expected = Result { try expression.value(with: view) }
                let found = Result { try compiled.value(row.values) }
                switch (expected, found) {
                case (.success(let a), .success(let b)):
                    if format == "now()" { continue }
                    if case .double(let x) = a, case .double(let y) = b, x.isNaN, y.isNaN { continue }
                    #expect(a == b, "\(format) with \(row.values[Self.ageSlot]), \(row.values[Self.salarySlot])")
                case (.failure, .failure): break
                default: Issue.record("\(format): evaluator \(expected), compiled \(found)")
                }
            }
        }
        #expect(
            CompiledRowExpression(try FetchExpression(format: "department.budget + 1"), entity: Self.employee) == nil)
    }
}
