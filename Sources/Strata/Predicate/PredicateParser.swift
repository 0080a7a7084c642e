import Foundation

extension FetchPredicate {
    /// How deeply a format string may nest parentheses, braces, function calls, `NOT`s and unary
    /// minuses before the parser gives up with ``FetchPredicateError/Code-swift.struct/tooDeep``.
    public static let maximumNestingDepth = 256

    /// Parses a predicate format string, filling `%@`, `%K`, `%d`… from `arguments` in order.
    ///
    /// ```swift
    /// try FetchPredicate(format: "%K BEGINSWITH[cd] %@ AND age BETWEEN %@", "name", "jo", [20, 30])
    /// ```
    ///
    /// - Throws: ``FetchPredicateError`` with the column, the token found and what was expected.
    public init(format: String, _ arguments: any PredicateArgument...) throws {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses a predicate format string with its arguments in an array.
    ///
    /// - Throws: ``FetchPredicateError`` with the column, the token found and what was expected.
    public init(format: String, argumentArray arguments: [any PredicateArgument]) throws {
        var parser = try PredicateParser(format, arguments: arguments)
        self = try parser.parsePredicate()
    }
}

extension FetchExpression {
    /// The name ``FetchExpression/function(_:_:)`` carries for `FUNCTION(target, "selector",
    /// arguments…)`: the target and the selector (a string constant) are its first two arguments.
    /// Only mapping-model value expressions may call methods; a fetch refuses them.
    public static let methodCallName = "FUNCTION"

    /// Parses a mapping model's value expression: the expression language with
    /// `FUNCTION(target, "selector", arguments…)` allowed, as in Xcode's mapping editor
    /// (`FUNCTION($source, "valueForKey:", "name")`, `$source.name`).
    ///
    /// - Throws: ``FetchPredicateError`` with the column, the token found and what was expected.
    public init(mappingFormat format: String) throws {
        var parser = try PredicateParser(format, arguments: [])
        parser.allowsMethodCalls = true
        self = try parser.parseStandaloneExpression()
    }

    /// Parses one expression (`age + 1`, `items.@sum.price`, `now()`), as `NSExpression(format:)` does.
    ///
    /// - Throws: ``FetchPredicateError`` with the column, the token found and what was expected.
    public init(format: String, _ arguments: any PredicateArgument...) throws {
        var parser = try PredicateParser(format, arguments: arguments)
        self = try parser.parseStandaloneExpression()
    }
}

/// A recursive-descent parser of the format-string language.
///
/// Parentheses are ambiguous (`(a > 1)` groups a predicate, `(a + 1) > 2` an expression), so the
/// levels below comparisons return a ``Node`` that is either; operators check what they get. This
/// keeps parsing linear, with no backtracking.
struct PredicateParser {
    enum Node {
        case predicate(FetchPredicate)
        case expression(FetchExpression)
    }

    let scalars: [Unicode.Scalar]
    var tokens: [PredicateToken]
    var index = 0
    let arguments: [any PredicateArgument]
    var argumentIndex = 0
    var depth = 0
    /// The lowest frame address the parse may reach on its thread (0 when unknown); read when the
    /// depth first reaches ``stackCheckDepth``.
    var stackFloor: UInt?
    /// The depth from which each level checks the stack's room.
    static let stackCheckDepth = 1
    /// Whether `FUNCTION(target, "selector", …)` is accepted (mapping-model value expressions only).
    var allowsMethodCalls = false

    init(_ format: String, arguments: [any PredicateArgument]) throws {
        var lexer = PredicateLexer(format)
        self.scalars = Array(format.unicodeScalars)
        self.tokens = try lexer.tokenize()
        self.arguments = arguments
    }

    // MARK: Tokens

    var current: PredicateToken { tokens[index] }

    mutating func advance() -> PredicateToken {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    func error(_ message: String, at token: PredicateToken? = nil, expected: String? = nil) -> FetchPredicateError {
        let token = token ?? current
        return PredicateSyntax.error(message, in: scalars, at: token.offset, found: token.described, expected: expected)
    }

    func unexpected(expected: String) -> FetchPredicateError {
        error("expected \(expected), found \(current.described)", expected: expected)
    }

    mutating func expectSymbol(_ symbol: String) throws {
        guard current.isSymbol(symbol) else { throw unexpected(expected: "'\(symbol)'") }
        _ = advance()
    }

    mutating func nested<T>(_ body: (inout PredicateParser) throws -> T) throws -> T {
        // Also check the stack itself (StackRoom): its bounds are read once per parse, the frame
        // address at each level.
        if depth >= Self.stackCheckDepth {
            if stackFloor == nil { stackFloor = StackRoom.floor() ?? 0 }
            if let floor = stackFloor, floor > 0, StackRoom.current() < floor {
                var failure = error(
                    "the predicate nests too deeply for this thread's stack (\(depth) levels)", expected: "less nesting"
                )
                failure.code = .tooDeep
                throw failure
            }
        }
        guard depth < FetchPredicate.maximumNestingDepth else {
            var failure = error(
                "the predicate nests deeper than \(FetchPredicate.maximumNestingDepth) levels",
                expected: "less nesting")
            failure.code = .tooDeep
            throw failure
        }
        depth += 1
        defer { depth -= 1 }
        return try body(&self)
    }

    // MARK: Entry points

    mutating func parsePredicate() throws -> FetchPredicate {
        if case .end = current.kind { throw unexpected(expected: "a predicate") }
        let node = try parseOr()
        let result = try predicate(node, at: current)
        guard case .end = current.kind else {
            throw unexpected(expected: "AND, OR or the end of the predicate")
        }
        try checkArgumentsUsed()
        return result
    }

    mutating func parseStandaloneExpression() throws -> FetchExpression {
        if case .end = current.kind { throw unexpected(expected: "an expression") }
        let start = current
        let expression = try self.expression(parseAdditive(), at: start)
        guard case .end = current.kind else { throw unexpected(expected: "an operator or the end of the expression") }
        try checkArgumentsUsed()
        return expression
    }

    func checkArgumentsUsed() throws {
        guard argumentIndex == arguments.count else {
            throw FetchPredicateError(
                .invalidArgument,
                "\(arguments.count) arguments given but the format uses \(argumentIndex)")
        }
    }

    /// The predicate a node holds; an expression here lacks its comparison operator, which would
    /// have been the current token.
    func predicate(_ node: Node, at token: PredicateToken) throws -> FetchPredicate {
        switch node {
        case .predicate(let predicate): return predicate
        case .expression: throw unexpected(expected: "a comparison operator")
        }
    }

    func expression(_ node: Node, at token: PredicateToken) throws -> FetchExpression {
        switch node {
        case .expression(let expression): return expression
        case .predicate:
            throw error("a predicate cannot be used as a value here", at: token, expected: "an expression")
        }
    }

    // MARK: Predicates

    mutating func parseOr() throws -> Node {
        let start = current
        let first = try parseAnd()
        guard isOr(current) else { return first }
        var parts = [try predicate(first, at: start)]
        while isOr(current) {
            _ = advance()
            let node = try parseAnd()
            parts.append(try predicate(node, at: current))
        }
        return .predicate(.or(parts))
    }

    mutating func parseAnd() throws -> Node {
        let start = current
        let first = try parseNot()
        guard isAnd(current) else { return first }
        var parts = [try predicate(first, at: start)]
        while isAnd(current) {
            _ = advance()
            let node = try parseNot()
            parts.append(try predicate(node, at: current))
        }
        return .predicate(.and(parts))
    }

    func isOr(_ token: PredicateToken) -> Bool { token.keyword == "OR" || token.isSymbol("||") }
    func isAnd(_ token: PredicateToken) -> Bool { token.keyword == "AND" || token.isSymbol("&&") }

    mutating func parseNot() throws -> Node {
        guard current.keyword == "NOT" || current.isSymbol("!") else { return try parseComparison() }
        _ = advance()
        return try nested { parser in
            let node = try parser.parseNot()
            return .predicate(.not(try parser.predicate(node, at: parser.current)))
        }
    }

    mutating func parseComparison() throws -> Node {
        let start = current
        switch start.keyword {
        case "TRUEPREDICATE":
            _ = advance()
            return .predicate(.constant(true))
        case "FALSEPREDICATE":
            _ = advance()
            return .predicate(.constant(false))
        case "ANY", "SOME", "ALL", "NONE":
            _ = advance()
            let lhsToken = current
            let lhs = try expression(parseAdditive(), at: lhsToken)
            guard let (op, options) = try parseOperator() else {
                throw unexpected(expected: "a comparison operator after \(start.keyword ?? "")")
            }
            let rhs = try parseRightSide(op)
            let modifier: ComparisonModifier = start.keyword == "ALL" ? .all : .any
            let comparison = FetchPredicate.comparison(
                ComparisonPredicate(lhs, op, rhs, modifier: modifier, options: options))
            return .predicate(start.keyword == "NONE" ? .not(comparison) : comparison)
        default:
            break
        }
        let lhsNode = try parseAdditive()
        guard let (op, options) = try parseOperator() else { return lhsNode }
        let lhs = try expression(lhsNode, at: start)
        let rhs = try parseRightSide(op)
        return .predicate(.comparison(ComparisonPredicate(lhs, op, rhs, options: options)))
    }

    mutating func parseRightSide(_ op: ComparisonOperator) throws -> FetchExpression {
        let token = current
        let rhs = try expression(parseAdditive(), at: token)
        if op == .between, case .aggregate(let bounds) = rhs, bounds.count != 2 {
            throw error(
                "BETWEEN needs two bounds, {lower, upper}; found \(bounds.count)", at: token, expected: "{lower, upper}"
            )
        }
        return rhs
    }

    /// The comparison operator at the current token with its `[cd]` options, or `nil`.
    mutating func parseOperator() throws -> (ComparisonOperator, ComparisonOptions)? {
        let op: ComparisonOperator
        switch current.kind {
        case .symbol(let symbol):
            switch symbol {
            case "==": op = .equal
            case "!=": op = .notEqual
            case "<": op = .lessThan
            case "<=": op = .lessThanOrEqual
            case ">": op = .greaterThan
            case ">=": op = .greaterThanOrEqual
            default: return nil
            }
        case .identifier(let name, escaped: false):
            switch name.uppercased() {
            case "LIKE": op = .like
            case "MATCHES": op = .matches
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "CONTAINS": op = .contains
            case "IN": op = .in
            case "BETWEEN": op = .between
            default: return nil
            }
        default: return nil
        }
        _ = advance()
        var options: ComparisonOptions = []
        if current.isSymbol("[") {
            _ = advance()
            guard case .identifier(let letters, escaped: false) = current.kind else {
                throw unexpected(expected: "comparison options c, d or n")
            }
            for letter in letters.lowercased() {
                switch letter {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": options.insert(.normalized)
                default: throw error("unknown comparison option '\(letter)'", expected: "c, d or n")
                }
            }
            _ = advance()
            try expectSymbol("]")
        }
        return (op, options)
    }
}
