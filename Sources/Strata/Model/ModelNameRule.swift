import Foundation

extension ManagedObjectModel {
    /// Whether `name` may name an entity, attribute, relationship, fetched property, configuration
    /// or fetch request template: an identifier, a letter or `_` followed by letters, digits, `_`
    /// and combining marks (`Person`, `firstName`, `_cache2`, `größe`). Letters and digits are
    /// Unicode's (the identifier rule of Unicode Standard Annex #31, `XID_Start` then
    /// `XID_Continue`); spaces, punctuation, quotes, symbols, control and format characters are not.
    ///
    /// Xcode's model editor takes no spaces, punctuation or quotes in these names either. The rule
    /// keeps every name one word wherever it goes: in SQL table and column names (`ZPERSON`), Swift
    /// identifiers, error messages. Names Core Data forbids because they clash with `NSObject` or
    /// `NSManagedObject` methods (`description`, `entity`, …) are accepted: Strata reads and writes
    /// properties by name, never through Objective-C methods, and `strata codegen` gives such
    /// properties another Swift name.
    ///
    /// Every model is checked when it is created (from an Xcode model file, with the builder,
    /// from a store's embedded model); a name that breaks the rule is a ``ModelError`` with code
    /// ``ModelError/Code/invalidName``.
    ///
    /// - Complexity: O(n) in the length of `name`.
    public static func isValidName(_ name: String) -> Bool {
        ModelNameRule.isIdentifier(name)
    }
}

/// The name rule of ``ManagedObjectModel/isValidName(_:)``, and how errors show a name that
/// breaks it.
enum ModelNameRule {
    /// What a valid name looks like, for error messages.
    static let ruleText =
        "names start with a letter or '_' and hold only letters, digits, '_' and combining marks (no spaces, punctuation, quotes or control characters)"

    static func isIdentifier(_ name: String) -> Bool {
        var scalars = name.unicodeScalars.makeIterator()
        guard let first = scalars.next(), first == "_" || first.properties.isXIDStart else { return false }
        while let scalar = scalars.next() {
            guard scalar.properties.isXIDContinue else { return false }
        }
        return true
    }

    /// `name` in double quotes with everything outside printable ASCII, and `"` and `\`, escaped
    /// (`"a\u{A}b"`), so that a hostile name cannot break the line or the terminal it is shown on.
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

    /// Checks one name.
    ///
    /// - Parameters:
    ///   - name: The name to check.
    ///   - kind: What it names, as errors say it ("entity", "attribute", "configuration", …).
    ///   - owner: The entity a property belongs to, if any.
    /// - Throws: ``ModelError`` `.invalidName` with the element label `"<kind> <Owner>.<name>"`
    ///   (the name shown with ``display(_:)`` when it is not valid).
    static func check(_ name: String, kind: String, owner: String? = nil) throws {
        guard !isIdentifier(name) else { return }
        throw invalidName(name, kind: kind, owner: owner)
    }

    /// The error for a name that breaks the rule; the caller adds file and line when it has them.
    static func invalidName(_ name: String, kind: String, owner: String? = nil) -> ModelError {
        let shown = display(name)
        let owned = owner.map { isIdentifier($0) ? "\($0)." : "\(display($0))." } ?? ""
        return ModelError(
            .invalidName,
            "the \(kind) name \(shown)\(owner.map { " of entity \(isIdentifier($0) ? $0 : display($0))" } ?? "") is not an identifier: \(ruleText); rename the \(kind)",
            element: "\(kind) \(owned)\(shown)")
    }
}
