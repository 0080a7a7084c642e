import CSQLite
import Foundation
import Strata

// Grouped and aggregated fetches pushed down to SQL (StoreFetch.aggregation):
//
//   SELECT <group keys>, <aggregates> FROM <table> t0 <joins> WHERE <entity test> AND <predicate>
//   GROUP BY <group keys>
//
// Group keys are the columns as predicates compare them (a Double column's blob forms of -0.0
// and NaN read as 0.0 and NULL, which is AggregateAccumulator's normalization). COUNT is SQL's;
// sum, average, min and max go through `strata_aggregate`, which runs the core's
// AggregateAccumulator, so the answers are the core's to the bit whatever order SQLite reads the
// rows in. Anything that does not translate exactly (a predicate part, a Decimal or transformable
// key path, a key path through a to-many relationship) leaves the whole fetch to the core.

extension SQLiteDriver {
    /// The groups of `request`'s aggregation, or `nil` when it cannot be answered exactly in SQL.
    func aggregate(_ request: StoreFetch, _ aggregation: StoreAggregation) throws -> [StoreGroup]? {
        guard let entityLayout = layout.entity(request.entity.entityNumber),
            let table = layout.tables[request.entity.rootEntityName]
        else {
            // The entity is not stored here: no rows, so only an ungrouped aggregation has a group.
            return aggregation.groupBy.isEmpty ? [emptyGroup(aggregation)] : []
        }
        let entity = entityLayout.entity
        var translator = QueryTranslator(layout: layout, maximumBindings: parameterLimit)
        let numbers = layout.storeNumbers(request.entityNumbers)
        var clauses = ["t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"]
        if let predicate = request.predicate {
            let (sql, exact) = translator.whereClause(predicate, entity, "t0")
            guard exact else { return nil }
            if let sql { clauses.append(sql) }
        }
        // Each group key: its SQL terms and how to read it back.
        enum KeyReader {
            case attribute(AttributeType)
            case reference(entityColumn: Bool, destination: Int32)
        }
        var select: [String] = []
        var groupTerms: [String] = []
        var readers: [KeyReader] = []
        for path in aggregation.groupBy {
            switch translator.resolve(path, entity, "t0") {
            case .value(let sql, _)?:
                guard let type = attributeType(at: path, of: entity) else { return nil }
                select.append(sql)
                groupTerms.append(sql)
                readers.append(.attribute(type))
            case .toOne(let sql, let entitySQL, let destination)?:
                select.append(sql)
                groupTerms.append(sql)
                if let entitySQL {
                    select.append(entitySQL)
                    groupTerms.append(entitySQL)
                }
                readers.append(.reference(entityColumn: entitySQL != nil, destination: destination.entityNumber))
            default:
                return nil
            }
        }
        for aggregate in aggregation.aggregates {
            guard let path = aggregate.keyPath else {
                select.append("COUNT(*)")
                continue
            }
            guard case .value(let sql, _)? = translator.resolve(path, entity, "t0"), let type = aggregate.type,
                QueryTranslator.kind(of: type) != nil
            else { return nil }
            if aggregate.function == .count {
                select.append("COUNT(\(sql))")
            } else {
                select.append(
                    "strata_aggregate(\(SQLiteFunctions.code(of: aggregate.function)), \(type.rawValue), \(sql))")
            }
        }
        guard translator.bindings.count <= parameterLimit else { return nil }
        let from = ([" FROM \(table.name.sqlName) t0"] + translator.joins).joined(separator: " ")
        var sql =
            "SELECT \(select.isEmpty ? "1" : select.joined(separator: ", "))\(from) WHERE \(clauses.joined(separator: " AND "))"
        if !groupTerms.isEmpty { sql += " GROUP BY " + groupTerms.joined(separator: ", ") }
        let bindings = translator.bindings
        return try read("aggregating \(request.entity.name)") { connection in
            let statement = try connection.cached(sql)
            try statement.bind(bindings)
            var groups: [StoreGroup] = []
            try stepping(statement) {
                var column: Int32 = 0
                var keys: [StoreValue] = []
                for reader in readers {
                    switch reader {
                    case .attribute(let type):
                        keys.append(AggregateAccumulator.normalized(ValueCoding.attribute(statement, column, type)))
                        column += 1
                    case .reference(let hasEntityColumn, let destination):
                        var target = destination
                        if hasEntityColumn, !statement.isNull(at: column + 1),
                            let stored = plans.modelNumber(storeNumber: statement.int64(at: column + 1))
                        {
                            target = stored
                        }
                        if statement.isNull(at: column) {
                            keys.append(.null)
                        } else {
                            keys.append(
                                .reference(
                                    RowID(
                                        entity: target,
                                        primaryKey: try checkedKey(statement.int64(at: column), of: target))))
                        }
                        column += hasEntityColumn ? 2 : 1
                    }
                }
                var values: [StoreValue] = []
                for aggregate in aggregation.aggregates {
                    values.append(aggregateValue(statement, column, aggregate))
                    column += 1
                }
                groups.append(StoreGroup(keys: keys, values: values))
            }
            return groups
        }
    }

    /// The one group of an ungrouped aggregation over no rows.
    private func emptyGroup(_ aggregation: StoreAggregation) -> StoreGroup {
        StoreGroup(
            keys: [], values: aggregation.aggregates.map { AggregateAccumulator($0.function, type: $0.type).result })
    }

    /// Reads an aggregate's column: counts are integers; `strata_aggregate` results come back as
    /// the accumulator gave them (a sum's integer or Double, a mean's Double, min and max in the
    /// attribute's type); NULL is an aggregate of no values.
    private func aggregateValue(_ statement: SQLiteStatement, _ column: Int32, _ aggregate: StoreAggregation.Aggregate)
        -> StoreValue
    {
        if aggregate.function == .count { return .integer(statement.int64(at: column)) }
        let storage = statement.columnType(at: column)
        if storage == SQLITE_NULL { return AggregateAccumulator(aggregate.function, type: aggregate.type).result }
        switch aggregate.function {
        case .sum, .average:
            if storage == SQLITE_INTEGER { return .integer(statement.int64(at: column)) }
            return ValueCoding.attribute(statement, column, .double)
        default:
            return ValueCoding.attribute(statement, column, aggregate.type ?? .undefined)
        }
    }

    /// The type of the attribute a key path through to-one relationships ends in.
    func attributeType(at path: String, of entity: EntityDescription) -> AttributeType? {
        var current = entity
        let components = path.split(separator: ".").map(String.init)
        for (position, key) in components.enumerated() {
            if let attribute = current.attributesByName[components[position...].joined(separator: ".")] {
                return attribute.type
            }
            guard let relationship = current.relationshipsByName[key], !relationship.isToMany,
                let next = model.entity(named: relationship.destinationEntityName)
            else { return nil }
            current = next
        }
        return nil
    }
}
