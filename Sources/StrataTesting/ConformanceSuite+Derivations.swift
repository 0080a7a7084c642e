import Foundation
import Strata
import Synchronization

extension ConformanceSuite {
    /// Fetched properties and derived attributes (``DerivedModel``), on every driver: both are
    /// computed by the core through the context, so every store must give the same answers.
    static var derivationCases: [ConformanceCase] {
        [
            ConformanceCase(
                "fetched properties evaluate lazily with $FETCH_SOURCE and $FETCHED_PROPERTY and are kept until refresh"
            ) { harness in
                let fixture = try DerivedFixture(harness)
                let context = fixture.context()
                let sales = try fixture.department("Sales", in: context)
                let managers = try sales.fetchedObjects(forKey: "managers")
                try requireEqual(Set(names(managers, "surname")), ["Ames", "Baker"], "managers of Sales")
                try requireEqual(
                    names(sales.value(forKey: "managers") as? [ManagedObject] ?? [], "surname").sorted(),
                    ["Ames", "Baker"], "read with value(forKey:)")
                let namesakes = try sales.fetchedObjects(forKey: "namesakes")
                try requireEqual(names(namesakes, "surname"), ["sales"], "$FETCH_SOURCE.name with ==[c]")

                // Another context adds a manager: the kept result does not change until refresh.
                let other = fixture.context()
                let otherSales = try fetch(other, "Department", "name == 'Sales'")
                let added = try other.insertNewObject(forEntityName: "Employee")
                try added.setConvertedValue("Cole", forKey: "surname")
                try added.setConvertedValue("Manager", forKey: "title")
                added.setValue(otherSales.first, forKey: "department")
                try other.save()
                try requireEqual(
                    try sales.fetchedObjects(forKey: "managers").count, 2, "kept, not updated automatically")
                sales.managedObjectContext?.refresh(sales, mergeChanges: false)
                try requireEqual(
                    Set(names(try sales.fetchedObjects(forKey: "managers"), "surname")), ["Ames", "Baker", "Cole"],
                    "after refresh")

                // Pending changes of the context count, as in any fetch.
                let pending = try context.insertNewObject(forEntityName: "Employee")
                try pending.setConvertedValue("Dunn", forKey: "surname")
                try pending.setConvertedValue("Manager", forKey: "title")
                pending.setValue(sales, forKey: "department")
                context.refresh(sales, mergeChanges: true)
                try requireEqual(try sales.fetchedObjects(forKey: "managers").count, 4, "a pending manager is found")
                try requireThrows("an unknown fetched property") { _ = try sales.fetchedObjects(forKey: "nothing") }
            },
            ConformanceCase(
                "derived attributes are computed at save from key paths, @count, @sum, canonical: and now()"
            ) { harness in
                let fixture = try DerivedFixture(harness)
                let before = Date()
                let context = fixture.context()
                let sales = try fixture.department("Sales", in: context)
                try requireEqual(sales.value(forKey: "headcount") as? Int, 3, "@count")
                try requireEqual(sales.value(forKey: "payroll") as? Double, 60_000 + 70_000 + 30_000, "@sum")
                let research = try fixture.department("Récherche Avancée", in: context)
                try requireEqual(research.value(forKey: "searchName") as? String, "recherche avancee", "canonical:")
                try requireEqual(research.value(forKey: "headcount") as? Int, 0, "@count of none")
                try requireEqual(research.value(forKey: "payroll") as? Double, 0, "@sum of none")
                let stamp = try unwrap(sales.value(forKey: "stamp") as? Date, "now() is set")
                try require(stamp.timeIntervalSince(before) > -1, "now() is the save's time")
                let ames = try unwrap(fetch(context, "Employee", "surname == 'Ames'").first, "Ames")
                try requireEqual(ames.value(forKey: "departmentName") as? String, "Sales", "to-one key path")

                // A change to a source updates what derives from it, also in other objects.
                try ames.setConvertedValue(100_000.0, forKey: "salary")
                try context.save()
                try requireEqual(
                    sales.value(forKey: "payroll") as? Double, 100_000 + 70_000 + 30_000, "@sum after a member changed")
                try sales.setConvertedValue("Ventes", forKey: "name")
                try context.save()
                try requireEqual(ames.value(forKey: "departmentName") as? String, "Ventes", "a renamed destination")
                try requireEqual(sales.value(forKey: "searchName") as? String, "ventes", "canonical: again")
                ames.setValue(research, forKey: "department")
                try context.save()
                try requireEqual(sales.value(forKey: "headcount") as? Int, 2, "@count after a member left")
                try requireEqual(research.value(forKey: "headcount") as? Int, 1, "@count after a member joined")
                try requireEqual(ames.value(forKey: "departmentName") as? String, "Récherche Avancée", "moved")
                let baker = try unwrap(fetch(context, "Employee", "surname == 'Baker'").first, "Baker")
                context.delete(baker)
                try context.save()
                try requireEqual(sales.value(forKey: "headcount") as? Int, 1, "@count after a delete")
                try requireEqual(sales.value(forKey: "payroll") as? Double, 30_000, "@sum after a delete")

                // A value set by hand is replaced by the save.
                try sales.setConvertedValue(99, forKey: "headcount")
                try context.save()
                try requireEqual(sales.value(forKey: "headcount") as? Int, 1, "a value set by hand is overwritten")

                // The store holds the computed values.
                let (_, reopened) = try fixture.reopen()
                let stored = try unwrap(fetch(reopened, "Department", "name == 'Ventes'").first, "Ventes")
                try requireEqual(stored.value(forKey: "headcount") as? Int, 1, "stored @count")
                try requireEqual(stored.value(forKey: "payroll") as? Double, 30_000, "stored @sum")
                try requireEqual(stored.value(forKey: "searchName") as? String, "ventes", "stored canonical:")
                let found = try fetch(reopened, "Department", "searchName == 'recherche avancee'")
                try requireEqual(found.count, 1, "derived values can be fetched by")
                let moved = try unwrap(fetch(reopened, "Employee", "surname == 'Ames'").first, "Ames")
                try requireEqual(
                    moved.value(forKey: "departmentName") as? String, "Récherche Avancée", "stored key path")
            },
            ConformanceCase(
                "a batch insert computes each row's derived attributes as a save does, in all three of its forms"
            ) { harness in
                let fixture = try DerivedFixture(harness)
                let context = fixture.context()
                // The same department through a context, for the values a save gives it.
                let saved = try fixture.department("Comptabilité Générale", in: context)
                let before = Date()
                // A value given for a derived attribute is replaced, as Core Data's triggers do.
                _ = try context.execute(
                    BatchInsertRequest(
                        entityName: "Department",
                        objects: [["name": "Ünïcode Sales", "headcount": 7], ["name": "Comptabilité Générale 2"]]))
                // The handlers are Sendable: their counts sit behind a Mutex.
                let made = Mutex(0)
                _ = try context.execute(
                    BatchInsertRequest(entityName: "Department") { object in
                        let next = made.withLock { count -> Int in
                            count += 1
                            return count
                        }
                        guard next <= 2 else { return true }
                        object["name"] = "Dictionary \(next)"
                        return false
                    })
                let handled = Mutex(false)
                _ = try context.execute(
                    BatchInsertRequest(
                        entityName: "Department",
                        managedObjectHandler: { (department: ManagedObject) in
                            let done = handled.withLock { done -> Bool in
                                defer { done = true }
                                return done
                            }
                            guard !done else { return true }
                            department.setValue("Handler Ö", forKey: "name")
                            return false
                        }))
                _ = try context.execute(
                    BatchInsertRequest(entityName: "Employee", objects: [["surname": "Lone", "salary": 5.0]]))
                let reader = fixture.context()
                let expected = [
                    "Ünïcode Sales": "unicode sales", "Comptabilité Générale 2": "comptabilite generale 2",
                    "Dictionary 1": "dictionary 1", "Handler Ö": "handler o",
                ]
                for (name, searchName) in expected {
                    let row = try unwrap(
                        fetch(reader, "Department", "name == '\(name)'").first, "batch-inserted \(name)")
                    try requireEqual(row.value(forKey: "searchName") as? String, searchName, "\(name)'s canonical:")
                    try requireEqual(
                        row.value(forKey: "headcount") as? Int, saved.value(forKey: "headcount") as? Int,
                        "\(name)'s @count, as a save computes it for a department without employees")
                    try requireEqual(
                        row.value(forKey: "payroll") as? Double, saved.value(forKey: "payroll") as? Double,
                        "\(name)'s @sum, as a save computes it")
                    let stamp = try unwrap(row.value(forKey: "stamp") as? Date, "\(name)'s now()")
                    try require(stamp.timeIntervalSince(before) > -1, "\(name)'s now() is the insert's time")
                }
                try requireEqual(
                    try fetch(reader, "Department", "searchName == 'dictionary 2'").count, 1,
                    "a derived value fetched by, from the dictionary handler")
                let lone = try unwrap(fetch(reader, "Employee", "surname == 'Lone'").first, "Lone")
                try requireEqual(lone.value(forKey: "departmentName") as? String, nil, "a to-one key path without one")
            },
        ]
    }

    static func unwrap<T>(_ value: T?, _ what: String, file: String = #fileID, line: Int = #line) throws -> T {
        guard let value else {
            throw ConformanceFailure(message: "\(what): expected a value, got nil", file: file, line: line)
        }
        return value
    }

    /// A store of ``DerivedModel`` in a fresh directory.
    struct DerivedFixture {
        let directory: TemporaryDirectory
        let coordinator: PersistentStoreCoordinator
        let store: PersistentStore
        let harness: DriverHarness
        private let keeper = ContextKeeper()

        init(_ harness: DriverHarness) throws {
            directory = try TemporaryDirectory(prefix: "conformance-derived-\(harness.name)")
            (coordinator, store) = try harness.openStack(in: directory, model: DerivedModel.model)
            self.harness = harness
        }

        func context() -> ManagedObjectContext { keeper.keep(ManagedObjectContext(coordinator: coordinator)) }

        /// A saved department of the seed: Sales (Ames and Baker managers, Sales an engineer) or
        /// another name (no employees).
        func department(_ name: String, in context: ManagedObjectContext) throws -> ManagedObject {
            let employees: [(String, String?, Double?)] =
                name == "Sales"
                ? [("Ames", "Manager", 60_000), ("Baker", "Manager", 70_000), ("sales", "Engineer", 30_000)] : []
            let department = try DerivedModel.department(name, employees: employees, in: context)
            try context.save()
            return department
        }

        func reopen() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
            try coordinator.remove(store)
            let (again, _) = try harness.openStack(in: directory, model: DerivedModel.model)
            return (again, keeper.keep(ManagedObjectContext(coordinator: again)))
        }
    }
}
