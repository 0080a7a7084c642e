import Foundation

/// The expression levels of the parser: arithmetic, postfix key paths, primaries.
extension PredicateParser {
    mutating func parseAdditive() throws -> Node {
        var node = try parseMultiplicative()
        var chain = 0
        while current.isSymbol("+") || current.isSymbol("-") {
            try checkChain(&chain)
            let selector = current.isSymbol("+") ? "add:to:" : "from:subtract:"
            let lhs = try expression(node, at: current)
            _ = advance()
            let operand = current
            let rhs = try expression(parseMultiplicative(), at: operand)
            node = .expression(.function(selector, [lhs, rhs]))
        }
        return node
    }

    mutating func parseMultiplicative() throws -> Node {
        var node = try parsePower()
        var chain = 0
        while current.isSymbol("*") || current.isSymbol("/") {
            try checkChain(&chain)
            let selector = current.isSymbol("*") ? "multiply:by:" : "divide:by:"
            let lhs = try expression(node, at: current)
            _ = advance()
            let operand = current
            let rhs = try expression(parsePower(), at: operand)
            node = .expression(.function(selector, [lhs, rhs]))
        }
        return node
    }

    /// `a ** b ** c` groups to the right, as in Apple's grammar; read iteratively.
    mutating func parsePower() throws -> Node {
        let first = try parseUnary()
        guard current.isSymbol("**") else { return first }
        var operands = [try expression(first, at: current)]
        var chain = 0
        while current.isSymbol("**") {
            try checkChain(&chain)
            _ = advance()
            let operand = current
            operands.append(try expression(parseUnary(), at: operand))
        }
        var result = operands.removeLast()
        while let base = operands.popLast() { result = .function("raise:toPower:", [base, result]) }
        return .expression(result)
    }

    /// A chain of binary operators nests its tree one level per operator (`a + b + c` is
    /// `(a + b) + c`), so long chains count against the nesting limit too.
    func checkChain(_ chain: inout Int) throws {
        chain += 1
        guard depth + chain <= FetchPredicate.maximumNestingDepth else {
            var failure = error(
                "the expression chains more than \(FetchPredicate.maximumNestingDepth) operators",
                expected: "fewer operators")
            failure.code = .tooDeep
            throw failure
        }
    }

    mutating func parseUnary() throws -> Node {
        guard current.isSymbol("-") else { return try parsePostfix() }
        _ = advance()
        let operand = current
        return try nested { parser in
            let value = try parser.expression(parser.parseUnary(), at: operand)
            switch value {
            case .constant(.integer(let n)) where n != .min: return .expression(.constant(.integer(-n)))
            case .constant(.double(let d)): return .expression(.constant(.double(-d)))
            case .constant(.decimal(let d)): return .expression(.constant(.decimal(-d)))
            default: return .expression(.function("from:subtract:", [.constant(.integer(0)), value]))
            }
        }
    }

    mutating func parsePostfix() throws -> Node {
        let node = try parsePrimary()
        guard case .expression(var value) = node else {
            if current.isSymbol(".") { throw error("a predicate has no keys", expected: "an operator") }
            return node
        }
        while true {
            if current.isSymbol("[") {
                throw FetchPredicateError.unsupportedSyntax(
                    "index access ([FIRST], [LAST], [SIZE], [n]) is not supported", token: current, in: scalars)
            }
            guard current.isSymbol(".") else { break }
            _ = advance()
            let step = current
            switch step.kind {
            case .identifier(let name, _):
                _ = advance()
                if step.keyword == "SELF", case .evaluatedObject = value { continue }
                guard let next = KeyPathSyntax.appending(key: name, to: value) else {
                    throw error("a key cannot follow @count", at: step, expected: "an operator")
                }
                value = next
            case .at(let name):
                _ = advance()
                guard let op = CollectionOperator(rawValue: "@" + name) else {
                    throw FetchPredicateError.unsupportedSyntax(
                        "collection operator '@\(name)' is not supported; use @count, @sum, @avg, @min or @max",
                        token: step, in: scalars)
                }
                guard let next = KeyPathSyntax.appending(operator: op, to: value) else {
                    throw error("only one collection operator may apply to a key path", at: step, expected: "a key")
                }
                value = next
            default:
                throw unexpected(expected: "a key or a collection operator after '.'")
            }
        }
        return .expression(value)
    }

    // MARK: Primaries

    mutating func parsePrimary() throws -> Node {
        let token = current
        switch token.kind {
        case .end:
            throw unexpected(expected: "an expression")
        case .string(let value):
            _ = advance()
            return .expression(.constant(.string(value)))
        case .integer(let value):
            _ = advance()
            return .expression(.constant(.integer(value)))
        case .double(let value):
            _ = advance()
            return .expression(.constant(.double(value)))
        case .variable(let name):
            _ = advance()
            return .expression(.variable(name))
        case .at(let name):
            _ = advance()
            guard let op = CollectionOperator(rawValue: "@" + name) else {
                throw FetchPredicateError.unsupportedSyntax(
                    "collection operator '@\(name)' is not supported", token: token, in: scalars)
            }
            return .expression(.collection(op, of: .evaluatedObject, keyPath: nil))
        case .specifier(let conversion):
            _ = advance()
            return .expression(try argumentExpression(conversion, token: token))
        case .symbol("("):
            _ = advance()
            return try nested { parser in
                let inner = try parser.parseOr()
                try parser.expectSymbol(")")
                return inner
            }
        case .symbol("{"):
            _ = advance()
            return try nested { parser in .expression(.aggregate(try parser.parseList(closing: "}"))) }
        case .identifier(let name, let escaped):
            return try parseName(name, escaped: escaped, token: token)
        case .symbol:
            throw unexpected(expected: "an expression")
        }
    }

    /// Comma-separated expressions up to `closing` (consumed).
    mutating func parseList(closing: String) throws -> [FetchExpression] {
        var items: [FetchExpression] = []
        if current.isSymbol(closing) {
            _ = advance()
            return items
        }
        while true {
            let token = current
            items.append(try expression(parseAdditive(), at: token))
            if current.isSymbol(",") {
                _ = advance()
                continue
            }
            guard current.isSymbol(closing) else { throw unexpected(expected: "',' or '\(closing)'") }
            _ = advance()
            return items
        }
    }

    mutating func parseName(_ name: String, escaped: Bool, token: PredicateToken) throws -> Node {
        _ = advance()
        let keyword = escaped ? nil : name.uppercased()
        switch keyword {
        case "NIL", "NULL": return .expression(.constant(.null))
        case "TRUE", "YES": return .expression(.constant(.bool(true)))
        case "FALSE", "NO": return .expression(.constant(.bool(false)))
        case "SELF": return .expression(.evaluatedObject)
        case "SUBQUERY": return try nested { parser in try parser.parseSubquery() }
        case "CAST": return try nested { parser in try parser.parseCast(token) }
        case "TERNARY": return try nested { parser in try parser.parseTernary() }
        case "FUNCTION" where allowsMethodCalls:
            return try nested { parser in try parser.parseMethodCall(token) }
        case "FUNCTION":
            throw FetchPredicateError.unsupportedSyntax(
                "FUNCTION(object, 'selector', …) calls an Objective-C method, which Strata cannot do; "
                    + "use the built-in functions (lowercase:(x), abs:(x), now(), …)", token: token, in: scalars)
        case "FETCH":
            throw FetchPredicateError.unsupportedSyntax(
                "FETCH(…) expressions are not supported", token: token, in: scalars)
        case let word? where KeyPathSyntax.reservedWords.contains(word):
            throw error(
                "expected an expression, found the reserved word \(name) (write #\(name) to use it as a key)",
                at: token, expected: "an expression")
        default: break
        }
        // A function call: `name(…)`, `name:(…)`, `modulus:by:(…)`.
        guard !escaped, current.isSymbol("(") || current.isSymbol(":") else {
            return .expression(.keyPath(name))
        }
        var selector = name
        while current.isSymbol(":") {
            _ = advance()
            selector += ":"
            if case .identifier(let part, false) = current.kind {
                _ = advance()
                selector += part
                guard current.isSymbol(":") else { throw unexpected(expected: "':' in the function name") }
            }
        }
        try expectSymbol("(")
        let arguments = try nested { parser in try parser.parseList(closing: ")") }
        guard let resolved = PredicateFunction.resolve(selector, argumentCount: arguments.count) else {
            let known = PredicateFunction.arities.keys.contains { $0.hasPrefix(name) }
            let message =
                known
                ? "function \(selector) does not take \(arguments.count) argument\(arguments.count == 1 ? "" : "s")"
                : "unknown function '\(selector)'"
            throw FetchPredicateError.unsupportedSyntax(message, token: token, in: scalars)
        }
        if resolved == "castObject:toType:" { return .expression(try cast(arguments[0], arguments[1], token: token)) }
        return .expression(.function(resolved, arguments))
    }

    /// `FUNCTION(target, "selector", arguments…)`, for mapping expressions.
    mutating func parseMethodCall(_ token: PredicateToken) throws -> Node {
        try expectSymbol("(")
        let arguments = try parseList(closing: ")")
        guard arguments.count >= 2, case .constant(.string(let selector)) = arguments[1], !selector.isEmpty else {
            throw error(
                "FUNCTION takes a target, a quoted selector and the selector's arguments", at: token,
                expected: "FUNCTION($source, \"valueForKey:\", \"name\")")
        }
        let colons = selector.filter { $0 == ":" }.count
        guard colons == arguments.count - 2 else {
            throw error(
                "the selector \(selector) takes \(colons) argument\(colons == 1 ? "" : "s"), given \(arguments.count - 2)",
                at: token, expected: "one argument per ':' of the selector")
        }
        return .expression(.function(FetchExpression.methodCallName, arguments))
    }

    mutating func parseSubquery() throws -> Node {
        try expectSymbol("(")
        let collectionToken = current
        let collection = try expression(parseAdditive(), at: collectionToken)
        try expectSymbol(",")
        guard case .variable(let variable) = current.kind else { throw unexpected(expected: "a $variable") }
        _ = advance()
        try expectSymbol(",")
        let predicateToken = current
        let predicateNode = try parseOr()
        let predicate = try self.predicate(predicateNode, at: predicateToken)
        try expectSymbol(")")
        return .expression(.subquery(collection: collection, variable: variable, predicate: predicate))
    }

    mutating func parseCast(_ token: PredicateToken) throws -> Node {
        try expectSymbol("(")
        let arguments = try parseList(closing: ")")
        guard arguments.count == 2 else {
            throw error(
                "CAST takes two arguments, a value and a type name", at: token, expected: "CAST(value, \"NSDate\")")
        }
        return .expression(try cast(arguments[0], arguments[1], token: token))
    }

    /// `CAST(value, type)`; folded to a constant when the value is one.
    func cast(_ value: FetchExpression, _ type: FetchExpression, token: PredicateToken) throws
        -> FetchExpression
    {
        guard case .constant(.string(let typeName)) = type else {
            throw error(
                "the type of CAST must be a quoted class name", at: token, expected: "\"NSDate\", \"NSNumber\", …")
        }
        guard PredicateFunction.castTypes.contains(typeName) else {
            throw FetchPredicateError.unsupportedSyntax(
                "CAST to '\(typeName)' is not supported; use one of "
                    + PredicateFunction.castTypes.sorted().joined(separator: ", "), token: token, in: scalars)
        }
        if case .constant(let constant) = value {
            do {
                return .constant(try PredicateValueCast.cast(constant, to: typeName))
            } catch var failure as FetchPredicateError {
                failure.offset = token.offset
                failure.column = error("", at: token).column
                failure.line = error("", at: token).line
                throw failure
            }
        }
        return .function("castObject:toType:", [value, type])
    }

    mutating func parseTernary() throws -> Node {
        try expectSymbol("(")
        let conditionToken = current
        let conditionNode = try parseOr()
        let condition = try predicate(conditionNode, at: conditionToken)
        try expectSymbol(",")
        let first = current
        let whenTrue = try expression(parseAdditive(), at: first)
        try expectSymbol(",")
        let second = current
        let whenFalse = try expression(parseAdditive(), at: second)
        try expectSymbol(")")
        return .expression(.ternary(condition, whenTrue, whenFalse))
    }

    // MARK: Format arguments

    mutating func argumentExpression(_ conversion: String, token: PredicateToken) throws -> FetchExpression {
        guard argumentIndex < arguments.count else {
            var failure = error(
                "format specifier %\(conversion) has no argument (\(arguments.count) given)", at: token,
                expected: "an argument for each format specifier")
            failure.code = .invalidArgument
            throw failure
        }
        let argument = arguments[argumentIndex].predicateArgument
        argumentIndex += 1
        func mismatch(_ wanted: String) -> FetchPredicateError {
            var failure = error(
                "argument \(argumentIndex) for %\(conversion) must be \(wanted)", at: token, expected: wanted)
            failure.code = .invalidArgument
            return failure
        }
        do {
            switch conversion {
            case "@":
                return try argument.expression()
            case "K":
                switch argument {
                case .keyPath(let path), .value(.string(let path)):
                    return try KeyPathSyntax.expression(parsing: path, base: .evaluatedObject)
                default: throw mismatch("a key path (a String or PredicateKeyPath)")
                }
            case "f", "e", "g", "lf":
                switch argument {
                case .value(.double(let d)): return .constant(.double(d))
                case .value(.integer(let n)): return .constant(.double(Double(n)))
                case .value(.decimal(let d)): return .constant(.double(NSDecimalNumber(decimal: d).doubleValue))
                default: throw mismatch("a number")
                }
            case "s":
                guard case .value(.string(let s)) = argument else { throw mismatch("a string") }
                return .constant(.string(s))
            default:
                switch argument {
                case .value(.integer(let n)): return .constant(.integer(n))
                case .value(.bool(let b)): return .constant(.integer(b ? 1 : 0))
                case .value(.double(let d)) where Int64(exactly: d) != nil: return .constant(.integer(Int64(d)))
                default: throw mismatch("an integer")
                }
            }
        } catch var failure as FetchPredicateError where failure.offset == nil {
            failure.offset = token.offset
            let positioned = error("", at: token)
            failure.line = positioned.line
            failure.column = positioned.column
            throw failure
        }
    }
}

extension FetchPredicateError {
    static func unsupportedSyntax(_ message: String, token: PredicateToken, in scalars: [Unicode.Scalar]) -> Self {
        var error = PredicateSyntax.error(message, in: scalars, at: token.offset, found: token.described)
        error.code = .unsupported
        return error
    }
}
