import Foundation
import Strata

/// Where a fetch finds its candidate rows: every row of the fetched entities, the entries of a
/// secondary index in key ranges, or the reverse entries of a to-one relationship. Candidates are
/// a superset of the answer; the driver then evaluates the whole predicate on each.
enum QueryPlan {
    case scan
    case index(DatabaseLayout.Index, [KeyRange])
    case referrers(rel: UInt32, target: RowID)

    /// Index keys from `start` through `through`; a key that has `through` as a prefix is inside.
    struct KeyRange {
        var start: [UInt8]
        var through: [UInt8]
    }

    /// Picks the most selective usable conjunct of `predicate` (equality before ranges).
    static func make(
        _ predicate: FetchPredicate?, entity: EntityDescription, entities: Set<Int32>, layout: DatabaseLayout
    )
        -> QueryPlan
    {
        guard let predicate else { return .scan }
        let conjuncts: [ComparisonPredicate]
        switch predicate {
        case .comparison(let c): conjuncts = [c]
        case .and(let parts): conjuncts = parts.compactMap { if case .comparison(let c) = $0 { c } else { nil } }
        default: return .scan
        }
        var best: (plan: QueryPlan, rank: Int)?
        for comparison in conjuncts {
            guard let candidate = plan(comparison, entity: entity, entities: entities, layout: layout) else { continue }
            if best == nil || candidate.rank < best!.rank { best = candidate }  // checked for nil first
        }
        return best?.plan ?? .scan
    }

    private static func plan(
        _ c: ComparisonPredicate, entity: EntityDescription, entities: Set<Int32>, layout: DatabaseLayout
    ) -> (plan: QueryPlan, rank: Int)? {
        guard c.modifier == .direct, c.options.isEmpty else { return nil }
        var op = c.op
        let key: String
        let operand: FetchExpression
        switch (c.lhs, c.rhs) {
        case (.keyPath(let k), let rhs): (key, operand) = (k, rhs)
        case (let lhs, .keyPath(let k)):
            (key, operand) = (k, lhs)
            switch op {
            case .lessThan: op = .greaterThan
            case .lessThanOrEqual: op = .greaterThanOrEqual
            case .greaterThan: op = .lessThan
            case .greaterThanOrEqual: op = .lessThanOrEqual
            case .equal: break
            default: return nil
            }
        default: return nil
        }
        // A key with dots names a slot only as a composite's element (`location.latitude`).
        guard let slot = entity.index(ofProperty: key),
            let kind = layout.slots[entity.entityNumber]?[slot]
        else { return nil }
        if case .toOne(let rel) = kind {
            guard op == .equal, case .constant(.reference(let target)) = operand else { return nil }
            return (.referrers(rel: rel, target: target), 0)
        }
        guard case .attribute(let type) = kind,
            let index = layout.indexes.first(where: { $0.slots.first == slot && entities.isSubset(of: $0.entities) })
        else { return nil }
        func constant(_ e: FetchExpression) -> StoreValue? {
            if case .constant(let v) = e { return coerce(v, to: type) }
            return nil
        }
        let prefix = Keys.indexPrefix(index.id)
        let tag: UInt8?
        switch type {
        case .integer16, .integer32, .integer64, .boolean: tag = 0x10
        case .double, .float, .date: tag = 0x20
        case .string: tag = 0x30
        default: tag = nil
        }
        switch op {
        case .equal:
            guard let value = constant(operand) else { return nil }
            let k = Keys.index(index.id, [value])
            return (.index(index, [KeyRange(start: k, through: k)]), 1)
        case .in:
            guard case .aggregate(let items) = operand else { return nil }
            let values = items.compactMap(constant)
            guard values.count == items.count else { return nil }
            return (
                .index(
                    index,
                    values.map {
                        let k = Keys.index(index.id, [$0])
                        return KeyRange(start: k, through: k)
                    }), 2
            )
        case .lessThan, .lessThanOrEqual:
            guard let tag, let value = constant(operand), !value.isNull else { return nil }
            return (.index(index, [KeyRange(start: prefix + [tag], through: Keys.index(index.id, [value]))]), 3)
        case .greaterThan, .greaterThanOrEqual:
            guard let tag, let value = constant(operand), !value.isNull else { return nil }
            return (.index(index, [KeyRange(start: Keys.index(index.id, [value]), through: prefix + [tag])]), 3)
        case .between:
            guard tag != nil, case .aggregate(let items) = operand, items.count == 2,
                var low = constant(items[0]), var high = constant(items[1]), !low.isNull, !high.isNull
            else { return nil }
            // BETWEEN takes its bounds in either order (the evaluator swaps descending ones); bounds
            // that do not order are left to the scan, whose evaluation throws (so the error cannot matter here).
            guard let order = try? StoreValue.predicateOrder(low, high) else { return nil }
            if order == .orderedDescending { swap(&low, &high) }
            return (
                .index(index, [KeyRange(start: Keys.index(index.id, [low]), through: Keys.index(index.id, [high]))]), 3
            )
        default:
            return nil
        }
    }

    /// `value` in the case an attribute of `type` stores, when the conversion is exact; `nil`
    /// when the index cannot answer for it (the driver then scans).
    static func coerce(_ value: StoreValue, to type: AttributeType) -> StoreValue? {
        switch (type, value) {
        case (_, .null): return .null
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer): return value
        case (.integer16, .bool(let b)), (.integer32, .bool(let b)), (.integer64, .bool(let b)):
            return .integer(b ? 1 : 0)
        case (.integer16, .double(let d)), (.integer32, .double(let d)), (.integer64, .double(let d)):
            return Int64(exactly: d).map { .integer($0) }
        case (.boolean, .bool): return value
        case (.boolean, .integer(let n)) where n == 0 || n == 1: return .bool(n == 1)
        case (.double, .double(let d)), (.float, .double(let d)): return d.isNaN ? nil : value
        case (.double, .integer(let n)), (.float, .integer(let n)):
            let d = Double(n)
            return Int64(exactly: d) == n ? .double(d) : nil
        case (.date, .date), (.string, .string), (.uuid, .uuid): return value
        default: return nil
        }
    }
}
