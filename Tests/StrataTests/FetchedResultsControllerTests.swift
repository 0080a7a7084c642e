import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

/// Records what a controller reports.
final class RecordingResultsDelegate: FetchedResultsControllerDelegate {
    var updates = 0
    var objectChanges: [(ManagedObject, IndexPath?, FetchedResultsChangeType, IndexPath?)] = []
    var sectionChanges: [(String, Int, FetchedResultsChangeType)] = []
    var differences: [CollectionDifference<ManagedObjectID>] = []
    var snapshots: [FetchedResultsSnapshot] = []
    /// The content as object identities when each update ended, and the last update's changes.
    var contents: [ObjectSections] = []
    var wantsSnapshots = false
    var open = false

    func controllerWillChangeContent(_ controller: FetchedResultsController) {
        #expect(!open, "will-change twice")
        open = true
        objectChanges = []
        sectionChanges = []
    }
    func controller(
        _ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        #expect(open, "an object change outside will/did")
        objectChanges.append((object, indexPath, type, newIndexPath))
    }
    func controller(
        _ controller: FetchedResultsController, didChange section: FetchedResultsSection,
        atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType
    ) {
        #expect(open, "a section change outside will/did")
        sectionChanges.append((section.name, sectionIndex, type))
    }
    func controllerDidChangeContent(_ controller: FetchedResultsController) {
        open = false
        updates += 1
        contents.append(ObjectSections(controller))
        allChanges.append(lastChanges)
    }

    /// Every update's changes, in order.
    var allChanges: [ObjectSections.Changes] = []

    /// The last update's changes, by object.
    var lastChanges: ObjectSections.Changes {
        ObjectSections.Changes(
            sections: sectionChanges.map { ($0.0, $0.1, $0.2) },
            objects: objectChanges.map { (ObjectIdentifier($0.0), $0.1, $0.2, $0.3) })
    }
    func controller(
        _ controller: FetchedResultsController, didChangeContentWith difference: CollectionDifference<ManagedObjectID>
    ) {
        differences.append(difference)
    }
    func controller(_ controller: FetchedResultsController, didChangeContentWith snapshot: FetchedResultsSnapshot) {
        snapshots.append(snapshot)
    }
}

/// A controller's content as object identities (IDs change at save; identities do not).
struct ObjectSections: Equatable {
    var names: [String]
    var items: [[ObjectIdentifier]]

    init(names: [String], items: [[ObjectIdentifier]]) {
        self.names = names
        self.items = items
    }

    init(_ controller: FetchedResultsController) {
        let sections = controller.sections ?? []
        names = sections.map(\.name)
        items = sections.map { $0.objects.map(ObjectIdentifier.init) }
    }

    struct Changes {
        var sections: [(String, Int, FetchedResultsChangeType)]
        var objects: [(ObjectIdentifier, IndexPath?, FetchedResultsChangeType, IndexPath?)]
    }

    /// Applies reported changes as `UITableView` applies batch updates: rows deleted at old index
    /// paths, sections deleted at old indexes, sections inserted and rows inserted at new ones.
    func applying(_ changes: Changes) -> ObjectSections? {
        var sections = zip(names, items).map { (name: $0, items: $1) }
        let removals = changes.objects.filter { $0.2 == .delete || $0.2 == .move }.compactMap(\.1)
        for path in removals.sorted(by: { ($0[0], $0[1]) > ($1[0], $1[1]) }) {
            guard path[0] < sections.count, path[1] < sections[path[0]].items.count else { return nil }
            sections[path[0]].items.remove(at: path[1])
        }
        for change in changes.sections where change.2 == .delete {
            guard change.1 < sections.count else { return nil }
            sections.remove(at: change.1)
        }
        for change in changes.sections where change.2 == .insert {
            guard change.1 <= sections.count else { return nil }
            sections.insert((change.0, []), at: change.1)
        }
        let insertions = changes.objects.filter { $0.2 == .insert || $0.2 == .move }.compactMap { change in
            change.3.map { ($0, change.0) }
        }
        for (path, id) in insertions.sorted(by: { ($0.0[0], $0.0[1]) < ($1.0[0], $1.0[1]) }) {
            guard path[0] < sections.count, path[1] <= sections[path[0]].items.count else { return nil }
            sections[path[0]].items.insert(id, at: path[1])
        }
        return ObjectSections(names: sections.map(\.name), items: sections.map(\.items))
    }
}

@Suite("Fetched results controller")
struct FetchedResultsControllerTests {
    static let sectioned = FetchRequest(
        entityName: "Employee", sortKeys: [SortKey("department.name"), SortKey("name")])

    /// What a fresh fetch of the controller's request gives, in sections by department name.
    private func expected(_ request: FetchRequest, _ context: ManagedObjectContext, sectioned: Bool) throws
        -> FetchedResultsSnapshot
    {
        var plain = request
        plain.fetchBatchSize = 0
        let objects = try context.fetch(plain)
        guard sectioned else {
            return FetchedResultsSnapshot(sectionIdentifiers: [""], itemIdentifiersBySection: [objects.map(\.objectID)])
        }
        var names: [String] = []
        var items: [[ManagedObjectID]] = []
        for object in objects {
            let name = object.object(forKey: "department")?.value(forKey: "name") as? String ?? ""
            if names.last != name || names.isEmpty {
                names.append(name)
                items.append([])
            }
            items[items.count - 1].append(object.objectID)
        }
        return FetchedResultsSnapshot(sectionIdentifiers: names, itemIdentifiersBySection: items)
    }

    @Test(
        "performFetch gives the fetch's objects in sections, with names, index titles, object(at:) and indexPath(forObject:)"
    )
    func fetchAndRead() throws {
        let stack = try TestStack(seeded: true)
        let controller = FetchedResultsController(
            fetchRequest: Self.sectioned, managedObjectContext: stack.context, sectionNameKeyPath: "department.name")
        #expect(controller.sections == nil && controller.fetchedObjects == nil)
        try controller.performFetch()
        let sections = try #require(controller.sections)
        #expect(sections.map(\.name) == ["", "Research", "Sales", "support"])
        #expect(sections.map(\.numberOfObjects) == [1, 4, 4, 3])
        #expect(sections.map(\.indexTitle) == ["", "R", "S", "S"])
        #expect(controller.sectionIndexTitles == ["R", "S"])
        #expect(controller.snapshot == (try expected(Self.sectioned, stack.context, sectioned: true)))
        let objects = try #require(controller.fetchedObjects)
        #expect(objects.map(\.objectID) == (try stack.context.fetch(Self.sectioned)).map(\.objectID))
        for (s, section) in sections.enumerated() {
            for (r, object) in section.objects.enumerated() {
                #expect(controller.object(at: IndexPath(indexes: [s, r])) === object)
                #expect(controller.indexPath(forObject: object) == IndexPath(indexes: [s, r]))
            }
        }
        #expect(controller.indexPath(forObject: try stack.fetch("Department")[0]) == nil)
        let single = FetchedResultsController(
            fetchRequest: FetchRequest(
                entityName: "Employee", predicate: try FetchPredicate(format: "age > 200"), sortKeys: [SortKey("name")]),
            managedObjectContext: stack.context)
        try single.performFetch()
        #expect(
            single.sections?.count == 1 && single.sections?.first?.numberOfObjects == 0
                && single.sections?.first?.name == "")
    }

    @Test(
        "requests a controller cannot follow are refused: no sort keys, a section key path not first, a page, an unknown entity"
    )
    func badRequests() throws {
        let stack = try TestStack(seeded: true)
        func refused(_ request: FetchRequest, section: String? = nil, mentioning text: String) {
            let controller = FetchedResultsController(
                fetchRequest: request, managedObjectContext: stack.context, sectionNameKeyPath: section)
            #expect { try controller.performFetch() } throws: { error in
                guard let error = error as? StoreError, error.code == .invalidRequest else { return false }
                return error.message.contains(text)
            }
            #expect(controller.fetchedObjects == nil)
        }
        refused(FetchRequest(entityName: "Employee"), mentioning: "needs sort keys")
        refused(
            FetchRequest(entityName: "Employee", sortKeys: [SortKey("name"), SortKey("department.name")]),
            section: "department.name",
            mentioning: "must be the first sort key's key path (it is 'name')")
        var paged = FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])
        paged.fetchLimit = 3
        refused(paged, mentioning: "fetchOffset and fetchLimit")
        refused(FetchRequest(entityName: "Robot", sortKeys: [SortKey("name")]), mentioning: "no such entity")
        let badKey = FetchedResultsController(
            fetchRequest: FetchRequest(entityName: "Employee", sortKeys: [SortKey("wage")]),
            managedObjectContext: stack.context)
        #expect(throws: FetchPredicateError.self) { try badKey.performFetch() }
    }

    @Test(
        "local inserts, updates, moves and deletes are reported per change, as a difference and as sections that match a refetch"
    )
    func localChanges() throws {
        let stack = try TestStack(seeded: true)
        let context = stack.context
        let controller = FetchedResultsController(
            fetchRequest: Self.sectioned, managedObjectContext: context, sectionNameKeyPath: "department.name")
        let delegate = RecordingResultsDelegate()
        delegate.wantsSnapshots = true
        controller.delegate = delegate
        try controller.performFetch()
        let departments = try stack.fetch("Department")
        var before = ObjectSections(controller)
        var beforeIDs = controller.snapshot.itemIdentifiers
        var reported = 0
        func check(_ what: String, saved: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws {
            context.processPendingChanges()
            let after = ObjectSections(controller)
            #expect(
                controller.snapshot == (try expected(Self.sectioned, context, sectioned: true)), "\(what): sections",
                sourceLocation: sourceLocation)
            var replayed: ObjectSections? = before
            for changes in delegate.allChanges[reported...] { replayed = replayed?.applying(changes) }
            reported = delegate.allChanges.count
            #expect(
                replayed == after, "\(what): the reported changes turn the old sections into the new",
                sourceLocation: sourceLocation)
            if !saved {
                // IDs stay the same without a save, so the ID forms can be checked too.
                let difference = try #require(delegate.differences.last, sourceLocation: sourceLocation)
                #expect(
                    beforeIDs.applying(difference) == controller.snapshot.itemIdentifiers, "\(what): the difference",
                    sourceLocation: sourceLocation)
                #expect(
                    delegate.snapshots.last == controller.snapshot, "\(what): the snapshot",
                    sourceLocation: sourceLocation)
            }
            before = after
            beforeIDs = controller.snapshot.itemIdentifiers
        }
        // An insert into an existing section.
        let aaron = try context.insertNewObject(forEntityName: "Employee")
        aaron["name"] = "Aaron"
        aaron["department"] = departments[0]
        try check("insert")
        #expect(delegate.objectChanges.map(\.2) == [.insert] && delegate.objectChanges.first?.0 === aaron)
        // An update that keeps the position.
        aaron["age"] = 51
        try check("update")
        #expect(delegate.objectChanges.map(\.2) == [.update])
        // A rename that moves within the section.
        aaron["name"] = "Zack"
        try check("move within a section")
        #expect(delegate.objectChanges.map(\.2) == [.move])
        // A move to a new section, which appears.
        let editions = departments.first { $0.value(forKey: "name") as? String == "Éditions" }!
        aaron["department"] = editions
        try check("move to a new section")
        #expect(delegate.sectionChanges.map(\.2) == [.insert] && delegate.sectionChanges.first?.0 == "Éditions")
        // A delete that empties the section.
        context.delete(aaron)
        try check("delete")
        #expect(delegate.sectionChanges.map(\.2) == [.delete])
        // Several at once, saved.
        let sales = try stack.fetch("Employee", "department.name == 'Sales'")
        for employee in sales { employee["department"] = departments[0] }
        let newcomer = try context.insertNewObject(forEntityName: "Employee")
        newcomer["name"] = "Ann"
        try context.save()
        try check("a saved batch", saved: true)
        #expect(delegate.updates >= 6)
    }

    @Test("a save merged from a background context updates a sectioned controller on a merging context")
    func mergedSaves() async throws {
        let stack = try TestStack(seeded: true)
        let view = stack.newContext()
        view.automaticallyMergesChangesFromParent = true
        let controller = FetchedResultsController(
            fetchRequest: Self.sectioned, managedObjectContext: view, sectionNameKeyPath: "department.name")
        let delegate = RecordingResultsDelegate()
        controller.delegate = delegate
        var stream = controller.updates().makeAsyncIterator()
        try view.performAndWait { try controller.performFetch() }
        let before = view.performAndWait { ObjectSections(controller) }
        let background = stack.newContext()
        try background.performAndWait {
            let research = try stack.fetch("Department", "name == 'Research'", in: background)[0]
            let newcomer = try background.insertNewObject(forEntityName: "Employee")
            newcomer["name"] = "Bea"
            newcomer["department"] = research
            let dan = try stack.fetch("Employee", "name == 'Dan'", in: background)[0]
            dan["department"] = nil
            let eve = try stack.fetch("Employee", "name == 'eve'", in: background)[0]
            background.delete(eve)
            try background.save()
        }
        try view.performAndWait {
            let after = ObjectSections(controller)
            let reference = try expected(Self.sectioned, view, sectioned: true)
            #expect(controller.snapshot == reference)
            #expect(after.items.joined().count == before.items.joined().count)
            // Bea inserted, eve deleted, Dan moved out of Research; eve's mentor is updated too.
            #expect(Set(delegate.objectChanges.map(\.2)).isSuperset(of: [.insert, .delete, .move]))
            #expect(before.applying(delegate.lastChanges) == after)
        }
        let streamed = try #require(await stream.next())
        #expect(streamed.objectChanges.count == delegate.objectChanges.count)
        #expect(streamed.objectChanges.map(\.type) == delegate.objectChanges.map(\.2))
    }

    @Test("with a batch size the controller keeps its objects as faults and still follows changes")
    func batchedFaults() throws {
        let stack = try TestStack(seeded: true)
        let context = stack.newContext()
        var request = Self.sectioned
        request.fetchBatchSize = 4
        let controller = FetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "department.name")
        try controller.performFetch()
        let objects = try #require(controller.fetchedObjects)
        #expect(objects.count == 12 && objects.allSatisfy(\.isFault))
        #expect(controller.snapshot == (try expected(Self.sectioned, stack.newContext(), sectioned: true)))
        _ = controller.object(at: IndexPath(indexes: [1, 0])).value(forKey: "name")
        #expect(objects.filter(\.isFault).count == 8, "one batch of four loaded")
        let other = stack.newContext()
        let bob = try stack.fetch("Employee", "name == 'bob'", in: other)[0]
        bob["name"] = "Aardvark"
        try other.save()
        context.mergeChanges(fromContextDidSave: ContextDidSave(updatedObjectIDs: [bob.objectID]))
        #expect(controller.snapshot == (try expected(Self.sectioned, context, sectioned: true)))
    }

    @Test("equal sort values keep the refetch order across a save that gives inserts permanent IDs")
    func tiesAcrossSave() throws {
        let stack = try TestStack(seeded: true)
        let context = stack.context
        let request = FetchRequest(entityName: "Employee", sortKeys: [SortKey("age")])
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
        try controller.performFetch()
        for index in 0..<5 {
            let twin = try context.insertNewObject(forEntityName: "Employee")
            twin["name"] = "Twin \(index)"
            twin["age"] = 27
        }
        context.processPendingChanges()
        #expect(controller.snapshot == (try expected(request, context, sectioned: false)))
        try context.save()
        #expect(controller.snapshot == (try expected(request, context, sectioned: false)))
    }

    @Test("a reset refetches and reports every object; a rollback takes unsaved inserts out")
    func resetAndRollback() throws {
        let stack = try TestStack(seeded: true)
        let context = stack.context
        let controller = FetchedResultsController(
            fetchRequest: Self.sectioned, managedObjectContext: context, sectionNameKeyPath: "department.name")
        let delegate = RecordingResultsDelegate()
        controller.delegate = delegate
        try controller.performFetch()
        let extra = try context.insertNewObject(forEntityName: "Employee")
        extra["name"] = "Extra"
        context.processPendingChanges()
        #expect(controller.fetchedObjects?.count == 13)
        context.rollback()
        context.processPendingChanges()
        #expect(controller.fetchedObjects?.count == 12)
        #expect(delegate.objectChanges.map(\.2) == [.delete])
        context.reset()
        context.processPendingChanges()
        #expect(controller.fetchedObjects?.count == 12)
        #expect(
            delegate.objectChanges.filter { $0.2 == .delete }.count == 12
                && delegate.objectChanges.filter { $0.2 == .insert }.count == 12)
        #expect(controller.snapshot == (try expected(Self.sectioned, context, sectioned: true)))
    }

    @Test(
        "random changes, local and merged, keep a controller equal to a refetch; every reported update turns the old sections into the new"
    )
    func randomDifferential() throws {
        let seed: UInt64 = 0x5EED_0020
        let rounds = 150
        print("fetched results controller differential: seed \(seed), \(rounds) rounds")
        var random = SeededGenerator(seed: seed)
        let stack = try TestStack(seeded: true)
        let view = stack.newContext()
        let writer = stack.newContext()
        let predicate = try FetchPredicate(format: "age >= 25 OR name BEGINSWITH 'A'")
        let request = FetchRequest(
            entityName: "Employee", predicate: predicate,
            sortKeys: [SortKey("department.name"), SortKey("age", ascending: false), SortKey("name")])
        let controller = FetchedResultsController(
            fetchRequest: request, managedObjectContext: view, sectionNameKeyPath: "department.name")
        let delegate = RecordingResultsDelegate()
        controller.delegate = delegate
        // Each context merges the other's saves (the writer at its next fetch).
        view.automaticallyMergesChangesFromParent = true
        writer.automaticallyMergesChangesFromParent = true
        try controller.performFetch()
        let departments = try stack.fetch("Department", in: view)
        var before = ObjectSections(controller)
        var checked = 0
        for round in 0..<rounds {
            let local = Bool.random(using: &random)
            let context = local ? view : writer
            let employees = try context.fetch(FetchRequest(entityName: "Employee"))
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                switch Int.random(in: 0..<10, using: &random) {
                case 0...2:
                    let e = try context.insertNewObject(forEntityName: "Employee")
                    e["name"] = ["A", "B", "C", "Z"][Int.random(in: 0..<4, using: &random)] + "\(round)"
                    e["age"] = Int.random(in: 18...60, using: &random)
                    let department = departments.randomElement(using: &random)!.objectID  // the model has departments
                    e["department"] = Bool.random(using: &random) ? context.object(with: department) : nil
                case 3...6:
                    guard let e = employees.randomElement(using: &random), !e.isDeleted else { continue }
                    if Bool.random(using: &random) { e["age"] = Int.random(in: 18...60, using: &random) }
                    if Bool.random(using: &random) {
                        // the model has departments
                        let department = departments.randomElement(using: &random)!.objectID
                        e["department"] = context.object(with: department)
                    }
                default:
                    guard let e = employees.randomElement(using: &random), !e.isDeleted,
                        e.objects(forKey: "mentees").isEmpty
                    else { continue }
                    context.delete(e)
                }
            }
            let reports = delegate.updates
            if local {
                if Bool.random(using: &random) { try view.save() } else { view.processPendingChanges() }
            } else {
                try writer.save()
                view.processPendingChanges()  // merges the writer's save
            }
            let after = ObjectSections(controller)
            let reference = try expected(request, view, sectioned: true)
            guard controller.snapshot == reference else {
                Issue.record(
                    "round \(round): controller \(after.names) \(after.items.map(\.count)), refetch \(reference.sectionIdentifiers) \(reference.itemIdentifiersBySection.map(\.count))"
                )
                return
            }
            // The updates reported this round turn the content before it into the content after it.
            var replayed: ObjectSections? = before
            for changes in delegate.allChanges[reports...] { replayed = replayed?.applying(changes) }
            if replayed != after {
                let changes = delegate.objectChanges.map { change in
                    "\(change.0.value(forKey: "name") ?? "-") \(change.2) \(change.1.map { "\($0[0]).\($0[1])" } ?? "-")->\(change.3.map { "\($0[0]).\($0[1])" } ?? "-")"
                }
                Issue.record(
                    "round \(round): \(before.names) \(before.items.map(\.count)) -> \(after.names) \(after.items.map(\.count)); last sections \(delegate.sectionChanges.map { "\($0.2) \($0.0)@\($0.1)" }); last objects \(changes)"
                )
            }
            checked += delegate.updates - reports
            before = after
        }
        print("fetched results controller differential: \(checked) updates replayed")
        #expect(checked > rounds / 2)
    }
}
