/// How the driver writes a schema, table, column, index or channel name into SQL text: the one
/// place identifiers are quoted.
///
/// Every name is written in double quotes with every `"` inside doubled, whatever it holds: a
/// quoted name is one token to PostgreSQL's parser, keeps its case (`"ZITEM"`, `"Z_PK"`, as Core
/// Data names them) and can never end the identifier early. Names cannot hold U+0000 (models use
/// identifiers; the schema name is checked by ``PostgreSQLLocation``). Values are never written
/// into SQL text: they are bound parameters (``PGParameters``).
///
/// Thread safety: stateless.
enum SQLIdentifier {
    /// `name` as SQL text, always quoted.
    ///
    /// - Complexity: O(n) in the length of `name`.
    static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `name` for an error message: in double quotes, with `"`, `\\` and everything outside
    /// printable ASCII escaped, so a hostile name stays on one line.
    static func display(_ name: String) -> String {
        var out = "\""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case " "..."~": out.unicodeScalars.append(scalar)
            default: out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return out + "\""
    }
}

extension String {
    /// The name as SQL text (``SQLIdentifier/quote(_:)``).
    var sqlName: String { SQLIdentifier.quote(self) }
}
