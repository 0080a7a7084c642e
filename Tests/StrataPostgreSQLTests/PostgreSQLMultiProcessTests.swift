import Foundation
import Strata
import StrataPostgreSQL
import StrataTesting
import Testing

/// The helper executable `strata-postgres-worker`, built beside the test binary.
enum Worker {
    static var url: URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL,
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug"),
        ]
        for directory in candidates {
            let url = directory.appendingPathComponent("strata-postgres-worker")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return candidates[0].appendingPathComponent("strata-postgres-worker")
    }

    /// Runs the worker with `arguments`; returns its exit status and output.
    static func run(_ arguments: [String], environment: [String: String] = [:], in directory: TemporaryDirectory) throws
        -> (status: Int32, output: String)
    {
        let log = directory.file("worker-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let descriptor = open(log.path, O_WRONLY | O_APPEND)
        defer { close(descriptor) }
        let status = try ChildProcess.run([url.path] + arguments, output: descriptor, environment: environment)
        return (status, try String(contentsOf: log, encoding: .utf8))
    }
}

@Suite("PostgreSQL across processes")
struct PostgreSQLMultiProcessTests {
    struct WorkerResult: Codable {
        var inserted: [String]
        var increments: [String: Int]
        var conflicts: Int
        var remoteNotifications: Int
        var remoteRows: Int
        var viewMerged: Bool
        var seconds: Double
    }

    @Test(
        "4 processes x 500 saves: every insert is there, every lost update was a conflict, every process merged the others' saves"
    )
    func fourProcesses() throws {
        let server = try PostgreSQLServer.shared()
        let directory = try TemporaryDirectory(prefix: "pg-multiprocess")
        let url = server.url(schema: PostgreSQLServer.schema(for: directory.url))
        let counters = 5
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
            let store = try coordinator.addPersistentStore(type: .postgreSQL, at: url)
            let context = ManagedObjectContext(coordinator: coordinator)
            for index in 0..<counters {
                let item = try context.insertNewObject(forEntityName: "Item")
                item["string"] = "counter-\(index)"
                item["int64"] = Int64(0)
            }
            try context.save()
            try coordinator.remove(store)
        }
        let workers = 4
        let saves = 500
        let seed: UInt64 = 0x5EED_2104
        print("multi-process test: seed \(seed), \(workers) processes x \(saves) saves, \(counters) counters")
        var pids: [pid_t] = []
        var logs: [URL] = []
        for worker in 0..<workers {
            let log = directory.file("worker-\(worker).log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let descriptor = open(log.path, O_WRONLY | O_APPEND)
            defer { close(descriptor) }
            pids.append(
                try ChildProcess.start(
                    [
                        Worker.url.path, "save", url.absoluteString, String(worker), String(saves),
                        String(seed &+ UInt64(worker)),
                        String(workers), directory.file("result-\(worker).json").path,
                    ],
                    output: descriptor))
            logs.append(log)
        }
        var results: [WorkerResult] = []
        for (worker, pid) in pids.enumerated() {
            let status = try ChildProcess.wait(pid)
            let log = (try? String(contentsOf: logs[worker], encoding: .utf8)) ?? ""
            try #require(status == 0, "worker \(worker) exited with \(status): \(log)")
            results.append(
                try JSONDecoder().decode(
                    WorkerResult.self, from: Data(contentsOf: directory.file("result-\(worker).json"))))
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try coordinator.addPersistentStore(type: .postgreSQL, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        // Every insert is present, once.
        let labels = try context.fetch(FetchRequest(entityName: "Node")).compactMap { $0["label"] as? String }
        let inserted = results.flatMap(\.inserted)
        #expect(labels.count == inserted.count)
        #expect(Set(labels) == Set(inserted))
        // Every counter holds exactly the increments that were reported saved: an update that lost
        // was reported as a conflict, never silently dropped.
        let stored = try context.fetch(
            FetchRequest(entityName: "Item", predicate: try FetchPredicate(format: "string BEGINSWITH 'counter-'")))
        for item in stored {
            let name = item["string"] as? String ?? "?"
            let saved = results.reduce(0) { $0 + ($1.increments[name] ?? 0) }
            #expect(item["int64"] as? Int == saved, "\(name)")
        }
        let conflicts = results.reduce(0) { $0 + $1.conflicts }
        let updates = results.reduce(0) { $0 + $1.increments.values.reduce(0, +) }
        #expect(conflicts > 0, "the processes collided at least once")
        #expect(inserted.count + updates + conflicts == workers * saves)
        for (worker, result) in results.enumerated() {
            #expect(
                result.remoteNotifications > 0 && result.remoteRows > 0, "worker \(worker) heard of the others' saves")
            #expect(result.viewMerged, "worker \(worker)'s view context merged the others' saves")
        }
        print(
            "multi-process test: \(inserted.count) inserts, \(updates) updates, \(conflicts) conflicts; "
                + results.enumerated().map {
                    "worker \($0.offset): \(String(format: "%.1f", $0.element.seconds)) s, \($0.element.remoteNotifications) notifications"
                }
                .joined(separator: "; "))
    }

    @Test("credentials come from the URL, PGPASSWORD or the password file, and no message shows a password")
    func credentials() throws {
        let server = try PostgreSQLServer.shared()
        let directory = try TemporaryDirectory(prefix: "pg-credentials")
        let role = "pw_" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let password = "Pa55-\(UUID().uuidString.prefix(8))"
        try PostgreSQLAdmin.execute(
            ["CREATE ROLE \(role) LOGIN PASSWORD '\(password)'", "GRANT CREATE ON DATABASE postgres TO \(role)"],
            on: server)
        let schema = PostgreSQLServer.schema(for: directory.url)
        let withPassword = server.url(schema: schema, user: role, password: password)
        let without = server.url(schema: schema, user: role)
        // The URL's password.
        let first = try Worker.run(["open", withPassword.absoluteString], in: directory)
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("opened 0"))
        // PGPASSWORD.
        let environment = try Worker.run(
            ["open", without.absoluteString], environment: ["PGPASSWORD": password], in: directory)
        #expect(environment.status == 0, "\(environment.output)")
        // The password file (~/.pgpass; PGPASSFILE names it), which must be private.
        let passfile = directory.file("pgpass")
        try "127.0.0.1:\(server.port):postgres:\(role):\(password)\n".write(
            to: passfile, atomically: true, encoding: .utf8)
        chmod(passfile.path, 0o600)
        let file = try Worker.run(
            ["open", without.absoluteString], environment: ["PGPASSFILE": passfile.path], in: directory)
        #expect(file.status == 0, "\(file.output)")
        // A wrong password fails with an error that names the store but shows no password.
        let wrong = server.url(schema: schema, user: role, password: "not-\(password)")
        let refused = try Worker.run(["open", wrong.absoluteString], in: directory)
        #expect(refused.status != 0)
        #expect(refused.output.contains("password authentication failed"), "\(refused.output)")
        #expect(!refused.output.contains(password), "\(refused.output)")
        #expect(
            refused.output.contains("postgres://\(role)@127.0.0.1:\(server.port)/postgres?schema="), "\(refused.output)"
        )
    }
}
