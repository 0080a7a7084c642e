import Foundation

/// One token of a predicate format string.
struct PredicateToken: Sendable {
    enum Kind: Sendable, Equatable {
        /// A name; `escaped` when written `#name` (a reserved word used as a key).
        case identifier(String, escaped: Bool)
        case string(String)
        case integer(Int64)
        case double(Double)
        /// `$name`
        case variable(String)
        /// `@count`, `@sum`… (the name without `@`)
        case at(String)
        /// `%@`, `%K`, `%d`… (the conversion without `%`)
        case specifier(String)
        /// Punctuation and operators: `( ) { } [ ] , . : == != < <= > >= && || ! + - * / **`.
        case symbol(String)
        case end
    }
    var kind: Kind
    /// Offset of the first scalar.
    var offset: Int
    /// The source spelling, for error messages.
    var text: String

    /// The identifier's upper-cased spelling when it is an unescaped identifier.
    var keyword: String? {
        if case .identifier(let name, false) = kind { return name.uppercased() }
        return nil
    }

    func isSymbol(_ symbol: String) -> Bool {
        if case .symbol(symbol) = kind { return true }
        return false
    }

    /// How the token reads in an error message.
    var described: String {
        if case .end = kind { return "end of input" }
        return "'\(text)'"
    }
}

/// Splits a format string into tokens.
struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    private var position = 0

    init(_ source: String) { scalars = Array(source.unicodeScalars) }

    /// Every token, ending with ``PredicateToken/Kind/end``.
    mutating func tokenize() throws -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        while true {
            let token = try next()
            tokens.append(token)
            if case .end = token.kind { return tokens }
        }
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        position + ahead < scalars.count ? scalars[position + ahead] : nil
    }

    private func text(from start: Int) -> String {
        var string = String.UnicodeScalarView()
        string.append(contentsOf: scalars[start..<position])
        return String(string)
    }

    static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        c == "_" || c.properties.isAlphabetic
    }

    static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
        isIdentifierStart(c) || ("0"..."9").contains(c) || c.properties.numericType != nil
    }

    private func error(_ message: String, at offset: Int, found: String? = nil, expected: String? = nil)
        -> FetchPredicateError
    {
        PredicateSyntax.error(message, in: scalars, at: offset, found: found, expected: expected)
    }

    private mutating func next() throws -> PredicateToken {
        while let c = peek(), c.properties.isWhitespace { position += 1 }
        let start = position
        guard let c = peek() else { return PredicateToken(kind: .end, offset: start, text: "") }
        if Self.isIdentifierStart(c) || c == "#" {
            let escaped = c == "#"
            if escaped { position += 1 }
            let nameStart = position
            while let d = peek(), Self.isIdentifierPart(d) { position += 1 }
            guard position > nameStart else {
                throw error("'#' must be followed by a key name", at: start, found: "'#'", expected: "a key name")
            }
            return PredicateToken(
                kind: .identifier(text(from: nameStart), escaped: escaped), offset: start, text: text(from: start))
        }
        if ("0"..."9").contains(c) { return try number() }
        switch c {
        case "\"", "'": return try string(quote: c)
        case "$", "@":
            position += 1
            let nameStart = position
            while let d = peek(), Self.isIdentifierPart(d) { position += 1 }
            guard position > nameStart else {
                throw error("'\(c)' must be followed by a name", at: start, found: "'\(c)'", expected: "a name")
            }
            let name = text(from: nameStart)
            return PredicateToken(kind: c == "$" ? .variable(name) : .at(name), offset: start, text: text(from: start))
        case "%": return try specifier()
        default: break
        }
        let three = ["**"]
        let two = ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"]
        for candidate in three + two where matches(candidate) {
            position += candidate.unicodeScalars.count
            return PredicateToken(kind: .symbol(Self.canonicalSymbol(candidate)), offset: start, text: candidate)
        }
        let singles: Set<Unicode.Scalar> = [
            "(", ")", "{", "}", "[", "]", ",", ".", ":", "=", "<", ">", "!", "+", "-", "*", "/",
        ]
        if singles.contains(c) {
            position += 1
            let symbol = String(c)
            return PredicateToken(kind: .symbol(Self.canonicalSymbol(symbol)), offset: start, text: symbol)
        }
        throw error(
            "unexpected character '\(c.escaped(asASCII: false))'", at: start,
            found: "'\(c.escaped(asASCII: false))'", expected: "an expression or operator")
    }

    private static func canonicalSymbol(_ symbol: String) -> String {
        switch symbol {
        case "=": "=="
        case "<>": "!="
        case "=<": "<="
        case "=>": ">="
        default: symbol
        }
    }

    private func matches(_ candidate: String) -> Bool {
        var offset = 0
        for scalar in candidate.unicodeScalars {
            guard peek(offset) == scalar else { return false }
            offset += 1
        }
        return true
    }

    private mutating func number() throws -> PredicateToken {
        let start = position
        if peek() == "0", let radixMark = peek(1),
            let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][radixMark]
        {
            position += 2
            let digitsStart = position
            while let d = peek(), Self.isIdentifierPart(d) { position += 1 }
            let digits = text(from: digitsStart)
            guard let value = Int64(digits, radix: radix) ?? UInt64(digits, radix: radix).map({ Int64(bitPattern: $0) })
            else {
                throw error(
                    "malformed number '\(text(from: start))'", at: start, found: "'\(text(from: start))'",
                    expected: "a number")
            }
            return PredicateToken(kind: .integer(value), offset: start, text: text(from: start))
        }
        var isDouble = false
        while let d = peek(), ("0"..."9").contains(d) { position += 1 }
        if peek() == ".", let d = peek(1), ("0"..."9").contains(d) {
            isDouble = true
            position += 1
            while let d = peek(), ("0"..."9").contains(d) { position += 1 }
        }
        if let e = peek(), e == "e" || e == "E" {
            var ahead = 1
            if let sign = peek(1), sign == "+" || sign == "-" { ahead = 2 }
            if let d = peek(ahead), ("0"..."9").contains(d) {
                isDouble = true
                position += ahead
                while let d = peek(), ("0"..."9").contains(d) { position += 1 }
            }
        }
        if let d = peek(), Self.isIdentifierStart(d) {
            throw error("malformed number '\(text(from: start))\(d)'", at: start, found: "'\(d)'", expected: "a number")
        }
        let spelling = text(from: start)
        if !isDouble, let value = Int64(spelling) {
            return PredicateToken(kind: .integer(value), offset: start, text: spelling)
        }
        guard let value = Double(spelling) else {
            throw error("malformed number '\(spelling)'", at: start, found: "'\(spelling)'", expected: "a number")
        }
        return PredicateToken(kind: .double(value), offset: start, text: spelling)
    }

    private mutating func string(quote: Unicode.Scalar) throws -> PredicateToken {
        let start = position
        position += 1
        var value = String.UnicodeScalarView()
        while true {
            guard let c = peek() else {
                throw error("unterminated string", at: start, found: "end of input", expected: "a closing \(quote)")
            }
            position += 1
            if c == quote { break }
            if c == "%", peek() == "%" {
                position += 1
                value.append("%")
                continue
            }
            guard c == "\\" else {
                value.append(c)
                continue
            }
            guard let escaped = peek() else {
                throw error("unterminated string", at: start, found: "end of input", expected: "a closing \(quote)")
            }
            position += 1
            switch escaped {
            case "n": value.append("\n")
            case "t": value.append("\t")
            case "r": value.append("\r")
            case "0": value.append("\0")
            case "\"", "'": value.append(escaped)
            case "\\": value.append("\\")
            case "u":
                var hex = ""
                while hex.count < 4, let d = peek(), d.properties.isASCIIHexDigit {
                    hex.unicodeScalars.append(d)
                    position += 1
                }
                guard hex.count == 4, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw error(
                        "malformed \\u escape", at: position - hex.count - 2, found: "'\\u\(hex)'",
                        expected: "four hexadecimal digits")
                }
                value.append(scalar)
            default:
                // Not an escape the language defines: keep the backslash, so LIKE and MATCHES
                // patterns (`a\*b`, `\d+`) read as written.
                value.append("\\")
                value.append(escaped)
            }
        }
        return PredicateToken(kind: .string(String(value)), offset: start, text: text(from: start))
    }

    private mutating func specifier() throws -> PredicateToken {
        let start = position
        position += 1
        let conversions = [
            "@", "K", "d", "i", "u", "f", "e", "g", "s", "ld", "li", "lu", "lf", "lld", "lli", "llu", "hd", "hi", "hu",
            "qd", "qi", "qu", "zd", "zu", "c",
        ]
        for conversion in conversions.sorted(by: { $0.count > $1.count }) where matches(conversion) {
            position += conversion.unicodeScalars.count
            return PredicateToken(kind: .specifier(conversion), offset: start, text: text(from: start))
        }
        let found = peek().map { "'%\($0)'" } ?? "'%'"
        throw error(
            "unknown format specifier \(found)", at: start, found: found,
            expected: "%@, %K, %d, %i, %ld, %lld, %u, %f or %s (write %% inside a quoted string for a percent sign)")
    }
}

/// Helpers shared by the lexer and the parser.
enum PredicateSyntax {
    static func error(
        _ message: String, in scalars: [Unicode.Scalar], at offset: Int, found: String? = nil, expected: String? = nil
    ) -> FetchPredicateError {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, scalars.count) where scalars[index] == "\n" {
            line += 1
            lineStart = index + 1
        }
        return FetchPredicateError(
            .syntax, message, offset: offset, line: line, column: offset - lineStart + 1, found: found,
            expected: expected)
    }
}
