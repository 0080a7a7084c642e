import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@Suite("Composite attributes: objects")
struct CompositeObjectTests {
    func quake() throws -> (TestStack, ManagedObject) {
        let stack = try TestStack(model: CompositeModel.model)
        let quake = try stack.context.insertNewObject(forEntityName: "Quake")
        quake["code"] = "q"
        return (stack, quake)
    }

    func storeError(_ body: () throws -> Void) -> StoreError? {
        do {
            try body()
        } catch let error as StoreError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
        }
        return nil
    }

    @Test("a composite reads as a dictionary keyed by element name, nested composites as nested dictionaries")
    func dictionaryAccess() throws {
        let (_, quake) = try quake()
        #expect(quake.value(forKey: "location") == nil, "a new composite with no defaults is nil")
        quake.setValue(["latitude": 1.5, "place": ["city": "Lima"]] as [String: Any], forKey: "location")
        let location = try #require(quake.value(forKey: "location") as? [String: Any])
        #expect(Set(location.keys) == ["latitude", "place"], "nil elements are left out")
        #expect(location["latitude"] as? Double == 1.5)
        #expect((location["place"] as? [String: Any])?["city"] as? String == "Lima")
        #expect(quake["location.place.city"] as? String == "Lima")
        #expect(quake.value(forKey: "location.longitude") == nil)
        // Replacing: elements left out become nil.
        try quake.setConvertedValue(["longitude": 2] as [String: Any], forKey: "location")
        #expect(quake.value(forKey: "location.latitude") == nil)
        #expect(quake.value(forKey: "location.longitude") as? Double == 2, "integers convert to the element's type")
        #expect(quake.value(forKey: "location.place") == nil)
        // [String: Any?] with nils, and StoreValues.
        let partial: [String: Any?] = ["richter": 5.5, "depth": nil]
        try quake.setConvertedValue(partial, forKey: "magnitude")
        #expect(quake.value(forKey: "magnitude.richter") as? Double == 5.5)
        try quake.setConvertedValue(["richter": StoreValue.double(6)], forKey: "magnitude")
        #expect(quake.value(forKey: "magnitude.richter") as? Double == 6)
        quake.setValue(nil, forKey: "magnitude")
        #expect(quake.value(forKey: "magnitude") == nil)
        #expect(quake.value(forKey: "magnitude.richter") == nil)
    }

    @Test("dictionary results take a composite by name as a dictionary")
    func dictionaryResults() throws {
        let (stack, quake) = try quake()
        quake.setValue(["latitude": 1.5] as [String: Any], forKey: "location")
        try stack.context.save()
        var request = FetchRequest(entityName: "Quake")
        request.propertiesToFetch = ["code", "location"]
        let rows = try stack.newContext().fetchDictionaries(request)
        #expect((rows.first?["location"] as? [String: Any])?["latitude"] as? Double == 1.5)
    }

    @Test("elements read and write by key path, typed and untyped; the stored form of an element is its own")
    func elementAccess() throws {
        let (_, quake) = try quake()
        quake["magnitude.richter"] = 4.25
        let richter: Double? = quake["magnitude.richter"]
        #expect(richter == 4.25)
        #expect(quake.value(forKey: "magnitude.richter", as: Double.self) == 4.25)
        try quake.setStoreValue(.double(1), forKey: "magnitude.depth")
        #expect(try quake.storeValue(forKey: "magnitude.depth") == .double(1))
        #expect((quake.value(forKey: "magnitude") as? [String: Any])?["depth"] as? Float == 1)
        let typed: Double? = quake["magnitude"]
        #expect(typed == nil, "a composite is not a scalar")
    }

    @Test("bad keys, bad values and stored forms of a composite are typed errors, and change nothing")
    func errors() throws {
        let (stack, quake) = try quake()
        quake.setValue(["latitude": 1.0] as [String: Any], forKey: "location")
        try stack.context.save()
        let unknown = storeError {
            try quake.setConvertedValue(["latitude": 2.0, "altitude": 3] as [String: Any], forKey: "location")
        }
        #expect(unknown?.code == .invalidRequest)
        #expect(unknown?.message.contains("no element 'altitude'") == true, "\(String(describing: unknown))")
        let wrongType = storeError {
            try quake.setConvertedValue(["latitude": 2.0, "longitude": "east"] as [String: Any], forKey: "location")
        }
        #expect(wrongType?.code == .invalidRequest && wrongType?.message.contains("location.longitude") == true)
        let nested = storeError { try quake.setConvertedValue(["place": "Lima"] as [String: Any], forKey: "location") }
        #expect(nested?.code == .invalidRequest && nested?.message.contains("takes a dictionary") == true)
        let notDictionary = storeError { try quake.setConvertedValue(42, forKey: "location") }
        #expect(notDictionary?.code == .invalidRequest)
        #expect(quake.value(forKey: "location.latitude") as? Double == 1.0, "a failed set changes no element")
        #expect(!quake.hasChanges)
        let stored = storeError { _ = try quake.storeValue(forKey: "location") }
        #expect(stored?.code == .invalidRequest && stored?.message.contains("location.latitude") == true)
        let setStored = storeError { try quake.setStoreValue(.double(1), forKey: "location") }
        #expect(setStored?.code == .invalidRequest)
        try quake.setStoreValue(.null, forKey: "location")
        #expect(quake.value(forKey: "location") == nil, ".null clears a composite")
        let missing = storeError { _ = try quake.storeValue(forKey: "location.altitude") }
        #expect(missing?.code == .invalidRequest)
    }

    @Test("validation: a required composite needs a value; its required elements only while it is present")
    func validation() throws {
        let (stack, quake) = try quake()
        try stack.context.save()  // magnitude is optional: absent is fine, though richter is required
        quake["magnitude.depth"] = Float(3)
        #expect(throws: ObjectValidationError.self) { try stack.context.save() }
        do {
            try stack.context.save()
        } catch let error as ObjectValidationError {
            #expect(error.failures.map(\.property) == ["magnitude.richter"])
            #expect(error.failures.map(\.code) == [.missingMandatoryProperty])
        }
        quake["magnitude.richter"] = 2.0
        try stack.context.save()
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "A",
                properties: [
                    .composite(
                        "c",
                        elements: [
                            AttributeDescription("x", .integer16, validation: ValidationRules(maximum: .integer(5))),
                            .composite("inner", elements: [AttributeDescription("y", .string)], isOptional: false),
                        ], isOptional: false)
                ])
        ])
        let other = try TestStack(model: model)
        let a = try other.context.insertNewObject(forEntityName: "A")
        func failures() -> [String?] {
            do {
                try other.context.save()
                return []
            } catch let error as ObjectValidationError {
                return error.failures.map(\.property)
            } catch {
                return ["\(error)"]
            }
        }
        #expect(failures() == ["c"], "the required composite is absent")
        a["c.x"] = 9
        #expect(failures() == ["c.x", "c.inner"], "a rule on an element, and a required nested composite")
        a["c.x"] = 1
        a["c.inner.y"] = "here"
        #expect(failures() == [])
    }

    @Test("predicates and sorts evaluate element key paths on objects, and refuse unknown elements")
    func predicates() throws {
        let stack = try TestStack(model: CompositeModel.model)
        try CompositeModel.seed(stack.context)
        let quake = try #require(
            try stack.context.fetch(
                FetchRequest(entityName: "Quake", predicate: try FetchPredicate(format: "code == 'a'"))
            ).first)
        #expect(
            try FetchPredicate(format: "magnitude.richter > 6 AND location.place.city BEGINSWITH 'T'").evaluate(
                with: quake))
        #expect(try FetchPredicate(format: "location != nil AND location.place != nil").evaluate(with: quake))
        #expect(try !FetchPredicate(format: "magnitude == nil").evaluate(with: quake))
        let entity = try #require(CompositeModel.model.entity(named: "Quake"))
        let unknown = #expect(throws: FetchPredicateError.self) {
            try FetchPredicate(format: "location.altitude > 1").validate(for: entity, in: CompositeModel.model)
        }
        #expect(unknown?.message.contains("composite 'location' of entity 'Quake' has no element 'altitude'") == true)
        #expect(throws: FetchPredicateError.self) {
            try FetchPredicate(format: "magnitude.richter == 'strong'").validate(for: entity, in: CompositeModel.model)
        }
        try FetchPredicate(format: "location == nil OR location.place.city == 'x'").validate(
            for: entity, in: CompositeModel.model)
        #expect(try SortKey("magnitude.richter").value(of: quake) == .double(6.1))
    }
}
