import Foundation

/// One rule of an attribute that a value breaks.
public struct AttributeViolation: Sendable, Hashable, CustomStringConvertible {
    /// Which rule failed.
    public var code: ObjectValidationError.Code
    /// What is wrong, in the user's terms.
    public var message: String

    /// Creates a violation.
    public init(code: ObjectValidationError.Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension AttributeDescription {
    /// The rules of this attribute that `value` breaks, exactly as a save checks them: required,
    /// integer width, minimum and maximum, string length and regular expression.
    ///
    /// Tools use it to check rows read straight from a driver (`strata validate`, `strata import`).
    public func violations(of value: StoreValue) -> [AttributeViolation] {
        if isTransient { return [] }
        if value.isNull {
            return isOptional
                ? [] : [AttributeViolation(code: .missingMandatoryProperty, message: "'\(name)' is required")]
        }
        var found: [AttributeViolation] = []
        PropertyValidator.check(self, value) { _, code, message in
            found.append(AttributeViolation(code: code, message: message))
        }
        return found
    }
}

extension EntityDescription {
    /// The attribute rules that the values of one row break, exactly as a save checks them: each
    /// attribute's rules (``AttributeDescription/violations(of:)``), except that a required element
    /// of a composite is required only while its composite holds a value; then each required
    /// composite that holds none.
    ///
    /// Tools use it to check rows read straight from a driver or a file.
    ///
    /// - Parameter value: The value of a slot (``properties`` index).
    /// - Returns: The property (an attribute's name, an element's or composite's key path) and
    ///   what it breaks, in slot order, then composites.
    public func attributeViolations(_ value: (Int) -> StoreValue) -> [(property: String, violation: AttributeViolation)]
    {
        var presence: [Int: [Int]] = [:]
        for rule in validatedSlots where !rule.presence.isEmpty { presence[rule.slot] = rule.presence }
        var found: [(String, AttributeViolation)] = []
        for (slot, property) in properties.enumerated() {
            guard case .attribute(let attribute) = property, !attribute.isTransient else { continue }
            let current = value(slot)
            if current.isNull, let slots = presence[slot], !slots.contains(where: { !value($0).isNull }) { continue }
            for violation in attribute.violations(of: current) { found.append((attribute.name, violation)) }
        }
        for requirement in compositeRequirements {
            let context = requirement.contextSlots.isEmpty || requirement.contextSlots.contains { !value($0).isNull }
            if context && !requirement.slots.contains(where: { !value($0).isNull }) {
                found.append(
                    (
                        requirement.name,
                        AttributeViolation(
                            code: .missingMandatoryProperty,
                            message: "composite '\(requirement.name)' is required: set at least one of its elements")
                    ))
            }
        }
        return found
    }
}
