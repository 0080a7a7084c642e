import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// One element of a parsed model file: its name, attributes, the line it starts on and its
/// child elements. Text content is dropped; Xcode's model files keep everything in attributes.
struct ModelXMLElement: Sendable {
    var name: String
    var attributes: [String: String]
    var line: Int
    var children: [ModelXMLElement]

    /// The attribute `key`, or `nil` when absent.
    subscript(_ key: String) -> String? { attributes[key] }

    /// The child elements named `name`, in document order.
    func children(named name: String) -> [ModelXMLElement] { children.filter { $0.name == name } }

    /// Whether the attribute `key` says YES (Xcode writes `YES`; `true` and `1` are accepted too).
    func flag(_ key: String) -> Bool {
        guard let value = attributes[key]?.lowercased() else { return false }
        return value == "yes" || value == "true" || value == "1"
    }
}

/// Parses the XML of an Xcode model file into a tree of ``ModelXMLElement``s with Foundation's
/// `XMLParser` (FoundationXML on Linux).
enum ModelXMLParser {
    /// Parses `data`; `fileName` names the file in errors.
    ///
    /// - Throws: ``ModelError`` `.malformed` with the parser's line and column when the XML does
    ///   not parse or has no root element.
    static func parse(_ data: Data, fileName: String) throws -> ModelXMLElement {
        // Foundation's XMLParser stops the process on some invalid UTF-8; model files are UTF-8.
        if String(validating: data, as: UTF8.self) == nil {
            let offset = Self.firstInvalidUTF8(data)
            let line = data.prefix(offset).reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
            throw ModelError(
                .malformed,
                "the model file is not valid UTF-8 (byte \(offset)); save it again from Xcode or fix its encoding",
                file: fileName, line: line)
        }
        let parser = XMLParser(data: data)
        let builder = TreeBuilder()
        parser.delegate = builder
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let succeeded = parser.parse()
        if !succeeded || builder.failure != nil {
            let failure = builder.failure
            let line = failure?.line ?? parser.lineNumber
            let column = failure?.column ?? parser.columnNumber
            let reason = failure?.reason ?? parser.parserError.map { "\($0.localizedDescription)" } ?? "unknown error"
            throw ModelError(
                .malformed, "the model file is not well-formed XML (line \(line), column \(column)): \(reason)",
                file: fileName, line: line > 0 ? line : nil)
        }
        guard let root = builder.root else {
            let problem = data.isEmpty ? "the model file is empty" : "the model file has no root element"
            throw ModelError(.malformed, problem, file: fileName, line: nil)
        }
        return root
    }

    /// The offset of the first byte that does not start or continue a valid UTF-8 sequence.
    private static func firstInvalidUTF8(_ data: Data) -> Int {
        var decoder = UTF8()
        var iterator = data.makeIterator()
        var offset = 0
        var last = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                last = offset
                offset += UTF8.width(scalar)
            case .emptyInput: return offset
            case .error: return max(offset, last)
            }
        }
    }
}

/// Builds the element tree from `XMLParser` callbacks. Used on one thread, by one parse, and
/// dropped afterwards.
private final class TreeBuilder: NSObject, XMLParserDelegate {
    struct Failure {
        var line: Int
        var column: Int
        var reason: String
    }

    private var stack: [ModelXMLElement] = []
    private(set) var root: ModelXMLElement?
    private(set) var failure: Failure?

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        stack.append(ModelXMLElement(name: elementName, attributes: attributes, line: parser.lineNumber, children: []))
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard let finished = stack.popLast() else { return }
        if stack.isEmpty {
            root = finished
        } else {
            stack[stack.count - 1].children.append(finished)
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        record(parseError, parser)
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) {
        record(validationError, parser)
    }

    private func record(_ error: any Error, _ parser: XMLParser) {
        guard failure == nil else { return }  // the first error is the one that explains the rest
        failure = Failure(line: parser.lineNumber, column: parser.columnNumber, reason: Self.reason(error))
    }

    /// Words for a parser error. FoundationXML's localized description is only a domain and a
    /// number, and the number is libxml2's `xmlParserErrors` code (not `XMLParser.ErrorCode`'s raw
    /// value), so the common codes are spelled out here from libxml2's xmlerror.h.
    private static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let detail = nsError.userInfo[NSLocalizedFailureReasonErrorKey] as? String, !detail.isEmpty {
            return detail
        }
        guard nsError.domain == XMLParser.errorDomain else { return nsError.localizedDescription }
        let words: [Int: String] = [
            3: "the document does not start like XML", 4: "the document is empty",
            5: "the document ends too early, or has content after its end", 9: "an invalid character",
            23: "an entity reference lacks its ';'", 26: "an undeclared entity (&name;)",
            32: "an unsupported encoding", 34: "a string is not closed", 38: "'<' inside an attribute value",
            39: "an attribute value does not start with a quote", 40: "an attribute value is not closed",
            41: "an attribute has no value", 42: "an attribute appears twice in one element",
            45: "a comment is not closed", 57: "the XML declaration is not closed",
            64: "a reserved XML name", 65: "a space is required", 68: "a name is required",
            73: "'>' is required", 74: "'</' is required", 75: "'=' is required",
            76: "an end tag does not match its start tag", 77: "an element is not closed",
            81: "invalid bytes for the encoding", 85: "the elements are not well balanced",
            86: "extra content after the root element",
        ]
        return "\(words[nsError.code] ?? "parser error") (libxml2 error \(nsError.code))"
    }
}
