import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

/// Asserts that two models describe the same entities, properties and model-level fields.
func expectSameModel(_ a: ManagedObjectModel, _ b: ManagedObjectModel) {
    #expect(a.versionHash == b.versionHash)
    #expect(a.entities.map(\.name) == b.entities.map(\.name))
    #expect(a.configurations == b.configurations)
    #expect(a.fetchRequestTemplates == b.fetchRequestTemplates)
    #expect(a.versionIdentifiers == b.versionIdentifiers)
    #expect(a.userInfo == b.userInfo)
    for (x, y) in zip(a.entities, b.entities) {
        #expect(x.ownProperties == y.ownProperties, "properties of \(x.name)")
        #expect(x.superentityName == y.superentityName)
        #expect(x.isAbstract == y.isAbstract)
        #expect(x.uniquenessConstraints == y.uniquenessConstraints)
        #expect(x.indexes == y.indexes)
        #expect(x.representedClassName == y.representedClassName)
        #expect(x.renamingIdentifier == y.renamingIdentifier)
        #expect(x.versionHashModifier == y.versionHashModifier)
        #expect(x.userInfo == y.userInfo)
        #expect(x.fetchedProperties == y.fetchedProperties)
        #expect(x.entityNumber == y.entityNumber)
        #expect(x.versionHash == y.versionHash)
    }
}

@Suite("Model archive: Strata's versioned model encoding")
struct ModelArchiveTests {
    @Test("the conformance model round-trips with every field and the same version hash")
    func conformanceRoundTrip() throws {
        let model = ConformanceModel.model
        let data = try model.encodedRepresentation()
        let decoded = try ManagedObjectModel(encodedRepresentation: data)
        expectSameModel(model, decoded)
        #expect(try decoded.encodedRepresentation() == data)
    }

    @Test("defaults and validation bounds keep their exact case and value")
    func exactValues() throws {
        let values: [StoreValue] = [
            .integer(Int64.min), .double(0.1), .double(-0.0), .double(.infinity),
            .decimal(Decimal(string: "12345678901234567890.123456789")!), .string("é\n\"x\""), .bool(true),
            .date(Date(timeIntervalSinceReferenceDate: 123.456789)), .binary(Data([0, 255, 7])),
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            .uri(URL(string: "https://a.example/b?c=d")!),
        ]
        let entities = [
            EntityDescription(
                "Thing",
                properties: values.enumerated().map { index, value in
                    .attribute(
                        AttributeDescription(
                            "a\(index)", type(of: value), defaultValue: value,
                            validation: ValidationRules(
                                minimum: value.isNumber ? value : nil, maximumLength: index, regularExpression: "x+"),
                            renamingIdentifier: "old\(index)", versionHashModifier: "m\(index)",
                            userInfo: ["k": "v\(index)"]))
                }, uniquenessConstraints: [["a0", "a7"]],
                indexes: [.init(name: "byA0", elements: [.init("a0", ascending: false)])],
                representedClassName: "Thing", renamingIdentifier: "OldThing", versionHashModifier: "v2",
                userInfo: ["e": "1"],
                fetchedProperties: [
                    FetchedPropertyDescription("same", entityName: "Thing", predicateFormat: "a7 == YES")
                ])
        ]
        let model = try ManagedObjectModel(
            entities: entities, configurations: ["Only": ["Thing"]],
            fetchRequestTemplates: [
                "t": FetchRequestTemplate(
                    entityName: "Thing", predicateFormat: "a0 > $MIN", includesSubentities: false, resultType: .count,
                    fetchLimit: 3, fetchBatchSize: 50)
            ],
            versionIdentifiers: ["7"], userInfo: ["who": "test"])
        let decoded = try ManagedObjectModel(encodedRepresentation: try model.encodedRepresentation())
        expectSameModel(model, decoded)
        let attributes = decoded.entity(named: "Thing")!.attributes
        for (attribute, value) in zip(attributes, values) {
            if case .double(let d) = value, d.isNaN {
                guard case .double(let e) = attribute.defaultValue else {
                    Issue.record("NaN lost its case")
                    continue
                }
                #expect(e.isNaN)
            } else if case .double(let d) = value {
                guard case .double(let e) = attribute.defaultValue else {
                    Issue.record("double lost its case")
                    continue
                }
                #expect(e.bitPattern == d.bitPattern)
            } else {
                #expect(attribute.defaultValue == value)
            }
        }
    }

    @Test("a NaN default keeps its case and stays NaN")
    func nanDefault() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("N", properties: [.attribute("x", .double, defaultValue: .double(.nan))])
        ])
        let decoded = try ManagedObjectModel(encodedRepresentation: try model.encodedRepresentation())
        guard case .double(let value) = decoded.entity(named: "N")!.attributes[0].defaultValue else {
            Issue.record("NaN lost its case")
            return
        }
        #expect(value.isNaN)
        #expect(decoded.versionHash == model.versionHash)
    }

    @Test("a newer encoding version is refused with a ModelError that says to upgrade")
    func newerVersion() throws {
        var text = String(decoding: try ConformanceModel.model.encodedRepresentation(), as: UTF8.self)
        text = text.replacingOccurrences(of: "\"version\":1", with: "\"version\":9")
        #expect {
            try ManagedObjectModel(encodedRepresentation: Data(text.utf8))
        } throws: { error in
            (error as? ModelError)?.code == .unreadable && "\(error)".contains("version 9")
        }
    }

    @Test("bytes that are not a model encoding are refused with a ModelError")
    func garbage() throws {
        #expect(throws: ModelError.self) {
            try ManagedObjectModel(encodedRepresentation: Data("{\"format\":\"x\",\"version\":1}".utf8))
        }
        #expect(throws: ModelError.self) { try ManagedObjectModel(encodedRepresentation: Data("not json".utf8)) }
    }

    @Test("the coordinator embeds the model in a new store's metadata")
    func embeddedOnFirstWrite() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: .inMemory)
        let data = try #require(store.metadata.values[StoreMetadata.modelKey]?.dataValue)
        expectSameModel(ConformanceModel.model, try ManagedObjectModel(encodedRepresentation: data))
    }

    @Test(
        "every corpus model round-trips through the encoding",
        .enabled(if: ProcessInfo.processInfo.environment["STRATA_CORPUS"] != nil, "STRATA_CORPUS is not set"))
    func corpusRoundTrip() throws {
        let folder = URL(fileURLWithPath: try #require(ProcessInfo.processInfo.environment["STRATA_CORPUS"]))
            .appendingPathComponent("models")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasSuffix(".xcdatamodel.xml") }
        #expect(files.count == 14)
        for file in files {
            let model = try ManagedObjectModel(contentsOf: file)
            let data = try model.encodedRepresentation()
            let decoded = try ManagedObjectModel(encodedRepresentation: data)
            expectSameModel(model, decoded)
            #expect(try decoded.encodedRepresentation() == data, "\(file.lastPathComponent)")
        }
    }
}

private func type(of value: StoreValue) -> AttributeType {
    switch value {
    case .integer: .integer64
    case .double: .double
    case .decimal: .decimal
    case .string: .string
    case .bool: .boolean
    case .date: .date
    case .binary: .binaryData
    case .uuid: .uuid
    case .uri: .uri
    default: .undefined
    }
}

extension StoreValue {
    fileprivate var isNumber: Bool {
        switch self {
        case .integer, .double, .decimal: true
        default: false
        }
    }
}
