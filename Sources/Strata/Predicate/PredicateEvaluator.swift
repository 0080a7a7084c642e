import Foundation

extension FetchPredicate {
    /// Whether `object` satisfies the predicate.
    ///
    /// This evaluator defines the meaning of every predicate; drivers that translate predicates
    /// must give the same answers. See docs/predicates.md for the rules (numbers compare across
    /// types, `nil` equals only `nil`, `ANY` over an empty collection is false, `ALL` true…).
    ///
    /// - Parameters:
    ///   - object: The object, row or dictionary to test.
    ///   - substitutionVariables: Values of `$VARIABLES` not already substituted.
    /// - Throws: ``FetchPredicateError``: a missing variable, a type mismatch (a string compared with a
    ///   date), an invalid regular expression, an unknown key.
    public func evaluate(
        with object: any PredicateEvaluable, substitutionVariables: [String: any PredicateArgument] = [:]
    ) throws -> Bool {
        let evaluator = PredicateEvaluator(root: object, substitutions: substitutionVariables)
        return try evaluator.evaluate(self)
    }
}

extension FetchExpression {
    /// The value of the expression for `object`, as a predicate would compare it.
    ///
    /// Collections (to-many key paths, `{…}`, subqueries) come back as ``StoreValue/references(_:)``
    /// when every member is an object with a reference, and otherwise throw; use
    /// ``FetchPredicate/evaluate(with:substitutionVariables:)`` to compare them.
    public func value(
        with object: any PredicateEvaluable, substitutionVariables: [String: any PredicateArgument] = [:]
    ) throws -> StoreValue {
        let evaluator = PredicateEvaluator(root: object, substitutions: substitutionVariables)
        let value = try evaluator.value(self)
        if case .collection(let items) = value {
            var ids: [RowID] = []
            for item in items {
                guard case .reference(let id) = try item.scalar() else {
                    throw FetchPredicateError(
                        .typeMismatch, "the expression \(self) is a collection of values, not one value")
                }
                ids.append(id)
            }
            return .references(ids)
        }
        return try value.scalar()
    }
}

/// What an expression evaluates to: a value, an object (compared by its ``PredicateEvaluable/selfValue``),
/// or a collection.
enum EvaluatedValue {
    case value(StoreValue)
    case object(any PredicateEvaluable)
    case collection([EvaluatedValue])

    init(_ keyValue: KeyValue) {
        switch keyValue {
        case .value(.references(let ids)): self = .collection(ids.map { .value(.reference($0)) })
        case .value(let value): self = .value(value)
        case .object(let object): self = .object(object)
        case .objects(let objects): self = .collection(objects.map { .object($0) })
        case .values(let values): self = .collection(values.map { .value($0) })
        }
    }

    /// The single value; objects give their ``PredicateEvaluable/selfValue``.
    func scalar() throws -> StoreValue {
        switch self {
        case .value(let value): return value
        case .object(let object): return object.selfValue
        case .collection:
            throw FetchPredicateError(
                .typeMismatch,
                "a collection (a to-many key path or {…}) is compared with a single value; quantify it with ANY, ALL or NONE, or use IN/CONTAINS"
            )
        }
    }

    /// The members, when this is a collection (`nil` counts as empty).
    var members: [EvaluatedValue]? {
        switch self {
        case .collection(let items): items
        case .value(.null): []
        default: nil
        }
    }
}

struct PredicateEvaluator {
    let root: any PredicateEvaluable
    let substitutions: [String: any PredicateArgument]
    /// Variables bound by enclosing subqueries (and, in migrations, `$source`, `$manager`, …).
    var bindings: [String: EvaluatedValue] = [:]
    /// Answers `FUNCTION(target, "selector", …)` (mapping expressions); `nil` refuses them.
    var methodCall:
        ((_ target: EvaluatedValue, _ selector: String, _ arguments: [EvaluatedValue]) throws -> EvaluatedValue)?

    init(root: any PredicateEvaluable, substitutions: [String: any PredicateArgument]) {
        self.root = root
        self.substitutions = substitutions
    }

    func evaluate(_ predicate: FetchPredicate) throws -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .not(let inner): return try !evaluate(inner)
        case .and(let parts):
            for part in parts where try !evaluate(part) { return false }
            return true
        case .or(let parts):
            for part in parts where try evaluate(part) { return true }
            return false
        case .comparison(let comparison): return try evaluate(comparison)
        }
    }

    func evaluate(_ comparison: ComparisonPredicate) throws -> Bool {
        let lhs = try value(comparison.lhs)
        let rhs = try value(comparison.rhs)
        switch comparison.modifier {
        case .direct:
            return try PredicateComparison.test(lhs, comparison.op, rhs, options: comparison.options)
        case .any, .all:
            guard let members = lhs.members else {
                throw FetchPredicateError(
                    .typeMismatch,
                    "\(comparison.modifier.rawValue) needs a collection on its left, but \(comparison.lhs) is a single value"
                )
            }
            if comparison.modifier == .any {
                for member in members
                where try PredicateComparison.test(member, comparison.op, rhs, options: comparison.options) {
                    return true
                }
                return false
            }
            for member in members
            where try !PredicateComparison.test(member, comparison.op, rhs, options: comparison.options) {
                return false
            }
            return true
        }
    }

    func value(_ expression: FetchExpression) throws -> EvaluatedValue {
        switch expression {
        case .constant(let value): return .value(value)
        case .aggregate(let items): return .collection(try items.map(value))
        case .evaluatedObject: return .object(root)
        case .keyPath(let path): return try read(path, from: .object(root))
        case .member(let base, let path): return try read(path, from: value(base))
        case .variable(let name): return try variable(name)
        case .collection(let op, let collection, let path):
            return try PredicateAggregation.apply(op, to: value(collection), keyPath: path, reader: self)
        case .subquery(let collection, let variable, let predicate):
            guard let members = try value(collection).members else {
                throw FetchPredicateError(
                    .typeMismatch, "the collection of SUBQUERY, \(collection), is not a collection")
            }
            var inner = self
            var kept: [EvaluatedValue] = []
            for member in members {
                inner.bindings[variable] = member
                if try inner.evaluate(predicate) { kept.append(member) }
            }
            return .collection(kept)
        case .function(FetchExpression.methodCallName, let arguments):
            guard let methodCall, arguments.count >= 2, case .constant(.string(let selector)) = arguments[1] else {
                throw FetchPredicateError(
                    .unsupported, "FUNCTION(…) calls a method; only a migration's value expressions may use it")
            }
            return try methodCall(value(arguments[0]), selector, arguments.dropFirst(2).map(value))
        case .function(let name, let arguments):
            return try PredicateFunctionEvaluation.call(name, arguments.map(value))
        case .ternary(let condition, let whenTrue, let whenFalse):
            return try value(evaluate(condition) ? whenTrue : whenFalse)
        }
    }

    func variable(_ name: String) throws -> EvaluatedValue {
        if let bound = bindings[name] { return bound }
        guard let argument = substitutions[name] else {
            throw FetchPredicateError(
                .missingVariable, "no value for $\(name); pass it in substitutionVariables or withSubstitutionVariables"
            )
        }
        switch argument.predicateArgument {
        case .value(let value): return EvaluatedValue(.value(value))
        case .values(let values): return .collection(values.map { .value($0) })
        case .keyPath(let path):
            return try value(KeyPathSyntax.expression(parsing: path, base: .evaluatedObject))
        }
    }

    /// Reads a dotted key path, KVC style: through objects, and through collections member by member.
    func read(_ path: String, from start: EvaluatedValue) throws -> EvaluatedValue {
        // Most key paths are one key: read it without splitting (the split allocated an array
        // and a string per read, most of an in-memory sort's time).
        guard path.isEmpty || path.utf8.contains(UInt8(ascii: ".")) else { return try read(key: path, from: start) }
        var current = start
        for key in path.split(separator: ".") { current = try read(key: String(key), from: current) }
        return current
    }

    func read(key: String, from value: EvaluatedValue) throws -> EvaluatedValue {
        switch value {
        case .object(let object): return EvaluatedValue(try object.keyValue(forKey: key))
        case .value(.null): return .value(.null)
        case .value(.unfetched):
            throw FetchPredicateError(
                .typeMismatch, "cannot read '\(key)' of a relationship whose members were not loaded")
        case .value(let scalar):
            throw FetchPredicateError(
                .typeMismatch, "cannot read the key '\(key)' of \(scalar.kindName.withArticle) value")
        case .collection(let members):
            var result: [EvaluatedValue] = []
            result.reserveCapacity(members.count)
            for member in members {
                let read = try self.read(key: key, from: member)
                if case .collection(let inner) = read { result += inner } else { result.append(read) }
            }
            return .collection(result)
        }
    }
}
