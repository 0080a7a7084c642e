import Foundation
import Strata
import StrataLMDB
import StrataSQLite
import StrataTesting
import StrataXML
import Testing

/// A model change kept outside the project: two versions of an `.xcdatamodeld` written as Xcode
/// writes them, loaded from disk at run time, and a store of the first opened by a container with
/// the second on every file driver.
@Suite("Model change kept outside the project")
struct ModelChangeMigrationTests {
    static let header = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23A344" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
        """

    /// Version 1: Person (name, age Integer 16, rank Integer 16, nickname, city) ↔ Pet.
    static let version1 =
        header + """
                <entity name="Person" representedClassName="Person" syncable="YES" codeGenerationType="class">
                    <attribute name="name" attributeType="String"/>
                    <attribute name="age" optional="YES" attributeType="Integer 16" defaultValueString="0" usesScalarValueType="YES"/>
                    <attribute name="rank" optional="YES" attributeType="Integer 16" defaultValueString="0" usesScalarValueType="YES"/>
                    <attribute name="nickname" optional="YES" attributeType="String"/>
                    <attribute name="city" optional="YES" attributeType="String"/>
                    <relationship name="pets" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Pet" inverseName="owner" inverseEntity="Pet"/>
                </entity>
                <entity name="Pet" representedClassName="Pet" syncable="YES" codeGenerationType="class">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="pets" inverseEntity="Person"/>
                </entity>
            </model>
            """

    /// Version 2: Person renamed Member and city renamed town (renaming identifiers), nickname
    /// removed, status added (required, default "active"), age widened to Integer 32 and rank to
    /// Integer 64, note added (optional).
    static let version2 =
        header + """
                <entity name="Member" representedClassName="Member" elementID="Person" syncable="YES" codeGenerationType="class">
                    <attribute name="name" attributeType="String"/>
                    <attribute name="age" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                    <attribute name="rank" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                    <attribute name="town" optional="YES" attributeType="String" elementID="city"/>
                    <attribute name="status" attributeType="String" defaultValueString="active"/>
                    <attribute name="note" optional="YES" attributeType="String"/>
                    <relationship name="pets" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Pet" inverseName="owner" inverseEntity="Pet"/>
                </entity>
                <entity name="Pet" representedClassName="Pet" syncable="YES" codeGenerationType="class">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Member" inverseName="pets" inverseEntity="Member"/>
                </entity>
            </model>
            """

    /// Writes `People.xcdatamodeld` (versions `People` and `People 2`, the second current).
    static func writeBundle(in directory: TemporaryDirectory) throws -> URL {
        let bundle = directory.file("People.xcdatamodeld")
        for (name, text) in [("People", version1), ("People 2", version2)] {
            let folder = bundle.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: folder.appendingPathComponent("contents"))
        }
        let current = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>_XCCurrentVersionName</key>
                <string>People 2.xcdatamodel</string>
            </dict>
            </plist>
            """
        try Data(current.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    static let people = 60

    static func container(_ model: ManagedObjectModel, _ type: StoreType, _ url: URL) throws -> PersistentContainer {
        let container = PersistentContainer(name: "People", managedObjectModel: model)
        container.persistentStoreDescriptions = [PersistentStoreDescription(type: type, url: url)]
        try container.loadPersistentStores()
        return container
    }

    @Test(
        "a store of version 1 opens with version 2 on every file driver, migrated automatically, with every value kept and the widened integers holding wide values",
        arguments: ["SQLite", "XML", "LMDB"])
    func migrates(_ driver: String) throws {
        let type: StoreType = driver == "SQLite" ? .sqlite : driver == "XML" ? .xml : .lmdb
        let directory = try TemporaryDirectory(prefix: "model-change-\(driver)")
        let bundle = try Self.writeBundle(in: directory)
        let v1 = try ManagedObjectModel.load(contentsOf: bundle, versionName: "People")
        let v2 = try ManagedObjectModel.load(contentsOf: bundle)
        #expect(v2.entity(named: "Member") != nil, "the current version is version 2")
        let url = directory.file("people.\(driver.lowercased())")

        let old = try Self.container(v1, type, url)
        let context = old.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<Self.people {
                let person = try context.insertNewObject(forEntityName: "Person")
                person["name"] = "person \(index)"
                person["age"] = index * 500
                person["rank"] = -index
                person["nickname"] = "nick \(index)"
                person["city"] = index % 7 == 0 ? nil : "city \(index % 5)"
                if index % 2 == 0 {
                    let pet = try context.insertNewObject(forEntityName: "Pet")
                    pet["name"] = "pet \(index)"
                    pet["owner"] = person
                }
            }
            try context.save()
        }
        for store in old.persistentStoreCoordinator.persistentStores {
            try old.persistentStoreCoordinator.remove(store)
        }

        let new = try Self.container(v2, type, url)
        let reader = new.newBackgroundContext()
        try reader.performAndWait {
            let members = try reader.fetch(FetchRequest(entityName: "Member"))
            #expect(members.count == Self.people)
            for member in members {
                let index = try #require((member["name"] as? String)?.split(separator: " ").last.flatMap { Int($0) })
                #expect(member["age"] as? Int == index * 500, "age of \(index)")
                #expect(member["rank"] as? Int == -index, "rank of \(index)")
                #expect(member["town"] as? String == (index % 7 == 0 ? nil : "city \(index % 5)"), "town of \(index)")
                #expect(member["status"] as? String == "active", "status of \(index)")
                #expect(member["note"] == nil)
                #expect(
                    member.objects(forKey: "pets").compactMap { $0["name"] as? String }
                        == (index % 2 == 0 ? ["pet \(index)"] : []))
                #expect(member.entity.attributesByName["nickname"] == nil)
            }
            let wide = try #require(members.first)
            wide["age"] = 2_000_000_000
            wide["rank"] = Int(1) << 40
            wide["note"] = "widened"
            try reader.save()
        }
        for store in new.persistentStoreCoordinator.persistentStores {
            try new.persistentStoreCoordinator.remove(store)
        }

        let again = try Self.container(v2, type, url)
        let check = again.newBackgroundContext()
        try check.performAndWait {
            var request = FetchRequest(entityName: "Member")
            request.predicate = try FetchPredicate(format: "note == %@", "widened")
            let wide = try #require(try check.fetch(request).first)
            #expect(wide["age"] as? Int == 2_000_000_000)
            #expect(wide["rank"] as? Int == Int(1) << 40)
        }
        #expect(throws: MigrationError.self, "version 1 cannot open the migrated store") {
            try Self.container(v1, type, url)
        }
    }
}
