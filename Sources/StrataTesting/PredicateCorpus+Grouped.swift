import Foundation
import Strata

/// A grouped or aggregated dictionary fetch over ``ConformanceModel`` (part of the predicate
/// corpus): every driver must give exactly the answer the in-memory driver gives, and that answer
/// must agree with one computed independently from the objects (``expectedRows(_:)``).
public struct GroupedQuery: Sendable, CustomStringConvertible {
    /// The entity.
    public var entity: String
    /// The predicate, if any.
    public var predicate: String?
    /// The group key paths.
    public var groupBy: [String]
    /// The aggregates: result name, function and key path (`nil` for `count(*)`).
    public var aggregates: [(name: String, function: AggregateFunction, keyPath: String?)]
    /// The having predicate, if any.
    public var having: String?
    /// Sort keys over result keys; group-key order when empty.
    public var sort: [SortKey] = []
    /// The most groups returned; 0 for all.
    public var limit = 0
    /// Distinct results of the group key paths, without aggregates.
    public var distinct = false

    /// Creates a query.
    public init(
        _ entity: String, _ predicate: String? = nil, groupBy: [String],
        _ aggregates: [(String, AggregateFunction, String?)],
        having: String? = nil, sort: [SortKey] = [], limit: Int = 0, distinct: Bool = false
    ) {
        self.entity = entity
        self.predicate = predicate
        self.groupBy = groupBy
        self.aggregates = aggregates.map { (name: $0.0, function: $0.1, keyPath: $0.2) }
        self.having = having
        self.sort = sort
        self.limit = limit
        self.distinct = distinct
    }

    public var description: String {
        "\(entity) [\(predicate ?? "all")] group by \(groupBy) \(aggregates.map { "\($0.name)=\($0.function.shortName)(\($0.keyPath ?? "*"))" })"
            + (having.map { " having \($0)" } ?? "") + (distinct ? " distinct" : "")
    }

    /// The fetch request.
    public func request() throws -> FetchRequest {
        var request = FetchRequest(
            entityName: entity, predicate: try predicate.map { try FetchPredicate(format: $0) }, sortKeys: sort)
        request.resultType = .dictionary
        request.propertiesToFetch =
            groupBy.map { FetchProperty.keyPath($0) }
            + aggregates.map { aggregate in
                .expression(
                    ExpressionDescription(
                        name: aggregate.name,
                        expression: .function(
                            aggregate.function.selector, [aggregate.keyPath.map { .keyPath($0) } ?? .evaluatedObject])))
            }
        if distinct {
            request.returnsDistinctResults = true
        } else if !groupBy.isEmpty {
            request.propertiesToGroupBy = groupBy.map { FetchProperty.keyPath($0) }
        }
        request.havingPredicate = try having.map { try FetchPredicate(format: $0) }
        request.fetchLimit = limit
        return request
    }
}

extension PredicateCorpus {
    /// Grouped and aggregated fetches every driver must answer alike.
    public static let groupedEntries: [GroupedQuery] = [
        GroupedQuery(
            "Employee", groupBy: ["department.name"],
            [
                ("n", .count, nil), ("ages", .sum, "age"), ("meanAge", .average, "age"), ("first", .min, "name"),
                ("top", .max, "salary"), ("paid", .count, "salary"), ("payroll", .sum, "salary"),
                ("meanPay", .average, "salary"),
            ]),
        GroupedQuery(
            "Employee", "age > 25", groupBy: ["department"], [("n", .count, nil), ("meanPay", .average, "salary")]),
        GroupedQuery(
            "Employee", groupBy: [],
            [
                ("n", .count, nil), ("payroll", .sum, "salary"), ("meanPay", .average, "salary"),
                ("youngest", .min, "age"),
                ("oldest", .max, "age"), ("last", .max, "name"), ("mails", .count, "email"),
            ]),
        GroupedQuery(
            "Employee", "age > 100", groupBy: [],
            [
                ("n", .count, nil), ("ages", .sum, "age"), ("payroll", .sum, "salary"), ("meanAge", .average, "age"),
                ("youngest", .min, "age"),
            ]),
        GroupedQuery("Employee", groupBy: ["department.name"], [("n", .count, nil)], having: "$n > 3"),
        GroupedQuery(
            "Employee", groupBy: ["mentor.name"], [("n", .count, nil), ("oldest", .max, "age")],
            having: "n >= 1 AND mentor.name != nil"),
        GroupedQuery(
            "Employee", "email != nil", groupBy: ["department.name", "department.budget"],
            [("n", .count, nil), ("ages", .sum, "age")]),
        GroupedQuery(
            "Employee", groupBy: ["department.name"], [("payroll", .sum, "salary"), ("n", .count, nil)],
            sort: [SortKey("payroll", ascending: false), SortKey("department.name")], limit: 2),
        GroupedQuery(
            "Employee", "department.budget > 0", groupBy: ["department.manager.name"],
            [("n", .count, nil), ("minAge", .min, "age")]),
        GroupedQuery("Employee", groupBy: ["department.name"], [], distinct: true),
        GroupedQuery("Employee", groupBy: ["age"], [("n", .count, nil)], having: "age < 40 OR $n > 1"),
        GroupedQuery(
            "Item", groupBy: ["bool"],
            [
                ("n", .count, nil), ("s16", .sum, "int16"), ("s32", .sum, "int32"), ("s64", .sum, "int64"),
                ("sd", .sum, "double"),
                ("sf", .sum, "float"), ("ad", .average, "double"), ("a32", .average, "int32"),
                ("firstDate", .min, "date"),
                ("lastString", .max, "string"), ("c32", .count, "int32"), ("sdec", .sum, "decimal"),
                ("maxDec", .max, "decimal"),
            ]),
        GroupedQuery("Item", "int16 > -5", groupBy: ["string"], [("n", .count, nil), ("mean", .average, "float")]),
        GroupedQuery("Item", groupBy: ["date"], [("n", .count, nil)], having: "date > CAST(700300000, 'NSDate')"),
        GroupedQuery(
            "Vehicle", groupBy: ["wheels"],
            [("n", .count, nil), ("meanWheels", .average, "wheels"), ("first", .min, "name")]),
        GroupedQuery("Car", groupBy: ["seats"], [("n", .count, nil)]),
        GroupedQuery(
            "Department", groupBy: ["manager.department.name"], [("n", .count, nil), ("budget", .sum, "budget")]),
        GroupedQuery("Chapter", groupBy: ["playlist.title"], [("n", .count, nil), ("first", .min, "title")]),
        GroupedQuery("Node", groupBy: ["parent.parent.label"], [("n", .count, nil), ("last", .max, "label")]),
    ]

    /// The rows a grouped query must return, computed from the objects of `context` with plain
    /// Swift (no dictionary fetch, no aggregate code of the library): group key values as
    /// ``ManagedObject/value(forKey:)`` reads them, sums added in order, averages divided.
    public static func expectedRows(_ query: GroupedQuery, in context: ManagedObjectContext) throws -> [[String: Any]] {
        let predicate = try query.predicate.map { try FetchPredicate(format: $0) }
        let objects = try context.fetch(FetchRequest(entityName: query.entity)).filter {
            try predicate?.evaluate(with: $0) ?? true
        }
        func read(_ path: String, _ object: ManagedObject) -> Any? {
            var current: ManagedObject? = object
            let keys = path.split(separator: ".").map(String.init)
            for key in keys.dropLast() { current = current?.object(forKey: key) }
            guard let current else { return nil }
            let value = current.value(forKey: keys.last!)  // paths are non-empty
            if let object = value as? ManagedObject { return object.objectID }
            return value
        }
        var groups: [String: (keys: [Any?], members: [ManagedObject])] = [:]
        for object in objects {
            let keys = query.groupBy.map { read($0, object) }
            let identity = keys.map { "\($0.map { "\($0)" } ?? "nil")" }.joined(separator: "\u{1}")
            groups[identity, default: (keys, [])].members.append(object)
        }
        if query.groupBy.isEmpty && groups.isEmpty { groups[""] = ([], []) }
        var rows: [[String: Any]] = []
        for (_, group) in groups {
            var row: [String: Any] = [:]
            for (path, key) in zip(query.groupBy, group.keys) { if let key { row[path] = key } }
            for aggregate in query.aggregates {
                let values =
                    aggregate.keyPath.map { path in group.members.compactMap { read(path, $0) } }
                    ?? group.members.map { $0 as Any }
                let numbers = values.compactMap(number)
                let type = aggregate.keyPath.flatMap {
                    attributeType($0, of: query.entity, in: context.coordinator.managedObjectModel)
                }
                switch aggregate.function {
                case .count: row[aggregate.name] = values.count
                case .sum:
                    if values.isEmpty {
                        row[aggregate.name] =
                            type == .decimal
                            ? Decimal(0) as Any : (type == .double || type == .float ? 0.0 as Any : 0 as Any)
                    } else if values.contains(where: { $0 is Decimal }) {
                        row[aggregate.name] = values.compactMap { $0 as? Decimal }.reduce(Decimal(0), +)
                    } else if values.allSatisfy({ $0 is Int }) {
                        row[aggregate.name] = values.compactMap { $0 as? Int }.reduce(0, +)
                    } else {
                        row[aggregate.name] = numbers.reduce(0, +)
                    }
                case .average:
                    if values.isEmpty { continue }
                    if values.contains(where: { $0 is Decimal }) {
                        row[aggregate.name] =
                            values.compactMap { $0 as? Decimal }.reduce(Decimal(0), +) / Decimal(values.count)
                    } else {
                        row[aggregate.name] = numbers.reduce(0, +) / Double(numbers.count)
                    }
                case .min, .max:
                    let sorted = values.sorted { a, b in lessThan(a, b) }
                    if let pick = aggregate.function == .min ? sorted.first : sorted.last { row[aggregate.name] = pick }
                }
            }
            rows.append(row)
        }
        if let having = query.having {
            let predicate = try FetchPredicate(format: having)
            rows = try rows.filter { row in
                var values: [String: StoreValue] = [:]
                for (key, value) in row { values[key] = storeValue(value) }
                for path in query.groupBy where values[path] == nil { values[path] = .null }
                return try predicate.evaluate(
                    with: FlatRow(values: values),
                    substitutionVariables: values.mapValues { $0 as any PredicateArgument })
            }
        }
        return rows
    }

    private static func attributeType(_ path: String, of entityName: String, in model: ManagedObjectModel)
        -> AttributeType?
    {
        guard var entity = model.entity(named: entityName) else { return nil }
        let keys = path.split(separator: ".").map(String.init)
        for key in keys.dropLast() {
            guard let next = entity.relationshipsByName[key].flatMap({ model.entity(named: $0.destinationEntityName) })
            else { return nil }
            entity = next
        }
        return entity.attributesByName[keys.last ?? ""]?.type
    }

    private static func number(_ value: Any) -> Double? {
        switch value {
        case let n as Int: Double(n)
        case let d as Double: d
        case let f as Float: Double(f)
        case let b as Bool: b ? 1 : 0
        default: nil
        }
    }

    private static func lessThan(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case (let x as String, let y as String): x < y
        case (let x as Date, let y as Date): x < y
        case (let x as Decimal, let y as Decimal): x < y
        default: (number(a) ?? 0) < (number(b) ?? 0)
        }
    }

    static func storeValue(_ value: Any) -> StoreValue {
        switch value {
        case let n as Int: .integer(Int64(n))
        case let d as Double: .double(d)
        case let f as Float: .double(Double(f))
        case let s as String: .string(s)
        case let b as Bool: .bool(b)
        case let d as Date: .date(d)
        case let d as Decimal: .decimal(d)
        case let id as ManagedObjectID: .reference(id.rowID)
        default: .null
        }
    }

    /// Whether two result rows hold the same values: exactly, except Doubles from sums and
    /// averages, which may differ in the last bits from the plain addition of ``expectedRows(_:in:)``.
    public static func sameRow(_ a: [String: Any], _ b: [String: Any], exact: Bool) -> Bool {
        guard Set(a.keys) == Set(b.keys) else { return false }
        for (key, x) in a {
            let y = b[key]!  // same keys
            switch (x, y) {
            case (let p as Double, let q as Double):
                if exact ? p.bitPattern != q.bitPattern : abs(p - q) > 1e-9 * max(1, abs(p), abs(q)) { return false }
            case (let p as Float, let q as Float): if p != q { return false }
            case (let p as Decimal, let q as Decimal): if p != q { return false }
            default: if storeValue(x) != storeValue(y) || "\(x)" != "\(y)" { return false }
            }
        }
        return true
    }

    /// Matches two lists of rows in any order; the rows of `actual` missing from `expected`.
    public static func unmatched(_ actual: [[String: Any]], _ expected: [[String: Any]], exact: Bool) -> [[String: Any]]
    {
        var remaining = expected
        var missing: [[String: Any]] = []
        for row in actual {
            if let index = remaining.firstIndex(where: { sameRow(row, $0, exact: exact) }) {
                remaining.remove(at: index)
            } else {
                missing.append(row)
            }
        }
        return missing + remaining
    }
}

/// A row of plain values for evaluating a having predicate in the independent computation.
private struct FlatRow: PredicateEvaluable {
    let values: [String: StoreValue]
    var prefix = ""

    func keyValue(forKey key: String) throws -> KeyValue {
        let full = prefix.isEmpty ? key : prefix + "." + key
        if let value = values[full] { return .value(value) }
        return .object(FlatRow(values: values, prefix: full))
    }

    var selfValue: StoreValue { .null }
}

extension ConformanceSuite {
    static var groupedCases: [ConformanceCase] {
        [
            ConformanceCase("every grouped corpus query answers as computed independently from the objects") {
                harness in
                let fixture = try Fixture(harness)
                var failures: [String] = []
                for query in PredicateCorpus.groupedEntries {
                    let actual = try fixture.context().fetchDictionaries(try query.request())
                    var expected = try PredicateCorpus.expectedRows(query, in: fixture.context())
                    if query.limit > 0 {
                        // Paged: the expected rows in the query's order, then the page.
                        expected.sort { a, b in
                            for key in query.sort {
                                let x = a[key.keyPath].map(PredicateCorpus.storeValue) ?? .null
                                let y = b[key.keyPath].map(PredicateCorpus.storeValue) ?? .null
                                // test data holds comparable values
                                let order = (try? SortKey.compare(x, y)) ?? .orderedSame
                                if order != .orderedSame {
                                    return order == (key.ascending ? .orderedAscending : .orderedDescending)
                                }
                            }
                            return false
                        }
                        expected = Array(expected.prefix(query.limit))
                    }
                    let wrong = PredicateCorpus.unmatched(actual, expected, exact: false)
                    if !wrong.isEmpty || actual.count != expected.count {
                        failures.append("\(query): got \(actual), expected \(expected)")
                    }
                    let counted = try fixture.context().count(for: try query.request())
                    if counted != actual.count {
                        failures.append("\(query): count(for:) \(counted), rows \(actual.count)")
                    }
                }
                try require(failures.isEmpty, failures.joined(separator: "\n"))
            },
            ConformanceCase("grouped fetches see pending changes unless told not to") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                try makePendingChanges(context)
                let query = GroupedQuery(
                    "Employee", groupBy: ["department.name"],
                    [("n", .count, nil), ("ages", .sum, "age"), ("oldest", .max, "age")])
                let actual = try context.fetchDictionaries(try query.request())
                let expected = try PredicateCorpus.expectedRows(query, in: context)
                try require(
                    PredicateCorpus.unmatched(actual, expected, exact: false).isEmpty,
                    "with pending changes: got \(actual), expected \(expected)")
                var stored = try query.request()
                stored.includesPendingChanges = false
                let fromStore = try context.fetchDictionaries(stored)
                let reference = try fixture.context().fetchDictionaries(try query.request())
                try require(
                    PredicateCorpus.unmatched(fromStore, reference, exact: true).isEmpty,
                    "without pending changes: got \(fromStore), expected \(reference)")
            },
            ConformanceCase("group keys come in order without sort keys, nil first; distinct results come once") {
                harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                var request = try GroupedQuery("Employee", groupBy: ["department.name"], [("n", .count, nil)]).request()
                let names = try context.fetchDictionaries(request).map { $0["department.name"] as? String }
                try requireEqual(names, [nil, "Research", "Sales", "support"], "group order")
                request.fetchOffset = 1
                request.fetchLimit = 2
                try requireEqual(
                    try context.fetchDictionaries(request).map { $0["department.name"] as? String },
                    ["Research", "Sales"], "a page of groups")
                var distinct = FetchRequest(entityName: "Employee", sortKeys: [SortKey("department.name")])
                distinct.propertiesToFetch = ["department.name"]
                distinct.returnsDistinctResults = true
                try requireEqual(
                    try context.fetchDictionaries(distinct).map { $0["department.name"] as? String },
                    [nil, "Research", "Sales", "support"], "distinct")
                try requireEqual(try context.count(for: distinct), 4, "count of distinct results")
            },
        ]
    }
}
