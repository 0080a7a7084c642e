import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@Suite("Aggregates and grouped dictionary fetches")
struct AggregateFetchTests {
    private func aggregate(_ name: String, _ format: String, resultType: AttributeType? = nil) throws -> FetchProperty {
        .expression(
            ExpressionDescription(name: name, expression: try FetchExpression(format: format), resultType: resultType))
    }

    private func request(_ entity: String = "Employee", fetch: [FetchProperty], groupBy: [FetchProperty]? = nil)
        -> FetchRequest
    {
        var request = FetchRequest(entityName: entity)
        request.resultType = .dictionary
        request.propertiesToFetch = fetch
        request.propertiesToGroupBy = groupBy
        return request
    }

    private func expectInvalid(
        _ request: FetchRequest, mentioning words: [String], in context: ManagedObjectContext,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try context.fetchDictionaries(request)
            Issue.record("expected an error mentioning \(words)", sourceLocation: sourceLocation)
        } catch let error as StoreError {
            #expect(
                error.code == .invalidRequest || error.code == .unsupported, "\(error)", sourceLocation: sourceLocation)
            for word in words {
                #expect(
                    error.message.contains(word), "\(error.message) should mention \(word)",
                    sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("an aggregate over an unknown key is refused naming the entity and the key")
    func unknownKey() throws {
        let stack = try TestStack(seeded: true)
        expectInvalid(
            request(fetch: [try aggregate("s", "sum:(wage)")]), mentioning: ["Employee", "wage"], in: stack.context)
        expectInvalid(
            request(fetch: ["department.title"], groupBy: ["department.title"]), mentioning: ["department.title"],
            in: stack.context)
        expectInvalid(
            request(fetch: [try aggregate("m", "max:(mentor.nickname)")]), mentioning: ["mentor.nickname"],
            in: stack.context)
    }

    @Test("sum and average of strings, and min of binary data, are refused naming the attribute's type")
    func wrongTypes() throws {
        let stack = try TestStack(seeded: true)
        expectInvalid(
            request(fetch: [try aggregate("s", "sum:(name)")]), mentioning: ["sum:", "'name'", "String"],
            in: stack.context)
        expectInvalid(
            request(fetch: [try aggregate("a", "average:(email)")]), mentioning: ["average:", "String"],
            in: stack.context)
        expectInvalid(
            request("Item", fetch: [try aggregate("m", "min:(binary)")]), mentioning: ["min:", "Binary"],
            in: stack.context)
        expectInvalid(
            request(fetch: [try aggregate("s", "sum:(department)")]), mentioning: ["relationship"], in: stack.context)
    }

    @Test("a having predicate on an ungrouped key, or naming no expression, is refused")
    func havingOnUngroupedKey() throws {
        let stack = try TestStack(seeded: true)
        var grouped = request(
            fetch: ["department.name", try aggregate("n", "count:(SELF)")], groupBy: ["department.name"])
        grouped.havingPredicate = try FetchPredicate(format: "age > 30")
        expectInvalid(grouped, mentioning: ["havingPredicate", "'age'", "neither grouped"], in: stack.context)
        grouped.havingPredicate = try FetchPredicate(format: "$total > 3")
        expectInvalid(grouped, mentioning: ["$total"], in: stack.context)
        grouped.havingPredicate = try FetchPredicate(format: "$n > 3 AND department.name != nil")
        #expect(
            try stack.context.fetchDictionaries(grouped).map { $0["department.name"] as? String } == [
                "Research", "Sales",
            ])
        var ungrouped = request(fetch: ["name"])
        ungrouped.havingPredicate = try FetchPredicate(format: "name != nil")
        expectInvalid(ungrouped, mentioning: ["havingPredicate needs propertiesToGroupBy"], in: stack.context)
    }

    @Test(
        "a fetched key that is neither grouped nor aggregated, grouping without propertiesToFetch and odd expressions are refused"
    )
    func shapeErrors() throws {
        let stack = try TestStack(seeded: true)
        expectInvalid(
            request(fetch: ["name", try aggregate("n", "count:(SELF)")], groupBy: ["department.name"]),
            mentioning: ["'name'", "neither in propertiesToGroupBy"], in: stack.context)
        expectInvalid(
            request(fetch: ["name", try aggregate("n", "count:(SELF)")]), mentioning: ["'name'"], in: stack.context)
        var noFetch = FetchRequest(entityName: "Employee")
        noFetch.propertiesToGroupBy = ["department.name"]
        expectInvalid(noFetch, mentioning: ["propertiesToGroupBy needs propertiesToFetch"], in: stack.context)
        expectInvalid(
            request(fetch: [try aggregate("x", "age * 2")]), mentioning: ["neither a key path nor an aggregate"],
            in: stack.context)
        expectInvalid(
            request(fetch: ["mentees", try aggregate("n", "count:(SELF)")], groupBy: ["mentees"]),
            mentioning: ["to-many"], in: stack.context)
        expectInvalid(request("Department", fetch: ["employees.name"]), mentioning: ["to-many"], in: stack.context)
        expectInvalid(
            request(fetch: ["name", try aggregate("name", "count:(SELF)")], groupBy: ["name"]), mentioning: ["twice"],
            in: stack.context)
        var sorted = request(
            fetch: ["department.name", try aggregate("n", "count:(SELF)")], groupBy: ["department.name"])
        sorted.sortKeys = [SortKey("age")]
        expectInvalid(sorted, mentioning: ["sort key", "'age'"], in: stack.context)
    }

    @Test("aggregates come back as Swift values of their kind, converted to an expression's result type")
    func resultKinds() throws {
        let stack = try TestStack(seeded: true)
        let rows = try stack.context.fetchDictionaries(
            request(
                "Item",
                fetch: [
                    try aggregate("n", "count:(SELF)"), try aggregate("s16", "sum:(int16)"),
                    try aggregate("sd", "sum:(double)"),
                    try aggregate("af", "average:(float)"), try aggregate("mf", "min:(float)"),
                    try aggregate("md", "max:(date)"),
                    try aggregate("sdec", "sum:(decimal)"),
                    try aggregate("asDouble", "sum:(int64)", resultType: .double),
                    try aggregate("asInt", "average:(int16)", resultType: .integer32),
                ]))
        let row = try #require(rows.first)
        #expect(rows.count == 1)
        #expect(row["n"] as? Int == 10)
        #expect(row["s16"] as? Int == (0..<10).map { $0 * 3 - 10 }.reduce(0, +))
        #expect(row["sd"] is Double)
        #expect(row["af"] is Double)
        #expect(row["mf"] as? Float == 0)
        #expect(row["md"] is Date)
        #expect(row["sdec"] as? Decimal == Decimal(string: "47.5"))
        #expect(row["asDouble"] as? Double == Double((0..<10).map { Int64($0) * 10_000_000_000 }.reduce(0, +)))
        #expect(row["asInt"] as? Int == 3)
    }

    @Test("an aggregate over no rows gives one row: count 0, sum 0, nil average and extremes left out")
    func emptyAggregates() throws {
        let stack = try TestStack(seeded: true)
        var empty = request(fetch: [
            try aggregate("n", "count:(SELF)"), try aggregate("s", "sum:(salary)"), try aggregate("a", "average:(age)"),
            try aggregate("m", "min:(name)"),
        ])
        empty.predicate = try FetchPredicate(format: "age > 1000")
        #expect(try stack.context.fetchDictionaries(empty).count == 1)
        let row = try #require(try stack.context.fetchDictionaries(empty).first)
        #expect(row["n"] as? Int == 0)
        #expect(row["s"] as? Double == 0)
        #expect(row["a"] == nil && row["m"] == nil)
        var grouped = empty
        grouped.propertiesToFetch = ["department.name", try aggregate("n", "count:(SELF)")]
        grouped.propertiesToGroupBy = ["department.name"]
        #expect(try stack.context.fetchDictionaries(grouped).isEmpty)
    }

    @Test("grouping by a to-one relationship gives object IDs; count(for:) counts groups")
    func groupByRelationship() throws {
        let stack = try TestStack(seeded: true)
        let grouped = request(fetch: ["department", try aggregate("n", "count:(SELF)")], groupBy: ["department"])
        let rows = try stack.context.fetchDictionaries(grouped)
        let departments = try stack.fetch("Department")
        let counts = Dictionary(
            uniqueKeysWithValues: rows.compactMap { row in
                (row["department"] as? ManagedObjectID).map { ($0, row["n"] as? Int ?? -1) }
            })
        for department in departments {
            #expect(counts[department.objectID, default: 0] == department.objects(forKey: "employees").count)
        }
        #expect(rows.contains { $0["department"] == nil && $0["n"] as? Int == 1 })
        #expect(try stack.context.count(for: grouped) == rows.count)
        var asCount = grouped
        asCount.resultType = .count
        guard case .count(let n) = try stack.context.execute(asCount) else {
            Issue.record("execute did not count")
            return
        }
        #expect(n == rows.count)
    }
}

@Suite("Aggregate accumulator")
struct AggregateAccumulatorTests {
    private func result(_ function: AggregateFunction, _ values: [StoreValue], type: AttributeType? = nil) throws
        -> StoreValue
    {
        var accumulator = AggregateAccumulator(function, type: type)
        for value in values { try accumulator.add(value) }
        return accumulator.result
    }

    @Test("double sums are exactly rounded and do not depend on the order of the values")
    func exactSums() throws {
        let values: [StoreValue] = [
            .double(1e16), .double(1), .double(-1e16), .double(1), .double(0.1), .double(0.2), .double(-0.3),
        ]
        let expected = try result(.sum, values)
        #expect(expected == .double(2.0000000000000004) || expected == .double(2))
        // Every rotation and the reverse give the same bits.
        for shift in 0..<values.count {
            let rotated = Array(values[shift...] + values[..<shift])
            #expect(try result(.sum, rotated) == expected)
            #expect(try result(.sum, rotated.reversed()) == expected)
        }
        #expect(try result(.sum, [.double(0.1), .double(0.2), .double(0.3)]) == .double(0.6))
        #expect(
            try result(.average, [.double(1e300), .double(1e300), .double(-1e300), .double(3)]) == .double(1e300 / 4))
        // A running total beyond Double's range is infinite (documented).
        #expect(try result(.sum, [.double(1e308), .double(1e308)]) == .double(.infinity))
    }

    @Test("integer sums stay integers, leave 64 bits as one rounded Double, and mix exactly with Doubles")
    func integerSums() throws {
        #expect(try result(.sum, [.integer(1), .integer(2), .bool(true)]) == .integer(4))
        #expect(try result(.sum, [.integer(.max), .integer(.max), .integer(-.max)]) == .integer(.max))
        #expect(try result(.sum, [.integer(.max), .integer(.max)]) == .double(Double(Int128(Int64.max) * 2)))
        #expect(try result(.sum, [.integer(1 << 53 + 1), .double(0.5)]) == .double(9_007_199_254_740_994))
        #expect(try result(.average, [.integer(1), .integer(2)]) == .double(1.5))
    }

    @Test("NaN reads as nil and -0.0 as 0; empty sums are 0 of the attribute's kind")
    func normalization() throws {
        #expect(try result(.count, [.double(.nan), .double(1), .null]) == .integer(1))
        #expect(try result(.min, [.double(-0.0)]) == .double(0))
        #expect(try result(.sum, [], type: .double) == .double(0))
        #expect(try result(.sum, [], type: .integer16) == .integer(0))
        #expect(try result(.sum, [], type: .decimal) == .decimal(0))
        #expect(try result(.average, []) == .null)
        #expect(try result(.max, [.null]) == .null)
    }

    @Test("min and max of canonically equivalent strings do not depend on the order")
    func stringTies() throws {
        let composed = StoreValue.string("\u{E9}")
        let decomposed = StoreValue.string("e\u{301}")
        #expect(try result(.min, [composed, decomposed]) == result(.min, [decomposed, composed]))
        #expect(try result(.max, [composed, decomposed]) == result(.max, [decomposed, composed]))
        #expect(try result(.max, [.string("a"), .string("b"), .null]) == .string("b"))
    }

    @Test("sum of a string is a type mismatch")
    func mismatch() throws {
        #expect(throws: FetchPredicateError.self) { try result(.sum, [.string("x")]) }
        #expect(throws: FetchPredicateError.self) { try result(.min, [.string("x"), .date(Date())]) }
    }
}
