import Foundation

/// One rule of an attribute that a value breaks.
public struct AttributeViolation: Sendable, Hashable, CustomStringConvertible {
    /// Which rule failed.
    public var code: ValidationError.Code
    /// What is wrong, in the user's terms.
    public var message: String

    /// Creates a violation.
    public init(code: ValidationError.Code, message: String) {
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
            return isOptional ? [] : [AttributeViolation(code: .missingMandatoryProperty, message: "'\(name)' is required")]
        }
        var found: [AttributeViolation] = []
        PropertyValidator.check(self, value) { _, code, message in
            found.append(AttributeViolation(code: code, message: message))
        }
        return found
    }
}
