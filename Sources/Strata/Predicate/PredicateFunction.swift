/// The functions of `NSExpression` a predicate can call, by selector name.
///
/// In a format string a function is written `name:(arguments)` (`lowercase:(name)`,
/// `modulus:by:(a, 3)`, `now()`); the bare form `lowercase(name)` is accepted too. `canonical:` is
/// Core Data's canonical form of a string (derived attributes): lowercased, diacritics removed,
/// in normalization form KC, as `==[cd]` compares. Arithmetic
/// operators are functions: `a + b` is `add:to:`, `a - b` is `from:subtract:`, `a * b` is
/// `multiply:by:`, `a / b` is `divide:by:`, `a ** b` is `raise:toPower:`; a unary minus `-x` is
/// `from:subtract:(0, x)`. `CAST(x, "NSDate")` is `castObject:toType:`.
public enum PredicateFunction {
    /// Every supported selector and its number of arguments.
    public static let arities: [String: Int] = [
        "sum:": 1, "count:": 1, "min:": 1, "max:": 1, "average:": 1, "median:": 1, "mode:": 1, "stddev:": 1,
        "add:to:": 2, "from:subtract:": 2, "multiply:by:": 2, "divide:by:": 2, "modulus:by:": 2,
        "sqrt:": 1, "log:": 1, "ln:": 1, "raise:toPower:": 2, "exp:": 1, "ceiling:": 1, "floor:": 1, "abs:": 1,
        "trunc:": 1, "uppercase:": 1, "lowercase:": 1, "canonical:": 1, "random": 0, "random:": 1, "now": 0,
        "bitwiseAnd:with:": 2, "bitwiseOr:with:": 2, "bitwiseXor:with:": 2, "leftshift:by:": 2,
        "rightshift:by:": 2, "onesComplement:": 1, "noindex:": 1, "castObject:toType:": 2,
    ]

    /// The infix operator printed for an arithmetic function, with its precedence (higher binds tighter).
    static let infix: [String: (symbol: String, precedence: Int)] = [
        "add:to:": ("+", 1), "from:subtract:": ("-", 1), "multiply:by:": ("*", 2), "divide:by:": ("/", 2),
        "raise:toPower:": ("**", 3),
    ]

    /// The type names `CAST` accepts.
    public static let castTypes: Set<String> = [
        "NSDate", "NSNumber", "NSString", "NSDecimalNumber", "NSUUID", "NSURL", "NSData", "RowID",
    ]

    /// The selector a name written in a format string stands for, given its number of arguments:
    /// the name itself when it is a selector, else the one selector whose first part is `name`
    /// and that takes `count` arguments (`lowercase` → `lowercase:`, `random` with one → `random:`).
    static func resolve(_ name: String, argumentCount count: Int) -> String? {
        if arities[name] == count { return name }
        let base = name.split(separator: ":").first.map(String.init) ?? name
        guard !name.contains(":") || name == base + ":" else { return nil }
        let candidates = arities.filter {
            $0.value == count && $0.key.split(separator: ":").first.map(String.init) == base
        }
        return candidates.count == 1 ? candidates.first?.key : nil
    }
}
