/// Building key path expressions one step at a time, shared by the parser (`a.b.@count`), `%K`
/// arguments and variable substitution (`$x.name` with `$x` bound to a key path).
enum KeyPathSyntax {
    /// Words the parser reads as keywords; a key with one of these names is written `#name`.
    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "IN", "ALL", "ANY", "SOME", "NONE", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH",
        "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "FALSE", "YES", "NO", "TRUEPREDICATE",
        "FALSEPREDICATE", "SUBQUERY", "CAST", "FUNCTION", "TERNARY", "FETCH",
    ]

    /// Whether `name` can be written as a key without quoting (letters, digits, `_`, not starting
    /// with a digit).
    static func isPlainKey(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, PredicateLexer.isIdentifierStart(first) else { return false }
        return name.unicodeScalars.allSatisfy(PredicateLexer.isIdentifierPart)
    }

    /// `base.key`: extends a key path, or reads a key of another expression's value.
    ///
    /// - Returns: `nil` when `base` cannot take a key (after `@count`).
    static func appending(key: String, to base: FetchExpression) -> FetchExpression? {
        switch base {
        case .evaluatedObject: return .keyPath(key)
        case .keyPath(let path): return .keyPath(path + "." + key)
        case .member(let inner, let path): return .member(inner, path + "." + key)
        case .collection(.count, _, _): return nil
        case .collection(let op, let collection, let path):
            return .collection(op, of: collection, keyPath: path.map { $0 + "." + key } ?? key)
        default: return .member(base, key)
        }
    }

    /// `base.@op`.
    ///
    /// - Returns: `nil` when `base` already ends in a collection operator.
    static func appending(operator op: CollectionOperator, to base: FetchExpression) -> FetchExpression? {
        if case .collection = base { return nil }
        return .collection(op, of: base, keyPath: nil)
    }

    /// The expression a key path string stands for (`"a.b"`, `"items.@sum.price"`), read from `base`.
    ///
    /// - Throws: ``FetchPredicateError/Code-swift.struct/invalidArgument`` when the string is not a key path.
    static func expression(parsing path: String, base: FetchExpression) throws -> FetchExpression {
        var expression = base
        let components = path.split(separator: ".", omittingEmptySubsequences: false)
        for (index, component) in components.enumerated() {
            let name = String(component)
            if index == 0, name == "SELF", components.count > 0, base == .evaluatedObject { continue }
            if name.hasPrefix("@") {
                guard let op = CollectionOperator(rawValue: name) else {
                    throw FetchPredicateError(
                        .unsupported,
                        "collection operator '\(name)' is not supported; use @count, @sum, @avg, @min or @max",
                        found: name, expected: "@count, @sum, @avg, @min or @max")
                }
                guard let next = appending(operator: op, to: expression) else {
                    throw FetchPredicateError(.invalidArgument, "key path '\(path)' applies two collection operators")
                }
                expression = next
                continue
            }
            guard isPlainKey(name) else {
                throw FetchPredicateError(
                    .invalidArgument, "'\(path)' is not a key path (keys are letters, digits and '_', joined by '.')",
                    found: name, expected: "a key")
            }
            guard let next = appending(key: name, to: expression) else {
                throw FetchPredicateError(.invalidArgument, "key path '\(path)' continues after @count")
            }
            expression = next
        }
        return expression
    }
}
