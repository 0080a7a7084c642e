import ArgumentParser
import Foundation
import StrataTools

struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Copy every object of a store to another driver, keeping primary keys, then verify the copy.",
        discussion: """
            Rows stream in batches straight through the drivers; the destination is written beside its final \
            name and renamed into place only when complete, so a failure or a kill leaves the old destination \
            or the new one. Each entity is then verified (object counts and a content digest); any difference \
            exits 2.

            Example:
              strata convert app.sqlite lmdb:app.lmdb
              strata convert xml:old.xml new.sqlite --model Model.xcdatamodeld --overwrite
            """)

    @Argument(help: "The store to read.") var source: String
    @Argument(help: "The store to create.") var destination: String
    @OptionGroup var model: ModelOption
    @Option(help: "Copy only the entities of this model configuration.") var configuration: String?
    @Flag(help: "Replace the destination if it exists.") var overwrite = false
    @Flag(help: "Print no progress.") var quiet = false
    @Option(help: "Rows per change set.") var batchSize = 1_000

    func validate() throws {
        guard batchSize > 0 else { throw ValidationError("--batch-size must be positive") }
    }

    func run() throws {
        try runTool("convert") {
            let from = try StoreLocation(parsing: source)
            let to = try StoreLocation(parsing: destination)
            let bar =
                quiet
                ? nil
                : ProgressBar(isTerminal: standardErrorIsTerminal) { text in
                    FileHandle.standardError.write(Data(text.utf8))
                }
            let report = try StoreConverter.convert(
                from: from, to: to,
                options: ConversionOptions(
                    modelPath: model.model, configuration: configuration, overwrite: overwrite, batchSize: batchSize,
                    progress: bar.map { bar in { bar.update($0) } }))
            print("Converted \(from) to \(to):")
            print(report.table.text)
            guard report.isVerified else {
                let different = report.entities.filter { !$0.matches }.map(\.name).joined(separator: ", ")
                throw ToolError(.difference, "verification failed for \(different)")
            }
            print("Verified: every entity matches.")
        }
    }
}

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a store's driver, UUID, model hash, entities with counts, relationships and files.",
        discussion: """
            Example:
              strata inspect app.sqlite
              strata inspect lmdb:app.lmdb --json
            """)

    @Argument(help: "The store.") var store: String
    @OptionGroup var model: ModelOption
    @Flag(help: "Print JSON (documented in docs/formats/json.md).") var json = false

    func run() throws {
        try runTool("inspect") {
            let report = try StoreInspector.inspect(try StoreLocation(parsing: store), modelPath: model.model)
            print(json ? report.json.serialized() : report.lines.joined(separator: "\n"))
        }
    }
}

extension QueryFormat: ExpressibleByArgument {}

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Fetch objects with a predicate and sort keys; relationships print as object URIs.",
        discussion: """
            With --group-by and --aggregate, prints one row per group: the group key paths and the \
            aggregates as count(*), sum(age), avg(age), min(name), max(date) (docs/cli.md).

            Example:
              strata query app.sqlite --entity Person --where "age > 30 AND department.name == 'R&D'" --sort name,age:desc
              strata query app.sqlite --entity Person --count --format json
              strata query app.sqlite --entity Person --group-by department.name --aggregate count:* --aggregate avg:age --format json
            """)

    @Argument(help: "The store.") var store: String
    @Option(help: "The entity to fetch (subentities included).") var entity: String
    @Option(name: .customLong("where"), help: "A predicate in NSPredicate format syntax.") var predicate: String?
    @Option(help: "Sort keys: key[:desc],...") var sort: String?
    @Option(help: "The most objects to print.") var limit: Int?
    @Option(help: "Matching objects to skip.") var offset = 0
    @Option(help: "Properties to print, comma-separated.") var properties: String?
    @Flag(help: "Print only the number of matching objects.") var count = false
    @Option(help: "Output format: table, json or csv.") var format: QueryFormat = .table
    @Option(name: .customLong("group-by"), help: "Group by a key path (repeatable, or comma-separated).") var groupBy:
        [String] = []
    @Option(
        name: .customLong("aggregate"),
        help: "An aggregate FUNC:KEY: count:*, sum:age, avg:age, min:name, max:date (repeatable).")
    var aggregates: [String] = []
    @Option(help: "Keep groups matching a predicate over group key paths and $count, $sum_age, ... (with --group-by).")
    var having: String?
    @OptionGroup var model: ModelOption

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if offset < 0 { throw ValidationError("--offset must not be negative") }
        let grouped = !groupBy.isEmpty || !aggregates.isEmpty
        if grouped && properties != nil {
            throw ValidationError("--properties cannot be combined with --group-by or --aggregate")
        }
        if having != nil && !grouped { throw ValidationError("--having filters groups; add --group-by or --aggregate") }
    }

    func run() throws {
        try runTool("query") {
            var options = QueryOptions(entity: entity)
            options.predicate = predicate
            options.sort = sort
            options.limit = limit
            options.offset = offset
            options.properties = properties?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            options.countOnly = count
            options.format = format
            options.modelPath = model.model
            options.groupBy = groupBy.flatMap {
                $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            options.aggregates = aggregates.flatMap {
                $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            options.having = having
            print(try StoreQuery.run(try StoreLocation(parsing: store), options))
        }
    }
}

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a store's integrity against its model; exits 0 only when clean.",
        discussion: """
            Finds dangling references, inverse mismatches, required/range/regex/count/unique violations and \
            rows of unknown entities. Problems found exit 2.

            Example:
              strata validate app.sqlite
            """)

    @Argument(help: "The store.") var store: String
    @OptionGroup var model: ModelOption
    @Flag(help: "Print the problems as JSON.") var json = false

    func run() throws {
        try runTool("validate") {
            let location = try StoreLocation(parsing: store)
            let problems = try StoreValidator.validate(location, modelPath: model.model)
            if json {
                print(
                    JSONValue.object([
                        ("valid", .bool(problems.isEmpty)),
                        (
                            "problems",
                            .array(
                                problems.map { p in
                                    .object([
                                        ("kind", .string(p.kind.rawValue)), ("object", .optional(p.object)),
                                        ("property", .optional(p.property)), ("message", .string(p.message)),
                                    ])
                                })
                        ),
                    ]).serialized())
            } else if problems.isEmpty {
                print("\(location) is valid.")
            } else {
                for problem in problems { print(problem.description) }
            }
            if !problems.isEmpty {
                throw ToolError(
                    .difference, "\(problems.count) problem\(problems.count == 1 ? "" : "s") in \(location)")
            }
        }
    }
}

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract:
            "Migrate a store to a new version of its model, inferring the mapping or using an Xcode mapping model.",
        discussion: """
            The store's own model is read from the store (Strata's embedded model, or Apple's model cache); \
            give --from-model for stores that hold neither. SQLite stores are migrated in place in one \
            transaction when the mapping is inferred; otherwise the new store is written beside the old one \
            and swapped in only when complete. A failed migration leaves the store as it was. --dry-run \
            writes nothing and prints the mapping with the rows each entity mapping reads.

            Example:
              strata migrate app.sqlite --model Model.xcdatamodeld/V2.xcdatamodel --dry-run
              strata migrate app.sqlite --model V3.xcdatamodel --mapping V2toV3.xcmappingmodel --backup
            """)

    @Argument(help: "The store to migrate.") var store: String
    @Option(help: "The new model (.xcdatamodeld, .xcdatamodel, contents or Strata model .json).") var model: String
    @Option(name: .customLong("from-model"), help: "The model the store was written with, when the store holds none.")
    var fromModel: String?
    @Option(help: "An Xcode mapping model (.xcmappingmodel); without it the mapping is inferred.") var mapping: String?
    @Flag(name: .customLong("dry-run"), help: "Print the mapping and row counts; write nothing.") var dryRun = false
    @Flag(help: "Keep a copy of the store at STORE.backup before migrating.") var backup = false
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Print no progress.") var quiet = false

    func run() throws {
        try runTool("migrate") {
            let location = try StoreLocation(parsing: store)
            let bar =
                quiet || dryRun
                ? nil
                : ProgressBar(isTerminal: standardErrorIsTerminal) { text in
                    FileHandle.standardError.write(Data(text.utf8))
                }
            let report = try StoreMigrator.migrate(
                location,
                options: MigrateOptions(
                    modelPath: model, fromModelPath: fromModel, mappingPath: mapping, dryRun: dryRun, backup: backup,
                    progress: bar.map { bar in { bar.update($0) } }))
            print(json ? report.json.serialized() : report.lines.joined(separator: "\n"))
        }
    }
}
