import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataSQLite

/// Stores laid out the way Core Data lays them out where Strata's own choice differs: a join
/// column suffixed in another order than Strata would draw it (AddressBook's `Z_19PARENTGROUPS1`),
/// a join table named after the other side, and to-many relationships without inverse kept as a
/// foreign key in the destination's table. Made by hand with SQL, as no corpus store has them.
@Suite("Stores with Core Data's layout of join tables and inverse-less to-many relationships")
struct CoreDataLayoutTests {
    static let model: ManagedObjectModel = {
        let entities = [
            EntityDescription("Parameter", properties: [.attribute("name", .string)]),
            EntityDescription("Record", properties: [.attribute("name", .string)]),
            EntityDescription(
                "Contact", parent: "Record", properties: [.toMany("parentGroups", "Group", inverse: "contacts")]),
            EntityDescription(
                "Folder", parent: "Record", properties: [.toMany("parentGroups", "Group", inverse: "childGroups")]),
            EntityDescription(
                "Group", parent: "Record",
                properties: [
                    .toMany("contacts", "Contact", inverse: "parentGroups"),
                    .toMany("childGroups", "Folder", inverse: "parentGroups"),
                ]),
            EntityDescription(
                "Tag", properties: [.attribute("name", .string), .toMany("tokens", "Token", inverse: "tags")]),
            EntityDescription(
                "Token",
                properties: [
                    .attribute("name", .string), .toMany("tags", "Tag", inverse: "tokens"),
                    .toMany("parameters", "Parameter"), .toMany("steps", "Parameter", ordered: true),
                ]),
            EntityDescription(
                "Person",
                properties: [
                    .attribute("name", .string), .toMany("friends", "Person", inverse: "friends"),
                    .toMany("pals", "Person", inverse: "pals", ordered: true),
                ]),
        ]
        // Fixed and valid; building it cannot fail.
        return try! ManagedObjectModel(entities: entities)
    }()

    /// Writes the store as Core Data would (numbers 1 Parameter, 2 Record, 3 Contact, 4 Folder,
    /// 5 Group, 6 Tag, 7 Token, 8 Person) with Apple's metadata only.
    static func makeStore(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("CoreData.sqlite").path
        let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
        defer { connection.close() }
        let statements = [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
            "CREATE TABLE ZPARAMETER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, Z7PARAMETERS INTEGER, Z7STEPS INTEGER, Z_FOK_7STEPS INTEGER, ZNAME VARCHAR )",
            "CREATE INDEX ZPARAMETER_Z7PARAMETERS_INDEX ON ZPARAMETER (Z7PARAMETERS)",
            "CREATE TABLE ZRECORD ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
            "CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
            "CREATE TABLE ZTOKEN ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
            "CREATE TABLE Z_3PARENTGROUPS ( Z_3CONTACTS INTEGER, Z_5PARENTGROUPS1 INTEGER, PRIMARY KEY (Z_3CONTACTS, Z_5PARENTGROUPS1) )",
            "CREATE TABLE Z_4PARENTGROUPS ( Z_4CHILDGROUPS INTEGER, Z_5PARENTGROUPS INTEGER, PRIMARY KEY (Z_4CHILDGROUPS, Z_5PARENTGROUPS) )",
            "CREATE TABLE Z_7TAGS ( Z_7TOKENS INTEGER, Z_6TAGS INTEGER, PRIMARY KEY (Z_7TOKENS, Z_6TAGS) )",
            "CREATE TABLE ZPERSON ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
            "CREATE TABLE Z_8FRIENDS ( Z_8FRIENDS INTEGER, REFLEXIVE INTEGER, PRIMARY KEY (Z_8FRIENDS, REFLEXIVE) )",
            // Ordered and its own inverse, without the Z_FOK_8PALS mirror column.
            "CREATE TABLE Z_8PALS ( Z_8PALS INTEGER, REFLEXIVE INTEGER, FOK_REFLEXIVE INTEGER, PRIMARY KEY (Z_8PALS, REFLEXIVE) )",
            "INSERT INTO Z_8PALS VALUES (1, 3, 1), (1, 2, 2), (3, 1, 1), (2, 1, 1)",
            "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Parameter', 0, 4), (2, 'Record', 0, 5), (3, 'Contact', 2, 0), (4, 'Folder', 2, 0), (5, 'Group', 2, 0), (6, 'Tag', 0, 2), (7, 'Token', 0, 2), (8, 'Person', 0, 3)",
            "INSERT INTO ZPERSON VALUES (1, 8, 1, 'ann'), (2, 8, 1, 'bo'), (3, 8, 1, 'cy')",
            "INSERT INTO Z_8FRIENDS VALUES (1, 2), (2, 1), (1, 3), (3, 1)",
            "INSERT INTO ZPARAMETER VALUES (1, 1, 1, 1, 1, 2, 'p1'), (2, 1, 1, 1, NULL, NULL, 'p2'), (3, 1, 1, NULL, 1, 1, 'p3'), (4, 1, 1, 2, NULL, NULL, 'p4')",
            "INSERT INTO ZRECORD VALUES (1, 3, 1, 'c1'), (2, 3, 1, 'c2'), (3, 4, 1, 'f1'), (4, 5, 1, 'g1'), (5, 5, 1, 'g2')",
            "INSERT INTO ZTAG VALUES (1, 6, 1, 'x'), (2, 6, 1, 'y')",
            "INSERT INTO ZTOKEN VALUES (1, 7, 1, 't1'), (2, 7, 1, 't2')",
            "INSERT INTO Z_3PARENTGROUPS VALUES (1, 4), (2, 4), (2, 5)",
            "INSERT INTO Z_4PARENTGROUPS VALUES (3, 5)",
            "INSERT INTO Z_7TAGS VALUES (1, 1), (1, 2), (2, 2)",
        ]
        for statement in statements { try connection.execute(statement) }
        let plist = try PropertyListSerialization.data(
            fromPropertyList: ["NSStoreType": "SQLite", "NSStoreModelVersionHashesVersion": 3], format: .binary,
            options: 0)
        _ = try connection.rows("INSERT INTO Z_METADATA VALUES (1, 'UUID-1', ?)", [.blob(plist)])
        return path
    }

    static func one(_ context: ManagedObjectContext, _ entity: String, _ name: String) throws -> ManagedObject {
        try #require(
            try context.fetch(FetchRequest(entityName: entity, predicate: FetchPredicate(format: "name == %@", name)))
                .first)
    }

    static func names(_ objects: [ManagedObject]) -> [String] { objects.map { ($0["name"] as? String) ?? "?" } }

    static func open(_ path: String) throws -> (PersistentStoreCoordinator, PersistentStore, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path))
        return (coordinator, store, ManagedObjectContext(coordinator: coordinator))
    }

    @Test(
        "suffixed join columns, a join table named after the other side and foreign keys of inverse-less to-many relationships are read"
    )
    func reads() throws {
        let directory = try TemporaryDirectory(prefix: "coredata-layout")
        let (_, _, context) = try Self.open(try Self.makeStore(in: directory))
        #expect(Self.names(try Self.one(context, "Group", "g1").objects(forKey: "contacts")).sorted() == ["c1", "c2"])
        #expect(
            Self.names(try Self.one(context, "Contact", "c2").objects(forKey: "parentGroups")).sorted() == ["g1", "g2"])
        #expect(Self.names(try Self.one(context, "Group", "g2").objects(forKey: "childGroups")) == ["f1"])
        #expect(Self.names(try Self.one(context, "Folder", "f1").objects(forKey: "parentGroups")) == ["g2"])
        #expect(Self.names(try Self.one(context, "Token", "t1").objects(forKey: "tags")).sorted() == ["x", "y"])
        #expect(Self.names(try Self.one(context, "Tag", "y").objects(forKey: "tokens")).sorted() == ["t1", "t2"])
        let t1 = try Self.one(context, "Token", "t1")
        #expect(Self.names(t1.objects(forKey: "parameters")).sorted() == ["p1", "p2"])
        #expect(Self.names(t1.objects(forKey: "steps")) == ["p3", "p1"])
        #expect(Self.names(try Self.one(context, "Token", "t2").objects(forKey: "parameters")) == ["p4"])
        let found = try context.fetch(
            FetchRequest(entityName: "Token", predicate: FetchPredicate(format: "ANY parameters.name == 'p4'")))
        #expect(Self.names(found) == ["t2"])
        let counted = try context.fetch(
            FetchRequest(entityName: "Token", predicate: FetchPredicate(format: "steps.@count == 2")))
        #expect(Self.names(counted) == ["t1"])
        #expect(Self.names(try Self.one(context, "Person", "ann").objects(forKey: "friends")).sorted() == ["bo", "cy"])
        #expect(Self.names(try Self.one(context, "Person", "bo").objects(forKey: "friends")) == ["ann"])
        #expect(Self.names(try Self.one(context, "Person", "ann").objects(forKey: "pals")) == ["cy", "bo"])
    }

    @Test(
        "writes keep Core Data's layout: join rows in the suffixed columns, members moved between owners of a foreign key"
    )
    func writes() throws {
        let directory = try TemporaryDirectory(prefix: "coredata-layout")
        let path = try Self.makeStore(in: directory)
        do {
            let (coordinator, store, context) = try Self.open(path)
            try Self.one(context, "Contact", "c1").addObject(
                try Self.one(context, "Group", "g2"), toRelationship: "parentGroups")
            try Self.one(context, "Folder", "f1").removeObject(
                try Self.one(context, "Group", "g2"), fromRelationship: "parentGroups")
            let t1 = try Self.one(context, "Token", "t1")
            let t2 = try Self.one(context, "Token", "t2")
            let p2 = try Self.one(context, "Parameter", "p2")
            // The new owner first: its claim waits until t1 has let go.
            t2.addObject(p2, toRelationship: "parameters")
            t1.removeObject(p2, fromRelationship: "parameters")
            let steps = t1.objects(forKey: "steps")
            t1.setValue(Array(steps.reversed()), forKey: "steps")
            try Self.one(context, "Person", "bo").addObject(
                try Self.one(context, "Person", "cy"), toRelationship: "friends")
            let ann = try Self.one(context, "Person", "ann")
            ann.setValue(Array(ann.objects(forKey: "pals").reversed()), forKey: "pals")
            try context.save()
            try coordinator.remove(store)
        }
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        defer { connection.close() }
        #expect(
            try connection.rows("SELECT Z_3CONTACTS, Z_5PARENTGROUPS1 FROM Z_3PARENTGROUPS ORDER BY 1, 2") == [
                [.integer(1), .integer(4)], [.integer(1), .integer(5)], [.integer(2), .integer(4)],
                [.integer(2), .integer(5)],
            ])
        #expect(try connection.scalar("SELECT COUNT(*) FROM Z_4PARENTGROUPS")?.integer == 0)
        #expect(
            try connection.rows("SELECT ZNAME, Z7PARAMETERS, Z7STEPS, Z_FOK_7STEPS FROM ZPARAMETER ORDER BY Z_PK") == [
                [.text("p1"), .integer(1), .integer(1), .integer(1)], [.text("p2"), .integer(2), .null, .null],
                [.text("p3"), .null, .integer(1), .integer(2)], [.text("p4"), .integer(2), .null, .null],
            ])
        #expect(
            try connection.rows(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_7%' ESCAPE '\\'") == [
                    [.text("Z_7TAGS")]
                ], "no join table was added")
        #expect(
            try connection.rows("SELECT Z_8FRIENDS, REFLEXIVE FROM Z_8FRIENDS ORDER BY 1, 2").map {
                $0.compactMap(\.integer)
            } == [[1, 2], [1, 3], [2, 1], [2, 3], [3, 1], [3, 2]])
        let (_, _, context) = try Self.open(path)
        #expect(Self.names(try Self.one(context, "Token", "t1").objects(forKey: "steps")) == ["p1", "p3"])
        #expect(
            Self.names(try Self.one(context, "Token", "t2").objects(forKey: "parameters")).sorted() == ["p2", "p4"])
        #expect(Self.names(try Self.one(context, "Group", "g2").objects(forKey: "contacts")).sorted() == ["c1", "c2"])
        #expect(Self.names(try Self.one(context, "Person", "ann").objects(forKey: "pals")) == ["bo", "cy"])
    }

    @Test(
        "a member of an inverse-less to-many kept as a foreign key cannot get a second owner: the save fails and changes nothing"
    )
    func secondOwner() throws {
        let directory = try TemporaryDirectory(prefix: "coredata-layout")
        let path = try Self.makeStore(in: directory)
        let (_, _, context) = try Self.open(path)
        try Self.one(context, "Token", "t2").addObject(
            try Self.one(context, "Parameter", "p1"), toRelationship: "parameters")
        try Self.one(context, "Tag", "x").setValue("x!", forKey: "name")
        let error = #expect(throws: StoreError.self) { try context.save() }
        #expect(error?.code == .constraint && error?.message.contains("Z7PARAMETERS") == true)
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        defer { connection.close() }
        #expect(try connection.rows("SELECT Z7PARAMETERS FROM ZPARAMETER WHERE Z_PK = 1") == [[.integer(1)]])
        #expect(try connection.rows("SELECT ZNAME FROM ZTAG WHERE Z_PK = 1") == [[.text("x")]])
    }

    @Test("deleting the owner of an inverse-less to-many kept as a foreign key clears the key in its members")
    func deleteOwner() throws {
        let directory = try TemporaryDirectory(prefix: "coredata-layout")
        let path = try Self.makeStore(in: directory)
        let (_, _, context) = try Self.open(path)
        context.delete(try Self.one(context, "Token", "t1"))
        try context.save()
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        defer { connection.close() }
        #expect(
            try connection.rows("SELECT Z7PARAMETERS, Z7STEPS, Z_FOK_7STEPS FROM ZPARAMETER ORDER BY Z_PK") == [
                [.null, .null, .null], [.null, .null, .null], [.null, .null, .null], [.integer(2), .null, .null],
            ])
        #expect(try connection.scalar("SELECT COUNT(*) FROM Z_7TAGS WHERE Z_7TOKENS = 1")?.integer == 0)
        // The freed parameter can join another token.
        try Self.one(context, "Token", "t2").addObject(
            try Self.one(context, "Parameter", "p1"), toRelationship: "parameters")
        try context.save()
        #expect(try connection.rows("SELECT Z7PARAMETERS FROM ZPARAMETER WHERE Z_PK = 1") == [[.integer(2)]])
    }

    @Test("the store's model recovered from its tables finds the same relationships")
    func inferred() throws {
        let directory = try TemporaryDirectory(prefix: "coredata-layout")
        let path = try Self.makeStore(in: directory)
        let recovered = try StoreModelRecovery.recoverModel(fromStoreAt: path)
        #expect(recovered.source == .inferred)
        let token = try #require(recovered.model.entity(named: "Token"))
        let parameters = try #require(token.relationshipsByName["PARAMETERS"])
        #expect(parameters.isToMany && parameters.inverseName == nil && parameters.destinationEntityName == "Parameter")
        #expect(token.relationshipsByName["STEPS"]?.isOrdered == true)
        let contact = try #require(recovered.model.entity(named: "Contact"))
        #expect(contact.relationshipsByName["PARENTGROUPS"]?.inverseName == "CONTACTS")
        #expect(
            recovered.model.entity(named: "Folder")?.relationshipsByName["PARENTGROUPS"]?.inverseName == "CHILDGROUPS")
        #expect(recovered.model.entity(named: "Person")?.relationshipsByName["FRIENDS"]?.inverseName == "FRIENDS")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: recovered.model)
        try coordinator.addPersistentStore(
            type: .sqlite, at: URL(fileURLWithPath: path), options: StoreOptions(isReadOnly: true))
        let context = ManagedObjectContext(coordinator: coordinator)
        let t1 = try #require(
            try context.fetch(FetchRequest(entityName: "Token", predicate: FetchPredicate(format: "NAME == 't1'")))
                .first)
        #expect(t1.objects(forKey: "STEPS").map { $0["NAME"] as? String } == ["p3", "p1"])
        #expect(Set(t1.objects(forKey: "PARAMETERS").map { $0["NAME"] as? String }) == ["p1", "p2"])
        let c2 = try #require(
            try context.fetch(FetchRequest(entityName: "Contact", predicate: FetchPredicate(format: "NAME == 'c2'")))
                .first)
        #expect(Set(c2.objects(forKey: "PARENTGROUPS").map { $0["NAME"] as? String }) == ["g1", "g2"])
    }
}
