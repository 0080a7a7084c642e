/// Every validation failure of one save, reported together.
///
/// A save validates every inserted, updated and deleted object before anything reaches a store;
/// when any check fails, nothing is written and this error lists each failure.
///
/// (Core Data reports these as `NSValidation…Error` codes; the name is not `ValidationError`,
/// which ArgumentParser, a common companion in command-line tools, already exports.)
public struct ObjectValidationError: Error, Sendable, CustomStringConvertible {
    /// One failed check.
    public struct Failure: Sendable, CustomStringConvertible {
        /// The object that failed.
        public var objectID: ManagedObjectID
        /// The entity's name.
        public var entity: String
        /// The property that failed, when the check was about one.
        public var property: String?
        /// Which rule failed.
        public var code: Code
        /// What is wrong, in the user's terms.
        public var message: String

        /// Creates a failure.
        public init(objectID: ManagedObjectID, entity: String, property: String?, code: Code, message: String) {
            self.objectID = objectID
            self.entity = entity
            self.property = property
            self.code = code
            self.message = message
        }

        public var description: String {
            "\(entity)\(property.map { ".\($0)" } ?? "") (\(objectID.uriRepresentation().absoluteString)): \(message)"
        }
    }

    /// The rule a ``Failure`` broke (Core Data's `NSValidation…Error` family).
    public enum Code: String, Sendable, Hashable {
        case missingMandatoryProperty, numberTooSmall, numberTooLarge, dateTooSoon, dateTooLate
        case stringTooShort, stringTooLong, stringPatternMismatch, invalidType
        case relationshipTooFewItems, relationshipTooManyItems, relationshipDeniedDelete
        case uniqueConstraint, custom
    }

    /// The failures, in the order found.
    public var failures: [Failure]
    /// The uniqueness-constraint conflicts behind the ``Code/uniqueConstraint`` failures, with the
    /// objects involved (under the ``MergePolicy/error`` policy).
    public var constraintConflicts: [ConstraintConflict]

    /// Creates an error from failures.
    public init(failures: [Failure], constraintConflicts: [ConstraintConflict] = []) {
        self.failures = failures
        self.constraintConflicts = constraintConflicts
    }

    public var description: String {
        let lines = failures.map { "  - \($0)" }.joined(separator: "\n")
        return "the save was refused: \(failures.count) validation failure\(failures.count == 1 ? "" : "s")\n" + lines
    }
}
