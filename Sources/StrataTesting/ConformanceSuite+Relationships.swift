import Foundation
import Strata

extension ConformanceSuite {
    static var relationshipCases: [ConformanceCase] {
        [
            ConformanceCase("to-one and to-many relationships are saved with both sides") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let research = try fetch(context, "Department", "name == 'Research'")[0]
                let staff = names(research.objects(forKey: "employees")).sorted()
                let expected = ConformanceModel.employeeNames.enumerated().filter {
                    $0.offset < 11 && $0.offset % 3 == 0
                }.map(\.element).sorted()
                try requireEqual(staff, expected, "Research employees")
                for employee in research.objects(forKey: "employees") {
                    try require(employee.object(forKey: "department") === research, "inverse of employees")
                }
                try requireEqual(research.object(forKey: "manager")?.value(forKey: "name") as? String, "Ann", "manager")
                try require(
                    research.object(forKey: "manager")?.object(forKey: "managedDepartment") === research,
                    "one-to-one inverse")
            },
            ConformanceCase("moving an object between owners updates all three sides and is saved") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let bob = try fetch(context, "Employee", "name == 'bob'")[0]
                let old = bob.object(forKey: "department")
                let support = try fetch(context, "Department", "name == 'support'")[0]
                try require(old !== support, "bob starts outside support")
                bob["department"] = support
                try require(
                    !(old?.objects(forKey: "employees").contains(bob) ?? false), "removed from the old department")
                try require(support.objects(forKey: "employees").contains(bob), "added to the new department")
                try context.save()
                let fresh = fixture.context()
                let again = try fetch(fresh, "Employee", "name == 'bob'")[0]
                try requireEqual(
                    again.object(forKey: "department")?.value(forKey: "name") as? String, "support", "bob's department")
                let oldName = old?.value(forKey: "name") as? String ?? ""
                let oldAgain = try fresh.fetch(
                    FetchRequest(entityName: "Department", predicate: FetchPredicate(format: "name == %@", oldName)))
                try require(
                    !names(oldAgain.first?.objects(forKey: "employees") ?? []).contains("bob"),
                    "old department no longer lists bob")
            },
            ConformanceCase("many-to-many relationships are saved on both sides") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let red = try fetch(context, "Tag", "name == 'red'")[0]
                let items = red.objects(forKey: "items")
                try require(!items.isEmpty, "red has items")
                for item in items { try require(item.objects(forKey: "tags").contains(red), "item lists red") }
                let extra = try fetch(context, "Item", "NOT (ANY tags.name == 'red')")[0]
                extra.addObject(red, toRelationship: "tags")
                try context.save()
                let again = try fetch(fixture.context(), "Tag", "name == 'red'")[0]
                try requireEqual(again.objects(forKey: "items").count, items.count + 1, "red's items after adding one")
            },
            ConformanceCase("ordered relationships keep their order, also after reordering") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let mix = try fetch(context, "Playlist")[0]
                try requireEqual(
                    names(mix.objects(forKey: "chapters"), "title"), ["Chapter 2", "Chapter 0", "Chapter 1"], "chapters"
                )
                let tracks = mix.objects(forKey: "tracks")
                mix.setValue(Array(tracks.reversed()), forKey: "tracks")
                try context.save()
                let again = try fetch(fixture.context(), "Playlist")[0]
                try requireEqual(
                    names(again.objects(forKey: "tracks"), "title"), ["Track 1", "Track 5", "Track 0", "Track 3"],
                    "reversed tracks")
                let track = try fetch(fixture.context(), "Track", "title == 'Track 0'")[0]
                try requireEqual(
                    names(track.objects(forKey: "playlists"), "title"), ["Mix"], "inverse of an ordered many-to-many")
            },
            ConformanceCase("self-referential relationships and cascade delete through them") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let root = try fetch(context, "Node", "label == 'root'")[0]
                try requireEqual(root.objects(forKey: "children").count, 3, "root's children")
                context.delete(root)
                try context.save()
                try requireEqual(
                    try fixture.context().count(for: FetchRequest(entityName: "Node")), 0,
                    "nodes after cascading delete")
            },
            ConformanceCase("delete rules: cascade deletes, nullify clears the inverse, deny refuses the save") {
                harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                let sales = try fetch(context, "Department", "name == 'Sales'")[0]
                let staff = sales.objects(forKey: "employees").count
                try require(staff > 0, "Sales has staff")
                let mentor = try fetch(context, "Employee", "name == 'Ann'")[0]
                try require(!mentor.objects(forKey: "mentees").isEmpty, "Ann mentors someone")
                context.delete(mentor)
                try requireThrows(
                    "deleting a mentor with mentees (deny)",
                    matches: {
                        ($0 as? ObjectValidationError)?.failures.contains {
                            $0.code == .relationshipDeniedDelete && $0.property == "mentees"
                        } ?? false
                    }
                ) {
                    try context.save()
                }
                context.rollback()
                try requireEqual(
                    try fetch(fixture.context(), "Employee", "name == 'Ann'").count, 1,
                    "Ann still stored after the refused save")
                let before = try fixture.context().count(for: FetchRequest(entityName: "Employee"))
                let managedBy = sales.object(forKey: "manager")
                let managerIsStaff = managedBy.map { sales.objects(forKey: "employees").contains($0) } ?? true
                for employee in sales.objects(forKey: "employees") {
                    employee.setValue(Set<ManagedObject>(), forKey: "mentees")
                }
                context.delete(sales)
                try context.save()
                let fresh = fixture.context()
                try requireEqual(
                    try fresh.count(for: FetchRequest(entityName: "Employee")), before - staff,
                    "employees after cascade")
                if let managedBy, !managerIsStaff {
                    let manager = try fresh.existingObject(with: managedBy.objectID)
                    try require(manager.object(forKey: "managedDepartment") == nil, "nullified inverse of manager")
                }
            },
            ConformanceCase("to-many relationships fault lazily and prefetch in bulk") { harness in
                let fixture = try Fixture(harness)
                let context = fixture.context()
                var request = FetchRequest(entityName: "Department", sortKeys: [SortKey("name")])
                request.relationshipKeyPathsForPrefetching = ["employees"]
                let departments = try context.fetch(request)
                try requireEqual(departments.count, 4, "departments")
                let total = departments.reduce(0) { $0 + $1.objects(forKey: "employees").count }
                try requireEqual(total, 11, "employees reached through departments")
            },
            ConformanceCase(
                "firing a to-many fault reads its members' rows in the same call: walking them reads nothing more"
            ) {
                harness in
                let fixture = try Fixture(harness.recording)
                let driver = try recordingDriver(fixture.store)
                for (entity, key, title) in [
                    ("Department", "employees", "name"), ("Tag", "items", "string"), ("Playlist", "tracks", "title"),
                ] {
                    // An empty row cache, so the members can come only from the driver.
                    fixture.coordinator.rowCache.removeAll(in: ObjectIdentifier(fixture.store))
                    let context = fixture.context()
                    let owners = try fetch(context, entity)
                    driver.clearCalls()
                    var walked: [String] = []
                    for owner in owners { walked += names(owner.objects(forKey: key), title) }
                    try require(
                        walked.count > owners.count, "\(entity).\(key) has members (the test would prove nothing)")
                    // Drivers that load to-many slots on demand read each owner's members with their
                    // rows (relatedRows); stores whose rows carry their members read the members'
                    // rows together (rows), and members met before are not read again. Either way:
                    // one call per owner at most, none per member.
                    let reads = driver.calls.filter { [.fetch, .rows, .relatedRows].contains($0.operation) }
                    try require(
                        reads.count <= owners.count && !reads.isEmpty,
                        "\(entity).\(key): \(reads.count) store calls for \(owners.count) owners and \(walked.count) members: \(reads)"
                    )
                    // The same members, in the same order, as a context that reads every member by ID.
                    let other = fixture.context()
                    for owner in owners {
                        let ids = owner.objectIDs(forRelationshipNamed: key)
                        let again = try ids.map { try other.existingObject(with: $0) }
                        try requireEqual(
                            names(owner.objects(forKey: key), title), names(again, title),
                            "\(entity).\(key) members of one owner")
                    }
                }
            },
            ConformanceCase("relatedRowsWithDestinations returns relatedRows' members and every member's row once") {
                harness in
                let fixture = try Fixture(harness)
                let model = fixture.coordinator.managedObjectModel
                let driver = fixture.store.driver
                for (entity, key) in [("Department", "employees"), ("Tag", "items"), ("Playlist", "tracks")] {
                    let description = try requireValue(model.entity(named: entity), "entity \(entity)")
                    let slot = try requireValue(description.index(ofProperty: key), "\(entity).\(key)")
                    var sources = try fetch(fixture.context(), entity).map(\.objectID.rowID)
                    // A source twice and one that does not exist: both are allowed.
                    sources += [sources[0], RowID(entity: description.entityNumber, primaryKey: 999_999)]
                    let request = RelatedRowsRequest(entity: description, slot: slot, sources: sources)
                    let members = try driver.relatedRows(request)
                    let related = try driver.relatedRowsWithDestinations(request)
                    try requireEqual(related.members, members, "\(entity).\(key) members")
                    let memberIDs = Set(members.values.joined())
                    try requireEqual(related.rows.count, memberIDs.count, "\(entity).\(key): one row per member")
                    try requireEqual(Set(related.rows.map(\.id)), memberIDs, "\(entity).\(key) rows")
                    let direct = try driver.rows(for: Array(memberIDs))
                    let byID = Dictionary(uniqueKeysWithValues: direct.map { ($0.id, $0) })
                    for row in related.rows {
                        try requireEqual(row.version, byID[row.id]?.version, "version of \(row.id)")
                        try requireEqual(row.values, byID[row.id]?.values, "values of \(row.id)")
                    }
                }
            },
        ]
    }
}
