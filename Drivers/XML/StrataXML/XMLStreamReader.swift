import CLibXML2
import Foundation
import Strata

/// libxml2's streaming reader (`xmlTextReader`) over one file, with its errors turned into
/// ``StoreError``s that name the file, line and column.
///
/// Options: no network, no DTD loading and no entity substitution (a store never needs them, and
/// they are how hostile files reach outside), big line numbers, and no size limits on text nodes
/// (a binary attribute may be large).
///
/// Thread safety: none; one reader belongs to one load.
final class XMLStreamReader {
    /// Node types the store layout meets (libxml2's `xmlReaderTypes`).
    enum Node: Int32 {
        case element = 1
        case attribute = 2
        case text = 3
        case cdata = 4
        case entityReference = 5
        case entity = 6
        case processingInstruction = 7
        case comment = 8
        case document = 9
        case documentType = 10
        case documentFragment = 11
        case notation = 12
        case whitespace = 13
        case significantWhitespace = 14
        case endElement = 15
        case endEntity = 16
        case xmlDeclaration = 17
    }

    let path: String
    private let reader: OpaquePointer
    private let errors = ErrorCollector()

    /// Opens `path`.
    ///
    /// - Throws: ``StoreError/Code/notFound`` when the file is missing, ``StoreError/Code/io`` when
    ///   it cannot be read.
    init(path: String) throws {
        self.path = path
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.notFound, "no XML store at this path", store: path)
        }
        xmlInitParser()
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_HUGE.rawValue | XML_PARSE_BIG_LINES.rawValue)
        guard let reader = xmlReaderForFile(path, nil, options) else {
            throw StoreError(.io, "libxml2 could not open the file for reading; check its permissions", store: path)
        }
        self.reader = reader
        xmlTextReaderSetStructuredErrorHandler(
            reader,
            { context, error in
                guard let context, let error else { return }
                Unmanaged<ErrorCollector>.fromOpaque(context).takeUnretainedValue().record(error.pointee)
            }, Unmanaged.passUnretained(errors).toOpaque())
    }

    deinit { xmlFreeTextReader(reader) }

    /// How deep elements may nest. The store layout needs 4 levels plus its metadata property
    /// list (``XMLPropertyList/maximumDepth``); `XML_PARSE_HUGE`, needed for large values, also
    /// lifts libxml2's own depth limit, so this one stops hostile nesting early.
    static let maximumDepth: Int32 = 256

    /// Moves to the next node; `false` at the end of the document.
    ///
    /// - Throws: ``StoreError/Code/corrupt`` for XML that is not well-formed (truncation included)
    ///   or nested deeper than ``maximumDepth``.
    func read() throws -> Bool {
        let result = xmlTextReaderRead(reader)
        if let error = errors.first { throw corrupt(error.message, line: error.line, column: error.column) }
        if result < 0 {
            throw corrupt(
                "the XML is not well-formed", line: Int(xmlTextReaderGetParserLineNumber(reader)),
                column: Int(xmlTextReaderGetParserColumnNumber(reader)))
        }
        if result == 1, xmlTextReaderDepth(reader) > Self.maximumDepth {
            throw corrupt("expected elements nested at most \(Self.maximumDepth) deep, found deeper nesting")
        }
        return result == 1
    }

    /// The current node's type.
    var node: Node? { Node(rawValue: xmlTextReaderNodeType(reader)) }

    /// Whether the current element is written `<name/>` (no end-element node follows).
    var isEmptyElement: Bool { xmlTextReaderIsEmptyElement(reader) == 1 }

    /// Whether the current node's local name is `name`.
    func isNamed(_ name: StaticString) -> Bool {
        guard let local = xmlTextReaderConstLocalName(reader) else { return false }
        return xmlStrEqual(local, name.utf8Start) == 1
    }

    /// The current node's name.
    var name: String { xmlTextReaderConstName(reader).map { String(cString: $0) } ?? "" }

    /// The current text node's value.
    var value: String { xmlTextReaderConstValue(reader).map { String(cString: $0) } ?? "" }

    /// The current text node's value as bytes (valid until the next move).
    var valuePointer: UnsafePointer<xmlChar>? { xmlTextReaderConstValue(reader) }

    /// Calls `body` with each attribute's name and value pointers (valid only during the call).
    func forEachAttribute(_ body: (UnsafePointer<xmlChar>, UnsafePointer<xmlChar>) throws -> Void) rethrows {
        guard xmlTextReaderHasAttributes(reader) == 1 else { return }
        defer { xmlTextReaderMoveToElement(reader) }
        while xmlTextReaderMoveToNextAttribute(reader) == 1 {
            guard let name = xmlTextReaderConstLocalName(reader), let value = xmlTextReaderConstValue(reader) else {
                continue
            }
            try body(name, value)
        }
    }

    /// The line the current node starts on.
    ///
    /// libxml2 keeps an element's line in 16 bits: past line 65,535 it stores 65,535 and
    /// `xmlGetLineNo` answers with the line of the element's first child. When that child is text
    /// (the indentation after the start tag), libxml2 dates it by the line the text ends on, so
    /// the text's line breaks are counted back.
    var line: Int {
        if let node = xmlTextReaderCurrentNode(reader) {
            if node.pointee.type == XML_ELEMENT_NODE, node.pointee.line == UInt16.max,
                let child = node.pointee.children, child.pointee.type == XML_TEXT_NODE, let text = child.pointee.content
            {
                let childLine = xmlGetLineNo(child)
                if childLine > 0 {
                    var breaks = 0
                    var index = 0
                    while text[index] != 0 {
                        if text[index] == 0x0A { breaks += 1 }
                        index += 1
                    }
                    return max(1, Int(childLine) - breaks)
                }
            }
            let line = xmlGetLineNo(node)
            if line > 0 { return Int(line) }
        }
        return Int(xmlTextReaderGetParserLineNumber(reader))
    }

    /// A ``StoreError/Code/corrupt`` error at the current element: file, line, column and what was
    /// expected.
    func corrupt(_ message: String, element: String? = nil) -> StoreError {
        let line = self.line
        return corrupt(message, line: line, column: Self.column(of: element ?? name, onLine: line, in: path))
    }

    /// A ``StoreError/Code/corrupt`` error at the first non-blank character of the current text
    /// node (libxml2 dates text nodes by the line they end on).
    func corruptText(_ message: String) -> StoreError {
        let text = Array(value.utf8)
        let newlines = text.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        let blank = text.prefix { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let leadingNewlines = blank.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        let column = leadingNewlines > 0 ? blank.count - (blank.lastIndex(of: 0x0A) ?? 0) : 0
        let line = max(1, self.line - newlines + leadingNewlines)
        return corrupt(message, line: line, column: leadingNewlines > 0 ? column : 1)
    }

    /// A ``StoreError/Code/corrupt`` error at a known position.
    func corrupt(_ message: String, line: Int, column: Int) -> StoreError {
        Self.corrupt(message, path: path, line: line, column: column)
    }

    /// A ``StoreError/Code/corrupt`` error naming `path:line:column`.
    static func corrupt(_ message: String, path: String, line: Int, column: Int) -> StoreError {
        StoreError(
            .corrupt,
            "\(path):\(line):\(column): \(message). The file is not a valid XML store; restore it from a backup or open it with the model that wrote it",
            store: path)
    }

    /// The 1-based column where `<element` starts on `line` of the file (1 when not found).
    ///
    /// libxml2 keeps line numbers on nodes but not columns, so errors found after parsing look the
    /// element up in the file; this runs only when an error is reported.
    static func column(of element: String, onLine line: Int, in path: String) -> Int {
        guard line > 0, let handle = FileHandle(forReadingAtPath: path) else { return 1 }
        defer { try? handle.close() }
        var current = 1
        var column = 1
        let needle = Array(("<" + element).utf8)
        var matched = 0
        while let chunk = try? handle.read(upToCount: 1 << 16), !chunk.isEmpty {
            for byte in chunk {
                if current == line {
                    if byte == UInt8(ascii: "\n") { return 1 }
                    if byte == needle[matched] {
                        matched += 1
                        if matched == needle.count { return column - needle.count + 1 }
                    } else {
                        matched = byte == needle[0] ? 1 : 0
                    }
                    if byte & 0xC0 != 0x80 { column += 1 }
                } else if byte == UInt8(ascii: "\n") {
                    current += 1
                    if current > line { return 1 }
                }
            }
        }
        return 1
    }
}

/// Keeps the first error libxml2 reports (warnings are ignored).
///
/// Thread safety: none needed; libxml2 calls it on the reading thread only.
private final class ErrorCollector {
    struct Failure {
        var message: String
        var line: Int
        var column: Int
    }
    private(set) var first: Failure?

    func record(_ error: xmlError) {
        guard first == nil, error.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        let message = error.message.map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines)
        first = Failure(
            message: message ?? "libxml2 error \(error.code)", line: Int(error.line), column: Int(error.int2))
    }
}
