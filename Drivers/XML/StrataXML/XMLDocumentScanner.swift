import CLibXML2
import Foundation
import Strata

/// `<databaseInfo>` of an XML store.
struct XMLDatabaseInfo: Sendable {
    /// `<version>` (134481920 in every known file).
    var version: Int64?
    /// `<UUID>`.
    var uuid: String?
    /// `<nextObjectID>`.
    var nextObjectID: Int64?
    /// The embedded property list of `<metadata>`, if any.
    var metadata: MetadataValue?
    /// Whether `<databaseInfo>` came after an `<object>`.
    var followsObject = false
}

/// One `<attribute>` or `<relationship>` of an object, as written.
struct XMLRawProperty: Sendable {
    var isRelationship: Bool
    /// `name`, as written (lower-cased by Core Data).
    var name: String
    /// `type`: the attribute type name, or `min/max` for relationships.
    var type: String?
    /// An attribute's text.
    var text: String = ""
    /// Whether the text is base64 of UTF-8 (`encoding="base64"`, our extension).
    var isBase64Encoded = false
    /// A relationship's `destination`.
    var destination: String?
    /// A relationship's `idrefs`, as object numbers.
    var idrefs: [Int64] = []
    /// The line of the element.
    var line: Int
}

/// One `<object>`, as written.
struct XMLRawObject: Sendable {
    /// `type`: the entity name (upper-cased by Core Data).
    var type: String
    /// The number of `id` (`z12` → 12).
    var id: Int64
    /// The Strata primary key when it differs from the id number (`pk="3"`), for rows whose key
    /// another inheritance hierarchy's row already uses as its id.
    var primaryKey: Int64?
    /// The line of the element.
    var line: Int
    /// Its attributes and relationships in file order.
    var properties: [XMLRawProperty]
}

/// Walks an XML store with libxml2's streaming reader, checking the layout, and hands out the
/// database info and one object at a time; never holds the document.
///
/// Thread safety: none; one scanner belongs to one load.
struct XMLDocumentScanner {
    let reader: XMLStreamReader

    /// Opens `path`.
    init(path: String) throws { reader = try XMLStreamReader(path: path) }

    /// Scans the whole file (or only up to the database info) and returns the database info.
    ///
    /// - Parameter object: Called for each object in file order.
    /// - Throws: ``StoreError/Code/corrupt`` with file, line and column for malformed XML and for
    ///   elements out of place; whatever `object` throws. A malformed file's error comes after
    ///   `object` has seen every object before the problem.
    func scan(infoOnly: Bool = false, object: (XMLRawObject) throws -> Void = { _ in }) throws -> XMLDatabaseInfo {
        var tape = XMLObjectTape()
        func drain(_ tape: inout XMLObjectTape) throws {
            do {
                for index in 0..<tape.count { try object(tape.object(index)) }
            } catch {
                throw ConsumerFailure(error: error)
            }
            tape.removeAll()
        }
        do {
            let info = try scan(infoOnly: infoOnly, into: &tape, batch: 256, full: drain)
            try drain(&tape)
            return info
        } catch let failure as ConsumerFailure {
            throw failure.error
        } catch {
            // The objects read before the problem come first (their errors win).
            do { try drain(&tape) } catch let failure as ConsumerFailure { throw failure.error }
            throw error
        }
    }

    /// An error `object` threw, told apart from the scanner's own.
    private struct ConsumerFailure: Error {
        let error: any Error
    }

    /// Scans the file, appending objects to `tape` and calling `full` whenever it holds `batch`
    /// of them (`full` empties it or replaces it); the objects of the last, partial batch are left
    /// on the tape, also when the scan throws.
    func scan(
        infoOnly: Bool = false, into tape: inout XMLObjectTape, batch: Int, full: (inout XMLObjectTape) throws -> Void
    ) throws -> XMLDatabaseInfo {
        var info = XMLDatabaseInfo()
        var foundRoot = false
        while try reader.read() {
            guard reader.node == .element else { continue }
            guard reader.isNamed("database") else {
                throw reader.corrupt("expected <database> as the root element, found <\(reader.name)>")
            }
            foundRoot = true
            break
        }
        guard foundRoot else {
            throw reader.corrupt("expected a <database> element; the file has none", line: 1, column: 1)
        }
        if !reader.isEmptyElement {
            var sawObject = false
            children: while try reader.read() {
                switch reader.node {
                case .element:
                    if reader.isNamed("object") {
                        sawObject = true
                        try readObject(into: &tape)
                        if tape.count >= batch { try full(&tape) }
                    } else if reader.isNamed("databaseInfo") {
                        info = try readInfo()
                        info.followsObject = sawObject
                        if infoOnly { return info }
                    } else {
                        throw reader.corrupt(
                            "expected <databaseInfo> or <object> in <database>, found <\(reader.name)>")
                    }
                case .endElement: break children
                case .text, .cdata, .entityReference:
                    throw reader.corruptText("expected <databaseInfo> or <object> in <database>, found text")
                default: continue
                }
            }
        }
        while try reader.read() {}  // libxml2 checks the rest of the file is well-formed
        return info
    }

    private func readInfo() throws -> XMLDatabaseInfo {
        var info = XMLDatabaseInfo()
        guard !reader.isEmptyElement else { return info }
        while try reader.read() {
            switch reader.node {
            case .element:
                if reader.isNamed("version") {
                    info.version = try integer(in: "version")
                } else if reader.isNamed("UUID") {
                    info.uuid = try Self.elementText(reader).trimmingCharacters(in: .whitespacesAndNewlines)
                } else if reader.isNamed("nextObjectID") {
                    info.nextObjectID = try integer(in: "nextObjectID")
                } else if reader.isNamed("metadata") {
                    info.metadata = try readMetadata()
                } else {
                    throw reader.corrupt(
                        "expected <version>, <UUID>, <nextObjectID> or <metadata> in <databaseInfo>, found <\(reader.name)>"
                    )
                }
            case .endElement: return info
            case .text, .cdata, .entityReference:
                throw reader.corruptText("expected an element in <databaseInfo>, found text")
            default: continue
            }
        }
        throw reader.corrupt("the file ends inside <databaseInfo>", element: "databaseInfo")
    }

    private func integer(in element: String) throws -> Int64 {
        let line = reader.line
        let text = try Self.elementText(reader)
        guard let value = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw reader.corrupt(
                "expected an integer in <\(element)>, found '\(text.prefix(40))'", line: line,
                column: XMLStreamReader.column(of: element, onLine: line, in: reader.path))
        }
        return value
    }

    private func readMetadata() throws -> MetadataValue? {
        guard !reader.isEmptyElement else { return nil }
        var value: MetadataValue?
        while try reader.read() {
            switch reader.node {
            case .element:
                guard reader.isNamed("plist") else {
                    throw reader.corrupt("expected <plist> in <metadata>, found <\(reader.name)>")
                }
                value = try XMLPropertyList.read(reader)
            case .endElement: return value
            case .text, .cdata, .entityReference:
                throw reader.corruptText("expected <plist> in <metadata>, found text")
            default: continue
            }
        }
        throw reader.corrupt("the file ends inside <metadata>", element: "metadata")
    }

    /// Reads one `<object>` onto `tape`; nothing is added when it throws.
    private func readObject(into tape: inout XMLObjectTape) throws {
        let line = reader.line
        var type: Range<Int>?
        var id: Int64?
        var badID: String?
        var primaryKey: Int64?
        var badKey: String?
        reader.forEachAttribute { name, value in
            if Self.same(name, "type") {
                type = tape.append(value)
            } else if Self.same(name, "id") {
                id = Self.objectNumber(value)
                if id == nil { badID = String(cString: value) }
            } else if Self.same(name, "pk") {
                primaryKey = Self.positiveInteger(value)
                if primaryKey == nil { badKey = String(cString: value) }
            }
        }
        if let badKey {
            throw reader.corrupt("expected a positive integer in pk on <object>, found \"\(badKey.prefix(40))\"")
        }
        guard let type else { throw reader.corrupt("expected a type attribute naming the entity on <object>") }
        if let badID {
            throw reader.corrupt("expected an object id like \"z12\" on <object>, found \"\(badID.prefix(40))\"")
        }
        guard let id else { throw reader.corrupt("expected an id attribute like \"z12\" on <object>") }
        let mark = tape.propertyMark
        guard !reader.isEmptyElement else {
            return tape.appendObject(type: type, id: id, primaryKey: primaryKey, line: line, since: mark)
        }
        while try reader.read() {
            switch reader.node {
            case .element:
                if reader.isNamed("attribute") {
                    try readProperty(isRelationship: false, into: &tape)
                } else if reader.isNamed("relationship") {
                    try readProperty(isRelationship: true, into: &tape)
                } else {
                    throw reader.corrupt("expected <attribute> or <relationship> in <object>, found <\(reader.name)>")
                }
            case .endElement:
                return tape.appendObject(type: type, id: id, primaryKey: primaryKey, line: line, since: mark)
            case .text, .cdata, .entityReference:
                throw reader.corruptText("expected <attribute> or <relationship> in <object>, found text")
            default: continue
            }
        }
        throw reader.corrupt("the file ends inside <object>", element: "object")
    }

    private func readProperty(isRelationship: Bool, into tape: inout XMLObjectTape) throws {
        let element = isRelationship ? "relationship" : "attribute"
        let line = reader.line
        var name: Range<Int>?
        var type: Range<Int>?
        var destination: Range<Int>?
        var idrefs: [Int64] = []
        var isBase64Encoded = false
        var badRef: String?
        reader.forEachAttribute { attribute, value in
            if Self.same(attribute, "name") {
                name = tape.append(value)
            } else if Self.same(attribute, "type") {
                type = tape.append(value)
            } else if isRelationship, Self.same(attribute, "destination") {
                destination = tape.append(value)
            } else if isRelationship, Self.same(attribute, "idrefs") {
                if let refs = Self.objectNumbers(value) { idrefs = refs } else { badRef = String(cString: value) }
            } else if !isRelationship, Self.same(attribute, "encoding") {
                isBase64Encoded = xmlStrEqual(value, "base64") == 1
            }
        }
        guard let name else { throw reader.corrupt("expected a name attribute on <\(element)>") }
        if let badRef {
            throw reader.corrupt(
                "expected space-separated object ids like \"z1 z2\" in idrefs of relationship '\(tape.string(name))', found \"\(badRef.prefix(60))\""
            )
        }
        let text = try Self.elementText(reader, into: &tape)
        if isRelationship, !tape.isBlank(text) {
            throw reader.corrupt(
                "expected an empty <relationship> element for '\(tape.string(name))', found text", line: line,
                column: XMLStreamReader.column(of: element, onLine: line, in: reader.path))
        }
        tape.append(
            XMLObjectTape.Property(
                isRelationship: isRelationship, name: name, type: type,
                text: isRelationship ? text.lowerBound..<text.lowerBound : text,
                isBase64Encoded: isBase64Encoded, destination: destination, idrefs: tape.append(numbers: idrefs),
                line: line))
    }

    /// Reads the text content of the element the reader is on onto `tape`, leaving the reader on
    /// the element's end; returns where the text is.
    static func elementText(_ reader: XMLStreamReader, into tape: inout XMLObjectTape) throws -> Range<Int> {
        let start = tape.bytes.count
        guard !reader.isEmptyElement else { return start..<start }
        let line = reader.line
        while try reader.read() {
            switch reader.node {
            case .text, .cdata, .whitespace, .significantWhitespace:
                if let value = reader.valuePointer { _ = tape.append(value) }
            case .endElement: return start..<tape.bytes.count
            case .element:
                throw reader.corrupt("expected only text in the element on line \(line), found <\(reader.name)>")
            case .entityReference:
                throw reader.corrupt(
                    "expected only text in the element on line \(line), found an entity reference &\(reader.name);")
            default: continue
            }
        }
        throw reader.corrupt("the file ends inside the element on line \(line)", line: line, column: 1)
    }

    /// The value of a positive decimal integer, or `nil`.
    static func positiveInteger(_ text: UnsafePointer<xmlChar>) -> Int64? {
        Int64(String(cString: text)).flatMap { $0 > 0 ? $0 : nil }
    }

    /// Reads the text content of the element the reader is on, leaving it on the element's end.
    static func elementText(_ reader: XMLStreamReader) throws -> String {
        guard !reader.isEmptyElement else { return "" }
        let line = reader.line
        var result: String?
        while try reader.read() {
            switch reader.node {
            case .text, .cdata, .whitespace, .significantWhitespace:
                if result == nil { result = reader.value } else { result! += reader.value }  // checked non-nil
            case .endElement: return result ?? ""
            case .element:
                throw reader.corrupt("expected only text in the element on line \(line), found <\(reader.name)>")
            case .entityReference:
                throw reader.corrupt(
                    "expected only text in the element on line \(line), found an entity reference &\(reader.name);")
            default: continue
            }
        }
        throw reader.corrupt("the file ends inside the element on line \(line)", line: line, column: 1)
    }

    /// Whether the libxml2 string `text` equals `literal`, without allocating.
    static func same(_ text: UnsafePointer<xmlChar>, _ literal: StaticString) -> Bool {
        xmlStrEqual(text, literal.utf8Start) == 1
    }

    /// The number of an object id `z<digits>` (positive), or `nil`.
    static func objectNumber(_ text: UnsafePointer<xmlChar>) -> Int64? {
        guard text[0] == UInt8(ascii: "z") else { return nil }
        var value: Int64 = 0
        var index = 1
        while text[index] != 0 {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
            index += 1
        }
        return index > 1 && value > 0 ? value : nil
    }

    /// The numbers of space-separated object ids, or `nil` when one is malformed.
    static func objectNumbers(_ text: UnsafePointer<xmlChar>) -> [Int64]? {
        var result: [Int64] = []
        var index = 0
        var token: [xmlChar] = []
        while true {
            let byte = text[index]
            if byte == 0 || byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                if !token.isEmpty {
                    token.append(0)
                    guard let number = token.withUnsafeBufferPointer({ objectNumber($0.baseAddress!) }) else {
                        return nil
                    }  // non-empty
                    result.append(number)
                    token.removeAll(keepingCapacity: true)
                }
                if byte == 0 { return result }
            } else {
                token.append(byte)
            }
            index += 1
        }
    }
}
