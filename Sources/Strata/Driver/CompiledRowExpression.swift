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
        /// `+`, `-` or `*` of two expressions (the common case, kept free of argument arrays).
        case arithmetic(Arithmetic, Node, Node)
    }

    private enum Arithmetic {
        case add, subtract, multiply

        var selector: String {
            switch self {
            case .add: "add:to:"
            case .subtract: "from:subtract:"
            case .multiply: "multiply:by:"
            }
        }
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
            case .arithmetic(_, let a, let b):
                walk(a)
                walk(b)
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
            if ["sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:"].contains(name) {
                return nil
            }
            var nodes: [Node] = []
            for argument in arguments {
                guard let node = compile(argument, entity) else { return nil }
                nodes.append(node)
            }
            switch name {
            case "add:to:": return .arithmetic(.add, nodes[0], nodes[1])
            case "from:subtract:": return .arithmetic(.subtract, nodes[0], nodes[1])
            case "multiply:by:": return .arithmetic(.multiply, nodes[0], nodes[1])
            default: return .function(name, nodes)
            }
        default: return nil
        }
    }

    private static func evaluate(_ node: Node, _ values: [StoreValue]) throws -> StoreValue {
        switch node {
        case .slot(let slot): return values[slot]
        case .constant(let value): return value
        case .function(let name, let arguments):
            let evaluated = try arguments.map { EvaluatedValue.value(try evaluate($0, values)) }
            return try PredicateFunctionEvaluation.call(name, evaluated).scalar()
        case .arithmetic(let op, let lhs, let rhs):
            let a = try evaluate(lhs, values)
            let b = try evaluate(rhs, values)
            if let result = arithmetic(op, a, b) { return result }
            return try PredicateFunctionEvaluation.call(op.selector, [.value(a), .value(b)]).scalar()
        }
    }

    /// Integers and doubles, as ``PredicateArithmetic`` computes them (integers that overflow
    /// become doubles); `nil` for anything else (dates, decimals, `nil`), which the evaluator's
    /// function code handles.
    private static func arithmetic(_ op: Arithmetic, _ a: StoreValue, _ b: StoreValue) -> StoreValue? {
        switch (a, b) {
        case (.integer(let x), .integer(let y)):
            let (result, overflow): (Int64, Bool)
            switch op {
            case .add: (result, overflow) = x.addingReportingOverflow(y)
            case .subtract: (result, overflow) = x.subtractingReportingOverflow(y)
            case .multiply: (result, overflow) = x.multipliedReportingOverflow(by: y)
            }
            return overflow ? .double(apply(op, Double(x), Double(y))) : .integer(result)
        case (.double(let x), .double(let y)): return .double(apply(op, x, y))
        case (.integer(let x), .double(let y)): return .double(apply(op, Double(x), y))
        case (.double(let x), .integer(let y)): return .double(apply(op, x, Double(y)))
        default: return nil
        }
    }

    private static func apply(_ op: Arithmetic, _ x: Double, _ y: Double) -> Double {
        switch op {
        case .add: x + y
        case .subtract: x - y
        case .multiply: x * y
        }
    }
}
