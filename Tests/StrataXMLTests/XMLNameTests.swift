import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

/// How the XML store writes and reads entity and property names (docs/formats/xml.md, "Names").
@Suite("XML names")
struct XMLNameTests {
    static let model: ManagedObjectModel = {
        let item = EntityDescription(
            "Item",
            properties: [
                .attribute("name", .string), .attribute("Name", .integer64), .attribute("title", .string),
                .toMany("Label", "ITEM"), .attribute("label", .string),
            ])
        let other = EntityDescription("ITEM", properties: [.attribute("name", .string)])
        // swift-format-ignore: IdentifiersMustBeASCII
        // Non-ASCII on purpose: the names under test.
        let größe = EntityDescription("Größe", properties: [.attribute("straße", .string), .toOne("item", "Item")])
        // Fixed and valid: building it cannot fail.
        return try! ManagedObjectModel(entities: [item, other, größe])
    }()

    @Test(
        "names equal after Core Data's case change are written as the model spells them; others upper- and lower-cased; every value reads back"
    )
    func collidingNames() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("names.xml")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model)
            let store = try coordinator.addPersistentStore(type: .xml, at: url)
            let context = ManagedObjectContext(coordinator: coordinator)
            let item = try context.insertNewObject(forEntityName: "Item")
            item["name"] = "lower"
            item["Name"] = Int64(7)
            item["title"] = "t"
            item["label"] = "l"
            let other = try context.insertNewObject(forEntityName: "ITEM")
            other["name"] = "other"
            item.addObject(other, toRelationship: "Label")
            let size = try context.insertNewObject(forEntityName: "Größe")
            size["straße"] = "s"
            size["item"] = item
            try context.save()
            try coordinator.remove(store)
        }
        let text = try XMLTestSupport.text(url)
        #expect(text.contains("<object type=\"Item\""))
        #expect(text.contains("<object type=\"ITEM\""))
        #expect(text.contains("<object type=\"GRÖSSE\""))
        #expect(text.contains("<attribute name=\"name\" type=\"string\">lower</attribute>"))
        #expect(text.contains("<attribute name=\"Name\" type=\"int64\">7</attribute>"))
        #expect(text.contains("<attribute name=\"title\" type=\"string\">t</attribute>"))
        #expect(text.contains("<relationship name=\"Label\" type=\"0/0\" destination=\"ITEM\""))
        #expect(text.contains("<attribute name=\"label\" type=\"string\">l</attribute>"))
        #expect(text.contains("<attribute name=\"straße\" type=\"string\">s</attribute>"))

        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model)
        try coordinator.addPersistentStore(type: .xml, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        let item = try #require(try context.fetch(FetchRequest(entityName: "Item")).first)
        #expect(item["name"] as? String == "lower")
        #expect(item["Name"] as? Int == 7)
        #expect(item["label"] as? String == "l")
        #expect(item.objects(forKey: "Label").map { $0["name"] as? String } == ["other"])
        let size = try #require(try context.fetch(FetchRequest(entityName: "Größe")).first)
        #expect(size["straße"] as? String == "s")
        #expect(size.object(forKey: "item") === item)
    }

    @Test("a name in another case matches when it names one property; when it names several it is refused, naming them")
    func caseInsensitiveMatching() throws {
        let directory = try TemporaryDirectory()
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Thing",
                properties: [.attribute("name", .string), .attribute("Name", .string), .attribute("size", .integer32)])
        ])
        let readable = try XMLTestSupport.write(
            XMLTestSupport.appleStyle(
                """
                    <object type="thing" id="z1">
                        <attribute name="SIZE" type="int32">3</attribute>
                        <attribute name="Name" type="string">N</attribute>
                    </object>
                """), in: directory, name: "readable.xml")
        let rows = try XMLTestSupport.allRows(try XMLTestSupport.driver(at: readable, model: model), model: model)
        let values = try #require(rows.values.first?.values)
        #expect(values == [.null, .string("N"), .integer(3)])

        let ambiguous = try XMLTestSupport.write(
            XMLTestSupport.appleStyle(
                """
                    <object type="THING" id="z1">
                        <attribute name="NAME" type="string">?</attribute>
                    </object>
                """), in: directory, name: "ambiguous.xml")
        let error = try #require(XMLTestSupport.openError(ambiguous, model: model))
        #expect(error.code == .corrupt)
        #expect("\(error)".contains("'NAME'") && "\(error)".contains("name, Name"))
    }
}
