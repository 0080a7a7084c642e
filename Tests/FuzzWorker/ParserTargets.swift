import Foundation
import Strata
import StrataSQLite
import StrataTesting
import StrataTools

/// A parser fed inputs made three ways: a valid seed damaged byte-wise (`ByteDamage`), a valid seed
/// damaged in its structure (one node of its tree replaced), or an input generated from scratch.
final class ParserTarget: FuzzTarget {
    typealias Structured = ([UInt8], inout SeededGenerator) -> (bytes: [UInt8], what: String)?

    private let seeds: [(name: String, bytes: [UInt8])]
    private let structured: Structured?
    private let generate: ((inout SeededGenerator) -> (bytes: [UInt8], what: String))?
    private let check: ([UInt8]) throws -> String
    private let file: URL
    private var input: [UInt8] = []

    init(
        seeds: [(name: String, bytes: [UInt8])], file: URL, structured: Structured? = nil,
        generate: ((inout SeededGenerator) -> (bytes: [UInt8], what: String))? = nil,
        check: @escaping ([UInt8]) throws -> String
    ) throws {
        guard !seeds.isEmpty || generate != nil else { throw CaseFailure("no seeds") }
        self.seeds = seeds
        self.file = file
        self.structured = structured
        self.generate = generate
        self.check = check
    }

    var artifacts: [URL] { [file] }

    func prepare(_ index: Int, _ random: inout SeededGenerator) throws -> String {
        let way = Int.random(in: 0..<(generate == nil ? 2 : 3), using: &random)
        var what: String
        if way == 2 || seeds.isEmpty, let generate {
            (input, what) = generate(&random)
        } else {
            let seed = seeds[Int.random(in: 0..<seeds.count, using: &random)]
            input = seed.bytes
            what = seed.name + ": "
            if way == 1, let structured, let edited = structured(input, &random) {
                input = edited.bytes
                what += edited.what
            } else {
                what += (0..<Int.random(in: 1...3, using: &random)).map { _ in ByteDamage.damage(&input, using: &random)
                }
                .joined(separator: "; ")
            }
        }
        try Data(input).write(to: file)
        return what
    }

    func run() throws -> String { try check(input) }
}

/// JSON trees: one node replaced, for JSON-based formats (interchange files, model archives).
enum JSONDamage {
    static func structured(_ bytes: [UInt8], _ random: inout SeededGenerator) -> (bytes: [UInt8], what: String)? {
        guard let tree = try? JSONParser.parse(Data(bytes)) else { return nil }  // not JSON: the caller damages bytes
        let total = count(tree)
        let target = Int.random(in: 0..<total, using: &random)
        let (replacement, what) = self.replacement(&random)
        var counter = 0
        func visit(_ node: JSONValue) -> JSONValue? {
            let mine = counter
            counter += 1
            if mine == target { return replacement }
            switch node {
            case .array(let values): return .array(values.compactMap { visit($0) })
            case .object(let members):
                return .object(members.compactMap { key, value in visit(value).map { (key, $0) } })
            default: return node
            }
        }
        let edited = visit(tree) ?? .null
        return (Array(edited.serialized(pretty: false).utf8), "JSON node \(target) of \(total) → \(what)")
    }

    static func count(_ value: JSONValue) -> Int {
        switch value {
        case .array(let values): 1 + values.reduce(0) { $0 + count($1) }
        case .object(let members): 1 + members.reduce(0) { $0 + count($1.1) }
        default: 1
        }
    }

    static func replacement(_ random: inout SeededGenerator) -> (JSONValue?, String) {
        switch Int.random(in: 0..<11, using: &random) {
        case 0, 1:
            let value = ByteDamage.interestingInteger(using: &random)
            return (.number("\(value)"), "\(value)")
        case 2:
            return (
                .number(
                    ["1e400", "-0", "0.0000000000000000000001", "18446744073709551616", "1.5"].randomElement(
                        using: &random)!), "an odd number"
            )  // non-empty literal
        case 3:
            return (
                .string(["", "x", "Item", "Employee", "NSDate", "9999-99-99", "\u{0}"].randomElement(using: &random)!),
                "a string"
            )  // non-empty literal
        case 4: return (.null, "null")
        case 5: return (.bool(Bool.random(using: &random)), "a Boolean")
        case 6: return (.array([]), "[]")
        case 7: return (.object([]), "{}")
        case 8:
            let depth = [10, 100, 1_000, 10_000][Int.random(in: 0..<4, using: &random)]
            var value = JSONValue.number("1")
            for level in 0..<min(depth, 300) { value = level % 2 == 0 ? .array([value]) : .object([("k", value)]) }
            return (value, "nesting \(min(depth, 300)) deep")
        case 9: return (.string(String(repeating: "é", count: 100_000)), "a long string")
        default: return (nil, "removed")
        }
    }
}

/// The parser targets.
enum ParserTargets {
    /// JSON import: the parser, the importer's checks, and an import when the file checks.
    static func json(_ setup: TargetSetup) throws -> any FuzzTarget {
        let model = ConformanceModel.model
        let modelFile = setup.scratch.file("Conformance.json")
        try model.encodedRepresentation().write(to: modelFile)
        let source = setup.scratch.file("export.sqlite")
        try BaseStores.make(.sqlite, at: source)
        var exported = ""
        try InterchangeExporter.export(from: StoreLocation(scheme: .sqlite, url: source)) { exported += $0 }
        let small =
            #"{"format": "strata-json", "version": 1, "objects": [{"entity": "Department", "id": "d1", "attributes": {"name": "R"}}, {"entity": "Employee", "id": "e1", "attributes": {"name": "A", "age": 3}, "relationships": {"department": "d1", "mentees": ["e1"]}}]}"#
        var importNumber = 0
        return try ParserTarget(
            seeds: [("export", Array(exported.utf8)), ("small", Array(small.utf8))],
            file: setup.scratch.file("input.json"),
            structured: JSONDamage.structured,
            generate: { random in
                let depth = [100, 1_000, 100_000][Int.random(in: 0..<3, using: &random)]
                let open = Bool.random(using: &random) ? "[" : "{\"a\":"
                return (Array((String(repeating: open, count: depth) + "1").utf8), "\(depth) × \(open)")
            },
            check: { input in
                var outcome = ""
                outcome += try Outcome.stage("parse") { _ = try JSONParser.parse(Data(input)) } ?? "parse:ok"
                let problems = InterchangeImporter.problems(in: Data(input), model: model)
                guard problems.isEmpty else { return outcome + " problems" }
                importNumber += 1
                let destination = StoreLocation(
                    scheme: .sqlite, url: setup.scratch.file("import-\(importNumber).sqlite"))
                defer { BaseStores.remove(destination.url!) }  // file-backed locations have a URL
                return outcome + " "
                    + (try Outcome.stage("import") {
                        try InterchangeImporter.importData(
                            Data(input), fileName: "input.json", into: destination, modelPath: modelFile.path)
                    } ?? "imported")
            })
    }

    /// `.xcdatamodel` contents: Xcode's XML through ``ManagedObjectModel/init(xmlData:fileName:)``.
    static func modelXML(_ setup: TargetSetup) throws -> any FuzzTarget {
        var seeds: [(name: String, bytes: [UInt8])] = [("generated", ModelXMLGenerator.sample)]
        if let corpus = setup.corpus {
            let folder = corpus.appendingPathComponent("models")
            for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).sorted(
                by: { $0.path < $1.path })
            where file.lastPathComponent.hasSuffix(".xcdatamodel.xml") {
                seeds.append((file.lastPathComponent, Array(try Data(contentsOf: file))))
            }
        }
        return try ParserTarget(
            seeds: seeds, file: setup.scratch.file("contents"), structured: ModelXMLGenerator.structured,
            generate: ModelXMLGenerator.generate,
            check: { input in
                var model: ManagedObjectModel?
                if let failed = try Outcome.stage("load", { model = try ManagedObjectModel(xmlData: Data(input)) }) {
                    return failed
                }
                return try archiveRoundTrip(model)
            })
    }

    /// The model archive every Strata store embeds (``ModelArchive``).
    static func modelArchive(_ setup: TargetSetup) throws -> any FuzzTarget {
        var seeds: [(name: String, bytes: [UInt8])] = [
            ("conformance", Array(try ConformanceModel.model.encodedRepresentation()))
        ]
        if let corpus = setup.corpus {
            let folder = corpus.appendingPathComponent("models")
            for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).sorted(
                by: { $0.path < $1.path })
            where file.lastPathComponent.hasSuffix(".xcdatamodel.xml") {
                // seeds only: a model that does not load is skipped
                if let model = try? ManagedObjectModel(xmlData: Data(contentsOf: file)) {
                    seeds.append((file.lastPathComponent, Array(try model.encodedRepresentation())))
                }
            }
        }
        return try ParserTarget(
            seeds: seeds, file: setup.scratch.file("model.json"), structured: JSONDamage.structured,
            check: { input in
                var model: ManagedObjectModel?
                if let failed = try Outcome.stage(
                    "decode", { model = try ManagedObjectModel(encodedRepresentation: Data(input)) })
                {
                    return failed
                }
                return try archiveRoundTrip(model)
            })
    }

    /// A decoded model encodes and decodes again to the same version hash.
    static func archiveRoundTrip(_ model: ManagedObjectModel?) throws -> String {
        guard let model else { return "none" }
        let again: ManagedObjectModel
        do {
            again = try ManagedObjectModel(encodedRepresentation: model.encodedRepresentation())
        } catch {
            throw CaseFailure("a model that loaded does not survive its own archive: \(Outcome.describe(error))")
        }
        guard again.versionHash == model.versionHash else {
            throw CaseFailure("the archive changes the model's version hash")
        }
        return "loaded"
    }

    /// Apple's model cache (`Z_MODELCACHE`: raw DEFLATE of a keyed archive).
    static func modelCache(_ setup: TargetSetup) throws -> any FuzzTarget {
        guard let corpus = setup.corpus else {
            throw CaseFailure("this target reads the corpus: set STRATA_CORPUS or pass --corpus")
        }
        var seeds: [(name: String, bytes: [UInt8])] = []
        let folder = corpus.appendingPathComponent("sqlite")
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).sorted(
            by: { $0.path < $1.path })
        {
            let copy = setup.scratch.file("cache-" + file.lastPathComponent)
            try FileManager.default.copyItem(at: file, to: copy)
            let database = try SQLiteDamage.Connection(copy)
            defer { database.close() }
            if try database.integers("SELECT count(*) FROM sqlite_master WHERE name = 'Z_MODELCACHE'").first == 1,
                let compressed = try database.blob("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1"),
                let archive = Deflate.decompress(compressed)
            {
                seeds.append((file.lastPathComponent, archive))
            }
        }
        return try ParserTarget(
            seeds: seeds, file: setup.scratch.file("archive.plist"), structured: PlistDamage.structured,
            check: { input in
                // These decoders throw the SQLite driver's own error type (the driver maps it to StoreError).
                let archived = try Outcome.stage("archive", accepting: SQLiteError.self) {
                    _ = try KeyedArchive(data: Data(input))
                }
                let decoded = try Outcome.stage("model", accepting: SQLiteError.self) {
                    _ = try ModelCacheDecoder.decodeModel(fromModelCache: Data(Deflate.compress(input)))
                }
                return (archived ?? "archive:ok") + " " + (decoded ?? "model:ok")
            })
    }

    /// ISO 8601 timestamps of the interchange format, both ways.
    static func iso8601(_ setup: TargetSetup) throws -> any FuzzTarget {
        let samples = [
            "2024-05-01T12:30:00.250Z", "2019-03-01T09:00:00.000+02:00", "2024-05-01", "0001-01-01T00:00:00.000Z",
            "9999-12-31T23:59:59.999Z", "1970-01-01T00:00:00,5Z", "2016-12-31T23:59:60Z",
        ]
        return try ParserTarget(
            seeds: samples.map { ($0, Array($0.utf8)) }, file: setup.scratch.file("timestamp.txt"),
            generate: { random in
                let seconds: Double = [
                    Double.random(in: -1e12...1e12, using: &random),
                    Double(ByteDamage.interestingInteger(using: &random)),
                    .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, .nan, 1e-300, -62_135_596_800,
                    252_423_993_600,
                ][Int.random(in: 0..<9, using: &random)]
                return (Array("\(seconds)".utf8), "the date \(seconds) seconds after 2001")
            },
            check: { input in
                let text = String(decoding: input, as: UTF8.self)
                if let seconds = Double(text), !text.contains("-") || text.hasPrefix("-") {
                    // Written as the interchange format writes dates, then read back.
                    let attribute = AttributeDescription("date", .date)
                    let json = InterchangeValue.json(.date(Date(timeIntervalSinceReferenceDate: seconds)))
                    let read: StoreValue
                    do {
                        read = try InterchangeValue.storeValue(json, for: attribute).get()
                    } catch {
                        throw CaseFailure("\(json), written for \(seconds), does not read back: \(error)")
                    }
                    guard case .date(let date) = read,
                        date.timeIntervalSinceReferenceDate.bitPattern == seconds.bitPattern
                    else {
                        throw CaseFailure("\(seconds) is written \(json), which reads back as \(read)")
                    }
                    return "written"
                }
                guard let date = ISO8601Timestamp.date(from: text) else { return "refused" }
                _ = ISO8601Timestamp.string(from: date)
                return "parsed"
            })
    }

    /// Store locations as the `strata` tool reads them (`sqlite:path`, a bare path, …).
    static func storeLocation(_ setup: TargetSetup) throws -> any FuzzTarget {
        let samples = [
            "sqlite:a.sqlite", "xml:/tmp/x.xml", "lmdb:store.lmdb", "memory:", "memory:name", "a.sqlite", "b.db",
            "c.storedata", "d.xml", "e.lmdb", "/", ".", "", "sqlite:", "file:///tmp/a.sqlite", "SQLITE:A.SQLITE",
            "postgres://host/db", "x:y:z", setup.scratch.url.path,
        ]
        return try ParserTarget(
            seeds: samples.map { ($0, Array($0.utf8)) }, file: setup.scratch.file("location.txt"),
            generate: { random in
                let parts = [
                    "sqlite:", "xml:", "lmdb:", "memory:", "file://", "/", "..", ".", "~", "%00", "\u{0}", "\n", " ",
                    ":",
                    "a.sqlite", ".xml", ".lmdb", "é", "🎉", "//", "\\", String(repeating: "a", count: 5_000), "?", "#",
                ]
                let text = (0..<Int.random(in: 1...6, using: &random)).map { _ in parts.randomElement(using: &random)! }
                    .joined()  // non-empty literal
                return (Array(text.utf8), "generated")
            },
            check: { input in
                let text = String(decoding: input, as: UTF8.self)
                var location: StoreLocation?
                if let failed = try Outcome.stage("parse", { location = try StoreLocation(parsing: text) }) {
                    return failed
                }
                guard let location else { return "none" }
                _ = location.description
                _ = location.displayName
                _ = location.exists
                return try Outcome.stage("type") { _ = try location.storeType() } ?? "parsed"
            })
    }

    /// `%K` key paths in predicates, evaluated on a row of the conformance model.
    static func keyPath(_ setup: TargetSetup) throws -> any FuzzTarget {
        let model = ConformanceModel.model
        let url = setup.scratch.file("keys.sqlite")
        try BaseStores.make(.sqlite, at: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(isReadOnly: true))
        let context = ManagedObjectContext(coordinator: coordinator)
        let employees = try context.fetch(FetchRequest(entityName: "Employee"))
        let samples = [
            "name", "department.name", "mentees.@count", "mentor.mentor.name", "mentees.@avg.age", "SELF", "@count",
            "department.employees.@max.age", "#name", "a.b.c", "mentees.name",
        ]
        return try ParserTarget(
            seeds: samples.map { ($0, Array($0.utf8)) }, file: setup.scratch.file("keypath.txt"),
            generate: { random in
                let parts = [
                    "name", "age", "department", "mentees", "mentor", ".", "@count", "@sum", "@avg", "@min", "@max",
                    "@distinctUnionOfObjects", "SELF", "#", "$x", "", " ", "..", "é", "1", "@", "employees",
                ]
                let text = (0..<Int.random(in: 1...8, using: &random)).map { _ in parts.randomElement(using: &random)! }
                    .joined()  // non-empty literal
                return (Array(text.utf8), "generated")
            },
            check: { input in
                withExtendedLifetime(store) {}
                let key = String(decoding: input, as: UTF8.self)
                var predicate: FetchPredicate?
                if let failed = try Outcome.stage(
                    "parse", { predicate = try FetchPredicate(format: "%K == %@", key, 1) })
                {
                    return failed
                }
                guard let predicate else { return "none" }
                let again = try Outcome.stage("reparse") {
                    let reparsed = try FetchPredicate(format: predicate.predicateFormat)
                    if reparsed != predicate {
                        throw CaseFailure("'\(predicate.predicateFormat)' parses to another predicate")
                    }
                }
                if let again {
                    throw CaseFailure("the printed form '\(predicate.predicateFormat)' does not parse: \(again)")
                }
                var request = FetchRequest(entityName: "Employee", predicate: predicate)
                request.fetchLimit = 3
                let fetched = try Outcome.stage("fetch") { _ = try context.fetch(request) } ?? "fetched"
                let evaluated = try Outcome.stage("evaluate") {
                    for employee in employees { _ = try predicate.evaluate(with: employee) }
                }
                return fetched + " " + (evaluated ?? "evaluated")
            })
    }
}
