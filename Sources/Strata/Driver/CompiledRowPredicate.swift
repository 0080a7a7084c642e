/// A predicate prepared for one entity's rows: comparisons between attributes of the row and
/// constants read the row's value slots directly instead of walking key paths through
/// ``RowView``. Every comparison still runs through the evaluator's own comparison code, so the
/// answers are the evaluator's.
///
/// Only predicates made of `AND`, `OR`, `NOT`, constants and direct comparisons between a plain
/// attribute key and constants (or `{…}` of constants) compile; anything else (relationships,
/// key paths with dots, `ANY`, functions, variables) gives `nil`, and callers fall back to
/// ``FetchPredicate/evaluate(with:substitutionVariables:)``.
///
/// Drivers use it to filter rows they hold in memory or decode (atomic stores, LMDB scans).
///
/// Not `Sendable`: compile it where it is used.
public struct CompiledRowPredicate {
    private indirect enum Node {
        case constant(Bool)
        case not(Node)
        case and([Node])
        case or([Node])
        case comparison(Operand, ComparisonOperator, Operand, ComparisonOptions)
        /// `slot op constant` (or `BETWEEN {low, high}`) on integers: answered without the
        /// evaluator when the slot holds an integer, by `general` otherwise.
        case integers(slot: Int, ComparisonOperator, low: Int64, high: Int64, general: Node)
        /// The same on doubles (neither side NaN).
        case doubles(slot: Int, ComparisonOperator, low: Double, high: Double, general: Node)
    }

    private enum Operand {
        case slot(Int)
        case fixed(EvaluatedValue)
    }

    private let root: Node

    /// Compiles `predicate` for rows of `entity` (and its subentities), or returns `nil` when it
    /// reads anything but the row's own attributes.
    public init?(_ predicate: FetchPredicate, entity: EntityDescription) {
        guard let root = Self.compile(predicate, entity) else { return nil }
        self.root = root
    }

    /// When the whole predicate is one comparison of an attribute slot with integer constants
    /// (`age BETWEEN {30, 40}`, `count > 3`): the slot and the test of an integer stored there,
    /// which answers exactly as ``matches(_:)`` for rows whose slot holds an integer. Rows whose
    /// slot holds anything else (`nil`) must go through ``matches(_:)``.
    public var integerComparison: IntegerComparison? {
        guard case .integers(let slot, let op, let low, let high, _) = root else { return nil }
        return IntegerComparison(slot: slot, op: op, low: low, high: high)
    }

    /// One comparison of an integer slot with constants (``integerComparison``): a plain value,
    /// so a scan tests each row without calling through a closure.
    public struct IntegerComparison: Sendable {
        /// The slot compared.
        public let slot: Int
        @usableFromInline let op: ComparisonOperator
        @usableFromInline let low: Int64
        @usableFromInline let high: Int64

        /// Whether a row whose slot holds `value` matches.
        @inlinable public func matches(_ value: Int64) -> Bool { CompiledRowPredicate.test(value, op, low, high) }
    }

    /// The slots the predicate reads, ascending; other slots of the values passed to
    /// ``matches(_:)`` may hold anything, ``StoreValue/unfetched`` included.
    public var readSlots: [Int] {
        var slots = Set<Int>()
        func walk(_ node: Node) {
            switch node {
            case .constant: break
            case .not(let inner): walk(inner)
            case .and(let parts), .or(let parts): parts.forEach(walk)
            case .comparison(let lhs, _, let rhs, _):
                if case .slot(let slot) = lhs { slots.insert(slot) }
                if case .slot(let slot) = rhs { slots.insert(slot) }
            case .integers(let slot, _, _, _, _), .doubles(let slot, _, _, _, _): slots.insert(slot)
            }
        }
        walk(root)
        return slots.sorted()
    }

    /// Whether a row with these values matches.
    ///
    /// - Throws: ``FetchPredicateError`` exactly where the evaluator throws (a type mismatch).
    public func matches(_ values: [StoreValue]) throws -> Bool { try Self.evaluate(root, values) }

    private static func compile(_ predicate: FetchPredicate, _ entity: EntityDescription) -> Node? {
        switch predicate {
        case .constant(let value): return .constant(value)
        case .not(let inner): return compile(inner, entity).map(Node.not)
        case .and(let parts):
            let nodes = parts.compactMap { compile($0, entity) }
            return nodes.count == parts.count ? .and(nodes) : nil
        case .or(let parts):
            let nodes = parts.compactMap { compile($0, entity) }
            return nodes.count == parts.count ? .or(nodes) : nil
        case .comparison(let comparison):
            guard comparison.modifier == .direct, let lhs = operand(comparison.lhs, entity),
                let rhs = operand(comparison.rhs, entity)
            else { return nil }
            let general = Node.comparison(lhs, comparison.op, rhs, comparison.options)
            return comparison.options.isEmpty ? numeric(lhs, comparison.op, rhs, general) : general
        }
    }

    /// The integer or double form of `slot op constant(s)`, or `general`.
    private static func numeric(_ lhs: Operand, _ op: ComparisonOperator, _ rhs: Operand, _ general: Node) -> Node {
        guard case .slot(let slot) = lhs, case .fixed(let fixed) = rhs else { return general }
        var bounds: [StoreValue] = []
        switch (op, fixed) {
        case (.equal, .value(let v)), (.notEqual, .value(let v)), (.lessThan, .value(let v)),
            (.lessThanOrEqual, .value(let v)), (.greaterThan, .value(let v)), (.greaterThanOrEqual, .value(let v)):
            bounds = [v, v]
        case (.between, .collection(let items)) where items.count == 2:
            for item in items {
                guard case .value(let v) = item else { return general }
                bounds.append(v)
            }
        default: return general
        }
        // BETWEEN takes its bounds in either order (the evaluator swaps descending ones).
        switch (bounds[0], bounds[1]) {
        case (.integer(let low), .integer(let high)):
            return .integers(slot: slot, op, low: min(low, high), high: max(low, high), general: general)
        case (.double(let low), .double(let high)) where !low.isNaN && !high.isNaN:
            return .doubles(slot: slot, op, low: min(low, high), high: max(low, high), general: general)
        default: return general
        }
    }

    @inlinable @inline(__always)
    static func test<T: Comparable>(_ value: T, _ op: ComparisonOperator, _ low: T, _ high: T) -> Bool {
        switch op {
        case .equal: value == low
        case .notEqual: value != low
        case .lessThan: value < low
        case .lessThanOrEqual: value <= low
        case .greaterThan: value > low
        case .greaterThanOrEqual: value >= low
        default: low <= value && value <= high  // .between, the only other operator compiled here
        }
    }

    private static func operand(_ expression: FetchExpression, _ entity: EntityDescription) -> Operand? {
        switch expression {
        case .keyPath(let key):
            guard let slot = entity.index(ofProperty: key), case .attribute = entity.slotKinds[slot] else { return nil }
            return .slot(slot)
        case .constant(.references), .constant(.unfetched): return nil
        case .constant(let value): return .fixed(.value(value))
        case .aggregate(let items):
            var values: [EvaluatedValue] = []
            for item in items {
                guard case .constant(let value) = item, !isCollection(value) else { return nil }
                values.append(.value(value))
            }
            return .fixed(.collection(values))
        default: return nil
        }
    }

    private static func isCollection(_ value: StoreValue) -> Bool {
        switch value {
        case .references, .unfetched: true
        default: false
        }
    }

    private static func evaluate(_ node: Node, _ values: [StoreValue]) throws -> Bool {
        switch node {
        case .constant(let value): return value
        case .not(let inner): return try !evaluate(inner, values)
        case .and(let parts):
            for part in parts where try !evaluate(part, values) { return false }
            return true
        case .or(let parts):
            for part in parts where try evaluate(part, values) { return true }
            return false
        case .comparison(let lhs, let op, let rhs, let options):
            return try PredicateComparison.test(read(lhs, values), op, read(rhs, values), options: options)
        case .integers(let slot, let op, let low, let high, let general):
            guard case .integer(let value) = values[slot] else { return try evaluate(general, values) }
            return test(value, op, low, high)
        case .doubles(let slot, let op, let low, let high, let general):
            guard case .double(let value) = values[slot], !value.isNaN else { return try evaluate(general, values) }
            return test(value, op, low, high)
        }
    }

    private static func read(_ operand: Operand, _ values: [StoreValue]) -> EvaluatedValue {
        switch operand {
        case .slot(let slot): .value(values[slot])
        case .fixed(let value): value
        }
    }
}
