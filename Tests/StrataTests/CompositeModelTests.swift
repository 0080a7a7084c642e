import Foundation
import Strata
import StrataTesting
import Testing

private func load(_ body: String) throws -> ManagedObjectModel {
    let text = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        \(body)
        </model>
        """
    return try ManagedObjectModel(xmlData: Data(text.utf8), fileName: "Quakes.xcdatamodel/contents")
}

private func modelError(_ body: () throws -> Any) -> ModelError? {
    do {
        _ = try body()
    } catch let error as ModelError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
    }
    return nil
}

/// The Xcode form Strata reads (UNCONFIRMED from a file Xcode wrote): model-level `<composite>`
/// declarations, used by `attributeType="Composite" composite="…"`, nested by an element that uses
/// another composite.
private let quakesXML = """
    <entity name="Quake" representedClassName="Quake">
        <attribute name="code" attributeType="String"/>
        <attribute name="location" optional="YES" attributeType="Composite" composite="Location"/>
        <attribute name="magnitude" attributeType="Composite" composite="Magnitude"/>
    </entity>
    <composite name="Location">
        <attribute name="latitude" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
        <attribute name="longitude" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
        <attribute name="place" optional="YES" attributeType="Composite" composite="Place"/>
    </composite>
    <composite name="Magnitude">
        <attribute name="richter" attributeType="Double" minValueString="0" usesScalarValueType="YES"/>
        <attribute name="scale" optional="YES" attributeType="String" maxValueString="8"/>
    </composite>
    <composite name="Place">
        <attribute name="city" optional="YES" attributeType="String"/>
    </composite>
    """

@Suite("Composite attributes: the model")
struct CompositeModelTests {
    @Test("a model file's composites load: declarations, optionality, defaults, rules and nesting")
    func loadsFromContents() throws {
        let model = try load(quakesXML)
        let quake = try #require(model.entity(named: "Quake"))
        #expect(quake.compositeAttributes.map(\.name) == ["location", "magnitude"])
        let location = try #require(quake.ownProperties[1].attribute)
        #expect(location.type == .composite && location.compositeName == "Location" && location.isOptional)
        #expect(location.elements.map(\.name) == ["latitude", "longitude", "place"])
        #expect(location.elements[2].isComposite && location.elements[2].compositeName == "Place")
        #expect(location.leafElements.map(\.keyPath) == ["latitude", "longitude", "place.city"])
        let magnitude = try #require(quake.ownProperties[2].attribute)
        #expect(!magnitude.isOptional)
        #expect(magnitude.elements[0].validation.minimum == .double(0))
        #expect(magnitude.elements[1].validation.maximumLength == 8)
        // Slots: one per leaf element, named by key path, in declaration order.
        #expect(
            quake.properties.map(\.name) == [
                "code", "location.latitude", "location.longitude", "location.place.city", "magnitude.richter",
                "magnitude.scale",
            ])
        #expect(quake.defaultValues[1] == .double(0), "an element's default is its slot's default")
        #expect(quake.compositeAttribute(atKeyPath: "location.place")?.elements.map(\.name) == ["city"])
        #expect(quake.compositeAttribute(atKeyPath: "location.latitude") == nil)
        #expect(quake.isComposite("location") && quake.isComposite("location.place") && !quake.isComposite("code"))
        #expect(quake.slot(forComponents: ["location", "place", "city"], from: 0)?.count == 3)
        #expect(quake.slot(forComponents: ["location", "nope"], from: 0) == nil)
    }

    @Test("the builder makes the same model as the file")
    func builder() throws {
        let place = AttributeDescription.composite(
            "place", elements: [AttributeDescription("city", .string)], compositeName: "Place")
        let location = AttributeDescription.composite(
            "location",
            elements: [
                AttributeDescription("latitude", .double, defaultValue: .double(0)),
                AttributeDescription("longitude", .double),
                place,
            ], compositeName: "Location")
        let magnitude = AttributeDescription.composite(
            "magnitude",
            elements: [
                AttributeDescription(
                    "richter", .double, isOptional: false, validation: ValidationRules(minimum: .double(0))),
                AttributeDescription("scale", .string, validation: ValidationRules(maximumLength: 8)),
            ], compositeName: "Magnitude", isOptional: false)
        let built = try ManagedObjectModel(entities: [
            EntityDescription(
                "Quake",
                properties: [
                    .attribute("code", .string, isOptional: false), .attribute(location), .attribute(magnitude),
                ],
                representedClassName: "Quake")
        ])
        let loaded = try load(quakesXML)
        #expect(built.versionHash == loaded.versionHash)
        #expect(built.entities[0].ownProperties == loaded.entities[0].ownProperties)
        #expect(PropertyDescription.composite("p", elements: [place]) == .attribute(.composite("p", elements: [place])))
    }

    @Test("version hashes change with a composite's elements, not with their order or defaults")
    func versionHashes() throws {
        func model(_ elements: [AttributeDescription]) throws -> ManagedObjectModel {
            try ManagedObjectModel(entities: [EntityDescription("A", properties: [.composite("c", elements: elements)])]
            )
        }
        let x = AttributeDescription("x", .double)
        let y = AttributeDescription("y", .double)
        let base = try model([x, y])
        #expect(try model([y, x]).versionHash == base.versionHash)
        #expect(
            try model([AttributeDescription("x", .double, defaultValue: .double(1)), y]).versionHash == base.versionHash
        )
        #expect(try model([x, AttributeDescription("y", .float)]).versionHash != base.versionHash)
        #expect(try model([x, y, AttributeDescription("z", .string)]).versionHash != base.versionHash)
        let flat = try ManagedObjectModel(entities: [EntityDescription("A", properties: [.attribute("c", .double)])])
        #expect(flat.versionHash != base.versionHash)
    }

    @Test("the embedded model keeps composites (version 2); a model without them stays version 1")
    func archive() throws {
        let model = try load(quakesXML)
        let data = try model.encodedRepresentation()
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["version"] as? Int == 2)
        let decoded = try ManagedObjectModel(encodedRepresentation: data)
        expectSameModel(model, decoded)
        #expect(decoded.entities[0].properties.map(\.name) == model.entities[0].properties.map(\.name))
        #expect(try decoded.encodedRepresentation() == data)
        let plain =
            try JSONSerialization.jsonObject(with: ConformanceModel.model.encodedRepresentation()) as? [String: Any]
        #expect(plain?["version"] as? Int == 1)
        // A reader that knows only version 1 refuses version 2 and says to upgrade: simulated with version 3 here.
        let newer = String(decoding: data, as: UTF8.self).replacingOccurrences(
            of: "\"version\":2", with: "\"version\":3")
        let error = modelError { try ManagedObjectModel(encodedRepresentation: Data(newer.utf8)) }
        #expect(error?.code == .unreadable && error?.message.contains("Upgrade Strata") == true)
    }

    @Test("bad composites in a model file are typed errors naming the file, line and composite")
    func fileErrors() throws {
        let cases: [(String, ModelError.Code, String)] = [
            (
                #"<entity name="A"><attribute name="p" attributeType="Composite"/></entity>"#, .malformed,
                "has no composite"
            ),
            (
                #"<entity name="A"><attribute name="p" attributeType="Composite" composite="Nope"/></entity>"#,
                .unknownProperty, "composite 'Nope' is not declared"
            ),
            (
                #"<entity name="A"><attribute name="p" attributeType="Composite" composite="P"/></entity><composite name="P"><attribute name="q" attributeType="Composite" composite="P"/></composite>"#,
                .malformed, "contains itself"
            ),
            (
                #"<composite name="P"><attribute name="x" attributeType="String"/></composite><composite name="P"/>"#,
                .duplicateName, "two composites"
            ),
            (#"<composite name="a b"/>"#, .invalidName, "not an identifier"),
            (
                #"<entity name="A"><attribute name="p" attributeType="Composite" composite="P"/></entity><composite name="P"/>"#,
                .invalidValue, "has no elements"
            ),
            (
                #"<entity name="A"><attribute name="p" attributeType="Composite" composite="P"/></entity><composite name="P"><attribute name="x" attributeType="Double"/><attribute name="x" attributeType="String"/></composite>"#,
                .duplicateName, "two elements named 'x'"
            ),
            (
                #"<entity name="A"><attribute name="p" attributeType="Composite" composite="P"/></entity><composite name="P"><attribute name="x" attributeType="Integer 16" maxValueString="x"/></composite>"#,
                .invalidValue, "maxValueString"
            ),
            (
                #"<entity name="A"><attribute name="p" attributeType="Composite" composite="P"/><attribute name="p" attributeType="String"/></entity><composite name="P"><attribute name="x" attributeType="Double"/></composite>"#,
                .duplicateName, "two properties named 'p'"
            ),
        ]
        for (body, code, text) in cases {
            let error = modelError { try load(body) }
            #expect(error?.code == code, "\(body): \(String(describing: error))")
            #expect(error?.message.contains(text) == true, "\(body): \(String(describing: error))")
            #expect(error?.file == "Quakes.xcdatamodel/contents")
        }
        var chain = ""
        for level in 0..<12 {
            chain +=
                #"<composite name="C\#(level)"><attribute name="x" attributeType="Composite" composite="C\#(level + 1)"/></composite>"#
        }
        chain += #"<composite name="C12"><attribute name="y" attributeType="Double"/></composite>"#
        let deep = modelError {
            try load(
                #"<entity name="A"><attribute name="p" attributeType="Composite" composite="C0"/></entity>"# + chain)
        }
        #expect(deep?.code == .invalidValue && deep?.message.contains("deep") == true)
    }

    @Test("a composite shared many times over stays within the element limit, quickly")
    func sharedDeclarationsAreBounded() throws {
        // Eight levels of 40 elements each that all use the next composite: 40^8 leaves if expanded.
        var body = #"<entity name="A"><attribute name="p" attributeType="Composite" composite="C0"/></entity>"#
        for level in 0..<7 {
            body += #"<composite name="C\#(level)">"#
            for index in 0..<40 {
                body += #"<attribute name="e\#(index)" attributeType="Composite" composite="C\#(level + 1)"/>"#
            }
            body += "</composite>"
        }
        body += #"<composite name="C7"><attribute name="leaf" attributeType="Double"/></composite>"#
        let error = modelError { try load(body) }
        #expect(error?.code == .invalidValue && error?.message.contains("more than 1000 elements") == true)
    }

    @Test("bad composites built in Swift are typed errors")
    func builderErrors() throws {
        func error(_ properties: [PropertyDescription], constraints: [[String]] = []) -> ModelError? {
            modelError {
                try ManagedObjectModel(entities: [
                    EntityDescription("A", properties: properties, uniquenessConstraints: constraints)
                ])
            }
        }
        let x = AttributeDescription("x", .double)
        var transientElement = x
        transientElement.isTransient = true
        var withDefault = AttributeDescription.composite("c", elements: [x])
        withDefault.defaultValue = .double(1)
        var elementsOnString = AttributeDescription("s", .string)
        elementsOnString.elements = [x]
        let cases: [([PropertyDescription], [[String]], ModelError.Code, String)] = [
            ([.composite("c", elements: [transientElement])], [], .invalidValue, "transient"),
            ([.composite("c", elements: [AttributeDescription("u", .undefined)])], [], .invalidValue, "Undefined"),
            (
                [.composite("c", elements: [AttributeDescription("a.b", .double)])], [], .invalidName,
                "element named \"a.b\""
            ),
            ([.attribute(withDefault)], [], .invalidValue, "a default or validation rules"),
            ([.attribute(elementsOnString)], [], .invalidValue, "only composite attributes have elements"),
            ([.composite("c", elements: [x])], [["c"]], .unknownProperty, "name its elements instead (such as 'c.x')"),
        ]
        for (properties, constraints, code, text) in cases {
            let found = error(properties, constraints: constraints)
            #expect(found?.code == code && found?.message.contains(text) == true, "\(String(describing: found))")
        }
        #expect(error([.composite("c", elements: [x])], constraints: [["c.x"]]) == nil, "an element may be constrained")
    }

    @Test("a composite's elements inherit: a subentity has its parent's element slots")
    func inheritance() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Base", properties: [.composite("c", elements: [AttributeDescription("x", .double)])]),
            EntityDescription("Sub", parent: "Base", properties: [.attribute("y", .string)]),
        ])
        let sub = try #require(model.entity(named: "Sub"))
        #expect(sub.properties.map(\.name) == ["c.x", "y"])
        #expect(sub.compositeAttributes.map(\.name) == ["c"])
        #expect(sub.isComposite("c"))
    }
}
