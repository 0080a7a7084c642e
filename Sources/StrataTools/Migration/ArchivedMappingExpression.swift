import Foundation
import Strata
import StrataSQLite

/// The text, in the language of ``PropertyMapping/init(name:format:userInfo:)``, of a
/// keyed-archived `NSExpression` from an Xcode mapping model (`valueexpressiondata`).
///
/// The shapes read: constants (strings, numbers, `nil`), variables (`$source`), `SELF`, key paths
/// (`$source.owner`, `name`), and function expressions with a target (`FUNCTION($manager,
/// "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)`).
/// Anything else is refused with an error saying which class it is.
enum ArchivedMappingExpression {
    /// How deep nested expressions are followed (an archive nesting deeper, or whose expressions
    /// refer to each other in a cycle, is refused).
    static let maximumDepth = 32

    /// The format text of the expression archived in `data`.
    ///
    /// - Throws: ``MigrationError`` whose message completes "the value expression of … ".
    static func format(_ data: Data) throws -> String {
        let root: ArchivedObject
        do {
            root = try KeyedArchive(data: data).topObject()
        } catch {
            throw MigrationError(.unreadableMapping, "is not a readable keyed archive (\(error))")
        }
        return try format(root, depth: 0)
    }

    static func format(_ object: ArchivedObject?, depth: Int) throws -> String {
        guard let object else { throw MigrationError(.unreadableMapping, "has a missing part") }
        guard depth < maximumDepth else {
            throw MigrationError(.unreadableMapping, "nests deeper than \(maximumDepth) levels (or refers to itself)")
        }
        if object.isKind(of: "NSKeyPathSpecifierExpression") {
            guard let path = object["NSKeyPath"]?.string, isKeyPath(path) else {
                throw MigrationError(.unreadableMapping, "has a key path that is not a list of names")
            }
            return path
        }
        if object.isKind(of: "NSSelfExpression") { return "SELF" }
        if object.isKind(of: "NSVariableExpression") {
            guard let name = object["NSVariable"]?.string, isName(name) else {
                throw MigrationError(.unreadableMapping, "has a variable whose name is not a plain name")
            }
            return "$" + name
        }
        if object.isKind(of: "NSConstantValueExpression") {
            guard let value = object["NSConstantValue"], value.className != "NSNull" else { return "nil" }
            if let text = value.string { return quoted(text) }
            if let number = value.integer { return String(number) }
            if let number = value.real, number.isFinite { return String(number) }
            throw MigrationError(
                .unreadableMapping, "has a constant of class \(value.className ?? "unknown") that Strata cannot read")
        }
        if object.isKind(of: "NSKeyPathExpression") {
            guard let arguments = object["NSArguments"]?.elements, !arguments.isEmpty else {
                throw MigrationError(.unreadableMapping, "has a key path expression without a key path")
            }
            let path = try arguments.map { try format($0, depth: depth + 1) }.joined(separator: ".")
            guard let operand = object["NSOperand"], !operand.isKind(of: "NSSelfExpression") else { return path }
            return try format(operand, depth: depth + 1) + "." + path
        }
        if object.isKind(of: "NSFunctionExpression") {
            guard let selector = object["NSSelectorName"]?.string, let operand = object["NSOperand"] else {
                throw MigrationError(.unreadableMapping, "has a function expression without a selector or a target")
            }
            let arguments = try (object["NSArguments"]?.elements ?? []).map { try format($0, depth: depth + 1) }
            return
                "FUNCTION(\(([try format(operand, depth: depth + 1), quoted(selector)] + arguments).joined(separator: ", ")))"
        }
        throw MigrationError(
            .unreadableMapping,
            "is an expression of class \(object.className ?? "unknown"), which Strata cannot read (it reads constants, variables, key paths and FUNCTION calls)"
        )
    }

    /// `text` as a quoted string literal.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || CharacterSet.letters.contains(first) else {
            return false
        }
        return text.unicodeScalars.allSatisfy { $0 == "_" || CharacterSet.alphanumerics.contains($0) }
    }

    static func isKeyPath(_ text: String) -> Bool {
        text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy {
            isName(String($0)) || $0.hasPrefix("@") && isName(String($0.dropFirst()))
        }
    }
}
