import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

/// A file that must be refused, where, and with what words.
struct BadFile: Sendable, CustomStringConvertible {
    var description: String
    var objects: String
    /// The line reported (objects start on line 11 of ``XMLTestSupport/appleStyle(_:nextObjectID:)``).
    var line: Int
    /// The column reported.
    var column: Int
    var words: String
    /// Whether the loader finds the problem only after reading every object (references and
    /// keys across objects): a malformed end of file is then reported instead.
    var foundAfterReading = false

    static let all: [BadFile] = [
        BadFile(
            description: "mismatched tags",
            objects: #"<object type="TAG" id="z1"><attribute name="name" type="string">a</attribut></object>"#,
            line: 11, column: 77, words: "mismatch"),
        BadFile(
            description: "an unknown entity", objects: #"<object type="GADGET" id="z1"></object>"#, line: 11, column: 1,
            words: "'GADGET'"),
        BadFile(
            description: "an unknown property",
            objects:
                "<object type=\"TAG\" id=\"z1\">\n  <attribute name=\"colour\" type=\"string\">red</attribute>\n</object>",
            line: 12, column: 3, words: "'colour'"),
        BadFile(
            description: "a dangling idref",
            objects:
                #"<object type="TAG" id="z1"><attribute name="name" type="string">a</attribute><relationship name="items" type="0/0" destination="ITEM" idrefs="z9"></relationship></object>"#,
            line: 11, column: 78, words: "found z9, which no <object> has", foundAfterReading: true),
        BadFile(
            description: "a duplicate id after ids that rose",
            objects:
                "<object type=\"TAG\" id=\"z1\"></object>\n<object type=\"TAG\" id=\"z2\"></object>\n<object type=\"TAG\" id=\"z3\"></object>\n<object type=\"TAG\" id=\"z2\"></object>",
            line: 14, column: 1, words: "z2 was already used on line 12"),
        BadFile(
            description: "one primary key given twice in an entity",
            objects: "<object type=\"TAG\" id=\"z1\"></object>\n<object type=\"TAG\" id=\"z2\" pk=\"1\"></object>",
            line: 12, column: 1, words: "Tag key 1 is used twice", foundAfterReading: true),
        BadFile(
            description: "one primary key given to two entities of a hierarchy",
            objects: "<object type=\"CAR\" id=\"z1\"></object>\n<object type=\"TRUCK\" id=\"z2\" pk=\"1\"></object>",
            line: 12, column: 1, words: "Vehicle key 1 is used twice", foundAfterReading: true),
        BadFile(
            description: "a duplicate id",
            objects: "<object type=\"TAG\" id=\"z1\"></object>\n<object type=\"TAG\" id=\"z1\"></object>",
            line: 12, column: 1, words: "z1 was already used on line 11"),
        BadFile(
            description: "an integer that does not parse",
            objects:
                "<object type=\"ITEM\" id=\"z1\">\n    <attribute name=\"int16\" type=\"int16\">12x</attribute></object>",
            line: 12, column: 5, words: "expected Integer 16 text for attribute 'int16' of entity 'Item', found '12x'"),
        BadFile(
            description: "an integer out of its type's range",
            objects: #"<object type="ITEM" id="z1"><attribute name="int16" type="int16">40000</attribute></object>"#,
            line: 11, column: 29, words: "found '40000'"),
        BadFile(
            description: "a date that does not parse",
            objects: #"<object type="ITEM" id="z1"><attribute name="date" type="date">yesterday</attribute></object>"#,
            line: 11, column: 29, words: "expected Date text"),
        BadFile(
            description: "binary that is not base64",
            objects: #"<object type="ITEM" id="z1"><attribute name="binary" type="binary">#!?</attribute></object>"#,
            line: 11, column: 29, words: "expected Binary text"),
        BadFile(
            description: "two ids in a to-one relationship",
            objects:
                #"<object type="EMPLOYEE" id="z1"><attribute name="name" type="string">a</attribute><relationship name="mentor" type="0/1" destination="EMPLOYEE" idrefs="z1 z1"></relationship></object>"#,
            line: 11, column: 83, words: "expected at most one id"),
        BadFile(
            description: "an idref to an object of the wrong entity",
            objects:
                #"<object type="TAG" id="z1"><relationship name="items" type="0/0" destination="ITEM" idrefs="z1"></relationship></object>"#,
            line: 11, column: 28, words: "found z1, a Tag", foundAfterReading: true),
        BadFile(
            description: "an id that is not zN", objects: #"<object type="TAG" id="x1"></object>"#, line: 11, column: 1,
            words: "expected an object id like \"z12\""),
        BadFile(
            description: "stray text", objects: "<object type=\"TAG\" id=\"z1\"></object>\nhello", line: 12, column: 1,
            words: "found text"),
        BadFile(
            description: "an unknown element", objects: "<thing/>", line: 11, column: 1,
            words: "expected <databaseInfo> or <object> in <database>, found <thing>"),
        BadFile(
            description: "an attribute written as a relationship",
            objects:
                #"<object type="TAG" id="z1"><relationship name="name" type="0/1" destination="TAG"></relationship></object>"#,
            line: 11, column: 28, words: "expected <attribute> for 'name'"),
    ]
}

@Suite("XML store errors")
struct XMLErrorTests {
    @Test(
        "a bad file is refused with a corrupt error naming file, line, column and what was expected",
        arguments: BadFile.all)
    func badFile(_ bad: BadFile) throws {
        let directory = try TemporaryDirectory(prefix: "xml-bad")
        let url = try XMLTestSupport.write(XMLTestSupport.appleStyle(bad.objects), in: directory)
        let error = try #require(XMLTestSupport.openError(url))
        #expect(error.code == .corrupt)
        #expect(error.message.contains("\(url.path):\(bad.line):\(bad.column): "), "\(error.message)")
        #expect(error.message.contains(bad.words), "\(error.message)")
    }

    @Test(
        "in a file large enough to be read on two cores, the first problem in file order is reported, also when the end is cut off",
        arguments: BadFile.all)
    func badFileReadOnTwoCores(_ bad: BadFile) throws {
        let directory = try TemporaryDirectory(prefix: "xml-bad-large")
        // Valid objects after the bad ones push the file past the size read on two cores.
        var padding = ""
        for id in 100_000..<116_000 {
            padding +=
                "\n<object type=\"TAG\" id=\"z\(id)\"><attribute name=\"name\" type=\"string\">padding \(id)</attribute></object>"
        }
        let text = XMLTestSupport.appleStyle(bad.objects + padding)
        try #require(text.utf8.count > 1 << 20)
        for (variant, file) in [("whole", text), ("cut", String(text.dropLast(40)))] {
            let url = try XMLTestSupport.write(file, in: directory, name: "\(variant).xml")
            let error = try #require(XMLTestSupport.openError(url), "\(variant)")
            #expect(error.code == .corrupt, "\(variant)")
            if variant == "cut", bad.foundAfterReading { continue }
            #expect(error.message.contains("\(url.path):\(bad.line):\(bad.column): "), "\(variant): \(error.message)")
            #expect(error.message.contains(bad.words), "\(variant): \(error.message)")
        }
    }

    @Test("past line 65,535 (where libxml2 stops counting element lines) errors still name the right line")
    func bigLines() throws {
        let directory = try TemporaryDirectory(prefix: "xml-big-lines")
        var objects = ""
        for id in 1...30_000 {
            objects +=
                "<object type=\"TAG\" id=\"z\(id)\">\n    <attribute name=\"name\" type=\"string\">t\(id)</attribute>\n</object>\n"
        }
        // Objects start on line 11 of the template, three lines each.
        let line = 11 + 30_000 * 3
        let cases = [
            (
                "entity",
                "<object type=\"GADGET\" id=\"z40000\">\n    <attribute name=\"name\" type=\"string\">x</attribute>\n</object>",
                line, 1, "'GADGET'"
            ),
            (
                "property",
                "<object type=\"TAG\" id=\"z40000\">\n    <attribute name=\"colour\" type=\"string\">red</attribute>\n</object>",
                line + 1, 5, "'colour'"
            ),
        ]
        for (name, bad, expectedLine, column, words) in cases {
            let url = try XMLTestSupport.write(
                XMLTestSupport.appleStyle(objects + bad), in: directory, name: "\(name).xml")
            let error = try #require(XMLTestSupport.openError(url), "\(name)")
            #expect(
                error.message.contains("\(url.path):\(expectedLine):\(column): "),
                "\(name): \(error.message.prefix(160))")
            #expect(error.message.contains(words), "\(name)")
        }
    }

    @Test("a truncated store is refused at every cut, never opened half")
    func truncation() throws {
        let directory = try TemporaryDirectory(prefix: "xml-truncated")
        let source = try XMLTestSupport.seededStore(in: directory)
        let bytes = try Data(contentsOf: source)
        let cut = directory.file("cut.xml")
        // Every cut short of the last line break loses at least `</database>`.
        let end = bytes.count - "</database>\n".utf8.count
        for length in stride(from: 0, to: end, by: max(1, end / 150)) {
            try bytes.prefix(length).write(to: cut)
            let error = try #require(XMLTestSupport.openError(cut), "a cut at \(length) bytes opened")
            #expect(error.code == .corrupt, "cut at \(length)")
            #expect(error.message.contains(cut.path + ":"), "cut at \(length): \(error.message)")
        }
    }

    @Test("files that are not XML stores are refused with corrupt errors")
    func notAStore() throws {
        let directory = try TemporaryDirectory(prefix: "xml-not-store")
        for (name, text) in [
            ("empty", ""), ("binary", "\u{1}\u{2}SQLite format 3\u{0}"),
            ("plist", "<plist version=\"1.0\"><dict/></plist>"),
        ] {
            let url = try XMLTestSupport.write(text, in: directory, name: name)
            let error = try #require(XMLTestSupport.openError(url), "\(name) opened")
            #expect(error.code == .corrupt, "\(name)")
            #expect(error.message.contains(url.path + ":1:"), "\(name): \(error.message)")
        }
    }

    @Test("a second writer is refused with a locked error while readers see the last complete save")
    func writerLock() throws {
        let directory = try TemporaryDirectory(prefix: "xml-lock")
        let url = try XMLTestSupport.seededStore(in: directory)
        let model = ConformanceModel.model
        let writer = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try writer.addPersistentStore(type: .xml, at: url)
        let second = PersistentStoreCoordinator(managedObjectModel: model)
        #expect(
            storeErrorCode { try second.addPersistentStore(type: .xml, at: url, options: StoreOptions(timeout: 0.1)) }
                == .locked)
        let context = ManagedObjectContext(coordinator: writer)
        let tag = try context.insertNewObject(forEntityName: "Tag")
        tag["name"] = "fresh"
        try context.save()
        let reader = PersistentStoreCoordinator(managedObjectModel: model)
        try reader.addPersistentStore(type: .xml, at: url, options: StoreOptions(isReadOnly: true))
        let names = try ManagedObjectContext(coordinator: reader).fetch(FetchRequest(entityName: "Tag")).compactMap {
            $0["name"] as? String
        }
        #expect(names.contains("fresh"))
        try writer.remove(store)
        let again = try second.addPersistentStore(type: .xml, at: url, options: StoreOptions(timeout: 0.1))
        try second.remove(again)
    }
}
