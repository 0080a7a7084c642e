extension FetchPredicate {
    /// A copy with `$VARIABLES` replaced by values, as in a fetch request template.
    ///
    /// Variables bound by a `SUBQUERY` are left alone, and so are variables `variables` does not
    /// name: evaluating the result without a value for them throws
    /// ``FetchPredicateError/Code-swift.struct/missingVariable``.
    ///
    /// ```swift
    /// let template = try FetchPredicate(format: "age > $MIN AND name IN $NAMES")
    /// let bound = try template.withSubstitutionVariables(["MIN": 30, "NAMES": ["Ann", "Bo"]])
    /// bound.predicateFormat   // age > 30 AND name IN {"Ann", "Bo"}
    /// ```
    ///
    /// - Throws: ``FetchPredicateError/Code-swift.struct/invalidArgument`` when a value cannot be a
    ///   predicate constant (an unfetched relationship) or a key path value is malformed.
    public func withSubstitutionVariables(_ variables: [String: any PredicateArgument]) throws -> FetchPredicate {
        var substitution = PredicateSubstitution(variables: variables)
        return try substitution.apply(self)
    }

    /// Every key path the predicate reads, from the evaluated object, with collection operators
    /// removed: `items.@sum.price > 5` reads `items.price`, `items.@count > 1` reads `items`, and
    /// `SUBQUERY(items, $i, $i.price > 5)` reads `items` and `items.price`.
    public var keyPaths: Set<String> {
        var collector = KeyPathCollector()
        collector.collect(self)
        return collector.paths
    }
}

struct PredicateSubstitution {
    let variables: [String: any PredicateArgument]
    var bound: Set<String> = []

    mutating func apply(_ predicate: FetchPredicate) throws -> FetchPredicate {
        switch predicate {
        case .constant: return predicate
        case .not(let inner): return .not(try apply(inner))
        case .and(let parts): return .and(try parts.map { try apply($0) })
        case .or(let parts): return .or(try parts.map { try apply($0) })
        case .comparison(var comparison):
            comparison.lhs = try apply(comparison.lhs)
            comparison.rhs = try apply(comparison.rhs)
            return .comparison(comparison)
        }
    }

    mutating func apply(_ expression: FetchExpression) throws -> FetchExpression {
        switch expression {
        case .constant, .evaluatedObject, .keyPath: return expression
        case .aggregate(let items): return .aggregate(try items.map { try apply($0) })
        case .variable(let name):
            guard !bound.contains(name), let argument = variables[name] else { return expression }
            return try argument.predicateArgument.expression()
        case .member(let base, let path):
            let newBase = try apply(base)
            if newBase == base { return expression }
            // A path that does not parse stays a member access, which evaluation reports (the error is safe to drop here).
            return (try? KeyPathSyntax.expression(parsing: path, base: newBase)) ?? .member(newBase, path)
        case .collection(let op, let collection, let path):
            return .collection(op, of: try apply(collection), keyPath: path)
        case .subquery(let collection, let variable, let predicate):
            let newCollection = try apply(collection)
            var inner = self
            inner.bound.insert(variable)
            return .subquery(collection: newCollection, variable: variable, predicate: try inner.apply(predicate))
        case .function(let name, let arguments): return .function(name, try arguments.map { try apply($0) })
        case .ternary(let condition, let a, let b): return .ternary(try apply(condition), try apply(a), try apply(b))
        }
    }
}

struct KeyPathCollector {
    var paths: Set<String> = []
    /// Subquery variables and the key path of the collection they iterate (`nil` when not a key path).
    var variables: [String: String?] = [:]

    mutating func collect(_ predicate: FetchPredicate) {
        switch predicate {
        case .constant: break
        case .not(let inner): collect(inner)
        case .and(let parts), .or(let parts): for part in parts { collect(part) }
        case .comparison(let comparison):
            collect(comparison.lhs)
            collect(comparison.rhs)
        }
    }

    /// The key path an expression reads from the evaluated object, if it is one.
    func path(of expression: FetchExpression) -> String? {
        switch expression {
        case .keyPath(let path): return path
        case .member(let base, let path): return self.path(of: base).map { join($0, path) }
        case .variable(let name): return variables[name] ?? nil
        case .evaluatedObject: return ""
        default: return nil
        }
    }

    func join(_ prefix: String, _ path: String) -> String { prefix.isEmpty ? path : prefix + "." + path }

    mutating func collect(_ expression: FetchExpression) {
        switch expression {
        case .constant, .evaluatedObject, .variable: break
        case .keyPath(let path): paths.insert(path)
        case .member(let base, _):
            if let path = path(of: expression), !path.isEmpty { paths.insert(path) } else { collect(base) }
        case .aggregate(let items): for item in items { collect(item) }
        case .collection(_, let collection, let keyPath):
            collect(collection)
            if let keyPath, let prefix = path(of: collection) { paths.insert(join(prefix, keyPath)) }
        case .subquery(let collection, let variable, let predicate):
            collect(collection)
            var inner = self
            inner.variables[variable] = .some(path(of: collection))
            inner.collect(predicate)
            paths.formUnion(inner.paths)
        case .function(_, let arguments): for argument in arguments { collect(argument) }
        case .ternary(let condition, let a, let b):
            collect(condition)
            collect(a)
            collect(b)
        }
    }
}
