/// A model that cannot be loaded or built: a malformed model file, a missing destination or
/// inverse, a duplicate name, an unknown parent.
///
/// Tests match on ``code``; people read ``description``, which names the file, line, element and
/// what is wrong.
public struct ModelError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem this is.
    public var code: Code
    /// What went wrong, in the user's terms.
    public var message: String
    /// The model file, when the model came from one.
    public var file: String?
    /// The 1-based line in ``file``, when known.
    public var line: Int?
    /// The element (XML element or entity/property path) the problem is in.
    public var element: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, file: String? = nil, line: Int? = nil, element: String? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
        self.element = element
    }

    public var description: String {
        var parts: [String] = []
        if let file { parts.append(line.map { "\(file):\($0)" } ?? file) }
        if let element { parts.append("<\(element)>") }
        parts.append(message)
        return parts.joined(separator: ": ")
    }
}

extension ModelError {
    /// The kind of a ``ModelError``; new kinds may be added without breaking `switch`es.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case malformed, unknownEntity, unknownProperty, duplicateName, invalidInverse, invalidValue, unreadable
            case invalidName
        }
        private let kind: Kind
        /// The model file does not parse or lacks a required part.
        public static var malformed: Self { Self(kind: .malformed) }
        /// A name refers to an entity that does not exist.
        public static var unknownEntity: Self { Self(kind: .unknownEntity) }
        /// A name refers to a property that does not exist.
        public static var unknownProperty: Self { Self(kind: .unknownProperty) }
        /// Two entities or two properties of one entity share a name.
        public static var duplicateName: Self { Self(kind: .duplicateName) }
        /// A relationship's inverse does not point back at it.
        public static var invalidInverse: Self { Self(kind: .invalidInverse) }
        /// A value (type, default, rule) does not fit.
        public static var invalidValue: Self { Self(kind: .invalidValue) }
        /// The model file could not be read.
        public static var unreadable: Self { Self(kind: .unreadable) }
        /// A name that is not an identifier (see ``ManagedObjectModel/isValidName(_:)``).
        public static var invalidName: Self { Self(kind: .invalidName) }

        /// Lets `catch ModelError.Code.malformed` match.
        public static func ~= (code: Self, error: any Error) -> Bool { (error as? ModelError)?.code == code }

        public var description: String { "\(kind)" }
    }
}
