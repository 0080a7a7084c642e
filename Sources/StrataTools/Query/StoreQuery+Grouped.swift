import Foundation
import Strata

extension StoreQuery {
    /// Runs a grouped query (`--group-by`, `--aggregate`): one output row per group, holding the
    /// group key paths and the aggregates' `count(*)`-style keys.
    static func runGrouped(
        _ location: StoreLocation, _ options: QueryOptions, model: ManagedObjectModel, entity: EntityDescription
    ) throws -> String {
        if options.properties != nil {
            throw ToolError.usage(
                "--properties cannot be combined with --group-by or --aggregate; the rows hold the group keys and aggregates"
            )
        }
        let aggregates = try options.aggregates.map(QueryAggregate.init(parsing:))
        let groupBy = options.groupBy
        var seen = Set<String>()
        for key in groupBy + aggregates.map(\.outputKey) where !seen.insert(key).inserted {
            throw ToolError.usage("'\(key)' is asked for twice; name each group key and aggregate once")
        }
        var request = FetchRequest(entityName: entity.name)
        request.resultType = .dictionary
        request.propertiesToFetch =
            groupBy.map { FetchProperty.keyPath($0) }
            + aggregates.map { aggregate in
                .expression(
                    ExpressionDescription(
                        name: aggregate.alias,
                        expression: .function(
                            aggregate.function.selector, [aggregate.keyPath.map { .keyPath($0) } ?? .evaluatedObject])))
            }
        if !groupBy.isEmpty { request.propertiesToGroupBy = groupBy.map { FetchProperty.keyPath($0) } }
        if let text = options.predicate {
            do {
                request.predicate = try FetchPredicate(format: text)
                try request.predicate?.validate(for: entity, in: model)
            } catch {
                throw ToolError.usage("--where '\(text)': \(error)")
            }
        }
        if let text = options.having {
            do {
                request.havingPredicate = try FetchPredicate(format: text)
            } catch {
                throw ToolError.usage("--having '\(text)': \(error)")
            }
        }
        request.sortKeys = try groupedSortKeys(options.sort, groupBy: groupBy, aggregates: aggregates)
        if let limit = options.limit { request.fetchLimit = limit }
        request.fetchOffset = options.offset

        let (coordinator, _) = try StoreOpener.attach(location, model: model, readOnly: true)
        let context = ManagedObjectContext(coordinator: coordinator)
        let rows: [[String: Any]]
        do {
            rows = try context.fetchDictionaries(request)
        } catch let error as StoreError where error.code == .invalidRequest || error.code == .unsupported {
            throw ToolError.usage(error.message.replacingOccurrences(of: "havingPredicate", with: "--having"))
        } catch let error as FetchPredicateError {
            throw ToolError.usage("\(error)")
        } catch {
            throw ToolError.wrapping(error, store: location.displayName)
        }
        if options.countOnly {
            return options.format == .json
                ? JSONValue.object([("count", .int(rows.count))]).serialized() : String(rows.count)
        }
        let keys = groupBy + aggregates.map(\.outputKey)
        let sources = groupBy + aggregates.map(\.alias)
        let cells = rows.map { row in sources.map { json(row[$0]) } }
        switch options.format {
        case .json:
            return JSONValue.array(cells.map { .object(Array(zip(keys, $0))) }).serialized()
        case .csv:
            var lines = [keys.map(csvField).joined(separator: ",")]
            for row in cells { lines.append(row.map { csvField(text($0, empty: "")) }.joined(separator: ",")) }
            return lines.joined(separator: "\n")
        case .table:
            var table = TextTable(headers: keys)
            for row in cells { table.append(row.map { text($0, empty: "nil") }) }
            return (table.lines + ["(\(rows.count) group\(rows.count == 1 ? "" : "s"))"]).joined(separator: "\n")
        }
    }

    /// Sort keys of a grouped query: group key paths, or aggregates by output key or alias.
    private static func groupedSortKeys(_ text: String?, groupBy: [String], aggregates: [QueryAggregate]) throws
        -> [SortKey]
    {
        guard let text, !text.isEmpty else { return [] }
        return try text.split(separator: ",").map { part in
            var key = part.trimmingCharacters(in: .whitespaces)
            var ascending = true
            for (suffix, order) in [(":desc", false), (":asc", true)] where key.lowercased().hasSuffix(suffix) {
                key = String(key.dropLast(suffix.count))
                ascending = order
            }
            if groupBy.contains(key) { return SortKey(key, ascending: ascending) }
            if let aggregate = aggregates.first(where: { $0.outputKey == key || $0.alias == key }) {
                return SortKey(aggregate.alias, ascending: ascending)
            }
            throw ToolError.usage(
                "--sort '\(part)': a grouped query sorts by its group keys or aggregates (\((groupBy + aggregates.map(\.outputKey)).joined(separator: ", ")))"
            )
        }
    }

    /// A dictionary value as JSON: attributes as in the interchange format, object IDs as URIs.
    private static func json(_ value: Any?) -> JSONValue {
        switch value {
        case nil: .null
        case let id as ManagedObjectID: .string(id.uriRepresentation().absoluteString)
        case let n as Int: .int(Int64(n))
        case let d as Double: InterchangeValue.json(.double(d))
        case let f as Float: InterchangeValue.json(.double(Double(f)))
        case let d as Decimal: InterchangeValue.json(.decimal(d))
        case let s as String: .string(s)
        case let b as Bool: .bool(b)
        case let d as Date: InterchangeValue.json(.date(d))
        case let d as Data: InterchangeValue.json(.binary(d))
        case let u as UUID: .string(u.uuidString)
        case let u as URL: .string(u.absoluteString)
        case let other?: .string("\(other)")
        }
    }
}
