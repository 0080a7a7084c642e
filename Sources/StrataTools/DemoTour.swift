import Foundation
import Strata

/// The full `strata demo`: the demo graph on every driver, a conversion SQLite → LMDB → XML with
/// verification, and a small timing table.
public enum DemoTour {
    /// The drivers the tour runs on: every known driver whose stores need no server, in the
    /// table's order (``KnownDriver/allCases``).
    public static var drivers: [KnownDriver] { KnownDriver.allCases.filter { !$0.isOnServer } }

    /// The file a driver's demo store gets (`demo.` and its first extension), `nil` in memory.
    static func file(of driver: KnownDriver) -> String? { driver.fileExtensions.first.map { "demo." + $0 } }

    /// Runs the tour in `directory` (stores are written there) and returns the lines it prints.
    ///
    /// - Parameter timingRows: Objects inserted per driver for the timing table.
    public static func run(in directory: URL, timingRows: Int = 2_000) throws -> [String] {
        var out: [String] = []
        // 1. The same graph, the same steps, on every driver.
        var transcripts: [(String, [String])] = []
        for driver in drivers {
            let url = file(of: driver).map { directory.appendingPathComponent($0) }
            let lines = try Demo.run(type: driver.type, url: url)
            transcripts.append((driver.title, lines))
        }
        // The SQLite transcript is the one printed; the others are compared with it.
        let printed = transcripts[drivers.firstIndex(of: .sqlite) ?? 0].1
        out.append(contentsOf: printed)
        let reference = comparable(printed)
        let differing = transcripts.filter { comparable($0.1) != reference }.map(\.0)
        out.append("")
        if differing.isEmpty {
            out.append(
                "Ran the same steps on \(drivers.map(\.title).joined(separator: ", ")): every driver gave the same results."
            )
        } else {
            out.append("Drivers that gave different results: \(differing.joined(separator: ", "))")
        }

        // 2. SQLite → LMDB → XML, each copy verified against its source.
        out.append("")
        out.append("Converting the SQLite store to LMDB, then to XML (keys kept, each copy verified):")
        let sqlite = StoreLocation(scheme: .sqlite, url: directory.appendingPathComponent("demo.sqlite"))
        let lmdb = StoreLocation(scheme: .lmdb, url: directory.appendingPathComponent("converted.lmdb"))
        let xml = StoreLocation(scheme: .xml, url: directory.appendingPathComponent("converted.xml"))
        for (source, destination) in [(sqlite, lmdb), (lmdb, xml)] {
            let report = try StoreConverter.convert(from: source, to: destination, options: ConversionOptions())
            let objects = report.entities.reduce(0) { $0 + $1.destinationCount }
            let verdict = report.isVerified ? "verified" : "DIFFERENT"
            out.append(
                "  \(source.scheme.rawValue) → \(destination.scheme.rawValue): \(objects) objects in \(report.entities.count) entities, \(verdict)"
            )
        }

        // 3. A small timing table.
        out.append("")
        out.append("Timing, \(timingRows) objects per driver (one run; see strata bench for real measurements):")
        out.append("| driver | insert + save | fetch all, sorted | filtered count |")
        out.append("|---|---:|---:|---:|")
        for driver in drivers {
            let url = file(of: driver).map { directory.appendingPathComponent("timing-" + $0) }
            let times = try time(driver.type, url: url, rows: timingRows)
            out.append("| \(driver.title) | \(format(times.0)) | \(format(times.1)) | \(format(times.2)) |")
        }
        return out
    }

    /// A transcript without the lines that name the driver or count cache hits.
    private static func comparable(_ lines: [String]) -> [String] {
        lines.filter { !$0.hasPrefix("Strata demo on the") && !$0.hasPrefix("Row cache:") }
    }

    private static func time(_ type: StoreType, url: URL?, rows: Int) throws -> (Duration, Duration, Duration) {
        let model = try Demo.makeModel()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: type, at: url)
        let clock = ContinuousClock()
        let insert = try clock.measure {
            let context = ManagedObjectContext(coordinator: coordinator)
            for index in 0..<rows {
                let employee = try context.insertNewObject(forEntityName: "Employee")
                employee["name"] = "Employee \(index)"
                employee["age"] = 18 + index % 60
            }
            try context.save()
        }
        let fetch = try clock.measure {
            let context = ManagedObjectContext(coordinator: coordinator)
            _ = try context.fetch(FetchRequest(entityName: "Employee", sortKeys: [SortKey("name")])).map { $0["age"] }
        }
        let count = try clock.measure {
            let context = ManagedObjectContext(coordinator: coordinator)
            _ = try context.count(
                for: FetchRequest(entityName: "Employee", predicate: FetchPredicate(format: "age BETWEEN {30, 40}")))
        }
        return (insert, fetch, count)
    }

    private static func format(_ duration: Duration) -> String {
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return String(format: "%.1f ms", ms)
    }
}
