import Foundation
import Strata

/// Models of every relationship shape (``model``) and of the names that collide in Core Data's
/// SQLite layout (``collisions``), for the shape cases of the conformance suite
/// (``ConformanceSuite``).
///
/// Shapes: a to-many that is its own inverse, unordered (`Person.friends`) and ordered
/// (`Person.pals`); a pair of distinct reflexive to-many relationships (`followers` ↔
/// `following`); a reflexive to-one (`spouse` ↔ itself); a reflexive to-one/to-many pair
/// (`Node.parent` ↔ `children`); a many-to-many between an entity and its subentity
/// (`Person.mentors` ↔ `Employee.mentees`, Employee ⊂ Person) and one that subentities inherit
/// (`Person.clubs` ↔ `Club.members`); to-many relationships without an inverse, unordered
/// (`Person.bookmarks`) and ordered (`Person.reading`).
///
/// Collisions (``collisions``): `Gadget` has attributes equal after upper-casing (`name`, `Name`, `NAME`), named
/// like Core Data's bookkeeping columns (`_pk`, `_ent`, `_opt`, `z_pk`), like a suffixed column
/// (`title`, `Title`, `title1`), an attribute and a relationship equal after upper-casing
/// (`owner` and `Owner`), two many-to-many pairs whose join tables and columns share names
/// (`parts` ↔ `Part.gadgets`, `Parts` ↔ `Part.Gadgets`) and a self-inverse pair whose join
/// columns collide (`links` ↔ `Links`). `Shape`'s subentities `Circle` and `Square` share one
/// table and declare properties of the same name (`size`, `label`/`Label`, `owner`).
public enum ConformanceShapesModel {
    /// The relationship shapes.
    public static let model: ManagedObjectModel = {
        let person = EntityDescription(
            "Person",
            properties: [
                .attribute("name", .string),
                .toMany("friends", "Person", inverse: "friends"),
                .toMany("pals", "Person", inverse: "pals", ordered: true),
                .toMany("followers", "Person", inverse: "following"),
                .toMany("following", "Person", inverse: "followers"),
                .toOne("spouse", "Person", inverse: "spouse"),
                .toMany("mentors", "Employee", inverse: "mentees"),
                .toMany("clubs", "Club", inverse: "members"),
                .toMany("bookmarks", "Note"),
                .toMany("reading", "Note", ordered: true),
            ])
        let employee = EntityDescription(
            "Employee", parent: "Person",
            properties: [.attribute("title", .string), .toMany("mentees", "Person", inverse: "mentors")])
        let club = EntityDescription(
            "Club", properties: [.attribute("name", .string), .toMany("members", "Person", inverse: "clubs")])
        let note = EntityDescription("Note", properties: [.attribute("text", .string)])
        let node = EntityDescription(
            "Node",
            properties: [
                .attribute("label", .string), .toOne("parent", "Node", inverse: "children"),
                .toMany("children", "Node", inverse: "parent", deleteRule: .cascade),
            ])
        // The model above is fixed and valid; building it cannot fail.
        return try! ManagedObjectModel(entities: [person, employee, club, note, node])
    }()

    /// Properties whose names collide once Core Data's SQLite layout upper-cases them.
    public static let collisions: ManagedObjectModel = {
        let person = EntityDescription("Person", properties: [.attribute("name", .string)])
        let gadget = EntityDescription(
            "Gadget",
            properties: [
                .attribute("name", .string), .attribute("Name", .string), .attribute("NAME", .integer64),
                .attribute("_pk", .integer64), .attribute("_ent", .string), .attribute("_opt", .double),
                .attribute("z_pk", .string), .attribute("title", .string), .attribute("Title", .string),
                .attribute("title1", .string), .attribute("owner", .string),
                .toOne("Owner", "Person"),
                .toMany("parts", "Part", inverse: "gadgets"), .toMany("Parts", "Part", inverse: "Gadgets"),
                .toMany("links", "Gadget", inverse: "Links"), .toMany("Links", "Gadget", inverse: "links"),
            ])
        let part = EntityDescription(
            "Part",
            properties: [
                .attribute("name", .string), .toMany("gadgets", "Gadget", inverse: "parts"),
                .toMany("Gadgets", "Gadget", inverse: "Parts"),
            ])
        let shape = EntityDescription("Shape", isAbstract: true, properties: [.attribute("kind", .string)])
        let circle = EntityDescription(
            "Circle", parent: "Shape",
            properties: [.attribute("size", .double), .attribute("label", .string), .toOne("owner", "Gadget")])
        let square = EntityDescription(
            "Square", parent: "Shape",
            properties: [.attribute("size", .integer64), .attribute("Label", .string), .toOne("owner", "Person")])
        // The model above is fixed and valid; building it cannot fail.
        return try! ManagedObjectModel(entities: [person, gadget, part, shape, circle, square])
    }()

    /// Seeds ``model``: people (with every shape filled), clubs, notes and nodes; deterministic,
    /// so every driver holds the same data.
    public static func seed(_ context: ManagedObjectContext) throws {
        var people: [String: ManagedObject] = [:]
        for name in ["Ada", "Ben", "Cy", "Dee"] {
            let p = try context.insertNewObject(forEntityName: "Person")
            p["name"] = name
            people[name] = p
        }
        for (name, title) in [("Eve", "boss"), ("Fay", "lead")] {
            let e = try context.insertNewObject(forEntityName: "Employee")
            e["name"] = name
            e["title"] = title
            people[name] = e
        }
        func person(_ name: String) -> ManagedObject { people[name]! }  // every name used is inserted above
        person("Ada").setValue(Set([person("Ben"), person("Eve")]), forKey: "friends")
        person("Cy").addObject(person("Ben"), toRelationship: "friends")
        person("Ada").setValue([person("Dee"), person("Ben"), person("Fay")], forKey: "pals")
        person("Ada").setValue(Set([person("Cy"), person("Dee"), person("Eve")]), forKey: "followers")
        person("Ben").setValue(Set([person("Ada")]), forKey: "following")
        person("Ada")["spouse"] = person("Ben")
        person("Eve").setValue(Set([person("Ada"), person("Cy"), person("Fay")]), forKey: "mentees")
        person("Fay").addObject(person("Eve"), toRelationship: "mentors")
        let chess = try context.insertNewObject(forEntityName: "Club")
        chess["name"] = "chess"
        chess.setValue(Set([person("Ada"), person("Eve"), person("Fay")]), forKey: "members")
        let go = try context.insertNewObject(forEntityName: "Club")
        go["name"] = "go"
        go.setValue(Set([person("Fay"), person("Ben")]), forKey: "members")
        var notes: [ManagedObject] = []
        for index in 0..<4 {
            let n = try context.insertNewObject(forEntityName: "Note")
            n["text"] = "note \(index)"
            notes.append(n)
        }
        person("Ada").setValue(Set([notes[0], notes[1]]), forKey: "bookmarks")
        person("Ben").setValue(Set([notes[1], notes[2]]), forKey: "bookmarks")
        person("Ada").setValue([notes[3], notes[1], notes[0]], forKey: "reading")
        person("Eve").setValue([notes[1], notes[3]], forKey: "reading")
        let root = try context.insertNewObject(forEntityName: "Node")
        root["label"] = "root"
        for index in 0..<2 {
            let child = try context.insertNewObject(forEntityName: "Node")
            child["label"] = "child \(index)"
            child["parent"] = root
        }
        try context.save()
    }

    /// Seeds ``collisions``: people, gadgets, parts, circles and squares.
    public static func seedCollisions(_ context: ManagedObjectContext) throws {
        var people: [String: ManagedObject] = [:]
        for name in ["Ada", "Ben", "Dee", "Eve"] {
            let p = try context.insertNewObject(forEntityName: "Person")
            p["name"] = name
            people[name] = p
        }
        var gadgets: [ManagedObject] = []
        for index in 0..<3 {
            let g = try context.insertNewObject(forEntityName: "Gadget")
            g["name"] = "name \(index)"
            g["Name"] = "Name \(index)"
            g["NAME"] = Int64(100 + index)
            g["_pk"] = Int64(-index)
            g["_ent"] = "ent \(index)"
            g["_opt"] = Double(index) + 0.5
            g["z_pk"] = "z_pk \(index)"
            g["title"] = "title \(index)"
            g["Title"] = "Title \(index)"
            g["title1"] = "title1 \(index)"
            g["owner"] = "owner \(index)"
            gadgets.append(g)
        }
        gadgets[0]["Owner"] = people["Ada"]
        gadgets[1]["Owner"] = people["Eve"]
        var parts: [ManagedObject] = []
        for index in 0..<3 {
            let p = try context.insertNewObject(forEntityName: "Part")
            p["name"] = "part \(index)"
            parts.append(p)
        }
        gadgets[0].setValue(Set([parts[0], parts[1]]), forKey: "parts")
        gadgets[0].setValue(Set([parts[2]]), forKey: "Parts")
        gadgets[1].setValue(Set([parts[1]]), forKey: "Parts")
        gadgets[0].setValue(Set([gadgets[1], gadgets[2]]), forKey: "links")
        gadgets[2].setValue(Set([gadgets[1]]), forKey: "links")
        let circle = try context.insertNewObject(forEntityName: "Circle")
        circle["kind"] = "round"
        circle["size"] = 2.5
        circle["label"] = "circle"
        circle["owner"] = gadgets[0]
        let square = try context.insertNewObject(forEntityName: "Square")
        square["kind"] = "boxy"
        square["size"] = Int64(4)
        square["Label"] = "square"
        square["owner"] = people["Ben"]
        try context.save()
    }
}
