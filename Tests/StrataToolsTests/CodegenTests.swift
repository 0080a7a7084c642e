import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataTools

/// A model whose names the name rule allows but Swift, Foundation, Strata or the generated code
/// already use: its generated code must compile.
func awkwardNamesModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [
        EntityDescription(
            "Date",
            properties: [
                .attribute("class", .string), .attribute("default", .boolean), .attribute("description", .string),
                .attribute("descriptionValue", .string), .attribute("self", .string), .attribute("Type", .string),
                .attribute("init", .string), .attribute("Strata", .string), .attribute("Swift", .string),
                .attribute("Any", .string), .attribute("await", .string), .attribute("async", .string),
                .attribute("some", .string), .attribute("_", .string), .attribute("true", .boolean),
                .attribute("String", .string), .attribute("Date", .date), .attribute("Note", .string),
                .attribute("größe", .double), .attribute("when", .date), .attribute("blob", .binaryData),
                .attribute("selfValue", .string), .attribute("objectID", .string), .attribute("hashValue", .integer64),
                .attribute("isAccessible", .boolean), .attribute("fulfillFault", .string),
                .toMany("tracks", "String", inverse: "owner"), .toMany("Tracks", "String", inverse: "other"),
            ],
            representedClassName: "X\n*/ evil"),
        EntityDescription(
            "String",
            properties: [.toOne("owner", "Date", inverse: "tracks"), .toOne("other", "Date", inverse: "Tracks")]),
        EntityDescription("protocol", properties: [.attribute("FetchRequest", .string)]),
        EntityDescription("Note", properties: [.toMany("notes", "Note"), .attribute("entity", .string)]),
        EntityDescription("note", parent: "Note", properties: [.attribute("addToNotes", .string)]),
        EntityDescription("Strata"),
        EntityDescription("FetchRequest"),
        EntityDescription("ManagedObject"),
    ])
}

/// A model whose composites have names Swift, the generated class or the generated structs
/// already use, every element type, a transformable element, nesting and sharing: its generated
/// code must compile.
func awkwardCompositeModel() throws -> ManagedObjectModel {
    let typed: [AttributeDescription] = AttributeType.allCases.filter {
        $0 != .undefined && $0 != .objectID && $0 != .composite && $0 != .transformable
    }.map { AttributeDescription("e\($0.rawValue)", $0, isOptional: $0.rawValue % 200 == 0) }
    let place = AttributeDescription.composite(
        "place", elements: [AttributeDescription("Place", .string), AttributeDescription("write", .string)],
        compositeName: "Place")
    let everything = AttributeDescription.composite(
        "everything",
        elements: typed + [
            AttributeDescription("init", .string), AttributeDescription("self", .string),
            AttributeDescription("default", .boolean), AttributeDescription("blob", .transformable), place,
        ], compositeName: "Station")
    return try ManagedObjectModel(entities: [
        EntityDescription(
            "Station",
            properties: [
                .attribute(everything),
                .attribute(.composite("copy", elements: everything.elements, compositeName: "Station")),
                .composite("Double", elements: [AttributeDescription("x", .double)]),
                .composite(
                    "class", elements: [AttributeDescription("y", .double, isOptional: false)], isOptional: false),
            ]),
        EntityDescription(
            "Sub", parent: "Station", properties: [.composite("more", elements: [place], compositeName: "Place")]),
    ])
}

/// Reads back a Swift string literal written by ``CodeGenerator/literal(_:)`` (the escapes it uses).
private func decodeLiteral(_ literal: String) -> String? {
    guard literal.count >= 2, literal.first == "\"", literal.last == "\"" else { return nil }
    var scalars = Array(literal.unicodeScalars.dropFirst().dropLast())[...]
    var out = String.UnicodeScalarView()
    while let scalar = scalars.popFirst() {
        guard scalar == "\\" else {
            if scalar == "\"" { return nil }
            out.append(scalar)
            continue
        }
        switch scalars.popFirst() {
        case "n": out.append("\n")
        case "r": out.append("\r")
        case "t": out.append("\t")
        case "0": out.append("\0")
        case "\"": out.append("\"")
        case "\\": out.append("\\")
        case "u":
            guard scalars.popFirst() == "{", let close = scalars.firstIndex(of: "}") else { return nil }
            let hex = String(String.UnicodeScalarView(scalars[scalars.startIndex..<close]))
            scalars = scalars[(close + 1)...]
            guard let value = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(value) else { return nil }
            out.append(decoded)
        default: return nil
        }
    }
    return String(out)
}

@Suite("strata codegen")
struct CodegenTests {
    @Test("one file per entity plus the class registry, with wrappers, accessors and fetch helpers")
    func files() throws {
        let files = CodeGenerator.generate(ConformanceModel.model)
        #expect(files.count == ConformanceModel.model.entities.count + 1)
        let byName = Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.contents) })
        let car = try #require(byName["Car.swift"])
        #expect(car.contains("public class Car: Vehicle {"))
        #expect(car.contains("override public class var entityName: String { \"Car\" }"))
        #expect(car.contains("@ManagedAttribute(\"seats\") public var seats: Int16?"))
        let sports = try #require(byName["SportsCar.swift"])
        #expect(sports.contains("public final class SportsCar: Car {"))
        let vehicle = try #require(byName["Vehicle.swift"])
        #expect(vehicle.contains("public class Vehicle: ManagedObject, GeneratedEntity {"))
        #expect(byName["ModelClasses.swift"]?.contains("public static func fetch(") == true)
        let playlist = try #require(byName["Playlist.swift"])
        #expect(playlist.contains("@ManagedOrderedToMany(\"tracks\") public var tracks: [Track]"))
        #expect(playlist.contains("public func addToTracks(_ object: Track)"))
        let employee = try #require(byName["Employee.swift"])
        #expect(employee.contains("@ManagedToOne(\"department\") public var department: Department?"))
        #expect(employee.contains("@ManagedAttribute(\"name\") public var name: String\n"))
        let item = try #require(byName["Item.swift"])
        #expect(item.contains("@ManagedToMany(\"tags\") public var tags: Set<Tag>"))
        #expect(item.contains("public var words: Any? {"))
        #expect(byName["ModelClasses.swift"]?.contains("\"SportsCar\": SportsCar.self,") == true)
    }

    @Test("a derived attribute becomes a read-only property and a fetched property a throwing method")
    func derivedAndFetched() throws {
        let files = CodeGenerator.generate(DerivedModel.model)
        let byName = Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.contents) })
        let department = try #require(byName["Department.swift"])
        #expect(department.contains("computed at save from `employees.@count`."))
        #expect(department.contains("public var headcount: Int64? { value(forKey: \"headcount\", as: Int64.self) }"))
        #expect(!department.contains("@ManagedAttribute(\"headcount\")"), "no setter for a derived attribute")
        #expect(department.contains("public func managers() throws -> [Employee] {"))
        #expect(department.contains("try fetchedObjects(forKey: \"managers\").compactMap { $0 as? Employee }"))
        #expect(department.contains("@ManagedAttribute(\"name\") public var name: String\n"))
    }

    @Test("a composite becomes a nested struct and a property reading its elements by key path")
    func composites() throws {
        let files = Dictionary(
            uniqueKeysWithValues: CodeGenerator.generate(CompositeModel.model).map { ($0.name, $0.contents) })
        let quake = try #require(files["Quake.swift"])
        #expect(quake.contains("public var location: Location? {\n        get { Location(self, at: \"location\") }"))
        #expect(quake.contains("set { Location.write(newValue, to: self, at: \"location\") }"))
        #expect(quake.contains("public struct Location: Hashable, Sendable {"))
        #expect(quake.contains("        public struct Place: Hashable, Sendable {"), "nested composites nest")
        #expect(quake.contains("public var richter: Double\n"), "a required element is not optional")
        #expect(quake.contains("let e0: Double? = object[path + \".richter\"]"))
        #expect(quake.contains("self.init(richter: e0 ?? .valueForNil, depth: e1)"))
        #expect(!quake.contains("magnitude.richter\""), "elements are reached through the composite's path")
        let awkward = CodeGenerator.generate(try awkwardCompositeModel())
        let station = try #require(awkward.first { $0.name == "Station.swift" }?.contents)
        #expect(station.contains("public var everything: Station_?"), "a struct never shadows a class")
        #expect(station.contains("public var `copy`: Station_?"), "equal composites share one struct")
        #expect(station.contains("public struct Station_ {"), "a transformable element drops Hashable and Sendable")
        #expect(station.contains("public var writeValue: String?") && station.contains("public var initValue: String?"))
        #expect(station.contains("public var `default`: Bool?"))
    }

    @Test("names Swift or ManagedObject already use are suffixed; keywords are escaped")
    func reservedNames() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Note",
                properties: [
                    .attribute("description", .string), .attribute("default", .boolean), .attribute("entity", .string),
                ])
        ])
        let source = try #require(CodeGenerator.generate(model).first { $0.name == "Note.swift" }?.contents)
        #expect(source.contains("@ManagedAttribute(\"description\") public var descriptionValue: String?"))
        #expect(source.contains("public var `default`: Bool?"))
        #expect(source.contains("public var entityValue: String?"))
    }

    @Test(
        "a name never leaves its string literal or comment: newlines, quotes, backslashes, */ and invisible characters are escaped"
    )
    func escaping() throws {
        let hostile = [
            "a\nb", "*/ x /* y", "q\"uote", "back\\slash", "\\(interpolated)", "tab\tnul\0cr\r", "rtl\u{202E}x",
            "ls\u{2028}ps\u{2029}", "nel\u{85}", "größe\u{301}", "\"\"\"",
        ]
        for text in hostile {
            let literal = CodeGenerator.literal(text)
            #expect(decodeLiteral(literal) == text, "\(literal)")
            #expect(
                !literal.unicodeScalars.contains {
                    $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
                        || $0 == "\u{2028}" || $0 == "\u{2029}"
                }, "\(literal)")
            let comment = CodeGenerator.commentText(text)
            #expect(
                !comment.unicodeScalars.contains {
                    $0 == "\n" || $0 == "\r" || $0 == "\u{85}" || $0 == "\u{2028}" || $0 == "\u{2029}"
                        || $0 == "\u{202E}"
                }, "\(comment)")
        }
        #expect(CodeGenerator.literal("a\nb\"\\") == #""a\nb\"\\""#)
        #expect(CodeGenerator.sanitized("9lives") == "_9lives" && CodeGenerator.sanitized("a b*/") == "a_b__")
    }

    @Test("names Swift, Foundation, Strata or the generated code use are renamed, never redeclared or shadowed")
    func awkwardNames() throws {
        let model = try awkwardNamesModel()
        let files = Dictionary(uniqueKeysWithValues: CodeGenerator.generate(model).map { ($0.name, $0.contents) })
        #expect(
            files.keys.sorted() == [
                "DateObject.swift", "FetchRequestObject.swift", "ManagedObjectObject.swift", "ModelClasses.swift",
                "Note.swift",
                "StrataObject.swift", "StringObject.swift", "noteObject.swift", "protocolObject.swift",
            ])
        let date = try #require(files["DateObject.swift"])
        #expect(date.contains("@ManagedAttribute(\"class\") public var `class`: String?"))
        #expect(date.contains("@ManagedAttribute(\"description\") public var descriptionValue: String?"))
        #expect(date.contains("@ManagedAttribute(\"descriptionValue\") public var descriptionValue_: String?"))
        #expect(date.contains("@ManagedAttribute(\"self\") public var selfValue_: String?"))
        #expect(date.contains("@ManagedAttribute(\"String\") public var StringValue: String?"))
        #expect(date.contains("@ManagedAttribute(\"Date\") public var DateValue: Date?"))
        #expect(date.contains("@ManagedAttribute(\"Note\") public var NoteValue: String?"))
        #expect(date.contains("public func addToTracks(_ object: StringObject)"))
        #expect(date.contains("public func addToTracks_(_ object: StringObject)"))
        #expect(!date.contains("evil"))
        let child = try #require(files["noteObject.swift"])
        #expect(child.contains("public final class noteObject: Note {"))
        #expect(child.contains("@ManagedAttribute(\"addToNotes\") public var addToNotes_: String?"))
    }

    @Test("the binary writes the files; a missing model exits 64")
    func binary() throws {
        let directory = try TemporaryDirectory()
        let output = directory.file("Generated")
        let result = try runStrata(["codegen", try writeDemoModel(in: directory), "--output", output.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: output.path).sorted() == [
                "Department.swift", "Employee.swift", "ModelClasses.swift", "Project.swift",
            ])
        let missing = try runStrata(["codegen", directory.file("Nope.xcdatamodeld").path, "--output", output.path])
        #expect(missing.status == 64)
    }

    @Test(
        "generated code for every corpus model, and for names Swift already uses, compiles against the library",
        .needsCorpus, .timeLimit(.minutes(20)))
    func corpusBuild() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = try TemporaryDirectory(prefix: "strata-codegen")
        var targets: [String] = []
        let models =
            try corpusModelFiles().map { try ManagedObjectModel(contentsOf: $0) }
            + [try awkwardNamesModel(), CompositeModel.model, try awkwardCompositeModel(), DerivedModel.model]
        for (index, model) in models.enumerated() {
            let name = "Model\(index)"
            let folder = directory.url.appendingPathComponent("Sources/\(name)")
            let files = try CodeGenerator.write(model, to: folder)
            #expect(files.count == model.entities.count + 1)
            // Use the generated API the way an app would.
            let first = CodeGenerator.generate(model)[0].name.replacingOccurrences(of: ".swift", with: "")
            let use = """
                import Strata
                func use(_ context: ManagedObjectContext, _ model: ManagedObjectModel) throws -> Int {
                    _ = try ModelClasses.register(in: model)
                    return try \(first).fetch(in: context).count + \(first).count(in: context)
                }
                """
            try Data(use.utf8).write(to: folder.appendingPathComponent("Use.swift"))
            if model === CompositeModel.model {
                let composites = """
                    import Strata
                    func useComposites(_ quake: Quake) -> (Double?, String?, Double) {
                        quake.location = Quake.Location(latitude: 35.6, longitude: 139.7, place: .init(city: "Tokyo"))
                        quake.magnitude = Quake.Magnitude(richter: 6.1)
                        quake.location?.place?.country = "JP"
                        let place: Quake.Location.Place? = quake.location?.place
                        return (quake.location?.latitude, place?.city, quake.magnitude?.richter ?? 0)
                    }
                    """
                try Data(composites.utf8).write(to: folder.appendingPathComponent("UseComposites.swift"))
            }
            if model === DerivedModel.model {
                let derived = """
                    import Strata
                    func useDerived(_ department: Department) throws -> (Int64?, [Employee], String?) {
                        (department.headcount, try department.managers(), try department.namesakes().first?.departmentName)
                    }
                    """
                try Data(derived.utf8).write(to: folder.appendingPathComponent("UseDerived.swift"))
            }
            targets.append(name)
        }
        let identity = root.lastPathComponent.lowercased()
        let manifest = """
            // swift-tools-version:6.1
            import PackageDescription
            let package = Package(
                name: "Generated", platforms: [.macOS(.v15)],
                dependencies: [.package(path: "\(root.path)")],
                targets: [
            \(targets.map { "        .target(name: \"\($0)\", dependencies: [.product(name: \"Strata\", package: \"\(identity)\")])," }.joined(separator: "\n"))
                ])
            """
        try Data(manifest.utf8).write(to: directory.file("Package.swift"))
        let run = try ChildProcess.capture(
            ["/usr/bin/env", "swift", "build", "--package-path", directory.url.path, "-j", "2"])
        let output = String(decoding: run.output + run.errors, as: UTF8.self)
        #expect(run.termination.succeeded, "\(output.suffix(4000))")
        #expect(!output.contains("warning:"), "\(output.suffix(4000))")
    }
}
