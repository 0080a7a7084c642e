/// A predicate that cannot be parsed, bound to an entity, or evaluated.
///
/// Syntax errors carry the position in the format string (``offset``, ``line``, ``column``), the
/// token found and what was expected. Tests match on ``code``; people read ``description``:
///
/// ```
/// predicate syntax error at column 12: expected an expression, found end of input
/// ```
public struct FetchPredicateError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem this is.
    public var code: Code
    /// What went wrong, in the user's terms.
    public var message: String
    /// The 0-based offset (in Unicode scalars) in the format string, for syntax errors.
    public var offset: Int?
    /// The 1-based line of ``offset``.
    public var line: Int?
    /// The 1-based column of ``offset`` in its line.
    public var column: Int?
    /// The token found at ``offset`` (`"end of input"` at the end).
    public var found: String?
    /// What the parser expected there.
    public var expected: String?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, offset: Int? = nil, line: Int? = nil, column: Int? = nil,
        found: String? = nil, expected: String? = nil
    ) {
        self.code = code
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
        self.found = found
        self.expected = expected
    }

    public var description: String {
        var position = ""
        if let column {
            position = (line ?? 1) > 1 ? " at line \(line ?? 1), column \(column)" : " at column \(column)"
        }
        switch code {
        case .syntax: return "predicate syntax error\(position): \(message)"
        default: return "predicate error (\(code))\(position): \(message)"
        }
    }
}

extension FetchPredicateError {
    /// The kind of a ``FetchPredicateError``; new kinds may be added without breaking `switch`es.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case syntax, tooDeep, invalidArgument, missingVariable, unknownKeyPath, typeMismatch
            case invalidRegularExpression, unsupported
        }
        private let kind: Kind
        /// The format string does not parse.
        public static var syntax: Self { Self(kind: .syntax) }
        /// The format string nests deeper than the parser allows (``FetchPredicate/maximumNestingDepth``).
        public static var tooDeep: Self { Self(kind: .tooDeep) }
        /// A format argument is missing, extra, or of the wrong kind for its specifier.
        public static var invalidArgument: Self { Self(kind: .invalidArgument) }
        /// A `$VARIABLE` has no value in the substitution variables.
        public static var missingVariable: Self { Self(kind: .missingVariable) }
        /// A key path names no property of the entity (or of the object evaluated).
        public static var unknownKeyPath: Self { Self(kind: .unknownKeyPath) }
        /// Two values of kinds that do not compare (a string and a date), or an operator applied
        /// to a value it does not accept.
        public static var typeMismatch: Self { Self(kind: .typeMismatch) }
        /// The right side of `MATCHES` is not a valid regular expression.
        public static var invalidRegularExpression: Self { Self(kind: .invalidRegularExpression) }
        /// A part of Apple's language Strata does not implement (`FUNCTION`, `FETCH`, index access…).
        public static var unsupported: Self { Self(kind: .unsupported) }

        /// Lets `catch FetchPredicateError.Code.syntax` match.
        public static func ~= (code: Self, error: any Error) -> Bool { (error as? FetchPredicateError)?.code == code }

        public var description: String { "\(kind)" }
    }
}
