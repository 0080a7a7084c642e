/// Something in a model file that Strata loaded but does not use as written: an XML attribute or
/// element it does not know, a default value that does not read as its attribute's type, a limit
/// on a type that takes none.
///
/// A warning never stops a model from loading; ``ManagedObjectModel/loadWarnings`` lists them and
/// `strata model show` prints them. What would make a model unsafe to use is a ``ModelError``
/// instead.
public struct ModelWarning: Sendable, Hashable, CustomStringConvertible {
    /// What was done, and why, in the user's terms.
    public var message: String
    /// The model file.
    public var file: String?
    /// The 1-based line in ``file``.
    public var line: Int?
    /// The element it is about, named as ``ModelError/element`` names elements
    /// (`"attribute Person.age"`, `"entity Person"`, `"model"`).
    public var element: String?

    /// Creates a warning.
    public init(_ message: String, file: String? = nil, line: Int? = nil, element: String? = nil) {
        self.message = message
        self.file = file
        self.line = line
        self.element = element
    }

    /// `file:line: <element>: message`, as compilers print warnings.
    public var description: String {
        var parts: [String] = []
        if let file { parts.append(line.map { "\(file):\($0)" } ?? file) }
        if let element { parts.append("<\(element)>") }
        parts.append(message)
        return parts.joined(separator: ": ")
    }
}
