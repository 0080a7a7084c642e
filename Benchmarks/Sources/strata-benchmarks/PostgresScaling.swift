import Foundation
import Strata
import StrataPostgreSQL
import StrataTools

/// The PostgreSQL writer-processes run: 1, 2 and 4 writer processes saving through Strata into
/// one store on the server at once; throughput in saves (and rows) per second, charted.
///
/// Each writer is a child process of this executable (`--child postgres-writer`): its own
/// coordinator and contexts, `saves` saves of 10 new objects plus a change to one object it
/// saved before. Throughput is every writer's saves over the wall time from the first writer's
/// first save to the last writer's last (each writer reports its own start and end, so starting
/// the processes is not counted).
enum PostgresScaling {
    static let writerCounts = [1, 2, 4]
    static let child = "postgres-writer"
    static let insertsPerSave = 10
    /// Saves each writer makes before it starts timing.
    static let warmUpSaves = 10

    struct Point: Codable {
        var writers: Int
        var saves: Int
        var seconds: Double
        var savesPerSecond: Double { seconds > 0 ? Double(saves) / seconds : 0 }
        var rowsPerSecond: Double { savesPerSecond * Double(PostgresScaling.insertsPerSave + 1) }
    }

    struct Result: Codable {
        var savesPerWriter: Int
        var points: [Point]
        var settings: String
    }

    /// What a writer reports.
    struct WriterReport: Codable {
        var saves: Int
        var start: Double
        var end: Double
    }

    /// Runs in a child: `saves` saves into the store at `url`, the report as JSON on stdout.
    static func runWriter(url: URL, saves: Int) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try BenchModel.make())
        try coordinator.addPersistentStore(type: .postgreSQL, at: url)
        var previous: ManagedObject?
        var context = ManagedObjectContext(coordinator: coordinator)
        var id = Int64(getpid()) * 1_000_000
        func newItem(in context: ManagedObjectContext) throws -> ManagedObject {
            id += 1
            let item = try context.insertNewObject(forEntityName: "Item")
            item["id"] = id
            item["name"] = "writer-\(id)"
            item["email"] = "w\(id)@example.com"
            item["age"] = Int32(18 + id % 100)
            item["score"] = Double(id % 1000) / 10
            item["created"] = Date(timeIntervalSinceReferenceDate: Double(id))
            return item
        }
        // Untimed warm-up: connections, prepared statements, the server's caches.
        for _ in 0..<warmUpSaves {
            _ = try newItem(in: context)
            try context.save()
        }
        let start = Date().timeIntervalSince1970
        for save in 0..<saves {
            if save % 50 == 0 {
                // A long-lived context would hold every object; start a new one now and then.
                context = ManagedObjectContext(coordinator: coordinator)
                previous = nil
            }
            var last: ManagedObject?
            for _ in 0..<insertsPerSave { last = try newItem(in: context) }
            if let previous { previous["score"] = (previous["score"] as Double? ?? 0) + 1 }
            try context.save()
            previous = last
        }
        let end = Date().timeIntervalSince1970
        FileHandle.standardOutput.write(try JSONEncoder().encode(WriterReport(saves: saves, start: start, end: end)))
    }

    /// The whole run: for each writer count, a fresh store and that many writers at once.
    static func run(server: URL, savesPerWriter: Int, log: (String) -> Void) throws -> Result {
        var points: [Point] = []
        for writers in writerCounts {
            guard var components = URLComponents(url: server, resolvingAgainstBaseURL: false) else {
                throw BenchError("not a PostgreSQL URL")
            }
            components.queryItems = [
                URLQueryItem(name: "schema", value: "scaling_\(writers)_\(UInt32.random(in: 0...UInt32.max))")
            ]
            guard let url = components.url else { throw BenchError("not a PostgreSQL URL") }
            // Create the store once, so the writers do not race to create it.
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try BenchModel.make())
            let store = try coordinator.addPersistentStore(type: .postgreSQL, at: url)
            try coordinator.remove(store)
            // best effort: the server is thrown away anyway
            defer { try? PostgreSQLDriverFactory.removeStore(at: url) }
            log("  \(writers) writer\(writers == 1 ? "" : "s") × \(savesPerWriter) saves")
            let processes = try (0..<writers).map { _ -> (Process, Pipe) in
                let process = Process()
                #if os(Linux)
                    process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
                #else
                    process.executableURL = Bundle.main.executableURL
                #endif
                process.arguments = [
                    "--child", child, "--writer-url", url.absoluteString, "--writer-saves", String(savesPerWriter),
                ]
                let out = Pipe()
                process.standardOutput = out
                process.standardError = FileHandle.standardError
                try process.run()
                return (process, out)
            }
            var reports: [WriterReport] = []
            for (process, out) in processes {
                let data = out.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                guard process.terminationStatus == 0 else {
                    throw BenchError(
                        "a PostgreSQL writer failed (exit status \(process.terminationStatus)); see the messages above")
                }
                reports.append(try JSONDecoder().decode(WriterReport.self, from: data))
            }
            let start = reports.map(\.start).min() ?? 0
            let end = reports.map(\.end).max() ?? 0
            let point = Point(writers: writers, saves: reports.reduce(0) { $0 + $1.saves }, seconds: end - start)
            log(String(format: "    %.0f saves/s", point.savesPerSecond))
            points.append(point)
        }
        return Result(
            savesPerWriter: savesPerWriter, points: points,
            settings:
                "each save: \(insertsPerSave) inserts + 1 update, one transaction, after \(warmUpSaves) untimed saves; server defaults (fsync=on, synchronous_commit=on) on loopback"
        )
    }

    static func markdown(_ result: Result) -> String {
        var lines = [
            "### PostgreSQL: writer processes sharing one store\n",
            "\(result.savesPerWriter) saves per writer; \(result.settings).\n",
            "| writers | saves | seconds | saves/s | rows/s | vs 1 writer |", "|---:|---:|---:|---:|---:|---:|",
        ]
        let single = result.points.first?.savesPerSecond ?? 0
        for point in result.points {
            lines.append(
                String(
                    format: "| %d | %d | %.2f | %.0f | %.0f | %.2fx |", point.writers, point.saves, point.seconds,
                    point.savesPerSecond,
                    point.rowsPerSecond, single > 0 ? point.savesPerSecond / single : 0))
        }
        return lines.joined(separator: "\n")
    }

    /// A bar chart of saves per second by writer count.
    static func svg(_ result: Result, machine: Machine) -> String {
        let width = 640.0
        let height = 360.0
        let left = 80.0
        let bottom = 300.0
        let top = 70.0
        let highest = max(result.points.map(\.savesPerSecond).max() ?? 1, 1)
        let scale = (bottom - top) / (highest * 1.1)
        let barWidth = 90.0
        let gap = 60.0
        var s = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
            "<text x=\"\(left)\" y=\"28\" font-size=\"15\" font-weight=\"bold\">Strata on PostgreSQL: saves per second by writer processes</text>",
            "<text x=\"\(left)\" y=\"48\" font-size=\"11\" fill=\"#555\">\(escape(machine.summary)); \(result.savesPerWriter) saves per writer, 11 rows per save</text>",
            "<line x1=\"\(left)\" y1=\"\(bottom)\" x2=\"\(width - 20)\" y2=\"\(bottom)\" stroke=\"#333\"/>",
        ]
        for (index, point) in result.points.enumerated() {
            let x = left + 30 + Double(index) * (barWidth + gap)
            let h = point.savesPerSecond * scale
            s.append("<rect x=\"\(x)\" y=\"\(bottom - h)\" width=\"\(barWidth)\" height=\"\(h)\" fill=\"#3a7d44\"/>")
            s.append(
                "<text x=\"\(x + barWidth / 2)\" y=\"\(bottom - h - 6)\" font-size=\"12\" text-anchor=\"middle\">\(Int(point.savesPerSecond.rounded())) saves/s</text>"
            )
            s.append(
                "<text x=\"\(x + barWidth / 2)\" y=\"\(bottom + 18)\" font-size=\"12\" text-anchor=\"middle\">\(point.writers) writer\(point.writers == 1 ? "" : "s")</text>"
            )
        }
        s.append("</svg>")
        return s.joined(separator: "\n") + "\n"
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
