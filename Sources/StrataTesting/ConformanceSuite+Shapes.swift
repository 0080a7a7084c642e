import Foundation
import Strata

extension ConformanceSuite {
    /// A seeded store of ``ConformanceShapesModel/model`` (or of its ``ConformanceShapesModel/collisions``)
    /// in a fresh directory.
    struct ShapesFixture {
        let directory: TemporaryDirectory
        let coordinator: PersistentStoreCoordinator
        let store: PersistentStore
        let harness: DriverHarness
        let model: ManagedObjectModel
        private let keeper = ContextKeeper()

        init(_ harness: DriverHarness, collisions: Bool = false) throws {
            directory = try TemporaryDirectory(prefix: "conformance-shapes-\(harness.name)")
            model = collisions ? ConformanceShapesModel.collisions : ConformanceShapesModel.model
            (coordinator, store) = try harness.openStack(in: directory, model: model)
            self.harness = harness
            if collisions {
                try ConformanceShapesModel.seedCollisions(context())
            } else {
                try ConformanceShapesModel.seed(context())
            }
        }

        func context() -> ManagedObjectContext { keeper.keep(ManagedObjectContext(coordinator: coordinator)) }

        /// Closes the store and opens it again with a new coordinator; a context on it.
        func reopen() throws -> ManagedObjectContext {
            try coordinator.remove(store)
            let (again, _) = try harness.openStack(in: directory, model: model)
            return keeper.keep(ManagedObjectContext(coordinator: again))
        }

        /// Runs `check` on a fresh context, then on a context of the reopened store, and returns
        /// the latter (the fixture's own coordinator no longer has the store).
        @discardableResult
        func checkFreshAndReopened(_ check: (ManagedObjectContext) throws -> Void) throws -> ManagedObjectContext {
            try check(context())
            let reopened = try reopen()
            try check(reopened)
            return reopened
        }
    }

    /// The one object of `entity` whose `key` is `value`.
    static func one(_ context: ManagedObjectContext, _ entity: String, _ value: String, key: String = "name")
        throws -> ManagedObject
    {
        let found = try context.fetch(
            FetchRequest(entityName: entity, predicate: FetchPredicate(format: "%K == %@", key, value)))
        try requireEqual(found.count, 1, "\(entity) objects with \(key) '\(value)'")
        return found[0]
    }

    /// The sorted names of a to-many relationship's destinations.
    static func related(_ object: ManagedObject, _ key: String, _ name: String = "name") -> [String] {
        names(object.objects(forKey: key), name).sorted()
    }

    static var shapeCases: [ConformanceCase] {
        [
            ConformanceCase(
                "a to-many relationship that is its own inverse keeps both sides when adding, removing and reopening"
            ) { harness in
                let fixture = try ShapesFixture(harness)
                let context = fixture.context()
                let ada = try one(context, "Person", "Ada")
                try requireEqual(related(ada, "friends"), ["Ben", "Eve"], "Ada's friends")
                try requireEqual(related(try one(context, "Person", "Ben"), "friends"), ["Ada", "Cy"], "Ben's friends")
                try requireEqual(related(try one(context, "Person", "Eve"), "friends"), ["Ada"], "Eve's friends")
                ada.removeObject(try one(context, "Person", "Ben"), fromRelationship: "friends")
                try one(context, "Person", "Dee").addObject(ada, toRelationship: "friends")
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    try requireEqual(
                        related(try one(fresh, "Person", "Ada"), "friends"), ["Dee", "Eve"],
                        "Ada's friends after the save")
                    try requireEqual(
                        related(try one(fresh, "Person", "Ben"), "friends"), ["Cy"], "Ben's friends after the save")
                    try requireEqual(
                        related(try one(fresh, "Person", "Dee"), "friends"), ["Ada"], "Dee's friends after the save")
                    let withFriends = try fetch(fresh, "Person", "ANY friends.name == 'Ada'", sort: [SortKey("name")])
                    try requireEqual(names(withFriends), ["Dee", "Eve"], "people with Ada among their friends")
                    try requireEqual(
                        names(try fetch(fresh, "Person", "friends.@count == 0", sort: [SortKey("name")])), ["Fay"],
                        "people without friends")
                }
            },
            ConformanceCase("an ordered to-many relationship that is its own inverse keeps each side's order") {
                harness in
                let fixture = try ShapesFixture(harness)
                let context = fixture.context()
                let ada = try one(context, "Person", "Ada")
                try requireEqual(names(ada.objects(forKey: "pals")), ["Dee", "Ben", "Fay"], "Ada's pals")
                try requireEqual(
                    names(try one(context, "Person", "Dee").objects(forKey: "pals")), ["Ada"], "Dee's pals")
                let pals = ada.objects(forKey: "pals")
                ada.setValue([pals[2], pals[0], pals[1]], forKey: "pals")
                ada.addObject(try one(context, "Person", "Cy"), toRelationship: "pals")
                try one(context, "Person", "Fay").addObject(try one(context, "Person", "Ben"), toRelationship: "pals")
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    try requireEqual(
                        names(try one(fresh, "Person", "Ada").objects(forKey: "pals")), ["Fay", "Dee", "Ben", "Cy"],
                        "Ada's pals after reordering")
                    try requireEqual(
                        names(try one(fresh, "Person", "Fay").objects(forKey: "pals")), ["Ada", "Ben"], "Fay's pals")
                    try requireEqual(
                        names(try one(fresh, "Person", "Ben").objects(forKey: "pals")), ["Ada", "Fay"], "Ben's pals")
                    try requireEqual(
                        names(try one(fresh, "Person", "Cy").objects(forKey: "pals")), ["Ada"], "Cy's pals")
                }
            },
            ConformanceCase(
                "two distinct reflexive to-many relationships (followers and following) stay each other's inverse"
            ) { harness in
                let fixture = try ShapesFixture(harness)
                let context = fixture.context()
                let ada = try one(context, "Person", "Ada")
                try requireEqual(related(ada, "followers"), ["Ben", "Cy", "Dee", "Eve"], "Ada's followers")
                try requireEqual(related(ada, "following"), [], "whom Ada follows")
                try requireEqual(related(try one(context, "Person", "Cy"), "following"), ["Ada"], "whom Cy follows")
                try requireEqual(related(try one(context, "Person", "Cy"), "followers"), [], "Cy's followers")
                ada.removeObject(try one(context, "Person", "Dee"), fromRelationship: "followers")
                ada.addObject(try one(context, "Person", "Fay"), toRelationship: "following")
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    let ada = try one(fresh, "Person", "Ada")
                    try requireEqual(related(ada, "followers"), ["Ben", "Cy", "Eve"], "Ada's followers after the save")
                    try requireEqual(related(ada, "following"), ["Fay"], "whom Ada follows after the save")
                    try requireEqual(related(try one(fresh, "Person", "Fay"), "followers"), ["Ada"], "Fay's followers")
                    try requireEqual(related(try one(fresh, "Person", "Dee"), "following"), [], "whom Dee follows")
                    try requireEqual(
                        names(try fetch(fresh, "Person", "ANY following.name == 'Ada'", sort: [SortKey("name")])),
                        ["Ben", "Cy", "Eve"], "Ada's followers by predicate")
                }
            },
            ConformanceCase("a reflexive to-one relationship that is its own inverse pairs and re-pairs objects") {
                harness in
                let fixture = try ShapesFixture(harness)
                let context = fixture.context()
                let ben = try one(context, "Person", "Ben")
                try requireEqual(ben.object(forKey: "spouse")?.value(forKey: "name") as? String, "Ada", "Ben's spouse")
                ben["spouse"] = try one(context, "Person", "Cy")
                try require(
                    try one(context, "Person", "Ada").object(forKey: "spouse") == nil, "Ada is unpaired in memory")
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    try require(try one(fresh, "Person", "Ada").object(forKey: "spouse") == nil, "Ada is unpaired")
                    try requireEqual(
                        try one(fresh, "Person", "Cy").object(forKey: "spouse")?.value(forKey: "name") as? String,
                        "Ben", "Cy's spouse")
                    try requireEqual(
                        names(try fetch(fresh, "Person", "spouse != nil", sort: [SortKey("name")])), ["Ben", "Cy"],
                        "married people")
                }
            },
            ConformanceCase("a reflexive to-one/to-many pair (parent and children) moves, reopens and cascades") {
                harness in
                let fixture = try ShapesFixture(harness)
                let context = fixture.context()
                let root = try one(context, "Node", "root", key: "label")
                try requireEqual(related(root, "children", "label"), ["child 0", "child 1"], "root's children")
                let child = try one(context, "Node", "child 1", key: "label")
                child["parent"] = try one(context, "Node", "child 0", key: "label")
                try context.save()
                let again = try fixture.checkFreshAndReopened { fresh in
                    try requireEqual(
                        related(try one(fresh, "Node", "root", key: "label"), "children", "label"), ["child 0"],
                        "root's children")
                    try requireEqual(
                        related(try one(fresh, "Node", "child 0", key: "label"), "children", "label"), ["child 1"],
                        "child 0's children")
                }
                again.delete(try one(again, "Node", "root", key: "label"))
                try again.save()
                again.reset()
                try requireEqual(try again.count(for: FetchRequest(entityName: "Node")), 0, "nodes after the cascade")
            },
            ConformanceCase("a many-to-many between an entity and its subentity (mentors and mentees) saves both sides")
            { harness in
                let fixture = try ShapesFixture(harness)
                let context = fixture.context()
                let eve = try one(context, "Employee", "Eve")
                try requireEqual(related(eve, "mentees"), ["Ada", "Cy", "Fay"], "Eve's mentees")
                try requireEqual(related(eve, "mentors"), [], "Eve's mentors (inherited relationship)")
                let fay = try one(context, "Employee", "Fay")
                try requireEqual(related(fay, "mentors"), ["Eve"], "Fay's mentors")
                fay.addObject(try one(context, "Person", "Ben"), toRelationship: "mentees")
                eve.removeObject(try one(context, "Person", "Cy"), fromRelationship: "mentees")
                fay.addObject(eve, toRelationship: "mentees")
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    try requireEqual(
                        related(try one(fresh, "Employee", "Eve"), "mentees"), ["Ada", "Fay"],
                        "Eve's mentees after the save")
                    try requireEqual(
                        related(try one(fresh, "Employee", "Eve"), "mentors"), ["Fay"], "Eve's mentors after the save")
                    try requireEqual(
                        related(try one(fresh, "Employee", "Fay"), "mentees"), ["Ben", "Eve"], "Fay's mentees")
                    try requireEqual(related(try one(fresh, "Person", "Ben"), "mentors"), ["Fay"], "Ben's mentors")
                    try requireEqual(related(try one(fresh, "Person", "Cy"), "mentors"), [], "Cy's mentors")
                    try requireEqual(
                        names(try fetch(fresh, "Person", "ANY mentors.title == 'lead'", sort: [SortKey("name")])),
                        ["Ben", "Eve"], "people mentored by a lead")
                    try requireEqual(
                        names(try fetch(fresh, "Employee", "mentees.@count >= 2", sort: [SortKey("name")])),
                        ["Eve", "Fay"], "employees with two mentees")
                }
            },
            ConformanceCase("a many-to-many inherited by a subentity (clubs and members) saves, fetches and faults") {
                harness in
                let fixture = try ShapesFixture(harness)
                let context = fixture.context()
                let fay = try one(context, "Employee", "Fay")
                try requireEqual(related(fay, "clubs"), ["chess", "go"], "Fay's clubs")
                let go = try one(context, "Club", "go")
                try requireEqual(related(go, "members"), ["Ben", "Fay"], "go's members")
                go.addObject(try one(context, "Employee", "Eve"), toRelationship: "members")
                fay.removeObject(try one(context, "Club", "chess"), fromRelationship: "clubs")
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    try requireEqual(
                        related(try one(fresh, "Club", "go"), "members"), ["Ben", "Eve", "Fay"],
                        "go's members after the save")
                    try requireEqual(
                        related(try one(fresh, "Club", "chess"), "members"), ["Ada", "Eve"],
                        "chess members after the save")
                    try requireEqual(
                        names(try fetch(fresh, "Employee", "ANY clubs.name == 'go'", sort: [SortKey("name")])),
                        ["Eve", "Fay"], "employees in go")
                    try requireEqual(
                        names(try fetch(fresh, "Person", "ANY clubs.name == 'chess'", sort: [SortKey("name")])),
                        ["Ada", "Eve"], "people in chess")
                }
            },
            ConformanceCase(
                "to-many relationships without an inverse share destinations between owners and keep their order"
            ) { harness in
                let fixture = try ShapesFixture(harness)
                let context = fixture.context()
                let ada = try one(context, "Person", "Ada")
                try requireEqual(related(ada, "bookmarks", "text"), ["note 0", "note 1"], "Ada's bookmarks")
                try requireEqual(
                    related(try one(context, "Person", "Ben"), "bookmarks", "text"), ["note 1", "note 2"],
                    "Ben's bookmarks")
                try requireEqual(
                    names(ada.objects(forKey: "reading"), "text"), ["note 3", "note 1", "note 0"], "Ada's reading list")
                try requireEqual(
                    names(try one(context, "Employee", "Eve").objects(forKey: "reading"), "text"),
                    ["note 1", "note 3"], "Eve's reading list")
                ada.removeObject(try one(context, "Note", "note 0", key: "text"), fromRelationship: "bookmarks")
                ada.addObject(try one(context, "Note", "note 2", key: "text"), toRelationship: "bookmarks")
                let reading = ada.objects(forKey: "reading")
                ada.setValue([reading[2], reading[0]], forKey: "reading")
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    let ada = try one(fresh, "Person", "Ada")
                    try requireEqual(
                        related(ada, "bookmarks", "text"), ["note 1", "note 2"], "Ada's bookmarks after the save")
                    try requireEqual(
                        related(try one(fresh, "Person", "Ben"), "bookmarks", "text"), ["note 1", "note 2"],
                        "Ben's bookmarks after the save")
                    try requireEqual(
                        names(ada.objects(forKey: "reading"), "text"), ["note 0", "note 3"],
                        "Ada's reading list after the save")
                    try requireEqual(
                        names(try one(fresh, "Employee", "Eve").objects(forKey: "reading"), "text"),
                        ["note 1", "note 3"], "Eve's reading list after the save")
                    try requireEqual(
                        names(try fetch(fresh, "Person", "ANY bookmarks.text == 'note 2'", sort: [SortKey("name")])),
                        ["Ada", "Ben"], "people who bookmarked note 2")
                }
            },
            ConformanceCase("deleting an object removes it from every reflexive and many-to-many relationship") {
                harness in
                let fixture = try ShapesFixture(harness)
                let context = fixture.context()
                context.delete(try one(context, "Person", "Ben"))
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    let ada = try one(fresh, "Person", "Ada")
                    try requireEqual(related(ada, "friends"), ["Eve"], "Ada's friends")
                    try requireEqual(related(try one(fresh, "Person", "Cy"), "friends"), [], "Cy's friends")
                    try requireEqual(names(ada.objects(forKey: "pals")), ["Dee", "Fay"], "Ada's pals")
                    try requireEqual(related(ada, "followers"), ["Cy", "Dee", "Eve"], "Ada's followers")
                    try require(ada.object(forKey: "spouse") == nil, "Ada's spouse is cleared")
                    try requireEqual(related(try one(fresh, "Club", "go"), "members"), ["Fay"], "go's members")
                    try requireEqual(try fresh.count(for: FetchRequest(entityName: "Person")), 5, "people left")
                }
            },
        ]
    }

    /// Cases of ``ConformanceShapesModel/collisions``: property names that differ only in case, or
    /// that Core Data's SQLite layout would map to one column. Run them on every driver whose
    /// format keeps the case of property names (every driver but the XML store, whose format
    /// lower-cases them; docs/formats/xml.md).
    public static var nameCollisionCases: [ConformanceCase] {
        [
            ConformanceCase("properties whose stored names collide keep their own values") { harness in
                let fixture = try ShapesFixture(harness, collisions: true)
                let context = fixture.context()
                let gadget = try one(context, "Gadget", "name 1", key: "name")
                gadget["Name"] = "renamed"
                gadget["_pk"] = Int64(42)
                gadget["title1"] = "changed"
                gadget["Owner"] = try one(context, "Person", "Dee")
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    let gadgets = try fetch(fresh, "Gadget", sort: [SortKey("name")])
                    try requireEqual(gadgets.count, 3, "gadgets")
                    for (index, g) in gadgets.enumerated() {
                        try requireEqual(g["name"] as? String, "name \(index)", "name of gadget \(index)")
                        try requireEqual(
                            g["Name"] as? String, index == 1 ? "renamed" : "Name \(index)", "Name of gadget \(index)")
                        try requireEqual(g["NAME"] as? Int, 100 + index, "NAME of gadget \(index)")
                        try requireEqual(g["_pk"] as? Int, index == 1 ? 42 : -index, "_pk of gadget \(index)")
                        try requireEqual(g["_ent"] as? String, "ent \(index)", "_ent of gadget \(index)")
                        try requireEqual(g["_opt"] as? Double, Double(index) + 0.5, "_opt of gadget \(index)")
                        try requireEqual(g["z_pk"] as? String, "z_pk \(index)", "z_pk of gadget \(index)")
                        try requireEqual(g["title"] as? String, "title \(index)", "title of gadget \(index)")
                        try requireEqual(g["Title"] as? String, "Title \(index)", "Title of gadget \(index)")
                        try requireEqual(
                            g["title1"] as? String, index == 1 ? "changed" : "title1 \(index)",
                            "title1 of gadget \(index)")
                        try requireEqual(g["owner"] as? String, "owner \(index)", "owner of gadget \(index)")
                    }
                    try requireEqual(
                        gadgets.map { $0.object(forKey: "Owner")?.value(forKey: "name") as? String },
                        ["Ada", "Dee", nil], "Owner of each gadget")
                    try requireEqual(
                        names(
                            try fetch(
                                fresh, "Gadget",
                                "Name == 'renamed' AND name == 'name 1' AND _pk == 42 AND owner == 'owner 1'")),
                        ["name 1"], "gadget found by colliding names")
                    try requireEqual(
                        names(try fetch(fresh, "Gadget", "Owner.name == 'Ada'")), ["name 0"],
                        "gadget found through Owner")
                }
            },
            ConformanceCase("many-to-many pairs whose join tables and columns collide keep their own members") {
                harness in
                let fixture = try ShapesFixture(harness, collisions: true)
                let context = fixture.context()
                let g0 = try one(context, "Gadget", "name 0", key: "name")
                try requireEqual(related(g0, "parts"), ["part 0", "part 1"], "g0 parts")
                try requireEqual(related(g0, "Parts"), ["part 2"], "g0 Parts")
                try requireEqual(related(g0, "links"), ["name 1", "name 2"], "g0 links")
                try requireEqual(related(g0, "Links"), [], "g0 Links")
                let p1 = try one(context, "Part", "part 1")
                try requireEqual(related(p1, "gadgets"), ["name 0"], "part 1 gadgets")
                try requireEqual(related(p1, "Gadgets"), ["name 1"], "part 1 Gadgets")
                p1.addObject(try one(context, "Gadget", "name 2", key: "name"), toRelationship: "Gadgets")
                g0.removeObject(try one(context, "Gadget", "name 1", key: "name"), fromRelationship: "links")
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    try requireEqual(
                        related(try one(fresh, "Part", "part 1"), "Gadgets"), ["name 1", "name 2"],
                        "part 1 Gadgets after the save")
                    try requireEqual(
                        related(try one(fresh, "Part", "part 1"), "gadgets"), ["name 0"],
                        "part 1 gadgets after the save")
                    try requireEqual(
                        related(try one(fresh, "Gadget", "name 1", key: "name"), "Links"), ["name 2"], "g1 Links")
                    try requireEqual(
                        related(try one(fresh, "Gadget", "name 2", key: "name"), "Links"), ["name 0"], "g2 Links")
                    try requireEqual(
                        related(try one(fresh, "Gadget", "name 2", key: "name"), "links"), ["name 1"], "g2 links")
                    try requireEqual(
                        related(try one(fresh, "Gadget", "name 2", key: "name"), "Parts"), ["part 1"], "g2 Parts")
                }
            },
            ConformanceCase("subentities sharing a table keep properties of the same name apart") { harness in
                let fixture = try ShapesFixture(harness, collisions: true)
                let context = fixture.context()
                let square = try one(context, "Square", "square", key: "Label")
                square["size"] = Int64(9)
                try context.save()
                try fixture.checkFreshAndReopened { fresh in
                    let circle = try one(fresh, "Circle", "circle", key: "label")
                    try requireEqual(circle["size"] as? Double, 2.5, "circle size")
                    try requireEqual(circle["kind"] as? String, "round", "circle kind")
                    try requireEqual(
                        circle.object(forKey: "owner")?.value(forKey: "name") as? String, "name 0", "circle owner")
                    let square = try one(fresh, "Square", "square", key: "Label")
                    try requireEqual(square["size"] as? Int, 9, "square size")
                    try requireEqual(
                        square.object(forKey: "owner")?.value(forKey: "name") as? String, "Ben", "square owner")
                    try requireEqual(try fresh.count(for: FetchRequest(entityName: "Shape")), 2, "shapes")
                    try requireEqual(
                        names(try fetch(fresh, "Square", "size > 5"), "Label"), ["square"], "squares by size")
                }
            },
        ]
    }
}
