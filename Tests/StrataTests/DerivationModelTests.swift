import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

/// A model document around `body`; the body starts on line 3.
private func load(_ body: String) throws -> ManagedObjectModel {
    let text = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="">
        \(body)
        </model>
        """
    return try ManagedObjectModel(xmlData: Data(text.utf8), fileName: "Bad.xcdatamodel/contents")
}

private func loadError(_ body: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> ModelError {
    do {
        _ = try load(body)
    } catch let error as ModelError {
        return error
    }
    Issue.record("loading succeeded; a ModelError was expected", sourceLocation: sourceLocation)
    throw CancellationError()
}

@Suite("Fetched properties and derived attributes in models")
struct DerivationModelTests {
    @Test("a fetched property whose predicate does not parse stops the model, naming file, line, entity and property")
    func unparsableFetchedPredicate() throws {
        let error = try loadError(
            """
            <entity name="A">
                <attribute name="name" optional="YES" attributeType="String"/>
                <fetchedProperty name="friends" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="A" predicateString="name == == $FETCH_SOURCE.name"/>
                </fetchedProperty>
            </entity>
            """)
        #expect(error.code == .invalidValue)
        #expect(error.file == "Bad.xcdatamodel/contents" && error.line == 5)
        #expect(error.element == "fetchedProperty A.friends")
        #expect(error.description.contains("'A.friends'") && error.description.contains("predicateString"))
    }

    @Test("a fetched property reading a key its entities lack stops the model")
    func unknownKeyInFetchedPredicate() throws {
        let error = try loadError(
            """
            <entity name="A">
                <attribute name="name" optional="YES" attributeType="String"/>
                <fetchedProperty name="friends" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="B" predicateString="title == $FETCH_SOURCE.nickname"/>
                </fetchedProperty>
            </entity>
            <entity name="B"><attribute name="title" optional="YES" attributeType="String"/></entity>
            """)
        #expect(error.code == .invalidValue && error.element == "fetchedProperty A.friends")
        #expect(error.description.contains("nickname"))
    }

    @Test(
        "a fetched property comparing values that do not fit loads, as in Core Data, and reading it throws naming the property"
    )
    func mismatchedFetchedPredicate() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="when" optional="YES" attributeType="Date"/>
                <fetchedProperty name="odd" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="A" predicateString="when == YES"/>
                </fetchedProperty>
            </entity>
            """)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let a = try context.insertNewObject(forEntityName: "A")
        let error = try #require(throws: FetchPredicateError.self) { try a.fetchedObjects(forKey: "odd") }
        #expect(error.message.contains("fetched property 'A.odd'"), "\(error)")
        #expect(a.value(forKey: "odd") as? [ManagedObject] == [], "a property read that fails reads as empty")
        #expect(context.accessFailure != nil, "and the failure is kept for the next save")
    }

    @Test("a derived attribute whose expression does not fit stops the model, naming the attribute")
    func badDerivation() throws {
        for (expression, says) in [
            ("items", "relationship"), ("items.price", "@count"), ("nothing.@count", "nothing"), ("(", "("),
            ("lowercase:(items.@count) +", "+"),
        ] {
            let error = try loadError(
                """
                <entity name="A">
                    <attribute name="d" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="\(expression)"/>
                    <relationship name="items" optional="YES" toMany="YES" destinationEntity="B" inverseName="a" inverseEntity="B"/>
                </entity>
                <entity name="B">
                    <attribute name="price" optional="YES" attributeType="Double"/>
                    <relationship name="a" optional="YES" maxCount="1" destinationEntity="A" inverseName="items" inverseEntity="A"/>
                </entity>
                """)
            #expect(error.code == .invalidValue && error.element == "attribute A.d" && error.line == 4, "\(expression)")
            #expect(error.description.contains(says), "\(expression): \(error)")
        }
    }

    @Test(
        "the corpus model with derived attributes and a fetched property loads and keeps them",
        .enabled(if: ProcessInfo.processInfo.environment["STRATA_CORPUS"] != nil))
    func corpusDerivations() throws {
        let folder = try #require(ProcessInfo.processInfo.environment["STRATA_CORPUS"])
        let url = URL(fileURLWithPath: folder).appendingPathComponent(
            "models/SwiftGen__SwiftGen__Model2-fixture.xcdatamodel.xml")
        let model = try ManagedObjectModel(contentsOf: url)
        let child = try #require(model.entity(named: "ChildEntity"))
        #expect(child.attributesByName["derivedCount"]?.derivationExpression == "oneToMany.@count")
        #expect(child.attributesByName["now"]?.isDerived == true)
        #expect(model.fetchedProperty(named: "fetchedProperty", of: child) != nil)
    }

    @Test("a batch insert row whose derived value does not fit fails the request, naming the row and attribute")
    func batchInsertDerivationError() throws {
        let model = try load(
            """
            <entity name="A">
                <attribute name="big" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
                <attribute name="small" optional="YES" attributeType="Integer 16" derived="YES" derivationExpression="big" usesScalarValueType="YES"/>
            </entity>
            """)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(coordinator: coordinator)
        let error = try #require(throws: StoreError.self) {
            try context.execute(BatchInsertRequest(entityName: "A", objects: [["big": 12], ["big": 100_000]]))
        }
        #expect(error.code == .invalidRequest)
        #expect(error.message.contains("object 1 of the batch insert"), "\(error)")
        #expect(error.message.contains("'A.small'") && error.message.contains("'big'"), "\(error)")
        #expect(try context.count(for: FetchRequest(entityName: "A")) == 0, "nothing was inserted")
        // Rows that fit are stored with their derived values.
        try context.execute(BatchInsertRequest(entityName: "A", objects: [["big": 12], ["big": -3]]))
        let rows = try context.fetch(FetchRequest(entityName: "A"))
        #expect(Set(rows.compactMap { $0.value(forKey: "small") as? Int }) == [12, -3])
    }

    @Test("a store error while computing derived attributes fails the save, changes nothing, and a retry works")
    func derivationStoreError() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: DerivedModel.model)
        let store = try coordinator.addPersistentStore(type: RecordingDriver.storeType(wrapping: .inMemory))
        let driver = try #require(store.driver as? RecordingDriver)
        let first = ManagedObjectContext(coordinator: coordinator)
        try DerivedModel.department("Sales", employees: [("Ames", "Manager", 10), ("Baker", nil, 20)], in: first)
        try first.save()
        coordinator.rowCache.removeAll(in: ObjectIdentifier(store))
        let context = ManagedObjectContext(coordinator: coordinator)
        let ames = try #require(
            try context.fetch(
                FetchRequest(entityName: "Employee", predicate: FetchPredicate(format: "surname == 'Ames'"))
            ).first)
        try ames.setConvertedValue(15.0, forKey: "salary")
        driver.failNext(.rows, with: StoreError(.io, "injected read failure"))
        #expect(throws: StoreError.self) { try context.save() }
        let fresh = ManagedObjectContext(coordinator: coordinator)
        let stored = try fresh.fetch(FetchRequest(entityName: "Department"))
        #expect(stored.first?.value(forKey: "payroll") as? Double == 30, "nothing was written")
        try context.save()
        let again = ManagedObjectContext(coordinator: coordinator)
        #expect(
            try again.fetch(FetchRequest(entityName: "Department")).first?.value(forKey: "payroll") as? Double == 35)
    }

    @Test("canonical: lowercases and removes diacritics")
    func canonical() throws {
        let expression = try FetchExpression(format: "canonical:(name)")
        #expect(try expression.value(with: ["name": StoreValue.string("Crème BRÛLÉE")]) == .string("creme brulee"))
        #expect(try expression.value(with: ["name": StoreValue.null]) == .null)
    }
}
