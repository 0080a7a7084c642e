import Foundation
import Strata
import StrataTesting
import StrataTools
import Testing

/// Writes `.xcmappingmodel` directories the way Xcode does (a Core Data XML store of Xcode's
/// mapping objects), for tests.
enum XcodeMappingFixture {
    struct Mapping {
        var number: Int
        var source: String?
        var destination: String?
        var attributes: [String] = []
        var relationships: [String] = []
        var typeName = "Undefined"
        var policy: String?
        var filter: String?
        /// Extra `<attribute>` lines for one property mapping, by property name.
        var propertyExtras: [String: String] = [:]
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// The xcmapping.xml text for `mappings`.
    static func document(_ mappings: [Mapping]) -> String {
        var objects: [String] = []
        var next = 200
        var entityIDs: [String] = []
        for mapping in mappings {
            let id = "z\(next)"
            next += 1
            entityIDs.append(id)
            var propertyIDs: [String: [String]] = ["XDDEVATTRIBUTEMAPPING": [], "XDDEVRELATIONSHIPMAPPING": []]
            for (kind, names) in [
                ("XDDEVATTRIBUTEMAPPING", mapping.attributes), ("XDDEVRELATIONSHIPMAPPING", mapping.relationships),
            ] {
                for name in names {
                    let propertyID = "z\(next)"
                    next += 1
                    propertyIDs[kind, default: []].append(propertyID)
                    objects.append(
                        """
                            <object type="\(kind)" id="\(propertyID)">
                                <attribute name="name" type="string">\(escaped(name))</attribute>
                                \(mapping.propertyExtras[name] ?? "")
                                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="\(id)"></relationship>
                            </object>
                        """)
                }
            }
            var lines = [
                "<attribute name=\"mappingtypename\" type=\"string\">\(escaped(mapping.typeName))</attribute>",
                "<attribute name=\"mappingnumber\" type=\"int16\">\(mapping.number)</attribute>",
            ]
            if let source = mapping.source {
                lines.append("<attribute name=\"sourcename\" type=\"string\">\(escaped(source))</attribute>")
            }
            if let destination = mapping.destination {
                lines.append("<attribute name=\"destinationname\" type=\"string\">\(escaped(destination))</attribute>")
            }
            if let policy = mapping.policy {
                lines.append(
                    "<attribute name=\"migrationpolicyclassname\" type=\"string\">\(escaped(policy))</attribute>")
            }
            if let filter = mapping.filter {
                lines.append(
                    "<attribute name=\"sourcefilterpredicatestring\" type=\"string\">\(escaped(filter))</attribute>")
            }
            lines.append(
                "<relationship name=\"mappingmodel\" type=\"1/1\" destination=\"XDDEVMAPPINGMODEL\" idrefs=\"z100\"></relationship>"
            )
            lines.append(
                "<relationship name=\"attributemappings\" type=\"0/0\" destination=\"XDDEVATTRIBUTEMAPPING\" idrefs=\"\(propertyIDs["XDDEVATTRIBUTEMAPPING", default: []].joined(separator: " "))\"></relationship>"
            )
            lines.append(
                "<relationship name=\"relationshipmappings\" type=\"0/0\" destination=\"XDDEVRELATIONSHIPMAPPING\" idrefs=\"\(propertyIDs["XDDEVRELATIONSHIPMAPPING", default: []].joined(separator: " "))\"></relationship>"
            )
            objects.append(
                "    <object type=\"XDDEVENTITYMAPPING\" id=\"\(id)\">\n        \(lines.joined(separator: "\n        "))\n    </object>"
            )
        }
        objects.append(
            """
                <object type="XDDEVMAPPINGMODEL" id="z100">
                    <attribute name="sourcemodelpath" type="string">Model.xcdatamodeld/V1.xcdatamodel</attribute>
                    <attribute name="destinationmodelpath" type="string">Model.xcdatamodeld/V2.xcdatamodel</attribute>
                    <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="\(entityIDs.joined(separator: " "))"></relationship>
                </object>
            """)
        return """
            <?xml version="1.0" standalone="yes"?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

            <database>
                <databaseInfo>
                    <version>134481920</version>
                    <UUID>498313E6-D672-4887-A947-08765F4F1012</UUID>
                    <nextObjectID>\(next)</nextObjectID>
                    <metadata>
                        <plist version="1.0">
                            <dict>
                                <key>NSPersistenceFrameworkVersion</key>
                                <integer>1044</integer>
                            </dict>
                        </plist>
                    </metadata>
                </databaseInfo>
            \(objects.joined(separator: "\n"))
            </database>

            """
    }

    /// Writes `<name>.xcmappingmodel/xcmapping.xml` in `directory` holding `text`.
    @discardableResult
    static func write(_ text: String, named name: String = "V1toV2", in directory: TemporaryDirectory) throws -> URL {
        let bundle = directory.file("\(name).xcmappingmodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: bundle.appendingPathComponent("xcmapping.xml"))
        return bundle
    }

    /// The mapping of ``MigrationModels/version1`` to ``MigrationModels/version2`` as Xcode would
    /// save it: every attribute and relationship with Xcode's default expressions, `town` from
    /// `city`, `status` a constant, people under 18 filtered out.
    static var migrationModels: [Mapping] {
        [
            Mapping(
                number: 1, source: "Person", destination: "Member",
                attributes: ["age", "name", "note", "status", "town"],
                relationships: ["clubs", "pets"], filter: "age >= 18",
                propertyExtras: [
                    "town": "<attribute name=\"valueexpressiondata\" type=\"binary\">\(townExpression)</attribute>"
                ]),
            Mapping(
                number: 2, source: "Employee", destination: "Employee", attributes: ["age", "name", "salary"],
                relationships: ["clubs", "pets"]),
            Mapping(number: 3, source: "Pet", destination: "Pet", attributes: ["name"], relationships: ["owner"]),
            Mapping(number: 4, source: "Club", destination: "Club", attributes: ["title"], relationships: ["members"]),
        ]
    }

    /// A keyed archive of `$source.city` (an `NSKeyPathExpression` on the variable `source`), base64.
    static var townExpression: String { archivedSourceKeyPath("city", cyclic: false) }

    /// Base64 of a keyed archive (an XML property list, as `NSKeyedArchiver` can write) of
    /// `$source.<key>`; with `cyclic`, the key path expression is its own operand.
    static func archivedSourceKeyPath(_ key: String, cyclic: Bool) -> String {
        func uid(_ index: Int) -> [String: Any] { ["CF$UID": index] }
        func classes(_ name: String, _ parents: [String]) -> [String: Any] {
            ["$classname": name, "$classes": [name] + parents + ["NSObject"]]
        }
        let objects: [Any] = [
            "$null",
            ["NSOperand": uid(cyclic ? 1 : 2), "NSArguments": uid(4), "NSExpressionType": 3, "$class": uid(7)],
            ["NSVariable": uid(3), "NSExpressionType": 2, "$class": uid(8)],
            "source",
            ["NS.objects": [uid(5)], "$class": uid(9)],
            ["NSKeyPath": uid(6), "NSExpressionType": 10, "$class": uid(10)],
            key,
            classes("NSKeyPathExpression", ["NSFunctionExpression", "NSExpression"]),
            classes("NSVariableExpression", ["NSExpression"]),
            classes("NSArray", []),
            classes("NSKeyPathSpecifierExpression", ["NSExpression"]),
        ]
        let archive: [String: Any] = [
            "$archiver": "NSKeyedArchiver", "$version": 100000, "$top": ["root": uid(1)], "$objects": objects,
        ]
        // A fixed, valid property list.
        let data = try! PropertyListSerialization.data(fromPropertyList: archive, format: .xml, options: 0)
        return data.base64EncodedString()
    }
}

@Suite("Xcode mapping models")
struct XcodeMappingModelTests {
    static func corpusMapping(_ directory: TemporaryDirectory) throws -> URL {
        let corpus = URL(fileURLWithPath: try #require(ProcessInfo.processInfo.environment["STRATA_CORPUS"]))
        let bundle = directory.file("V2toV3.xcmappingmodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: corpus.appendingPathComponent("xml/alemar11__CoreDataPlus__V2toV3.xcmapping.xml"),
            to: bundle.appendingPathComponent("xcmapping.xml"))
        return bundle
    }

    @Test(
        "CoreDataPlus's V2toV3 mapping model is read whole: five mappings in Xcode's order, every property, policy and expression",
        .needsCorpus)
    func corpus() throws {
        let directory = try TemporaryDirectory(prefix: "xcmapping")
        let bundle = try Self.corpusMapping(directory)
        let before = try Data(contentsOf: bundle.appendingPathComponent("xcmapping.xml"))
        let model = try XcodeMappingModel.read(at: bundle)
        #expect(
            try Data(contentsOf: bundle.appendingPathComponent("xcmapping.xml")) == before,
            "the file is read, not written")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: bundle.path) == ["xcmapping.xml"],
            "nothing is left beside it")
        #expect(
            model.entityMappings.map(\.name) == [
                "CarToCar", "LuxuryCarToLuxuryCar", "PersonToPerson", "SportCarToSportCar", "Maker",
            ])
        #expect(model.entityMappings.map(\.effectiveType) == [.transform, .transform, .transform, .transform, .add])
        #expect(model.entityMappings.map(\.sourceEntityName) == ["Car", "LuxuryCar", "Person", "SportCar", nil])
        let policy = "REPLACE_AT_RUNTIME.V2to3MakerPolicy"
        #expect(model.entityMappings.map(\.entityMigrationPolicyClassName) == [policy, policy, nil, policy, nil])
        let cars = ["markedForDeletionAsOf", "model", "numberPlate"]
        #expect(
            model.entityMappings.map { $0.attributeMappings.map(\.name) } == [
                cars, ["isLimitedEdition"] + cars, ["firstName", "lastName", "updatedAt"], cars, ["name"],
            ])
        #expect(
            model.entityMappings.map { $0.relationshipMappings.map(\.name) } == [
                ["createdBy", "owner", "previousOwners"], ["createdBy", "owner", "previousOwners"],
                ["cars", "previousCars"],
                ["createdBy", "owner", "previousOwners"], ["cars"],
            ])
        let previousOwners = try FetchExpression(
            mappingFormat:
                "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PersonToPerson\", $source.owner)"
        )
        let previousCars = try FetchExpression(
            mappingFormat:
                "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"cars\", $source.cars)"
        )
        let owner = try FetchExpression(
            mappingFormat:
                "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"owner\", $source.owner)"
        )
        for index in [0, 1, 3] {
            let relationships = model.entityMappings[index].relationshipMappings
            #expect(
                relationships[2].valueExpression == previousOwners, "\(model.entityMappings[index].name).previousOwners"
            )
            #expect(relationships[1].valueExpression == owner)
        }
        #expect(model.entityMappings[2].relationshipMappings[1].valueExpression == previousCars)
        #expect(
            model.entityMappings[0].attributeMappings[1].valueExpression
                == (try FetchExpression(mappingFormat: "$source.model")))
        // The source entities are SampleModel2's (the mapping's source model, in the corpus).
        let corpus = URL(fileURLWithPath: try #require(ProcessInfo.processInfo.environment["STRATA_CORPUS"]))
        let source = try ManagedObjectModel(
            contentsOf: corpus.appendingPathComponent("models/alemar11__CoreDataPlus__SampleModel2.xcdatamodel.xml"))
        for mapping in model.entityMappings {
            if let name = mapping.sourceEntityName { #expect(source.entity(named: name) != nil, "\(name)") }
        }
    }

    @Test("a mapping model written as Xcode writes it reads with its filter, types, policy and written expression")
    func synthetic() throws {
        let directory = try TemporaryDirectory(prefix: "xcmapping")
        var mappings = XcodeMappingFixture.migrationModels
        mappings.append(
            XcodeMappingFixture.Mapping(
                number: 5, source: "Gone", destination: nil, typeName: "Remove", policy: "App.GonePolicy"))
        let bundle = try XcodeMappingFixture.write(XcodeMappingFixture.document(mappings), in: directory)
        let model = try XcodeMappingModel.read(at: bundle.appendingPathComponent("xcmapping.xml"))
        #expect(
            model.entityMappings.map(\.name) == [
                "PersonToMember", "EmployeeToEmployee", "PetToPet", "ClubToClub", "Gone",
            ])
        #expect(model.entityMappings[0].filterPredicate == (try FetchPredicate(format: "age >= 18")))
        #expect(model.entityMappings[4].mappingType == .remove)
        #expect(model.entityMappings[4].entityMigrationPolicyClassName == "App.GonePolicy")
        let town = try #require(model.entityMappings[0].attributeMappings.first { $0.name == "town" })
        #expect(town.valueExpression == (try FetchExpression(mappingFormat: "$source.city")))
    }

    static func expectInvalid(
        _ url: URL, mentioning words: [String], code: MigrationError.Code = .unreadableMapping,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(sourceLocation: sourceLocation) { try XcodeMappingModel.read(at: url) } throws: { error in
            guard let error = error as? MigrationError, error.code == code else { return false }
            let text = "\(error)"
            return words.allSatisfy { text.contains($0) }
        }
    }

    @Test("missing, empty, foreign and damaged files are unreadableMapping errors naming the file and the way out")
    func damaged() throws {
        let directory = try TemporaryDirectory(prefix: "xcmapping")
        Self.expectInvalid(directory.file("Nope.xcmappingmodel"), mentioning: ["Nope.xcmappingmodel", "give the path"])
        let empty = directory.file("Empty.xcmappingmodel")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        Self.expectInvalid(empty, mentioning: ["Empty.xcmappingmodel", "holds no xcmapping.xml"])
        let garbage = try XcodeMappingFixture.write("\u{0}\u{1}not xml at all <<<", named: "Garbage", in: directory)
        Self.expectInvalid(garbage, mentioning: ["Garbage.xcmappingmodel/xcmapping.xml", "Xcode"])
        let document = XcodeMappingFixture.document(XcodeMappingFixture.migrationModels)
        let truncated = try XcodeMappingFixture.write(
            String(document.prefix(document.count / 2)), named: "Truncated", in: directory)
        Self.expectInvalid(truncated, mentioning: ["Truncated.xcmappingmodel", "Xcode"])
        let foreign = try XcodeMappingFixture.write(
            document.replacingOccurrences(of: "XDDEVENTITYMAPPING", with: "SOMETHINGELSE"), named: "Foreign",
            in: directory)
        Self.expectInvalid(foreign, mentioning: ["Foreign.xcmappingmodel", "not an Xcode mapping model"])
    }

    @Test(
        "hostile mapping entries are refused with the mapping and property named: bad types, predicates, expressions and names"
    )
    func hostile() throws {
        let directory = try TemporaryDirectory(prefix: "xcmapping")
        func write(_ name: String, _ change: (inout XcodeMappingFixture.Mapping) -> Void) throws -> URL {
            var mappings = XcodeMappingFixture.migrationModels
            change(&mappings[2])
            return try XcodeMappingFixture.write(XcodeMappingFixture.document(mappings), named: name, in: directory)
        }
        Self.expectInvalid(
            try write("Type") { $0.typeName = "Sideways" }, mentioning: ["Type.xcmappingmodel", "PetToPet", "Sideways"])
        Self.expectInvalid(
            try write("Filter") { $0.filter = "name ==== (" },
            mentioning: ["Filter.xcmappingmodel", "PetToPet", "filter predicate"])
        Self.expectInvalid(
            try write("Archive") {
                $0.propertyExtras["name"] =
                    "<attribute name=\"valueexpressiondata\" type=\"binary\">AAAAAAAA</attribute>"
            },
            mentioning: ["Archive.xcmappingmodel", "PetToPet", "'name'", "keyed archive"])
        Self.expectInvalid(
            try write("Cycle") {
                $0.propertyExtras["name"] =
                    "<attribute name=\"valueexpressiondata\" type=\"binary\">\(XcodeMappingFixture.archivedSourceKeyPath("name", cyclic: true))</attribute>"
            },
            mentioning: ["Cycle.xcmappingmodel", "PetToPet", "'name'", "nests deeper"])
        Self.expectInvalid(
            try write("Injection") { $0.attributes = ["name) OR TRUEPREDICATE OR (x"] },
            mentioning: ["Injection.xcmappingmodel", "PetToPet", "not a property name"])
        Self.expectInvalid(
            try write("Nameless") {
                $0.source = nil
                $0.destination = nil
            }, mentioning: ["Nameless.xcmappingmodel", "neither a source nor a destination"])
        Self.expectInvalid(
            try XcodeMappingFixture.write(
                XcodeMappingFixture.document(
                    XcodeMappingFixture.migrationModels + [XcodeMappingFixture.migrationModels[0]]),
                named: "Twice", in: directory),
            mentioning: ["Twice.xcmappingmodel", "PersonToMember", "two entity mappings"], code: .invalidMapping)
    }
}
