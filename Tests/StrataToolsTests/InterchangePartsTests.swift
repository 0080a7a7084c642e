import Foundation
import Strata
import StrataInMemory
import StrataTesting
import Testing

@testable import StrataTools

/// `strata import` writes a checked file in parts, reading it again, as one all-or-nothing change.
@Suite("JSON interchange: importing in parts")
struct InterchangePartsTests {
    /// 300 playlists, each listing its 5 chapters in reverse file order, the chapters after every
    /// playlist (references forward), 40 cars without wheels (a default) and departments without
    /// budgets: 1,840 objects, so the write takes several change sets.
    static let playlists: String = {
        var objects: [String] = []
        for p in 0..<300 {
            let chapters = (0..<5).reversed().map { "\"c\(p)-\($0)\"" }.joined(separator: ", ")
            objects.append(
                #"{"entity": "Playlist", "id": "p\#(p)", "attributes": {"title": "list \#(p)"}, "relationships": {"chapters": [\#(chapters)]}}"#
            )
        }
        for p in 0..<300 {
            for c in 0..<5 {
                objects.append(#"{"entity": "Chapter", "id": "c\#(p)-\#(c)", "attributes": {"title": "\#(p).\#(c)"}}"#)
            }
        }
        for c in 0..<40 {
            objects.append(#"{"entity": "Car", "id": "car\#(c)", "attributes": {"name": "car \#(c)", "seats": 2}}"#)
        }
        objects.append(#"{"entity": "Department", "id": "d1", "attributes": {"name": "Parts"}}"#)
        return #"{"format": "strata-json", "version": 1, "objects": [\#(objects.joined(separator: ",\n"))]}"#
    }()

    static let drivers: [KnownDriver] = KnownDriver.fileBacked + [.memory]

    private func location(_ driver: KnownDriver, _ name: String, in directory: TemporaryDirectory) -> StoreLocation {
        driver == .memory ? memoryLocation(name) : fileLocation(driver, name, in: directory)
    }

    @Test("forward references, ordered relationships, inverses and defaults arrive on every driver", arguments: drivers)
    func orderedAndDefaults(_ driver: KnownDriver) throws {
        let directory = try TemporaryDirectory()
        let store = location(driver, "parts", in: directory)
        let summary = try InterchangeImporter.importData(
            Data(Self.playlists.utf8), fileName: "parts.json", into: store,
            modelPath: try writeConformanceModel(in: directory))
        #expect(summary.total == 1_841)
        let (coordinator, attached) = try StoreOpener.attach(store, model: ConformanceModel.model, readOnly: true)
        defer { try? coordinator.remove(attached) }
        let context = ManagedObjectContext(coordinator: coordinator)
        let lists = try context.fetch(FetchRequest(entityName: "Playlist"))
        #expect(lists.count == 300)
        var wrong: [String] = []
        for list in lists {
            // "list N"
            let p = (list["title"] as? String)?.split(separator: " ").last.map(String.init) ?? "?"
            let chapters = (list.value(forKey: "chapters") as? [ManagedObject]) ?? []
            let titles = chapters.map { $0["title"] as? String ?? "" }
            if titles != (0..<5).reversed().map({ "\(p).\($0)" }) { wrong.append("\(p): \(titles)") }
            if chapters.contains(where: { ($0.value(forKey: "playlist") as? ManagedObject) !== list }) {
                wrong.append("\(p): a chapter does not point back")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        let cars = try context.fetch(FetchRequest(entityName: "Car"))
        #expect(cars.count == 40)
        #expect(cars.allSatisfy { ($0["wheels"] as Int?) == 4 }, "the model's default for wheels")
        let department = try #require(try context.fetch(FetchRequest(entityName: "Department")).first)
        #expect(department["budget"] as Double? == 0)
    }

    @Test("an object sharing a unique value with a stored row is refused, and nothing is imported")
    func storedUniqueness() throws {
        let directory = try TemporaryDirectory()
        let store = try seededMemoryStore()
        let text = """
            {"format": "strata-json", "version": 1, "objects": [
              {"entity": "Tag", "id": "t1", "attributes": {"name": "fresh"}},
              {"entity": "Tag", "id": "t2", "attributes": {"name": "blue"}},
              {"entity": "Car", "id": "c1", "attributes": {"name": "kept out"}}
            ]}
            """
        let carsBefore = try count("Car", in: store)
        let error = try #require(throws: ToolError.self) {
            try InterchangeImporter.importData(
                Data(text.utf8), fileName: "tags.json", into: store, modelPath: try writeConformanceModel(in: directory)
            )
        }
        #expect("\(error)".contains("$.objects[1]"), "\(error)")
        #expect("\(error)".contains("\"blue\" is also used by the stored Tag"), "\(error)")
        #expect("\(error)".contains("nothing imported"), "\(error)")
        #expect(try count("Tag", in: store) == 4)
        #expect(try count("Car", in: store) == carsBefore)
    }

    private func count(_ entity: String, in store: StoreLocation) throws -> Int {
        let (coordinator, attached) = try StoreOpener.attach(store, model: ConformanceModel.model, readOnly: true)
        defer { try? coordinator.remove(attached) }
        return try ManagedObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: entity))
    }

    enum Change: CaseIterable, Sendable { case id, uniqueValue }

    @Test(
        "a file that changes between the check and a later part of the write leaves the store as it was",
        arguments: drivers, Change.allCases)
    func changedFile(_ driver: KnownDriver, _ change: Change) throws {
        let directory = try TemporaryDirectory()
        let store = location(driver, "changed", in: directory)
        let model = ConformanceModel.model
        // A store with one tag already.
        let (coordinator, attached) = try StoreOpener.attach(store, model: model, readOnly: false)
        let context = ManagedObjectContext(coordinator: coordinator)
        try context.insertNewObject(forEntityName: "Tag")["name"] = "before"
        try context.save()
        // The object at `changed` differs on the second read: another id, or the name of the
        // first tag (a value checked unique that no longer is).
        func tags(_ count: Int, changed: Int? = nil) -> Data {
            let objects = (0..<count).map { i in
                let id = i == changed && change == .id ? "other" : "t\(i)"
                let name = i == changed && change == .uniqueValue ? "tag 0" : "tag \(i)"
                return #"{"entity": "Tag", "id": "\#(id)", "attributes": {"name": "\#(name)"}}"#
            }
            return Data(
                #"{"format": "strata-json", "version": 1, "objects": [\#(objects.joined(separator: ","))]}"#.utf8)
        }
        var document = InterchangeDocument(model: model, keepsValues: false)
        var checked = InterchangeStreamReader(data: tags(2_500))
        try checked.read { event in
            switch event {
            case .member(let key, let value): document.header(key, value)
            case .objectsStart: document.startObjects()
            case .object(let index, let value): document.add(value, index: index)
            case .document: Issue.record("the file is an object")
            }
        }
        document.finish()
        #expect(document.problems.isEmpty)
        var writer = InterchangeWriter(model: model)
        var reads = 0
        let error = try #require(throws: ToolError.self) {
            try writer.write(&document, into: attached.driver) {
                reads += 1
                // The object in the third change set is not the one checked.
                return InterchangeStreamReader(data: tags(2_500, changed: 2_100))
            }
        }
        #expect("\(error)".contains("changed while it was imported"), "\(error)")
        #expect(reads >= 1)
        let fresh = ManagedObjectContext(coordinator: coordinator)
        let names = try fresh.fetch(FetchRequest(entityName: "Tag")).map { $0["name"] as? String }
        #expect(names == ["before"], "the store holds only what it held")
        try coordinator.remove(attached)
    }

    @Test("a file that can be read only once (a pipe) is copied aside first, then imported, and the copy removed")
    func pipe() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.file("objects.json").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let data = Data(Self.playlists.utf8)
        let temporary = FileManager.default.temporaryDirectory.path
        func spooledCopies() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("strata-import-") }
        }
        let before = try spooledCopies()
        let writer = Thread {
            // Opening blocks until the importer opens the other end.
            guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
            try? handle.write(contentsOf: data)  // a failure shows as a short file in the import
            try? handle.close()
        }
        writer.start()
        let store = memoryLocation("pipe")
        let summary = try InterchangeImporter.importFile(
            atPath: fifo, into: store, modelPath: try writeConformanceModel(in: directory))
        #expect(summary.total == 1_841)
        #expect(try spooledCopies() == before, "the temporary copy is removed")
    }

    @Test("a model with derived attributes imports through a context, which computes them")
    func derivedAttributes() throws {
        let directory = try TemporaryDirectory()
        let modelFile = directory.file("Derived.json")
        try DerivedModel.model.encodedRepresentation().write(to: modelFile)
        let text = """
            {"format": "strata-json", "version": 1, "objects": [
              {"entity": "Department", "id": "d", "attributes": {"name": "Ops"}},
              {"entity": "Employee", "id": "a", "attributes": {"surname": "Ng", "salary": 10}, "relationships": {"department": "d"}},
              {"entity": "Employee", "id": "b", "attributes": {"surname": "Li", "salary": 32}, "relationships": {"department": "d"}}
            ]}
            """
        let store = memoryLocation("derived")
        try InterchangeImporter.importData(
            Data(text.utf8), fileName: "derived.json", into: store, modelPath: modelFile.path)
        let (coordinator, attached) = try StoreOpener.attach(store, model: DerivedModel.model, readOnly: true)
        defer { try? coordinator.remove(attached) }
        let department = try #require(
            try ManagedObjectContext(coordinator: coordinator).fetch(FetchRequest(entityName: "Department")).first)
        #expect(department["headcount"] as Int? == 2)
        #expect(department["payroll"] as Double? == 42)
    }
}
