import Foundation
import Strata
import StrataInMemory
import StrataTesting
import StrataTools
import Testing

@Suite("Grouped queries on every driver and through strata query")
struct GroupedQueryTests {
    static let fileSchemes: [KnownDriver] = [.sqlite, .xml, .lmdb]
    /// Every driver the tool opens: the file drivers and a PostgreSQL server (the test server).
    static let toolSchemes: [KnownDriver] = fileSchemes + [.postgres]

    /// A coordinator on a seeded store of `scheme`.
    private func seeded(_ scheme: KnownDriver, in directory: TemporaryDirectory) throws -> (
        PersistentStoreCoordinator, StoreLocation
    ) {
        let location =
            switch scheme {
            case .memory: memoryLocation("grouped")
            case .postgres: try postgresLocation("grouped")
            default: fileLocation(scheme, "grouped", in: directory)
            }
        try seededMemoryStore(location)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: try location.storeType(), at: location.url)
        return (coordinator, location)
    }

    @Test(
        "every grouped corpus query gives the in-memory driver's answer to the bit, in the same order, on every driver")
    func sameAnswersEverywhere() throws {
        let directory = try TemporaryDirectory()
        let (reference, _) = try seeded(.memory, in: directory)
        let referenceContext = ManagedObjectContext(coordinator: reference)
        for scheme in Self.toolSchemes {
            let (coordinator, _) = try seeded(scheme, in: directory)
            for query in PredicateCorpus.groupedEntries {
                let expected = try referenceContext.fetchDictionaries(try query.request())
                let actual = try ManagedObjectContext(coordinator: coordinator).fetchDictionaries(try query.request())
                #expect(actual.count == expected.count, "\(scheme) \(query)")
                for (a, e) in zip(actual, expected) {
                    // Object IDs name rows of other stores, whose keys may differ: compare their entities.
                    let strip = { (row: [String: Any]) in
                        row.mapValues { ($0 as? ManagedObjectID).map { $0.entity.name as Any } ?? $0 }
                    }
                    #expect(
                        PredicateCorpus.sameRow(strip(a), strip(e), exact: true), "\(scheme) \(query): \(a) != \(e)")
                }
            }
        }
    }

    @Test("SQLite computes every grouped corpus query in SQL, except aggregates of Decimal attributes")
    func sqlitePushesDown() throws {
        let directory = try TemporaryDirectory()
        let (coordinator, _) = try seeded(.sqlite, in: directory)
        let store = try #require(coordinator.persistentStores.first)
        var inCore: [String] = []
        for query in PredicateCorpus.groupedEntries {
            let entity = try #require(ConformanceModel.model.entity(named: query.entity))
            var fetch = StoreFetch(entity: entity)
            fetch.predicate = try query.predicate.map { try FetchPredicate(format: $0) }
            fetch.aggregation = StoreAggregation(
                groupBy: query.groupBy,
                aggregates: query.aggregates.map { aggregate in
                    StoreAggregation.Aggregate(
                        aggregate.function, keyPath: aggregate.keyPath,
                        type: aggregate.keyPath.flatMap { path in Self.attributeType(path, entity) })
                })
            if try store.driver.fetch(fetch).groups == nil { inCore.append(query.description) }
        }
        #expect(inCore.count == 1 && inCore.allSatisfy { $0.contains("sdec") }, "left to the core: \(inCore)")
    }

    @Test("sums SQLite would round in another order, or overflow, are the core's exactly rounded answers")
    func exactSumsInSQL() throws {
        let directory = try TemporaryDirectory()
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Reading",
                properties: [
                    .attribute("group", .integer16), .attribute("value", .double), .attribute("count", .integer64),
                ])
        ])
        var answers: [[[String: Any]]] = []
        for scheme in [KnownDriver.memory, .sqlite, .lmdb] {
            let location = scheme == .memory ? memoryLocation("sums") : fileLocation(scheme, "sums", in: directory)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: try location.storeType(), at: location.url)
            let context = ManagedObjectContext(coordinator: coordinator)
            // Group 0 holds 1e16, 1, 1, -1e16: added in that order they give 0, exactly 2.
            for (index, value) in [1e16, 0.1, 1, 0.2, 1, -0.3, -1e16, 3e-17].enumerated() {
                let reading = try context.insertNewObject(forEntityName: "Reading")
                reading["group"] = index % 2
                reading["value"] = value
                reading["count"] = Int64.max - Int64(index)
            }
            try context.save()
            var request = FetchRequest(entityName: "Reading")
            request.propertiesToFetch = [
                "group",
                .expression(ExpressionDescription(name: "sum", expression: try FetchExpression(format: "sum:(value)"))),
                .expression(
                    ExpressionDescription(name: "mean", expression: try FetchExpression(format: "average:(value)"))),
                .expression(ExpressionDescription(name: "big", expression: try FetchExpression(format: "sum:(count)"))),
            ]
            request.propertiesToGroupBy = ["group"]
            answers.append(try ManagedObjectContext(coordinator: coordinator).fetchDictionaries(request))
        }
        for answer in answers.dropFirst() {
            #expect(answer.count == answers[0].count)
            for (a, b) in zip(answer, answers[0]) {
                #expect(PredicateCorpus.sameRow(a, b, exact: true), "\(a) != \(b)")
            }
        }
        #expect(answers[0].allSatisfy { $0["big"] is Double }, "sums past Int64 are Doubles: \(answers[0])")
        #expect(answers[0].first?["sum"] as? Double == 2)
        #expect(answers[0].first?["mean"] as? Double == 0.5)
    }

    private static func attributeType(_ path: String, _ entity: EntityDescription) -> AttributeType? {
        var current = entity
        let keys = path.split(separator: ".").map(String.init)
        for key in keys.dropLast() {
            guard
                let next = current.relationshipsByName[key].flatMap({
                    ConformanceModel.model.entity(named: $0.destinationEntityName)
                })
            else { return nil }
            current = next
        }
        return current.attributesByName[keys.last ?? ""]?.type
    }

    // MARK: strata query

    /// The arguments of `strata query` for a corpus query.
    private func arguments(_ query: GroupedQuery, store: String) -> [String] {
        var arguments = ["query", store, "--entity", query.entity, "--format", "json"]
        if let predicate = query.predicate { arguments += ["--where", predicate] }
        for path in query.groupBy { arguments += ["--group-by", path] }
        for aggregate in query.aggregates {
            let function = aggregate.function == .average ? "avg" : aggregate.function.rawValue
            arguments += ["--aggregate", "\(function):\(aggregate.keyPath ?? "*")"]
        }
        return arguments
    }

    @Test(
        "strata query --group-by --aggregate prints the groups computed independently, on every driver the tool opens")
    func cliMatchesIndependentAnswers() throws {
        let directory = try TemporaryDirectory()
        // Queries without having, sort or limit (the tool's --having names aggregates differently).
        let queries = PredicateCorpus.groupedEntries.filter { $0.having == nil && $0.sort.isEmpty && !$0.distinct }
        for scheme in Self.toolSchemes {
            let (coordinator, location) = try seeded(scheme, in: directory)
            let context = ManagedObjectContext(coordinator: coordinator)
            for query in queries {
                let result = try runStrata(arguments(query, store: location.description))
                #expect(result.status == 0, "\(scheme) \(query): \(result.stderr)")
                guard result.status == 0 else { continue }
                let rows = try #require(try parseJSON(result.stdout).arrayValue)
                let expected = try PredicateCorpus.expectedRows(query, in: context)
                #expect(rows.count == expected.count, "\(scheme) \(query): \(result.stdout)")
                for row in rows {
                    let found = expected.contains { candidate in
                        query.groupBy.allSatisfy { Self.matches(row[$0], candidate[$0]) }
                            && query.aggregates.allSatisfy { aggregate in
                                let key = "\(aggregate.function.shortName)(\(aggregate.keyPath ?? "*"))"
                                return Self.matches(row[key], candidate[aggregate.name])
                            }
                    }
                    #expect(found, "\(scheme) \(query): \(row) is not among \(expected)")
                }
            }
        }
    }

    /// Whether a JSON value printed by the tool is the expected Swift value.
    private static func matches(_ json: JSONValue?, _ expected: Any?) -> Bool {
        switch (json, expected) {
        case (nil, nil), (.null?, nil): return true
        case (.number(let text)?, let value?):
            guard let number = Double(text) else { return false }
            switch value {
            case let n as Int: return number == Double(n)
            case let d as Double: return abs(number - d) <= 1e-9 * max(1, abs(d))
            case let f as Float: return Float(number) == f
            default: return false
            }
        case (.string(let text)?, let value?):
            switch value {
            case let s as String: return s == text
            case let id as ManagedObjectID: return text.hasSuffix("/\(id.entity.name)/p\(id.primaryKey)")
            case let d as Decimal: return Decimal(string: text) == d
            case let date as Date:
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                return abs((formatter.date(from: text) ?? .distantPast).timeIntervalSince(date)) < 0.001
            default: return false
            }
        case (.bool(let b)?, let value as Bool): return b == value
        default: return false
        }
    }

    @Test("strata query refuses bad aggregates, having on an ungrouped key and --properties with grouping, exit 64")
    func cliBadInput() throws {
        let directory = try TemporaryDirectory()
        let location = fileLocation(.sqlite, "bad", in: directory)
        try seededMemoryStore(location)
        let store = location.description
        let cases: [([String], String)] = [
            (["--aggregate", "median:age"], "unknown function 'median'"),
            (["--aggregate", "sum:*"], "only count takes '*'"),
            (["--aggregate", "sum"], "FUNC:KEY"),
            (["--aggregate", "sum:name"], "String"),
            (["--aggregate", "avg:wage"], "wage"),
            (["--group-by", "department.title", "--aggregate", "count:*"], "department.title"),
            (["--group-by", "department.name", "--aggregate", "count:*", "--having", "age > 30"], "'age'"),
            (["--group-by", "department.name", "--properties", "name"], "--properties"),
            (["--having", "$count > 1"], "--having"),
            (["--group-by", "department.name", "--aggregate", "count:*", "--sort", "age"], "--sort 'age'"),
        ]
        for (extra, message) in cases {
            let result = try runStrata(["query", store, "--entity", "Employee"] + extra)
            #expect(result.status == 64, "\(extra): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains(message), "\(extra): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(extra)")
        }
    }

    @Test("strata query prints count(*)-style keys, sorts and pages groups, filters with --having, and counts groups")
    func cliShapes() throws {
        let directory = try TemporaryDirectory()
        let location = fileLocation(.lmdb, "shapes", in: directory)
        try seededMemoryStore(location)
        let base = [
            "query", location.description, "--entity", "Employee", "--group-by", "department.name", "--aggregate",
            "count:*,avg:age",
        ]
        let json = try runStrata(
            base + ["--format", "json", "--sort", "count(*):desc,department.name", "--limit", "2"])
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try #require(try parseJSON(json.stdout).arrayValue)
        #expect(rows.map { $0["department.name"]?.stringValue } == ["Research", "Sales"])
        #expect(rows.first?["count(*)"] == .number("4"))
        if case .number = rows.first?["avg(age)"] {} else { Issue.record("avg(age) is not a number: \(json.stdout)") }
        let having = try runStrata(base + ["--format", "json", "--having", "$count < 4"])
        #expect(
            try parseJSON(having.stdout).arrayValue?.compactMap { $0["department.name"]?.stringValue } == ["support"])
        let counted = try runStrata(base + ["--count"])
        #expect(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "4")
        let table = try runStrata(base)
        #expect(table.stdout.contains("count(*)") && table.stdout.contains("(4 groups)"), "\(table.stdout)")
        let csv = try runStrata(base + ["--format", "csv"])
        #expect(csv.stdout.hasPrefix("department.name,count(*),avg(age)"), "\(csv.stdout)")
        let whole = try runStrata([
            "query", location.description, "--entity", "Employee", "--aggregate", "count:*", "--aggregate", "max:name",
            "--format", "json",
        ])
        #expect(try parseJSON(whole.stdout).arrayValue?.first?["count(*)"] == .number("12"), "\(whole.stdout)")
    }
}
