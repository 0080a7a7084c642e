import Foundation
import Strata

/// The benchmark model: `Item`, the six-attribute entity of W1–W6 and W8, and `Parent`/`Child`,
/// the graph of W7 (a to-many `children` with its to-one inverse `parent`).
public enum BenchModel {
    /// Builds the model.
    public static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Item",
                properties: [
                    .attribute("id", .integer64, isOptional: false),
                    .attribute("name", .string, isOptional: false),
                    .attribute("email", .string, isOptional: false),
                    .attribute("age", .integer32, isOptional: false),
                    .attribute("score", .double, isOptional: false),
                    .attribute("created", .date, isOptional: false),
                ]),
            EntityDescription(
                "Parent",
                properties: [
                    .attribute("number", .integer64, isOptional: false),
                    .attribute("name", .string, isOptional: false),
                    .toMany("children", "Child", inverse: "parent", deleteRule: .cascade),
                ]),
            EntityDescription(
                "Child",
                properties: [
                    .attribute("value", .integer64, isOptional: false),
                    .attribute("name", .string, isOptional: false),
                    .toOne("parent", "Parent", inverse: "children"),
                ]),
        ])
    }
}
