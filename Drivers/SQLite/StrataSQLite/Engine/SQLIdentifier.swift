import CSQLite

/// How the driver writes a table, column, index or trigger name into SQL text: the one place
/// identifiers are quoted.
///
/// Every name the driver puts into a statement goes through ``quote(_:)``, whatever its source (a
/// model, a store's tables, a model cache): values are always bound as parameters, never written
/// into SQL text. See docs/formats/sqlite.md, "Identifiers".
///
/// Thread safety: stateless.
enum SQLIdentifier {
    /// `name` as SQL text: bare when it is a plain identifier (an ASCII letter or `_`, then ASCII
    /// letters, digits and `_`) that is not an SQL keyword, so stores keep Core Data's look
    /// (`ZPERSON`, `Z_PK`); otherwise in double quotes with every `"` inside doubled.
    ///
    /// A quoted name is one SQL token whatever it holds: SQLite reads `"` `"` inside quotes as a
    /// quote character of the name, so no name can end the identifier early. A name holding a NUL
    /// character is quoted too; ``SQLiteConnection/prepare(_:)`` refuses the text after the NUL.
    ///
    /// - Complexity: O(n) in the length of `name`.
    static func quote(_ name: String) -> String {
        isBare(name) ? name : "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Whether `name` can stand in SQL without quotes.
    static func isBare(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, isLetter(first) || first == UInt8(ascii: "_") else { return false }
        for byte in bytes.dropFirst() where !(isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_")) {
            return false
        }
        // No SQLite keyword starts with Z, so Core Data's names (Z…, Z_…) skip the engine's check.
        if first == UInt8(ascii: "Z") || first == UInt8(ascii: "z") { return true }
        return sqlite3_keyword_check(name, Int32(bytes.count)) == 0
    }

    /// `name` for an error message: in double quotes, with `"`, `\\` and everything outside
    /// printable ASCII escaped (`"a\\u{A}b"`), so a hostile name stays on one line.
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

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}

extension String {
    /// The name as SQL text (``SQLIdentifier/quote(_:)``).
    var sqlName: String { SQLIdentifier.quote(self) }
}
