import Foundation
import Strata
import StrataInMemory
import StrataTesting
import StrataTools
import Testing

/// A fresh store location on the test server (a URL with a password the trusted superuser does
/// not need, so tests can check that it never shows).
func postgresLocation(_ label: String) throws -> StoreLocation {
    let server = try PostgreSQLTestServer.shared()
    let url = server.url(schema: PostgreSQLTestServer.schemaName(label), password: PostgreSQLToolsTests.password)
    return try StoreLocation(parsing: url.absoluteString)
}

@Suite("strata with PostgreSQL stores")
struct PostgreSQLToolsTests {
    static let password = "hunter2-never-shown"

    @Test("postgres:// and postgresql:// URLs are server stores, named without their password")
    func locations() throws {
        let location = try StoreLocation(
            parsing: "postgresql://ada:\(Self.password)@db.example.com:5433/shop?schema=sales")
        #expect(location.scheme == .postgres)
        #expect(location.isOnServer && !location.isFileBacked)
        #expect(location.description == "postgresql://ada@db.example.com:5433/shop?schema=sales")
        #expect(!location.displayName.contains(Self.password))
        #expect(try location.storeType().name == "PostgreSQL")
        #expect {
            try StoreLocation(parsing: "postgres:shop")
        } throws: { error in
            (error as? ToolError)?.exitCode == 64 && "\(error)".contains("postgres://user@host")
        }
    }

    @Test("memory → PostgreSQL → memory keeps every entity's objects, keys and the store UUID")
    func roundTrip() throws {
        let a = try seededMemoryStore()
        let server = try postgresLocation("roundtrip")
        let first = try StoreConverter.convert(from: a, to: server, options: ConversionOptions(batchSize: 5))
        #expect(first.isVerified)
        let back = memoryLocation("back")
        #expect(try StoreConverter.convert(from: server, to: back).isVerified)
        #expect(try digests(a) == digests(back))
        #expect(try StoreOpener.metadata(at: a)?.uuid == StoreOpener.metadata(at: server)?.uuid)
    }

    @Test(
        "convert, inspect and query through the CLI; an existing store needs --overwrite, which replaces only the store's tables"
    )
    func commandLine() throws {
        let directory = try TemporaryDirectory(prefix: "pg-cli")
        let source = directory.file("company.sqlite").path
        try seededMemoryStore(StoreLocation(scheme: .sqlite, url: URL(fileURLWithPath: source)))
        let server = try postgresLocation("cli")
        let url = try #require(server.url).absoluteString
        let converted = try runStrata(["convert", source, url, "--quiet"])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(converted.stdout.contains("Employee"))
        let inspected = try runStrata(["inspect", url])
        #expect(inspected.status == 0, "\(inspected.stderr)")
        #expect(inspected.stdout.contains("PostgreSQL"))
        for predicate in ["age > 30 AND department.name == 'Research'", "name BEGINSWITH[c] 'a'", "email == nil"] {
            let onServer = try runStrata([
                "query", url, "--entity", "Employee", "--where", predicate, "--sort", "name", "--format", "json",
            ])
            let onFile = try runStrata([
                "query", source, "--entity", "Employee", "--where", predicate, "--sort", "name", "--format", "json",
            ])
            #expect(onServer.status == 0, "\(onServer.stderr)")
            // Object URIs name the store UUID, which the copy keeps.
            #expect(onServer.stdout == onFile.stdout, "\(predicate)")
        }
        // An existing store is not replaced without --overwrite.
        let refused = try runStrata(["convert", source, url, "--quiet"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--overwrite"))
        // With it, the store's tables are replaced in one step; other tables of the schema stay.
        let schema = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "schema" }?.value)
        try PostgreSQLTestAdmin.execute("CREATE TABLE \"\(schema)\".notes (id int)")
        let replaced = try runStrata(["convert", source, url, "--overwrite", "--quiet"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(
            try PostgreSQLTestAdmin.count(
                "SELECT count(*) FROM pg_tables WHERE schemaname = '\(schema)' AND tablename = 'notes'") == 1)
        #expect(
            try PostgreSQLTestAdmin.count(
                "SELECT count(*) FROM pg_namespace WHERE strpos(nspname, '\(schema)__converting') = 1") == 0)
        for result in [converted, inspected, refused, replaced] {
            #expect(!result.stdout.contains(Self.password) && !result.stderr.contains(Self.password))
        }
        // A schema without a store is a usage error naming it.
        let empty = try postgresLocation("empty")
        let missing = try runStrata(["inspect", try #require(empty.url).absoluteString])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("no store at"))
        #expect(!missing.stderr.contains(Self.password))
    }

    @Test(
        "a predicate corpus kept in a file outside the project, queried on PostgreSQL through strata query, gives the in-memory evaluator's answers"
    )
    func predicateCorpusThroughTheCLI() throws {
        // The corpus as a user keeps it: a file of its own (entity, tab, predicate), read back line by line.
        let directory = try TemporaryDirectory(prefix: "pg-predicates")
        let file = directory.file("predicates.tsv")
        try PredicateCorpus.entries.map { "\($0.entity)\t\($0.format)" }.joined(separator: "\n").write(
            to: file, atomically: true, encoding: .utf8)
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == PredicateCorpus.entries.count)
        let memory = try seededMemoryStore()
        let server = try postgresLocation("predicates")
        #expect(try StoreConverter.convert(from: memory, to: server).isVerified)
        let url = try #require(server.url).absoluteString
        let (stack, _) = try StoreOpener.attach(memory, model: ConformanceModel.model, readOnly: true)
        var compared = 0
        for line in lines {
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            try #require(parts.count == 2, "\(line)")
            let (entity, format) = (parts[0], parts[1])
            // The evaluator's answer: every object of the entity, filtered in Swift. The copy keeps
            // keys and the store UUID, so object URIs are the same on both stores.
            let predicate = try FetchPredicate(format: format)
            // The context outlives the evaluation, which follows relationships through it.
            let context = ManagedObjectContext(coordinator: stack)
            let all = try context.fetch(FetchRequest(entityName: entity))
            let expected = Set(
                try all.filter { try predicate.evaluate(with: $0) }.map {
                    $0.objectID.uriRepresentation().absoluteString
                })
            // `--where=P`: a predicate may start with `-` (`-age < -50`).
            let result = try runStrata(["query", url, "--entity", entity, "--where=\(format)", "--format", "json"])
            #expect(result.status == 0, "\(entity) [\(format)]: \(result.stderr)")
            guard result.status == 0, case .array(let rows) = try parseJSON(result.stdout) else { continue }
            let ids = rows.compactMap { row -> String? in
                guard case .object(let fields) = row, case .string(let id)? = fields.first(where: { $0.0 == "id" })?.1
                else { return nil }
                return id
            }
            #expect(
                ids.count == rows.count && Set(ids) == expected && ids.count == expected.count,
                "\(entity) [\(format)]: \(ids.count) rows, expected \(expected.count)")
            let counted = try runStrata([
                "query", url, "--entity", entity, "--where=\(format)", "--count", "--format", "json",
            ])
            #expect(
                try parseJSON(counted.stdout) == .object([("count", .number(String(expected.count)))]),
                "\(entity) [\(format)] --count: \(counted.stdout)\(counted.stderr)")
            compared += 1
        }
        #expect(compared == PredicateCorpus.entries.count)
    }

    @Test(
        "Apple-written SQLite stores convert into PostgreSQL with exact counts, and queries agree", .needsCorpus,
        arguments: [
            "SampleModel_V1.sqlite", "SampleModel_V2.sqlite", "SampleModel2_V1.sqlite", "SampleModel3_V1.sqlite",
            "test_data_ios_NoteStore.sqlite",
            "test_data_ios_Accounts3.sqlite", "test_data_ios_kik.sqlite", "Recipes.sqlite",
            "test_data_macos_knowledgec-10.13.db",
        ])
    func appleStores(_ name: String) throws {
        let corpus = URL(fileURLWithPath: try #require(ProcessInfo.processInfo.environment["STRATA_CORPUS"]))
        let directory = try TemporaryDirectory(prefix: "pg-apple")
        let copy = directory.file(name)
        try FileManager.default.copyItem(
            at: corpus.appendingPathComponent("sqlite").appendingPathComponent(name), to: copy)
        let source = StoreLocation(scheme: .sqlite, url: copy)
        let server = try postgresLocation("apple")
        let report = try StoreConverter.convert(from: source, to: server)
        #expect(report.isVerified, "\(report.entities.filter { !$0.matches }.map(\.name))")
        // Counts per entity, from both stores, through the stores' own drivers.
        let model = try StoreOpener.resolveModel(at: source, modelPath: nil).model
        let onServer = try StoreOpener.resolveModel(at: server, modelPath: nil)
        #expect(onServer.source == "embedded")
        let (fileStack, _) = try StoreOpener.attach(source, model: model, readOnly: true)
        let (serverStack, _) = try StoreOpener.attach(server, model: onServer.model, readOnly: true)
        var compared = 0
        for entity in model.entities {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            let expected = try ManagedObjectContext(coordinator: fileStack).count(for: request)
            #expect(
                try ManagedObjectContext(coordinator: serverStack).count(for: request) == expected,
                "\(name): \(entity.name)")
            // A query on each string and number attribute agrees too.
            for attribute in entity.attributes where !attribute.isTransient {
                let format: String
                switch attribute.type {
                case .string: format = "\(attribute.name) BEGINSWITH[c] 'a' OR \(attribute.name) == nil"
                case .integer16, .integer32, .integer64, .double, .float: format = "\(attribute.name) > 1"
                case .date: format = "\(attribute.name) > CAST(400000000, 'NSDate')"
                default: continue
                }
                let predicate = try FetchPredicate(format: format)
                let fileIDs = try ManagedObjectContext(coordinator: fileStack).fetch(
                    FetchRequest(entityName: entity.name, predicate: predicate)
                ).map(\.objectID.rowID)
                let serverIDs = try ManagedObjectContext(coordinator: serverStack).fetch(
                    FetchRequest(entityName: entity.name, predicate: predicate)
                ).map(\.objectID.rowID)
                #expect(Set(fileIDs) == Set(serverIDs), "\(name): \(entity.name) [\(format)]")
                compared += 1
            }
        }
        print(
            "\(name): \(model.entities.count) entities, \(report.entities.reduce(0) { $0 + $1.destinationCount }) objects, \(compared) queries compared"
        )
    }
}

/// SQL as the test server's superuser, through `psql` (the driver's connections are internal to
/// its module).
enum PostgreSQLTestAdmin {
    static func execute(_ sql: String) throws {
        try run(sql)
    }

    static func count(_ sql: String) throws -> Int {
        let output = try run(sql)
        return Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Runs `sql` with `psql` as the superuser and returns its unaligned output.
    @discardableResult
    static func run(_ sql: String) throws -> String {
        let server = try PostgreSQLTestServer.shared()
        let directory = try TemporaryDirectory(prefix: "psql")
        let output = directory.file("out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let descriptor = open(output.path, O_WRONLY | O_APPEND)
        defer { close(descriptor) }
        let status = try ChildProcess.run(
            [
                try psql(), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(server.port),
                "-U", server.user,
                "-d", "postgres", "-c", sql,
            ],
            output: descriptor)
        let text = try String(contentsOf: output, encoding: .utf8)
        guard status == 0 else { throw PostgreSQLTestServer.Failure(message: "psql failed: \(text)") }
        return text
    }

    static func psql() throws -> String {
        // A missing directory just adds no candidates.
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let candidates =
            ["/usr/bin/psql", "/usr/local/bin/psql"] + versions.map { "/usr/lib/postgresql/\($0)/bin/psql" }
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw PostgreSQLTestServer.Failure(message: "psql is not installed (apt-get install postgresql-client)")
    }
}
