import Foundation
import Strata
import StrataTesting
import StrataTools

/// A stage of the round trip; a failing case shrinks with only its failing stages rerun.
enum RoundTripStage: String, CaseIterable, Sendable {
    /// Save on every driver, compare with the graph, reopen, compare object by object.
    case save
    /// `strata convert` between every pair of drivers and back, compared by `strata export`.
    case convert
    /// `strata validate` finds nothing.
    case validate
    /// The model recovered from a SQLite store maps onto the same tables and reads the same values.
    case recovery
}

/// Runs the round-trip checks of one case and collects what failed, one line each.
struct RoundTripRunner {
    let testCase: RoundTripCase
    let model: ManagedObjectModel
    let stages: Set<RoundTripStage>
    let directory: TemporaryDirectory
    /// Whether each store converts to every other driver (else to one, chosen by the seed).
    let allPairs: Bool
    var failures: [(stage: RoundTripStage, message: String)] = []
    /// Each driver's stores, once saved.
    var saved: [RoundTripStores] = []

    /// Runs `stages` of the checks for `testCase`; returns the failures (empty: it round-trips).
    ///
    /// With `allPairs` false, each driver's stores convert to one other driver, chosen by the seed
    /// so that every three consecutive seeds cover every ordered pair (the CI run, a third of the
    /// work); with `allPairs` true, to every other driver.
    static func run(
        _ testCase: RoundTripCase, stages: Set<RoundTripStage> = Set(RoundTripStage.allCases), allPairs: Bool = true
    ) -> [(stage: RoundTripStage, message: String)] {
        do {
            var runner = try RoundTripRunner(testCase: testCase, stages: stages, allPairs: allPairs)
            runner.runAll()
            return runner.failures
        } catch {
            return [(.save, "the case does not set up: \(error)")]
        }
    }

    init(testCase: RoundTripCase, stages: Set<RoundTripStage>, allPairs: Bool) throws {
        self.testCase = testCase
        self.allPairs = allPairs
        self.model = try testCase.model.makeModel()
        self.stages = stages
        self.directory = try TemporaryDirectory(prefix: "roundtrip-\(testCase.seed)")
    }

    mutating func fail(_ stage: RoundTripStage, _ message: String) { failures.append((stage, message)) }

    mutating func runAll() {
        var reference: RoundTripState?
        for driver in RoundTripDriver.allCases {
            do {
                try save(on: driver, reference: &reference)
            } catch {
                fail(.save, "\(driver): \(error)")
            }
        }
        if stages.contains(.convert) { convertAll() }
        if stages.contains(.validate) { validateAll() }
        if stages.contains(.recovery), let sqlite = saved.first(where: { $0.driver == .sqlite }) {
            for store in sqlite.stores {
                for problem in RoundTripRecovery.check(store.location, model: model, configuration: store.configuration)
                { fail(.recovery, "sqlite: \(problem)") }
            }
        }
    }

    /// Saves the graph through `driver`, checks what the saving coordinator reads against the graph
    /// (and against the first driver's reading), reopens and checks again.
    mutating func save(on driver: RoundTripDriver, reference: inout RoundTripState?) throws {
        let stores = RoundTripStores(driver, model: testCase.model, tag: driver.rawValue, in: directory)
        let coordinator = try stores.open(model)
        let ids = try RoundTripWriter.write(testCase, to: coordinator)
        saved.append(stores)
        guard stages.contains(.save) else {
            try RoundTripStores.close(coordinator)
            return
        }
        let state = try RoundTripState.read(ids, from: coordinator)
        let oldStores = coordinator.persistentStores
        try RoundTripStores.close(coordinator)

        let expected = try RoundTripState.expectedAttributes(of: testCase, model: model, live: Set(ids.keys))
        for (index, attributes) in expected.sorted(by: { $0.key < $1.key }) {
            guard let object = state.objects[index] else {
                fail(.save, "\(driver): object \(index) is missing after the save")
                continue
            }
            for line in RoundTripState.attributeDifferences(
                object.attributes, attributes, object: index, entity: object.entity
            ).prefix(6) {
                fail(.save, "\(driver) (saving coordinator): \(line)")
            }
        }
        var counts: [String: Int] = [:]
        for entity in model.entities where !entity.isAbstract { counts[entity.name] = 0 }
        for index in ids.keys { counts[testCase.graph.objects[index].entity, default: 0] += 1 }
        if state.counts != counts { fail(.save, "\(driver): the store holds \(state.counts), expected \(counts)") }
        if let reference {
            for line in state.differences(from: reference) {
                fail(.save, "\(driver) differs from \(RoundTripDriver.allCases[0]): \(line)")
            }
        } else {
            reference = state
        }

        let again = try stores.open(model)
        defer { try? RoundTripStores.close(again) }  // closing read-back stores; a failure there changes nothing stored
        let reopened = try RoundTripState.read(RoundTripStores.translate(ids, from: oldStores, to: again), from: again)
        for line in reopened.differences(from: state) { fail(.save, "\(driver) after reopening: \(line)") }
    }

    // MARK: Convert, validate

    /// Every saved store converted to every other driver and back; each copy exported and compared
    /// with the export of the original.
    mutating func convertAll() {
        for source in saved {
            for (index, store) in source.stores.enumerated() {
                let original: String
                do {
                    original = try Self.export(store.location, model: model)
                } catch {
                    fail(.convert, "\(source.driver): strata export: \(error)")
                    continue
                }
                for target in targets(of: source.driver) {
                    let there = target.location("\(source.driver)-to-\(target)-\(index)", in: directory)
                    let back = source.driver.location("\(source.driver)-to-\(target)-back-\(index)", in: directory)
                    for (from, to) in [(store.location, there), (there, back)] {
                        do {
                            let report = try StoreConverter.convert(
                                from: from, to: to, options: ConversionOptions(configuration: store.configuration))
                            for entity in report.entities where !entity.matches {
                                fail(
                                    .convert,
                                    "\(from.scheme) → \(to.scheme): \(RoundTripText.name(entity.name)) does not verify (\(entity.sourceCount) → \(entity.destinationCount) objects)"
                                )
                            }
                            let copy = try Self.export(to, model: model)
                            if !copy.unicodeScalars.elementsEqual(original.unicodeScalars) {
                                fail(
                                    .convert,
                                    "\(source.driver) → \(target)\(to == back ? " → \(source.driver)" : ""): the export differs: \(Self.firstDifference(copy, original))"
                                )
                            }
                        } catch {
                            fail(.convert, "\(from.scheme) → \(to.scheme): \(error)")
                            break
                        }
                    }
                }
            }
        }
    }

    /// The drivers `source`'s stores convert to: every other one, or with `allPairs` false the one
    /// `1 + seed % 3` places after it.
    func targets(of source: RoundTripDriver) -> [RoundTripDriver] {
        let drivers = RoundTripDriver.allCases
        let others = drivers.filter { $0 != source }
        guard !allPairs, let position = drivers.firstIndex(of: source) else { return others }
        return [drivers[(position + 1 + Int(testCase.seed % 3)) % drivers.count]]
    }

    mutating func validateAll() {
        for source in saved {
            for store in source.stores {
                do {
                    for problem in try StoreValidator.validate(store.location).prefix(6) {
                        fail(.validate, "\(source.driver): strata validate: \(problem)")
                    }
                } catch {
                    fail(.validate, "\(source.driver): strata validate: \(error)")
                }
            }
        }
    }

    /// The store's `strata export`, normalized: without the `store` member (the driver differs),
    /// objects sorted by id, unordered to-many relationships sorted.
    static func export(_ location: StoreLocation, model: ManagedObjectModel) throws -> String {
        var text = ""
        try InterchangeExporter.export(from: location) { text += $0 }
        let document = try JSONParser.parse(Data(text.utf8))
        guard case .object(let members) = document, let objects = document["objects"]?.arrayValue else { return text }
        let normalized = objects.map { normalize($0, model) }.sorted {
            ($0["id"]?.stringValue ?? "") < ($1["id"]?.stringValue ?? "")
        }
        let header = members.filter { $0.0 != "store" && $0.0 != "objects" }
        return JSONValue.object(header + [("objects", .array(normalized))]).serialized(pretty: true)
    }

    private static func normalize(_ object: JSONValue, _ model: ManagedObjectModel) -> JSONValue {
        guard case .object(var members) = object, let name = object["entity"]?.stringValue,
            let entity = model.entity(named: name),
            let index = members.firstIndex(where: { $0.0 == "relationships" }),
            case .object(let relationships) = members[index].1
        else { return object }
        members[index].1 = .object(
            relationships.map { key, value in
                guard entity.property(named: key)?.relationship?.isOrdered == false, let targets = value.arrayValue
                else { return (key, value) }
                return (key, .array(targets.sorted { ($0.stringValue ?? "") < ($1.stringValue ?? "") }))
            })
        return .object(members)
    }

    /// Where two texts first differ, with a little of each.
    static func firstDifference(_ a: String, _ b: String) -> String {
        let x = Array(a.unicodeScalars)
        let y = Array(b.unicodeScalars)
        var index = 0
        while index < x.count, index < y.count, x[index] == y[index] { index += 1 }
        let start = max(0, index - 60)
        func excerpt(_ s: [Unicode.Scalar]) -> String {
            RoundTripText.name(String(String.UnicodeScalarView(s[min(start, s.count)..<min(index + 60, s.count)])))
        }
        return "at scalar \(index): got …\(excerpt(x))…, expected …\(excerpt(y))…"
    }
}
