import CLibXML2
import Foundation
import Strata

/// `<databaseInfo>` of an XML store.
struct XMLDatabaseInfo {
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
struct XMLRawProperty {
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
struct XMLRawObject {
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
    ///   elements out of place; whatever `object` throws.
    func scan(infoOnly: Bool = false, object: (XMLRawObject) throws -> Void = { _ in }) throws -> XMLDatabaseInfo {
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
        guard foundRoot else { throw reader.corrupt("expected a <database> element; the file has none", line: 1, column: 1) }
        if !reader.isEmptyElement {
            var sawObject = false
            children: while try reader.read() {
                switch reader.node {
                case .element:
                    if reader.isNamed("object") {
                        sawObject = true
                        try object(try readObject())
                    } else if reader.isNamed("databaseInfo") {
                        info = try readInfo()
                        info.followsObject = sawObject
                        if infoOnly { return info }
                    } else {
                        throw reader.corrupt("expected <databaseInfo> or <object> in <database>, found <\(reader.name)>")
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
                    throw reader.corrupt("expected <version>, <UUID>, <nextObjectID> or <metadata> in <databaseInfo>, found <\(reader.name)>")
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
            throw reader.corrupt("expected an integer in <\(element)>, found '\(text.prefix(40))'", line: line, column: XMLStreamReader.column(of: element, onLine: line, in: reader.path))
        }
        return value
    }

    private func readMetadata() throws -> MetadataValue? {
        guard !reader.isEmptyElement else { return nil }
        var value: MetadataValue?
        while try reader.read() {
            switch reader.node {
            case .element:
                guard reader.isNamed("plist") else { throw reader.corrupt("expected <plist> in <metadata>, found <\(reader.name)>") }
                value = try XMLPropertyList.read(reader)
            case .endElement: return value
            case .text, .cdata, .entityReference:
                throw reader.corruptText("expected <plist> in <metadata>, found text")
            default: continue
            }
        }
        throw reader.corrupt("the file ends inside <metadata>", element: "metadata")
    }

    private func readObject() throws -> XMLRawObject {
        let line = reader.line
        var type: String?
        var id: Int64?
        var badID: String?
        var primaryKey: Int64?
        var badKey: String?
        reader.forEachAttribute { name, value in
            if Self.same(name, "type") {
                type = String(cString: value)
            } else if Self.same(name, "id") {
                id = Self.objectNumber(value)
                if id == nil { badID = String(cString: value) }
            } else if Self.same(name, "pk") {
                primaryKey = Int64(String(cString: value)).flatMap { $0 > 0 ? $0 : nil }
                if primaryKey == nil { badKey = String(cString: value) }
            }
        }
        if let badKey { throw reader.corrupt("expected a positive integer in pk on <object>, found \"\(badKey.prefix(40))\"") }
        guard let type else { throw reader.corrupt("expected a type attribute naming the entity on <object>") }
        if let badID { throw reader.corrupt("expected an object id like \"z12\" on <object>, found \"\(badID.prefix(40))\"") }
        guard let id else { throw reader.corrupt("expected an id attribute like \"z12\" on <object>") }
        var object = XMLRawObject(type: type, id: id, primaryKey: primaryKey, line: line, properties: [])
        guard !reader.isEmptyElement else { return object }
        while try reader.read() {
            switch reader.node {
            case .element:
                if reader.isNamed("attribute") {
                    object.properties.append(try readProperty(isRelationship: false))
                } else if reader.isNamed("relationship") {
                    object.properties.append(try readProperty(isRelationship: true))
                } else {
                    throw reader.corrupt("expected <attribute> or <relationship> in <object>, found <\(reader.name)>")
                }
            case .endElement: return object
            case .text, .cdata, .entityReference:
                throw reader.corruptText("expected <attribute> or <relationship> in <object>, found text")
            default: continue
            }
        }
        throw reader.corrupt("the file ends inside <object>", element: "object")
    }

    private func readProperty(isRelationship: Bool) throws -> XMLRawProperty {
        let element = isRelationship ? "relationship" : "attribute"
        var property = XMLRawProperty(isRelationship: isRelationship, name: "", line: reader.line)
        var hasName = false
        var badRef: String?
        reader.forEachAttribute { name, value in
            if Self.same(name, "name") {
                property.name = String(cString: value)
                hasName = true
            } else if Self.same(name, "type") {
                property.type = String(cString: value)
            } else if isRelationship, Self.same(name, "destination") {
                property.destination = String(cString: value)
            } else if isRelationship, Self.same(name, "idrefs") {
                if let refs = Self.objectNumbers(value) { property.idrefs = refs } else { badRef = String(cString: value) }
            } else if !isRelationship, Self.same(name, "encoding") {
                property.isBase64Encoded = xmlStrEqual(value, "base64") == 1
            }
        }
        guard hasName else { throw reader.corrupt("expected a name attribute on <\(element)>") }
        if let badRef {
            throw reader.corrupt("expected space-separated object ids like \"z1 z2\" in idrefs of relationship '\(property.name)', found \"\(badRef.prefix(60))\"")
        }
        let text = try Self.elementText(reader)
        if isRelationship {
            guard text.allSatisfy(\.isWhitespace) else {
                throw reader.corrupt("expected an empty <relationship> element for '\(property.name)', found text", line: property.line, column: XMLStreamReader.column(of: element, onLine: property.line, in: reader.path))
            }
        } else {
            property.text = text
        }
        return property
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
            case .element: throw reader.corrupt("expected only text in the element on line \(line), found <\(reader.name)>")
            case .entityReference:
                throw reader.corrupt("expected only text in the element on line \(line), found an entity reference &\(reader.name);")
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
                    guard let number = token.withUnsafeBufferPointer({ objectNumber($0.baseAddress!) }) else { return nil }  // non-empty
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
