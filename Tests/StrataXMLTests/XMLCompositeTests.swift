import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataXML

/// Composite attributes in an XML store: Core Data has no XML form for them, so each leaf element
/// is written as an attribute named by its key path.
@Suite("XML composite attributes")
struct XMLCompositeTests {
    static func seededStore(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("quakes.xml")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: CompositeModel.model)
        let store = try coordinator.addPersistentStore(type: .xml, at: url)
        try CompositeModel.seed(ManagedObjectContext(coordinator: coordinator))
        try coordinator.remove(store)
        return url
    }

    @Test("each leaf element is an attribute named by its key path; absent elements are left out")
    func layout() throws {
        let directory = try TemporaryDirectory(prefix: "xml-composite")
        let text = try XMLTestSupport.text(try Self.seededStore(in: directory))
        #expect(text.contains(#"<attribute name="magnitude.richter" type="double">6.1</attribute>"#))
        #expect(text.contains(#"<attribute name="magnitude.depth" type="float">"#))
        #expect(text.contains(#"<attribute name="location.place.city" type="string">Tokyo</attribute>"#))
        #expect(text.contains(#"<attribute name="depth" type="int32">10</attribute>"#))
        #expect(
            !text.contains(#"name="location" "#) && !text.contains(#"name="magnitude" "#),
            "a composite has no attribute of its own")
        #expect(
            text.components(separatedBy: #"name="location.place.country""#).count - 1 == 2,
            "only the quakes with a country")
    }

    @Test("a model inferred from the file turns key-path attributes back into composites")
    func inferredModel() throws {
        let directory = try TemporaryDirectory(prefix: "xml-composite-infer")
        let url = try Self.seededStore(in: directory)
        let model = try #require(try XMLDriverFactory().recoverModel(at: url, options: StoreOptions())).model
        let quake = try #require(model.entity(named: "Quake"))
        let location = try #require(quake.compositeAttribute(atKeyPath: "location"))
        #expect(location.elements.map(\.name) == ["latitude", "longitude", "place"])
        #expect(quake.compositeAttribute(atKeyPath: "location.place")?.elements.map(\.name) == ["city", "country"])
        #expect(quake.compositeAttribute(atKeyPath: "magnitude")?.elements.map(\.type) == [.double, .float])
        #expect(quake.property(named: "depth")?.attribute?.type == .integer32)
        // Elements no object holds are not in the file (no station has a country), so the inferred
        // model may differ from the one that wrote the store: read the rows through the driver.
        let driver = try XMLTestSupport.driver(at: url, model: model, options: StoreOptions(isReadOnly: true))
        defer { try? driver.close() }
        var fetch = StoreFetch(entity: quake)
        fetch.predicate = try FetchPredicate(format: "magnitude.richter > 7")
        let rows = try driver.fetch(fetch).rows
        let code = try #require(quake.index(ofProperty: "code"))
        #expect(rows.map { $0.values[code] } == [.string("c")])
    }

    @Test("regrouping keeps order, nests, and leaves plain names alone")
    func regrouping() throws {
        let grouped = XMLModelInference.regroupingComposites([
            .attribute("a", .string), .attribute("p.x", .double), .toOne("r", "T"), .attribute("p.q.z", .string),
            .attribute("p.y", .double),
        ])
        #expect(grouped.map(\.name) == ["a", "p", "r"])
        #expect(grouped[1].attribute?.elements.map(\.name) == ["x", "q", "y"], "each element where it first appears")
        #expect(grouped[1].attribute?.elements[1].elements.map(\.name) == ["z"])
    }
}
