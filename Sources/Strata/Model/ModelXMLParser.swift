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
            throw ModelError(.malformed, "the model file has no root element", file: fileName, line: nil)
        }
        return root
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
        let nsError = error as NSError
        var reason = nsError.localizedDescription
        if let detail = nsError.userInfo[NSLocalizedFailureReasonErrorKey] as? String, !detail.isEmpty {
            reason = detail
        }
        failure = Failure(line: parser.lineNumber, column: parser.columnNumber, reason: reason)
    }
}
