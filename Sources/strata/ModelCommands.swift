import ArgumentParser
import Foundation
import StrataTools

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a store's objects as JSON (the interchange format of docs/formats/json.md).",
        discussion: """
            Example:
              strata export app.sqlite --output app.json
              strata export app.sqlite --entity Person --entity Department
            """)

    @Argument(help: "The store.") var store: String
    @Option(help: "Export only this entity (with its subentities); repeatable.") var entity: [String] = []
    @Option(help: "The file to write (standard output when omitted).") var output: String?
    @OptionGroup var model: ModelOption

    func run() throws {
        try runTool("export") {
            let location = try StoreLocation(parsing: store)
            guard let output else {
                try InterchangeExporter.export(from: location, entities: entity, modelPath: model.model) { text in
                    FileHandle.standardOutput.write(Data(text.utf8))
                }
                return
            }
            let summary = try InterchangeExporter.export(
                from: location, entities: entity, modelPath: model.model, toFile: output)
            print("Exported \(summary.total) objects to \(output).")
        }
    }
}

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Read a JSON interchange file into a store, after checking all of it.",
        discussion: """
            Nothing is written unless the whole file checks; every problem is listed with its JSON path.

            Example:
              strata import people.json --to app.sqlite --model Model.xcdatamodeld
            """)

    @Argument(help: "The JSON file.") var file: String
    @Option(help: "The store to write (created when missing; then --model is needed).") var to: String
    @OptionGroup var model: ModelOption

    func run() throws {
        try runTool("import") {
            let location = try StoreLocation(parsing: to)
            let summary = try InterchangeImporter.importFile(atPath: file, into: location, modelPath: model.model)
            print(
                "Imported \(summary.total) objects into \(location) ("
                    + summary.counts.map { "\($0.entity) \($0.count)" }.joined(separator: ", ") + ").")
        }
    }
}

struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Show a model or compare two.",
        discussion:
            "Example:\n  strata model show Model.xcdatamodeld\n  strata model diff V1.xcdatamodel V2.xcdatamodel",
        subcommands: [ModelShowCommand.self, ModelDiffCommand.self])
}

struct ModelShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a model's entities, attributes, relationships, configurations and version hash.",
        discussion: """
            MODEL is a model file (.xcdatamodeld, .xcdatamodel, contents, Strata model .json) or a store.

            Example:
              strata model show Model.xcdatamodeld --json
              strata model show app.sqlite
            """)

    @Argument(help: "A model file or a store.") var model: String
    @Flag(help: "Print JSON (documented in docs/formats/json.md).") var json = false

    func run() throws {
        try runTool("model show") {
            let loaded = try ModelFile.loadModelOrStore(model).model
            print(
                json
                    ? ModelDescription.json(loaded).serialized()
                    : ModelDescription.lines(loaded).joined(separator: "\n"))
        }
    }
}

struct ModelDiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "List entities and properties added, removed, renamed and changed, and whether migration is needed.",
        discussion: """
            Example:
              strata model diff Model.xcdatamodeld/V1.xcdatamodel Model.xcdatamodeld/V2.xcdatamodel
            """)

    @Argument(help: "The old model (file or store).") var old: String
    @Argument(help: "The new model (file or store).") var new: String
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try runTool("model diff") {
            let diff = ModelDiff(
                old: try ModelFile.loadModelOrStore(old).model, new: try ModelFile.loadModelOrStore(new).model)
            print(json ? diff.json.serialized() : diff.lines.joined(separator: "\n"))
        }
    }
}

struct CodegenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codegen",
        abstract: "Generate a typed ManagedObject subclass per entity, with fetch helpers.",
        discussion: """
            Example:
              strata codegen Model.xcdatamodeld --output Sources/App/Model
            """)

    @Argument(help: "A model file or a store.") var model: String
    @Option(help: "The folder to write the Swift files into.") var output: String

    func run() throws {
        try runTool("codegen") {
            let loaded = try ModelFile.loadModelOrStore(model).model
            let files = try CodeGenerator.write(loaded, to: URL(fileURLWithPath: output))
            print("Wrote \(files.count) files to \(output): \(files.map(\.lastPathComponent).joined(separator: ", "))")
        }
    }
}
