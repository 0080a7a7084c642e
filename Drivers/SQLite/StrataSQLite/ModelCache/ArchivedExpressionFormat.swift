import Foundation

/// The `predicateFormat` text of an archived `NSExpression`, for the few shapes a derived
/// attribute's derivation holds: key paths (`pages`, `author.name`), function expressions in
/// selector form (`count:(pages)`), `SELF`, variables and constants.
///
/// Core Data's version hash of a derived attribute is the SHA-256 of this text (see
/// docs/models.md, "Core Data's version hashes"), so the text must be Foundation's exactly; the
/// shapes covered are those Xcode's model editor writes for `.@count` and `.@sum` derivations
/// (only `count:(pages)` is confirmed by a corpus store). Anything else gives `nil`.
enum ArchivedExpressionFormat {
    /// How deep nested expressions are followed (an archive whose expressions refer to each other
    /// in a cycle reads as `nil`).
    static let maximumDepth = 16

    static func format(_ object: ArchivedObject?, depth: Int = 0) -> String? {
        guard let object, depth < maximumDepth else { return nil }
        if object.isKind(of: "NSKeyPathSpecifierExpression") { return object["NSKeyPath"]?.string }
        if object.isKind(of: "NSSelfExpression") { return "SELF" }
        if object.isKind(of: "NSVariableExpression") { return object["NSVariable"]?.string.map { "$" + $0 } }
        if object.isKind(of: "NSConstantValueExpression") {
            guard let value = object["NSConstantValue"] else { return "nil" }
            if let text = value.string { return "\"\(text)\"" }
            if let number = value.integer { return String(number) }
            if let number = value.real { return String(number) }
            return nil
        }
        if object.isKind(of: "NSKeyPathExpression") {
            guard let arguments = object["NSArguments"]?.elements else { return nil }
            var parts: [String] = []
            for argument in arguments {
                guard let part = format(argument, depth: depth + 1) else { return nil }
                parts.append(part)
            }
            let path = parts.joined(separator: ".")
            guard let operand = object["NSOperand"], !operand.isKind(of: "NSSelfExpression") else { return path }
            guard let base = format(operand, depth: depth + 1) else { return nil }
            return base + "." + path
        }
        if object.isKind(of: "NSFunctionExpression") {
            guard let selector = object["NSSelectorName"]?.string, let arguments = object["NSArguments"]?.elements
            else {
                return nil
            }
            var parts: [String] = []
            for argument in arguments {
                guard let part = format(argument, depth: depth + 1) else { return nil }
                parts.append(part)
            }
            return "\(selector)(\(parts.joined(separator: ", ")))"
        }
        return nil
    }
}
