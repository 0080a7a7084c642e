/// An expression prepared for one entity's rows: key paths of the row's own attributes read value
/// slots directly, constants are kept, and functions call the evaluator's own function code, so
/// the values are the evaluator's (``FetchExpression/value(with:substitutionVariables:)``).
///
/// Only constants, plain attribute keys and functions of those compile (`score + 1`,
/// `lowercase:(name)`, `now()`); anything else (relationships, dotted key paths, variables,
/// aggregates, `SELF`) gives `nil`, and callers evaluate the expression on a ``RowView``.
///
/// Drivers use it for batch updates (``StoreBatchRequest``), where it runs once per row.
///
/// Not `Sendable`: compile it where it is used.
public struct CompiledRowExpression {
    private indirect enum Node {
        case slot(Int)
        case constant(StoreValue)
        case function(String, [Node])
    }

    private let root: Node

    /// Compiles `expression` for rows of `entity` (and its subentities), or returns `nil` when it
    /// reads anything but the row's own attributes.
    public init?(_ expression: FetchExpression, entity: EntityDescription) {
        guard let root = Self.compile(expression, entity) else { return nil }
        self.root = root
    }

    /// The slots the expression reads, ascending.
    public var readSlots: [Int] {
        var slots = Set<Int>()
        func walk(_ node: Node) {
            switch node {
            case .slot(let slot): slots.insert(slot)
            case .constant: break
            case .function(_, let arguments): arguments.forEach(walk)
            }
        }
        walk(root)
        return slots.sorted()
    }

    /// The expression's value for a row with these values (slots it does not read may hold
    /// anything, ``StoreValue/unfetched`` included).
    ///
    /// - Throws: ``FetchPredicateError`` exactly where the evaluator throws (a type mismatch, a
    ///   division by zero).
    public func value(_ values: [StoreValue]) throws -> StoreValue {
        try Self.evaluate(root, values)
    }

    private static func compile(_ expression: FetchExpression, _ entity: EntityDescription) -> Node? {
        switch expression {
        case .keyPath(let key):
            guard let slot = entity.index(ofProperty: key), case .attribute = entity.slotKinds[slot] else { return nil }
            return .slot(slot)
        case .constant(.references), .constant(.unfetched): return nil
        case .constant(let value): return .constant(value)
        case .function(let name, let arguments):
            guard let arity = PredicateFunction.arities[name], arity == arguments.count else { return nil }
            // Aggregate functions take collections, which a single row's slots never are.
            if ["sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:"].contains(name) { return nil }
            var nodes: [Node] = []
            for argument in arguments {
                guard let node = compile(argument, entity) else { return nil }
                nodes.append(node)
            }
            return .function(name, nodes)
        default: return nil
        }
    }

    private static func evaluate(_ node: Node, _ values: [StoreValue]) throws -> StoreValue {
        switch node {
        case .slot(let slot): return values[slot]
        case .constant(let value): return value
        case .function(let name, let arguments):
            if arguments.count == 2, let fast = try arithmetic(name, evaluate(arguments[0], values), evaluate(arguments[1], values)) {
                return fast
            }
            let evaluated = try arguments.map { EvaluatedValue.value(try evaluate($0, values)) }
            return try PredicateFunctionEvaluation.call(name, evaluated).scalar()
        }
    }

    /// `+ - *` of two plain numbers without building argument arrays; `nil` hands the call to the
    /// evaluator's function code (dates, decimals, `nil`, other functions).
    private static func arithmetic(_ name: String, _ a: StoreValue, _ b: StoreValue) throws -> StoreValue? {
        switch (a, b) {
        case (.integer, .integer), (.integer, .double), (.double, .integer), (.double, .double): return try numeric(name, a, b)
        default: return nil
        }
    }

    private static func numeric(_ name: String, _ a: StoreValue, _ b: StoreValue) throws -> StoreValue? {
        guard name == "add:to:" || name == "from:subtract:" || name == "multiply:by:",
            let x = PredicateNumber(a), let y = PredicateNumber(b)
        else { return nil }
        return try PredicateFunctionEvaluation.numeric(name, [x, y]).storeValue
    }
}
