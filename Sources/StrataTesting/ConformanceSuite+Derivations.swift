import Foundation
import Strata

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
