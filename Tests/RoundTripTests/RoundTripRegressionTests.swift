import Foundation
import Strata
import StrataTesting
import Testing

/// Cases the generative suite found, shrunk, each named after its seed and kept so the bug stays
/// fixed whatever the generator does later.
@Suite("Round-trip regressions")
struct RoundTripRegressionTests {
    /// Runs `stages` of the round trip on a hand-written case and records every failure.
    func expectRoundTrip(_ testCase: RoundTripCase, _ stages: Set<RoundTripStage> = Set(RoundTripStage.allCases)) {
        let model = try? testCase.model.makeModel()
        #expect(model != nil, "the case's model builds")
        if let model { #expect(testCase.problem(in: model) == nil, "the case's graph is valid") }
        for failure in RoundTripRunner.run(testCase, stages: stages) {
            Issue.record("[\(failure.stage.rawValue)] \(failure.message)")
        }
    }

    @Test(
        "seed 1: a join table whose relationship is named like an inherited attribute after upper-casing (label, Label) is recovered"
    )
    func seed1JoinNamedLikeAttribute() {
        let model = RoundTripModelSpec(
            entities: [
                RoundTripEntitySpec(name: "From", isAbstract: true, properties: [.attribute("label", .uri)]),
                RoundTripEntitySpec(name: "Note", parent: "From"),
                RoundTripEntitySpec(
                    name: "TAG", parent: "Note",
                    properties: [
                        .toMany("Label", "TAG", inverse: "_id", ordered: true, deleteRule: .cascade),
                        .toMany("_id", "TAG", inverse: "Label", ordered: true, deleteRule: .noAction),
                    ]),
            ], configurations: [])
        let graph = RoundTripGraph(objects: [
            RoundTripObject(
                entity: "TAG", values: ["label": .store(.uri(URL(string: "a:b")!))], links: ["Label": [1, 0]]),
            RoundTripObject(entity: "TAG", links: ["_id": [0]]),
        ])
        expectRoundTrip(RoundTripCase(seed: 1, model: model, graph: graph))
    }

    @Test("seed 21: a unique constraint of a subentity does not hold against the hierarchy's other rows in SQLite")
    func seed21SubentityConstraint() {
        let model = RoundTripModelSpec(
            entities: [
                RoundTripEntitySpec(name: "Ünit", properties: [.attribute("objectID", .uuid, isOptional: false)]),
                RoundTripEntitySpec(name: "Order", parent: "Ünit", uniquenessConstraints: [["objectID"]]),
                RoundTripEntitySpec(name: "Note", parent: "Ünit"),
            ], configurations: [])
        let same = RoundTripValue.store(.uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!))
        let graph = RoundTripGraph(objects: [
            RoundTripObject(entity: "Note", values: ["objectID": same]),
            RoundTripObject(entity: "Ünit", values: ["objectID": same]),
            RoundTripObject(entity: "Order", values: ["objectID": same]),
        ])
        expectRoundTrip(RoundTripCase(seed: 21, model: model, graph: graph))
    }

    @Test("seed 2: stores of configurations export, validate and convert without naming their configuration")
    func seed2ConfigurationStores() {
        let model = RoundTripModelSpec(
            entities: [
                RoundTripEntitySpec(name: "Café", properties: [.attribute("name", .string)]),
                RoundTripEntitySpec(name: "Person", properties: [.attribute("size", .integer16)]),
            ],
            configurations: [
                RoundTripConfiguration(name: "Cloud", entities: ["Café"]),
                RoundTripConfiguration(name: "Local", entities: ["Person"]),
            ])
        let graph = RoundTripGraph(objects: [
            RoundTripObject(entity: "Café", values: ["name": .store(.string("a"))]),
            RoundTripObject(entity: "Person", values: ["size": .store(.integer(3))]),
        ])
        expectRoundTrip(RoundTripCase(seed: 2, model: model, graph: graph))
    }

    @Test("attributes name and Name (equal after Core Data's case change) save to XML and every driver, and read back")
    func nameAndCapitalName() {
        let model = RoundTripModelSpec(
            entities: [
                RoundTripEntitySpec(
                    name: "Item", properties: [.attribute("name", .string), .attribute("Name", .integer64)]),
                RoundTripEntitySpec(name: "ITEM", properties: [.attribute("NAME", .string)]),
            ], configurations: [])
        let graph = RoundTripGraph(objects: [
            RoundTripObject(
                entity: "Item", values: ["name": .store(.string("lower")), "Name": .store(.integer(Int64.min))]),
            RoundTripObject(entity: "ITEM", values: ["NAME": .store(.string("upper"))]),
        ])
        expectRoundTrip(RoundTripCase(seed: 0, model: model, graph: graph))
    }

    @Test(
        "seeds 2, 22, 23: attributes _fok_x, _ent and _opt are recovered from a SQLite store's tables as attributes, not as order or entity columns"
    )
    func seeds2And22BookkeepingLookalikes() {
        let model = RoundTripModelSpec(
            entities: [
                RoundTripEntitySpec(
                    name: "Item",
                    properties: [
                        .attribute("_fok_x", .string), .attribute("_ent", .integer64), .attribute("_opt", .integer32),
                        .attribute("name", .string),
                    ]),
                RoundTripEntitySpec(name: "Note", parent: "Item", properties: [.attribute("_fok_y", .double)]),
            ], configurations: [])
        let graph = RoundTripGraph(objects: [
            RoundTripObject(
                entity: "Item",
                values: ["_fok_x": .store(.string("x")), "_ent": .store(.integer(7)), "_opt": .store(.integer(-3))]),
            RoundTripObject(entity: "Note", values: ["_fok_y": .store(.double(2.5)), "name": .store(.string("n"))]),
        ])
        expectRoundTrip(RoundTripCase(seed: 22, model: model, graph: graph))
    }

    @Test(
        "seed 80: an indexed integer attribute named like an entity (café beside Café) holding 0 is recovered as an attribute"
    )
    func seed80IndexedIntegerNamedLikeEntity() {
        var index = AttributeDescription("café", .integer64)
        index.isIndexed = true
        let model = RoundTripModelSpec(
            entities: [
                RoundTripEntitySpec(name: "Café", properties: [.attribute("name", .string)]),
                RoundTripEntitySpec(name: "Group", properties: [.attribute(index)]),
            ], configurations: [])
        let graph = RoundTripGraph(objects: [
            RoundTripObject(entity: "Café", values: ["name": .store(.string("c"))]),
            RoundTripObject(entity: "Group", values: ["café": .store(.integer(0))]),
            RoundTripObject(entity: "Group", values: ["café": .store(.integer(-5))]),
        ])
        expectRoundTrip(RoundTripCase(seed: 80, model: model, graph: graph), [.recovery])
    }

    @Test(
        "seeds 22, 38, 137: to-one relationships _ent, _pk and _fok_x (keys renamed Z_ENT1, Z_PK1; entity columns Z<n>__ENT) are recovered from a SQLite store's tables"
    )
    func seed22RenamedForeignKeys() {
        let model = RoundTripModelSpec(
            entities: [
                RoundTripEntitySpec(name: "Node", properties: [.attribute("size", .integer16)]),
                RoundTripEntitySpec(name: "Leaf", parent: "Node"),
                RoundTripEntitySpec(
                    name: "Item",
                    properties: [
                        .relationship(RelationshipDescription("_ent", destination: "Node")),
                        .relationship(RelationshipDescription("_pk", destination: "Node")),
                        .relationship(RelationshipDescription("_fok_x", destination: "Node")),
                    ]),
            ], configurations: [])
        let graph = RoundTripGraph(objects: [
            RoundTripObject(entity: "Node", values: ["size": .store(.integer(1))]),
            RoundTripObject(entity: "Leaf", values: ["size": .store(.integer(2))]),
            RoundTripObject(entity: "Item", links: ["_ent": [1], "_pk": [0], "_fok_x": [1]]),
        ])
        expectRoundTrip(RoundTripCase(seed: 22, model: model, graph: graph))
    }
}
