import Foundation

// Building, grouping, filtering, ordering and converting the records of a dictionary fetch.

extension DictionaryFetchPlan {
    /// The record of one object of an ungrouped fetch.
    func record(of object: ManagedObject, reader: ResultValueReader) throws -> ResultRecord {
        var values: [String: ResultValue] = [:]
        for case .value(let name, let path, let target) in columns {
            if case .composite(let attribute) = target {
                values[name] = try reader.composite(attribute, at: path) { try reader.read($0, from: object) }
            } else {
                values[name] = try reader.read(path, from: object)
            }
        }
        return ResultRecord(values: values)
    }

    /// The record of one row of an ungrouped fetch.
    func record(of row: RowSnapshot, in store: PersistentStore, reader: ResultValueReader) throws -> ResultRecord {
        var values: [String: ResultValue] = [:]
        for case .value(let name, let path, let target) in columns {
            if case .composite(let attribute) = target {
                values[name] = try reader.composite(attribute, at: path) { try reader.read($0, from: row, in: store) }
            } else {
                values[name] = try reader.read(path, from: row, in: store)
            }
        }
        return ResultRecord(values: values)
    }

    /// The record of a group a driver computed.
    func record(of group: StoreGroup, store: PersistentStore) -> ResultRecord {
        var keys: [ResultValue] = []
        for (index, target) in groupTargets.enumerated() {
            let value = index < group.keys.count ? group.keys[index] : .null
            switch (target, value) {
            case (.toOne, .reference(let id)):
                // A driver's references name entities of the store's model.
                if let entity = model.entity(number: id.entity) {
                    keys.append(.object(ManagedObjectID(entity: entity, rowID: id, store: store)))
                } else {
                    keys.append(.object(nil))
                }
            case (.toOne, _): keys.append(.object(nil))
            default: keys.append(.value(AggregateAccumulator.normalized(value)))
            }
        }
        return groupRecord(
            keys: keys,
            aggregates: aggregation.aggregates.indices.map { index in
                index < group.values.count ? group.values[index] : .null
            })
    }

    private func groupRecord(keys: [ResultValue], aggregates: [StoreValue]) -> ResultRecord {
        var values: [String: ResultValue] = [:]
        for (index, key) in keys.enumerated() {
            values[aggregation.groupBy[index]] = key
            values[groupNames[index]] = key
        }
        for column in columns {
            switch column {
            case .value(let name, let path, _): values[name] = values[path] ?? .value(.null)
            case .aggregate(let name, let index, _, _): values[name] = .value(aggregates[index])
            }
        }
        return ResultRecord(values: values)
    }

    /// Groups records read through `sources` (one closure per object or row, reading a key path)
    /// and aggregates them with ``AggregateAccumulator``, then finishes them.
    func grouping(_ sources: [(String) throws -> ResultValue], _ request: FetchRequest) throws -> [ResultRecord] {
        var groups: [[GroupKeyValue]: (keys: [ResultValue], accumulators: [AggregateAccumulator])] = [:]
        let fresh = aggregation.aggregates.map { AggregateAccumulator($0.function, type: $0.type) }
        if aggregation.groupBy.isEmpty { groups[[]] = ([], fresh) }
        for read in sources {
            var keys: [ResultValue] = []
            for path in aggregation.groupBy {
                var key = try read(path)
                if case .value(let raw) = key { key = .value(AggregateAccumulator.normalized(raw)) }
                keys.append(key)
            }
            let identity = keys.map(\.groupKey)
            var group = groups[identity] ?? (keys, fresh)
            for (index, aggregate) in aggregation.aggregates.enumerated() {
                try group.accumulators[index].add(aggregate.keyPath.map { try read($0).storeValue } ?? .integer(1))
            }
            groups[identity] = group
        }
        return try finish(
            groups.values.map { groupRecord(keys: $0.keys, aggregates: $0.accumulators.map(\.result)) }, request)
    }

    /// Applies the having predicate, the order (sort keys, else group keys), distinctness and the page.
    func finish(_ records: [ResultRecord], _ request: FetchRequest) throws -> [ResultRecord] {
        var kept = records
        if let having = request.havingPredicate {
            kept = try kept.filter { record in
                let view = ResultRecordView(values: record.values.mapValues(\.storeValue), prefix: "")
                var variables: [String: any PredicateArgument] = [:]
                for case .aggregate(let name, _, _, _) in columns {
                    variables[name] = record.values[name]?.storeValue ?? .null
                }
                return try having.evaluate(with: view, substitutionVariables: variables)
            }
        }
        let keys = request.sortKeys.isEmpty ? aggregation.groupBy.map { SortKey($0) } : request.sortKeys
        var views = kept.map { ($0, ResultRecordView(values: $0.values.mapValues(\.storeValue), prefix: "")) }
        var failure: (any Error)?
        views.sort { a, b in
            if failure != nil { return false }
            do {
                let order = try SortKey.compare(a.1, b.1, by: keys)
                if order != .orderedSame { return order == .orderedAscending }
                return Self.tieBreak(a.0, b.0, aggregation.groupBy)
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        kept = views.map(\.0)
        if request.returnsDistinctResults && request.propertiesToGroupBy != nil {
            var seen = Set<[GroupKeyValue]>()
            kept = kept.filter { record in
                seen.insert(columns.map { record.values[$0.name]?.groupKey ?? GroupKeyValue(.null, store: nil) })
                    .inserted
            }
        }
        return Array(kept.dropFirst(request.fetchOffset).prefix(request.fetchLimit > 0 ? request.fetchLimit : Int.max))
    }

    /// Orders groups whose keys sort the same but differ (canonically equivalent strings, the
    /// same row in two stores) by bytes, so every driver answers in one order.
    private static func tieBreak(_ a: ResultRecord, _ b: ResultRecord, _ paths: [String]) -> Bool {
        for path in paths {
            let (x, y) = (a.values[path]?.groupKey, b.values[path]?.groupKey)
            guard let x, let y, x != y else { continue }
            return String(describing: x.value).utf8.lexicographicallyPrecedes(String(describing: y.value).utf8)
                || (String(describing: x.value) == String(describing: y.value)
                    && (x.store.map { "\($0)" } ?? "") < (y.store.map { "\($0)" } ?? ""))
        }
        return false
    }

    /// A record as the dictionary a caller receives (`nil` values left out).
    func output(_ record: ResultRecord) -> [String: Any] {
        var result: [String: Any] = [:]
        for column in columns {
            guard let value = record.values[column.name] else { continue }
            switch (column, value) {
            case (_, .object(let id)): if let id { result[column.name] = id }
            case (_, .objects(let ids)): result[column.name] = ids
            case (.value(_, _, .composite(let attribute)), .composite(let elements)):
                if let dictionary = Self.dictionary(elements, of: attribute) { result[column.name] = dictionary }
            case (_, .composite): continue  // only composite columns hold composite values
            case (.value(_, _, .attribute(let attribute)), .value(let stored)):
                if let swift = Self.swiftValue(stored, attribute) { result[column.name] = swift }
            case (.aggregate(_, let index, let resultType, let inputType), .value(let stored)):
                if let swift = Self.swiftValue(
                    stored, function: aggregation.aggregates[index].function, resultType: resultType,
                    inputType: inputType)
                {
                    result[column.name] = swift
                }
            case (.value, .value(let stored)):
                if let swift = ManagedObject.plainValue(stored, .undefined) { result[column.name] = swift }
            }
        }
        return result
    }

    /// A composite's element values as `value(forKey:)` returns the composite: a dictionary by
    /// element name, nested composites nested, `nil` elements left out, `nil` when all are.
    static func dictionary(_ elements: [String: ResultValue], of composite: AttributeDescription) -> [String: Any]? {
        var result: [String: Any] = [:]
        for element in composite.elements {
            switch elements[element.name] {
            case .composite(let inner)?:
                if let nested = dictionary(inner, of: element) { result[element.name] = nested }
            case .value(let stored)?: if let swift = swiftValue(stored, element) { result[element.name] = swift }
            default: continue
            }
        }
        return result.isEmpty ? nil : result
    }

    /// An attribute's stored value as `value(forKey:)` returns it (transformables through their
    /// transformer; a value it cannot read back reads `nil`, as there).
    static func swiftValue(_ value: StoreValue, _ attribute: AttributeDescription) -> Any? {
        if attribute.type == .transformable, case .binary(let data) = value, let name = attribute.valueTransformerName,
            let transformer = AttributeValueTransformers.transformer(named: name)
        {
            // safe: a value the transformer cannot read is nil, as in value(forKey:)
            return try? transformer.reverseTransformedValue(data)
        }
        return ManagedObject.plainValue(value, attribute.type)
    }

    /// An aggregate's value as a Swift value, converted to `resultType` when given.
    static func swiftValue(
        _ value: StoreValue, function: AggregateFunction, resultType: AttributeType?, inputType: AttributeType?
    ) -> Any? {
        if let resultType, let converted = convert(value, to: resultType) {
            return ManagedObject.plainValue(converted, resultType)
        }
        switch (function, value) {
        case (.min, _), (.max, _): return ManagedObject.plainValue(value, inputType ?? .undefined)
        default: return ManagedObject.plainValue(value, .undefined)
        }
    }

    /// A number converted to another numeric type (Core Data's `expressionResultType`).
    private static func convert(_ value: StoreValue, to type: AttributeType) -> StoreValue? {
        guard let number = PredicateNumber(value) else { return value }
        switch type {
        case .integer16, .integer32, .integer64:
            switch number {
            case .integer(let n): return .integer(n)
            case .double(let d): return Int64(exactly: d.rounded(.towardZero)).map(StoreValue.integer)
            case .decimal(let d):
                return Int64(exactly: NSDecimalNumber(decimal: d).doubleValue.rounded(.towardZero)).map(
                    StoreValue.integer)
            }
        case .double, .float: return .double(number.doubleValue)
        case .decimal: return .decimal(PredicateArithmetic.decimal(number))
        case .boolean: return .bool(number.doubleValue != 0)
        default: return value
        }
    }
}
