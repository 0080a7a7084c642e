import Foundation
import Strata
import StrataTesting
import StrataXML
import Testing

// An XML store opens without its model even when an entity has no objects in the
// file. Core Data writes every relationship of an object, also an empty one, with the destination
// entity's name (the cocoadev 2006 store, Xcode's mapping-model files).

/// Infers the model of `text` and opens the store read-only with it.
private func inferAndOpen(_ text: String, in directory: TemporaryDirectory) throws
    -> (ManagedObjectModel, ManagedObjectContext, PersistentStoreCoordinator)
{
    let url = try XMLTestSupport.write(XMLTestSupport.appleStyle(text), in: directory)
    let recovered = try #require(try XMLDriverFactory().recoverModel(at: url, options: StoreOptions()))
    let coordinator = PersistentStoreCoordinator(managedObjectModel: recovered.model)
    _ = try coordinator.addPersistentStore(type: .xml, at: url, options: StoreOptions(isReadOnly: true))
    return (recovered.model, ManagedObjectContext(coordinator: coordinator), coordinator)
}

@Suite("XML stores opened without a model")
struct XMLModelInferenceTests {
    @Test(
        "an empty relationship names an entity with no objects: the entity is inferred without attributes and the store opens"
    )
    func destinationWithoutObjects() throws {
        // The shape of the cocoadev 2006 Core Data XML store (jnozzi/cocoadev.com, CoreDataOrphanRecords).
        let directory = try TemporaryDirectory()
        let (model, context, _) = try inferAndOpen(
            """
            <object type="VEHICLE" id="z102">
                <attribute name="year" type="int32">2006</attribute>
                <relationship name="vehiclepictures" type="0/0" destination="VEHICLEPICTURE"></relationship>
            </object>
            <object type="VEHICLE" id="z103">
                <attribute name="year" type="int32">2007</attribute>
                <relationship name="vehiclepictures" type="0/0" destination="VEHICLEPICTURE"></relationship>
            </object>
            """, in: directory)
        let picture = try #require(model.entity(named: "VEHICLEPICTURE"))
        #expect(picture.properties.isEmpty && picture.superentityName == nil)
        let relationship = try #require(model.entity(named: "VEHICLE")?.relationshipsByName["vehiclepictures"])
        #expect(relationship.destinationEntityName == "VEHICLEPICTURE" && relationship.isToMany)
        let vehicles = try context.fetch(FetchRequest(entityName: "VEHICLE"))
        #expect(vehicles.compactMap { $0["year"] as? Int }.sorted() == [2006, 2007])
        #expect(vehicles.allSatisfy { $0.objects(forKey: "vehiclepictures").isEmpty })
        #expect(try context.count(for: FetchRequest(entityName: "VEHICLEPICTURE")) == 0)
    }

    @Test("an entity seen only as a destination whose idrefs name objects of other entities becomes their parent")
    func destinationIsAParent() throws {
        // Strata and Cocotron write the declared destination (a superentity) beside ids of subentity objects.
        let directory = try TemporaryDirectory()
        let (model, context, _) = try inferAndOpen(
            """
            <object type="GARAGE" id="z1">
                <relationship name="vehicles" type="0/0" destination="VEHICLE" idrefs="z2 z3"></relationship>
            </object>
            <object type="CAR" id="z2"><attribute name="seats" type="int16">4</attribute></object>
            <object type="TRUCK" id="z3"><attribute name="load" type="double">12.5</attribute></object>
            """, in: directory)
        #expect(model.entity(named: "VEHICLE")?.properties.isEmpty == true)
        #expect(model.entity(named: "CAR")?.superentityName == "VEHICLE")
        #expect(model.entity(named: "TRUCK")?.superentityName == "VEHICLE")
        let garage = try #require(try context.fetch(FetchRequest(entityName: "GARAGE")).first)
        let vehicles = garage.objects(forKey: "vehicles")
        #expect(Set(vehicles.map(\.entity.name)) == ["CAR", "TRUCK"])
        #expect(try context.count(for: FetchRequest(entityName: "VEHICLE")) == 2)
    }

    @Test(
        "a relationship's destination is read from the first occurrence that writes one; without any, from its idrefs")
    func destinationFromLaterOccurrenceOrIdrefs() throws {
        let directory = try TemporaryDirectory()
        let (model, context, _) = try inferAndOpen(
            """
            <object type="AUTHOR" id="z1">
                <relationship name="books" type="0/0"></relationship>
                <relationship name="agent" type="0/1" idrefs="z5"></relationship>
            </object>
            <object type="AUTHOR" id="z2">
                <relationship name="books" type="0/0" destination="BOOK"></relationship>
                <relationship name="agent" type="0/1"></relationship>
            </object>
            <object type="AGENT" id="z5"><attribute name="name" type="string">Ann</attribute></object>
            """, in: directory)
        let author = try #require(model.entity(named: "AUTHOR"))
        #expect(author.relationshipsByName["books"]?.destinationEntityName == "BOOK")
        #expect(author.relationshipsByName["agent"]?.destinationEntityName == "AGENT")
        #expect(model.entity(named: "BOOK")?.properties.isEmpty == true)
        let first = try #require(
            try context.fetch(FetchRequest(entityName: "AUTHOR")).first { $0.objectID.primaryKey == 1 })
        #expect(first.object(forKey: "agent")?["name"] as? String == "Ann")
    }

    @Test("what a model cannot express without guessing is refused, naming the file, the line and the way out")
    func refusals() throws {
        let directory = try TemporaryDirectory()
        // One entity would need two parents.
        let twoParents = try XMLTestSupport.write(
            XMLTestSupport.appleStyle(
                """
                <object type="A" id="z1">
                    <relationship name="x" type="0/0" destination="P" idrefs="z3"></relationship>
                    <relationship name="y" type="0/0" destination="Q" idrefs="z3"></relationship>
                </object>
                <object type="C" id="z3"></object>
                """), in: directory, name: "two.xml")
        // A relationship with neither a destination nor ids anywhere: its entity is not in the file.
        let nowhere = try XMLTestSupport.write(
            XMLTestSupport.appleStyle(
                """
                <object type="A" id="z1">
                    <relationship name="x" type="0/0"></relationship>
                </object>
                """), in: directory, name: "nowhere.xml")
        for url in [twoParents, nowhere] {
            do {
                _ = try XMLDriverFactory().recoverModel(at: url, options: StoreOptions())
                Issue.record("inferred a model for \(url.lastPathComponent)")
            } catch let error as StoreError {
                #expect(error.code == .unsupported)
                #expect(
                    error.message.contains(url.path + ":") && error.message.contains("open it with its model"),
                    "\(error)")
            }
        }
    }
}
