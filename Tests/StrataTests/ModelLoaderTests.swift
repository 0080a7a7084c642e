import Foundation
import Strata
import StrataTesting
import Testing

/// A fresh folder under the system's temporary directory, removed when the test ends.
private final class ScratchFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-model-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `text` to `path` (relative to the folder), creating intermediate folders.
    @discardableResult
    func write(_ text: String, to path: String) throws -> URL {
        let file = url.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        return file
    }
}

/// A model document around `body` (entities and other top-level elements); the body starts on line 3.
private func document(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="">
    \(body)
    </model>
    """
}

private func load(_ body: String) throws -> ManagedObjectModel {
    try ManagedObjectModel(xmlData: Data(document(body).utf8), fileName: "Test.xcdatamodel/contents")
}

/// The ModelError thrown by loading `body`.
private func loadError(_ body: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> ModelError {
    do {
        _ = try load(body)
    } catch let error as ModelError {
        return error
    }
    Issue.record("loading succeeded; a ModelError was expected", sourceLocation: sourceLocation)
    throw CancellationError()
}

private let versionOne = document(
    """
    <entity name="Note"><attribute name="title" attributeType="String"/></entity>
    """)
private let versionTwo = document(
    """
    <entity name="Note">
        <attribute name="title" attributeType="String"/>
        <attribute name="body" optional="YES" attributeType="String"/>
    </entity>
    """)
private let currentVersionPlist = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Notes 2.xcdatamodel</string></dict></plist>
    """

@Suite("Loading Xcode models from bundles, folders, files and data")
struct ModelLoaderTests {
    // MARK: Where models come from

    @Test("a versioned .xcdatamodeld bundle loads the version .xccurrentversion names")
    func bundleCurrentVersion() throws {
        let scratch = try ScratchFolder()
        try scratch.write(versionOne, to: "Notes.xcdatamodeld/Notes.xcdatamodel/contents")
        try scratch.write(versionTwo, to: "Notes.xcdatamodeld/Notes 2.xcdatamodel/contents")
        try scratch.write(currentVersionPlist, to: "Notes.xcdatamodeld/.xccurrentversion")
        let bundle = scratch.url.appendingPathComponent("Notes.xcdatamodeld")

        let model = try ManagedObjectModel(contentsOf: bundle)
        #expect(model.entity(named: "Note")?.attributes.map(\.name) == ["title", "body"])
        #expect(try ManagedObjectModel.load(contentsOf: bundle).versionHash == model.versionHash)
        let versions = try ManagedObjectModel.versions(inBundle: bundle)
        #expect(versions.names == ["Notes", "Notes 2"] && versions.current == "Notes 2")
    }

    @Test("a named version of a bundle loads instead of the current one")
    func bundleNamedVersion() throws {
        let scratch = try ScratchFolder()
        try scratch.write(versionOne, to: "Notes.xcdatamodeld/Notes.xcdatamodel/contents")
        try scratch.write(versionTwo, to: "Notes.xcdatamodeld/Notes 2.xcdatamodel/contents")
        try scratch.write(currentVersionPlist, to: "Notes.xcdatamodeld/.xccurrentversion")
        let bundle = scratch.url.appendingPathComponent("Notes.xcdatamodeld")

        let first = try ManagedObjectModel.load(contentsOf: bundle, versionName: "Notes")
        #expect(first.entity(named: "Note")?.attributes.map(\.name) == ["title"])
        #expect(throws: ModelError.self) { try ManagedObjectModel.load(contentsOf: bundle, versionName: "Notes 3") }
    }

    @Test("a bundle without .xccurrentversion loads its only version, and refuses to guess between several")
    func bundleWithoutCurrentVersion() throws {
        let scratch = try ScratchFolder()
        try scratch.write(versionOne, to: "Notes.xcdatamodeld/Notes.xcdatamodel/contents")
        let bundle = scratch.url.appendingPathComponent("Notes.xcdatamodeld")
        #expect(try ManagedObjectModel(contentsOf: bundle).entity(named: "Note")?.attributes.count == 1)

        try scratch.write(versionTwo, to: "Notes.xcdatamodeld/Notes 2.xcdatamodel/contents")
        let error = try #require(throws: ModelError.self) { try ManagedObjectModel(contentsOf: bundle) }
        #expect(error.code == .unreadable)
        #expect(error.message.contains("'Notes.xcdatamodel'") && error.message.contains("'Notes 2.xcdatamodel'"))
    }

    @Test("an .xcdatamodel folder loads its contents file")
    func modelFolder() throws {
        let scratch = try ScratchFolder()
        try scratch.write(versionTwo, to: "Notes.xcdatamodel/contents")
        let model = try ManagedObjectModel(contentsOf: scratch.url.appendingPathComponent("Notes.xcdatamodel"))
        #expect(model.entities.map(\.name) == ["Note"])
    }

    @Test("a contents file with any name loads directly")
    func contentsFileAnyName() throws {
        let scratch = try ScratchFolder()
        let file = try scratch.write(versionOne, to: "exported.xcdatamodel.xml")
        #expect(try ManagedObjectModel(contentsOf: file).entities.count == 1)
    }

    @Test("a missing path and an Xcode 3 binary model are unreadable, not crashes")
    func unreadable() throws {
        let scratch = try ScratchFolder()
        let missing = scratch.url.appendingPathComponent("Nothing.xcdatamodeld")
        let absent = try #require(throws: ModelError.self) { try ManagedObjectModel(contentsOf: missing) }
        #expect(absent.code == .unreadable)
        try scratch.write("binary", to: "Old.xcdatamodel/elements")
        let error = try #require(throws: ModelError.self) {
            try ManagedObjectModel(contentsOf: scratch.url.appendingPathComponent("Old.xcdatamodel"))
        }
        #expect(error.code == .unreadable && error.message.contains("Xcode 3"))
    }

    // MARK: Bad files

    @Test("XML that does not parse is malformed, with the parser's line")
    func malformedXML() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model>
                <entity name="A">
                    <attribute name="x" attributeType="String">
                </entity>
            </model>
            """
        let error = try #require(throws: ModelError.self) {
            try ManagedObjectModel(xmlData: Data(text.utf8), fileName: "Broken.xml")
        }
        #expect(error.code == .malformed && error.file == "Broken.xml")
        #expect(error.line == 5)
        #expect(error.description.hasPrefix("Broken.xml:5"))
    }

    @Test("a root element other than <model> is malformed")
    func wrongRoot() throws {
        let text = #"<?xml version="1.0"?><plist version="1.0"><dict/></plist>"#
        let error = try #require(throws: ModelError.self) {
            try ManagedObjectModel(xmlData: Data(text.utf8), fileName: "x")
        }
        #expect(error.code == .malformed && error.message.contains("<plist>"))
    }

    @Test("an unknown attributeType names the element and its line")
    func unknownAttributeType() throws {
        let error = try loadError(
            """
            <entity name="A">
                <attribute name="x" attributeType="Integer 128"/>
            </entity>
            """)
        #expect(error.code == .invalidValue && error.element == "attribute A.x" && error.line == 4)
        #expect(error.file == "Test.xcdatamodel/contents" && error.message.contains("Integer 128"))
    }

    @Test("missing required XML attributes are malformed, at their line")
    func missingRequiredAttributes() throws {
        let cases: [(String, String)] = [
            (#"<entity representedClassName="A"/>"#, "name"),
            (#"<entity name="A"><attribute attributeType="String"/></entity>"#, "name"),
            (#"<entity name="A"><attribute name="x"/></entity>"#, "attributeType"),
            (#"<entity name="A"><relationship name="r" toMany="YES"/></entity>"#, "destinationEntity"),
            (#"<entity name="A"><relationship destinationEntity="A"/></entity>"#, "name"),
            (#"<fetchRequest name="all"/><entity name="A"/>"#, "entity"),
        ]
        for (body, key) in cases {
            let error = try loadError(body)
            #expect(error.code == .malformed && error.line == 3 && error.message.hasSuffix("has no \(key)"), "\(body)")
        }
    }

    // Defaults that do not read as their type load with a warning (docs/models.md)
    // (ModelFileCompatibilityTests); delete rules, limits and counts are still refused.
    @Test("an unknown delete rule and a malformed limit or count are invalid values")
    func invalidValues() throws {
        let rule = try loadError(
            #"<entity name="A"><relationship name="r" maxCount="1" deletionRule="Explode" destinationEntity="A"/></entity>"#
        )
        #expect(rule.code == .invalidValue && rule.message.contains("Explode") && rule.element == "relationship A.r")
        let limit = try loadError(
            #"<entity name="A"><attribute name="n" attributeType="Integer 32" maxValueString="12abc"/></entity>"#)
        #expect(limit.code == .invalidValue && limit.message.contains("12abc"))
        let decimal = try loadError(
            #"<entity name="A"><attribute name="n" attributeType="Decimal" minValueString="1.2.3"/></entity>"#)
        #expect(decimal.code == .invalidValue)
        let count = try loadError(
            #"<entity name="A"><relationship name="r" toMany="YES" maxCount="-1" destinationEntity="A"/></entity>"#)
        #expect(count.code == .invalidValue)
    }

    @Test("a missing destination is a ModelError with the file and the relationship's line")
    func missingDestination() throws {
        let error = try loadError(
            """
            <entity name="A">
                <relationship name="b" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="B"/>
            </entity>
            """)
        #expect(error.code == .unknownEntity && error.file == "Test.xcdatamodel/contents")
        #expect(error.element == "relationship A.b" && error.line == 4)
    }

    @Test("a missing inverse is a ModelError with the file and the relationship's line")
    func missingInverse() throws {
        let error = try loadError(
            """
            <entity name="A">
                <relationship name="bs" optional="YES" toMany="YES" destinationEntity="B" inverseName="a"/>
            </entity>
            <entity name="B"/>
            """)
        #expect(error.code == .invalidInverse && error.file == "Test.xcdatamodel/contents" && error.line == 4)
    }

    @Test("a configuration naming an unknown entity carries the file and line")
    func unknownConfigurationMember() throws {
        let error = try loadError(
            """
            <entity name="A"/>
            <configuration name="Cloud"><memberEntity name="Z"/></configuration>
            """)
        #expect(error.code == .unknownEntity && error.line == 4 && error.file != nil)
    }

    @Test("a fetched property of an unknown entity is an error")
    func fetchedPropertyUnknownEntity() throws {
        let error = try loadError(
            #"<entity name="A"><fetchedProperty name="f"><fetchRequest name="x" entity="Z"/></fetchedProperty></entity>"#
        )
        #expect(error.code == .unknownEntity && error.element == "fetchedProperty A.f")
    }

    // MARK: Values

    @Test("default values are parsed per attribute type")
    func defaultValues() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="i16" attributeType="Integer 16" defaultValueString="-7"/>
                <attribute name="i32" attributeType="Integer 32" defaultValueString="2"/>
                <attribute name="i64" attributeType="Integer 64" defaultValueString="9000000000"/>
                <attribute name="dec" attributeType="Decimal" defaultValueString="12.345"/>
                <attribute name="dbl" attributeType="Double" defaultValueString="2.5"/>
                <attribute name="flt" attributeType="Float" defaultValueString="0.1"/>
                <attribute name="yes" attributeType="Boolean" defaultValueString="YES"/>
                <attribute name="no" attributeType="Boolean" defaultValueString="NO"/>
                <attribute name="str" attributeType="String" defaultValueString="hello &amp; bye"/>
                <attribute name="day" attributeType="Date" defaultDateTimeInterval="86400"/>
                <attribute name="id" attributeType="UUID" defaultValueString="E621E1F8-C36C-495A-93FC-0C247A3E6E5F"/>
                <attribute name="uri" attributeType="URI" defaultValueString="https://example.com/a"/>
                <attribute name="none" optional="YES" attributeType="Integer 32"/>
            </entity>
            """)
        let a = try #require(model.entity(named: "A")?.attributesByName)
        #expect(a["i16"]?.defaultValue == .integer(-7))
        #expect(a["i32"]?.defaultValue == .integer(2))
        #expect(a["i64"]?.defaultValue == .integer(9_000_000_000))
        #expect(a["dec"]?.defaultValue == .decimal(Decimal(string: "12.345")!))  // a literal that parses
        #expect(a["dbl"]?.defaultValue == .double(2.5))
        #expect(a["flt"]?.defaultValue == .double(Double(Float(0.1))))
        #expect(a["yes"]?.defaultValue == .bool(true) && a["no"]?.defaultValue == .bool(false))
        #expect(a["str"]?.defaultValue == .string("hello & bye"))
        #expect(a["day"]?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 86400)))
        // valid literal
        #expect(a["id"]?.defaultValue == .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!))
        #expect(a["uri"]?.defaultValue == .uri(URL(string: "https://example.com/a")!))  // valid literal
        #expect(a["none"]?.defaultValue == .null)
    }

    @Test("an attribute without optional=YES is required; with it, optional")
    func requiredVersusOptional() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="required" attributeType="String"/>
                <attribute name="optional" optional="YES" attributeType="String"/>
                <relationship name="parent" maxCount="1" destinationEntity="A"/>
                <relationship name="children" optional="YES" toMany="YES" destinationEntity="A"/>
            </entity>
            """)
        let entity = try #require(model.entity(named: "A"))
        #expect(entity.attributesByName["required"]?.isOptional == false)
        #expect(entity.attributesByName["optional"]?.isOptional == true)
        let parent = try #require(entity.relationshipsByName["parent"])
        #expect(!parent.isOptional && parent.minCount == 1 && parent.maxCount == 1)
        let children = try #require(entity.relationshipsByName["children"])
        #expect(children.isOptional && children.minCount == 0 && children.maxCount == 0)
    }

    @Test("validation limits: numbers, string lengths, date ranges and patterns")
    func validationLimits() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="age" attributeType="Integer 16" minValueString="0" maxValueString="150"/>
                <attribute name="ratio" attributeType="Double" minValueString="-1.5" maxValueString="1e3"/>
                <attribute name="code" attributeType="String" minValueString="2" maxValueString="8" regularExpressionString="[A-Z]+"/>
                <attribute name="when" attributeType="Date" minDateTimeInterval="0" maxDateTimeInterval="100"/>
            </entity>
            """)
        let a = try #require(model.entity(named: "A")?.attributesByName)
        #expect(a["age"]?.validation == ValidationRules(minimum: .integer(0), maximum: .integer(150)))
        #expect(a["ratio"]?.validation == ValidationRules(minimum: .double(-1.5), maximum: .double(1000)))
        #expect(
            a["code"]?.validation == ValidationRules(minimumLength: 2, maximumLength: 8, regularExpression: "[A-Z]+"))
        #expect(
            a["when"]?.validation
                == ValidationRules(
                    minimum: .date(Date(timeIntervalSinceReferenceDate: 0)),
                    maximum: .date(Date(timeIntervalSinceReferenceDate: 100))))
    }

    @Test("element attributes map onto descriptions; derived attributes stay stored with their expression noted")
    func attributeDetails() throws {
        let model = try load(
            """
            <entity name="A" representedClassName="AMO" elementID="OldA" versionHashModifier="v2">
                <attribute name="blob" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES" elementID="data"/>
                <attribute name="shape" optional="YES" attributeType="Transformable" valueTransformerName="ShapeTransformer" customClassName="Shape"/>
                <attribute name="upper" optional="YES" attributeType="String" derived="YES" derivationExpression="uppercase:(name)"/>
                <attribute name="name" optional="YES" attributeType="String" indexed="YES" versionHashModifier="m"/>
                <userInfo><entry key="k" value="v"/></userInfo>
            </entity>
            <userInfo><entry key="owner" value="me"/></userInfo>
            """)
        let entity = try #require(model.entity(named: "A"))
        #expect(entity.representedClassName == "AMO" && entity.renamingIdentifier == "OldA")
        #expect(entity.versionHashModifier == "v2" && entity.userInfo == ["k": "v"])
        let a = entity.attributesByName
        #expect(a["blob"]?.allowsExternalBinaryDataStorage == true && a["blob"]?.renamingIdentifier == "data")
        #expect(a["shape"]?.valueTransformerName == "ShapeTransformer" && a["shape"]?.valueClassName == "Shape")
        #expect(a["upper"]?.userInfo[AttributeDescription.derivationExpressionUserInfoKey] == "uppercase:(name)")
        #expect(a["upper"]?.isTransient == false)
        #expect(a["name"]?.isIndexed == true && a["name"]?.versionHashModifier == "m")
        #expect(model.userInfo == ["owner": "me"])
    }

    // MARK: Names

    @Test("an entity name carrying SQL is refused with the file, the line and the way out")
    func sqlInEntityName() throws {
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("strata-attach-\(UUID().uuidString)")
            .path
        let error = try loadError(
            """
            <entity name="Foo(x); ATTACH DATABASE '\(target)' AS p; --">
                <attribute name="title" attributeType="String"/>
            </entity>
            """)
        #expect(error.code == .invalidName)
        #expect(error.file == "Test.xcdatamodel/contents" && error.line == 3)
        #expect(error.element?.hasPrefix("entity \"Foo(x); ATTACH") == true)
        #expect(error.message.contains("rename the entity"))
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test("property, fetched property, configuration and template names must be identifiers, at their line")
    func invalidNamesAtTheirLines() throws {
        let cases: [(body: String, line: Int, element: String)] = [
            (
                "<entity name=\"A\">\n<attribute name=\"two words\" attributeType=\"String\"/>\n</entity>", 4,
                "attribute A.\"two words\""
            ),
            (
                "<entity name=\"A\">\n<relationship name=\"b&#10;c\" destinationEntity=\"A\"/>\n</entity>", 4,
                "relationship A.\"b\\u{A}c\""
            ),
            (
                "<entity name=\"A\">\n<fetchedProperty name=\"q&quot;\"><fetchRequest entity=\"A\"/></fetchedProperty>\n</entity>",
                4, "fetched property A.\"q\\\"\""
            ),
            ("<entity name=\"A\"/>\n<configuration name=\"My Store\"/>", 4, "configuration \"My Store\""),
            ("<entity name=\"A\"/>\n<fetchRequest name=\"1st\" entity=\"A\"/>", 4, "fetch request template \"1st\""),
            ("<entity name=\"Caf\u{202E}e\"/>", 3, "entity \"Caf\\u{202E}e\""),
        ]
        for (body, line, element) in cases {
            let error = try loadError(body)
            #expect(error.code == .invalidName, "\(body)")
            #expect(error.line == line && error.element == element, "\(error)")
            #expect(!error.description.contains("\n"), "\(error)")
        }
    }

    @Test("identifiers with underscores, digits, Unicode letters and Swift keywords load")
    func validNames() throws {
        let model = try load(
            """
            <entity name="_Entity2"><attribute name="class" attributeType="String"/><attribute name="default_1" attributeType="String"/><attribute name="größe" attributeType="String"/></entity>
            <configuration name="Cloud_1"><memberEntity name="_Entity2"/></configuration>
            """)
        #expect(model.entity(named: "_Entity2")?.attributesByName.keys.sorted() == ["class", "default_1", "größe"])
    }
}

@Suite("Model files that are not UTF-8")
struct ModelEncodingTests {
    @Test("invalid UTF-8 in a model file is a malformed-model error naming the line, not a crash")
    func invalidUTF8() throws {
        let directory = try TemporaryDirectory(prefix: "model-utf8")
        let file = directory.url.appendingPathComponent("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        var bytes = Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model>\n<entity name=\"A".utf8)
        bytes.append(0xC4)
        bytes.append(contentsOf: Data("\"/>\n</model>\n".utf8))
        try bytes.write(to: file.appendingPathComponent("contents"))
        #expect { _ = try ManagedObjectModel(contentsOf: file) } throws: { error in
            guard let error = error as? ModelError else { return false }
            return error.code == .malformed && error.line == 3 && error.message.contains("UTF-8")
        }
    }
}
