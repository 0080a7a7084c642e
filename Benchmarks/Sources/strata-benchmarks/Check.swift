import BenchPeers
import Foundation
import StrataTools

/// One performance target and how it fared.
struct CheckResult: Codable {
    /// `info`: a figure the issues ask to report without a target of its own.
    enum Status: String, Codable {
        case met
        case notMet = "not met"
        case notMeasured = "not measured"
        case info = "information"
    }
    var source: String
    var target: String
    var status: Status
    var figure: String
}

/// The targets of ../shared/DESIGN.md "Performance shape" and issues 4, 5 and 6, as ratios of
/// medians measured in one run.
enum Check {
    static func evaluate(
        _ report: BenchReport, xml: XMLSectionResult? = nil, contexts: ContextSectionResult? = nil,
        scaling: PostgresScaling.Result? = nil, migration: MigrationSectionResult? = nil,
        results resultsSection: ResultsSectionResult? = nil
    ) -> [CheckResult] {
        var results: [CheckResult] = []
        let n = report.rows
        func median(_ id: String, _ w: BenchWorkload) -> Double? { report.contender(id)?.measurement(w)?.medianMs }
        func missing(_ ids: [String]) -> String {
            var absent: [String] = []
            for id in ids where report.contender(id) == nil && !absent.contains(id) { absent.append(id) }
            let reasons = absent.map { id in
                report.skipped.contains { $0.id == id } && (id.hasPrefix("strata-") || id.hasPrefix("driver-"))
                    ? "\(id) not run: its driver is not linked into this build" : "\(id) was not run"
            }
            return reasons.joined(separator: "; ")
        }
        /// a / b compared with a limit: `a ≤ limit × b` (or `<` when strict).
        func ratio(
            _ source: String, _ target: String, _ a: String, _ b: String, _ w: BenchWorkload,
            _ wb: BenchWorkload? = nil,
            limit: Double, strict: Bool = false, note: String = "", info: Bool = false
        ) {
            guard let x = median(a, w), let y = median(b, wb ?? w), y > 0 else {
                results.append(.init(source: source, target: target, status: .notMeasured, figure: missing([a, b])))
                return
            }
            let r = x / y
            let ok = strict ? r < limit : r <= limit
            let status: CheckResult.Status = info ? .info : ok ? .met : .notMet
            let figure =
                "\(a) \(w.rawValue) \(String(format: "%.2f", x)) ms / \(b) \((wb ?? w).rawValue) "
                + "\(String(format: "%.2f", y)) ms = \(String(format: "%.2f", r))x\(note)"
            results.append(.init(source: source, target: target, status: status, figure: figure))
        }

        let sizeNote = n == 1_000_000 ? "" : " (at \(n) rows; the issue names 1,000,000: run with --rows 1000000)"
        ratio(
            "DESIGN + issue 4", "SQLite: insert and save 100,000 objects ≤ 2x the C API in one transaction",
            "strata-sqlite", "sqlite-c", .insert, limit: 2)
        ratio(
            "DESIGN + issue 4", "SQLite: fetch them back as objects ≤ 2.5x the C API",
            "strata-sqlite", "sqlite-c", .fetchAll, limit: 2.5)
        ratio(
            "issue 4", "SQLite: 10,000 random lookups by object ID ≤ 2x the C API",
            "strata-sqlite", "sqlite-c", .lookupCold, limit: 2)
        ratio(
            "issue 4 + DESIGN",
            "SQLite: saving 10 changed objects in a large store < 2x saving them in a 1,000-row store",
            "strata-sqlite", "strata-sqlite", .saveFew, .saveFewSmall, limit: 2, strict: true, note: sizeNote)
        ratio(
            "DESIGN", "LMDB: saving 10 changed objects costs O(k): large store < 2x the 1,000-row store",
            "strata-lmdb", "strata-lmdb", .saveFew, .saveFewSmall, limit: 2, strict: true)
        for kind in DriverKind.allCases {
            let id = "strata-\(kind.rawValue)"
            guard let cold = median(id, .lookupCold), let warm = median(id, .lookupWarm), warm > 0 else {
                results.append(
                    .init(
                        source: "DESIGN", target: "\(id): row cache hits ≥ 10x faster than going to the driver",
                        status: .notMeasured, figure: missing([id])))
                continue
            }
            let speedup = cold / warm
            results.append(
                .init(
                    source: "DESIGN", target: "\(id): row cache hits ≥ 10x faster than going to the driver",
                    status: speedup >= 10 ? .met : .notMet,
                    figure: String(format: "W3-cold %.2f ms / W3-warm %.2f ms = %.1fx", cold, warm, speedup)))
        }
        ratio(
            "DESIGN", "LMDB point lookups faster than SQLite's", "strata-lmdb", "strata-sqlite", .lookupCold, limit: 1,
            strict: true)
        ratio(
            "DESIGN", "LMDB full fetches faster than SQLite's", "strata-lmdb", "strata-sqlite", .fetchAll, limit: 1,
            strict: true)
        for w in [BenchWorkload.insert, .fetchAll, .lookupCold, .filtered, .update, .delete] {
            // The drivers compared as drivers; the same objects and contexts sit on top of both.
            ratio(
                "issue 6", "LMDB driver faster than the SQLite driver on \(w.rawValue) (driver level)", "driver-lmdb",
                "driver-sqlite", w,
                limit: 1, strict: true)
        }
        for w in [BenchWorkload.insert, .fetchAll, .lookupCold, .filtered, .update, .delete] {
            ratio(
                "issue 6 (information)", "Strata on LMDB against Strata on SQLite on \(w.rawValue) (full stack)",
                "strata-lmdb",
                "strata-sqlite", w, limit: 1, info: true)
        }
        for w in [BenchWorkload.insert, .fetchAll, .lookupCold, .filtered, .update, .delete] {
            // Issue 6 sets its 2x at the driver level (below); the full stack is reported for reference.
            ratio(
                "issue 6 (information)",
                "Strata on LMDB against raw LMDB C calls on \(w.rawValue) (full stack: objects, contexts)",
                "strata-lmdb", "lmdb-c", w, limit: 2, info: true)
        }
        let workloads: [BenchWorkload] = [.insert, .fetchAll, .lookupCold, .filtered, .update, .delete]
        for w in workloads {
            ratio(
                "issue 6", "LMDB driver within 2x of raw LMDB on \(w.rawValue) (driver level)", "driver-lmdb", "lmdb-c",
                w, limit: 2)
        }
        for w in workloads {
            ratio(
                "issue 4 (information)", "SQLite driver against the C API on \(w.rawValue) (driver level)",
                "driver-sqlite",
                "sqlite-c", w, limit: 2, info: true)
        }
        for w in [BenchWorkload.insert, .fetchAll, .lookupCold, .lookupWarm, .update, .delete] {
            ratio(
                "issue 21", "PostgreSQL: Strata within 1.5x of raw libpq on \(w.rawValue)", "strata-postgres",
                "libpq-c", w, limit: 1.5)
        }
        for w in [BenchWorkload.insert, .fetchAll, .lookupCold, .filtered, .update, .delete, .saveFew] {
            ratio(
                "issue 21 (information)", "PostgreSQL driver against raw libpq on \(w.rawValue) (driver level)",
                "driver-postgres",
                "libpq-c", w, limit: 1.5, info: true)
        }
        ratio(
            "issue 21 (information)", "PostgreSQL: Strata against raw libpq on W4 (filter and sort)", "strata-postgres",
            "libpq-c",
            .filtered, limit: 1.5, info: true)
        if let scaling {
            let figures = scaling.points.map {
                String(format: "%d writer%@: %.0f saves/s", $0.writers, $0.writers == 1 ? "" : "s", $0.savesPerSecond)
            }
            results.append(
                .init(
                    source: "issue 21", target: "PostgreSQL: throughput with 1, 2 and 4 writer processes (charted)",
                    status: .info, figure: figures.joined(separator: ", ")))
        } else {
            results.append(
                .init(
                    source: "issue 21", target: "PostgreSQL: throughput with 1, 2 and 4 writer processes (charted)",
                    status: .notMeasured, figure: "the scaling run did not run (it runs with strata-postgres)"))
        }
        results += xmlTargets(xml)
        results += contextTargets(contexts)
        results += migrationTargets(migration)
        results += resultsTargets(resultsSection)
        results.append(
            .init(
                source: "DESIGN", target: "fetching with a batch size keeps memory bounded whatever the result size",
                status: .notMeasured, figure: "no batched-fetch memory workload yet"))
        return results
    }

    /// Issue 5: open ≤ 2x libxml2's streaming reader, save ≤ 2x writing the bytes with fsync;
    /// memory per object at rest reported.
    static func xmlTargets(_ xml: XMLSectionResult?) -> [CheckResult] {
        let openTarget = "XML: open a 100,000-object store ≤ 2x libxml2's streaming reader over the file"
        let saveTarget = "XML: save it ≤ 2x writing the same bytes with fsync"
        guard let xml else {
            let why = "the XML section did not run (it runs with strata-xml or driver-xml among the contenders)"
            return [
                .init(source: "issue 5", target: openTarget, status: .notMeasured, figure: why),
                .init(source: "issue 5", target: saveTarget, status: .notMeasured, figure: why),
            ]
        }
        func line(_ target: String, _ a: String, _ x: [Double], _ b: String, _ y: [Double]) -> CheckResult {
            let mx = XMLSectionResult.median(x)
            let my = XMLSectionResult.median(y)
            let r = my > 0 ? mx / my : .infinity
            let size = xml.rows == 100_000 ? "" : " (at \(xml.rows) objects; the issue names 100,000)"
            return .init(
                source: "issue 5", target: target, status: r <= 2 ? .met : .notMet,
                figure: String(format: "\(a) %.2f ms / \(b) %.2f ms = %.2fx", mx, my, r) + size)
        }
        var results = [
            line(openTarget, "XML driver open", xml.openMs, "libxml2 reader", xml.readerMs),
            line(saveTarget, "XML driver save", xml.saveMs, "write + fsync + rename", xml.writeMs),
        ]
        let perObject = [("XML", xml.xmlBytesPerObject), ("in-memory", xml.memoryBytesPerObject)].map { name, bytes in
            bytes.map { "\(name) " + String(format: "%.0f B", $0) } ?? "\(name) not measured"
        }
        results.append(
            .init(
                source: "issue 5", target: "memory per object at rest (resident set after open − before, ÷ objects)",
                status: .info, figure: perObject.joined(separator: ", ") + " per object (\(xml.rows) objects)"))
        return results
    }

    /// Issue 18: child saves ≤ 1.5x the parent's own inserts, merges ≤ 2x refetching, writeSync ≤
    /// 1.2x a context by hand, a view context's memory flat over fetch-and-drop cycles.
    static func contextTargets(_ contexts: ContextSectionResult?) -> [CheckResult] {
        let targets = [
            "contexts: a child saving N inserts into its parent ≤ 1.5x inserting them in the parent directly",
            "contexts: merging N/10 changed objects into a view context holding N ≤ 2x refetching them",
            "contexts: DataAccess.writeSync of 1,000 objects ≤ 1.2x the same through a context by hand",
            "contexts: a view context's resident memory stays flat over 100 fetch-and-drop cycles of N objects",
        ]
        guard let c = contexts else {
            return targets.map {
                .init(source: "issue 18", target: $0, status: .notMeasured, figure: "run with --contexts")
            }
        }
        let size = c.rows == 100_000 ? "" : " (at \(c.rows) objects; the issue names 100,000)"
        func line(_ target: String, _ a: String, _ x: [Double], _ b: String, _ y: [Double], _ limit: Double)
            -> CheckResult
        {
            let mx = ContextSectionResult.median(x)
            let my = ContextSectionResult.median(y)
            let r = my > 0 ? mx / my : .infinity
            return .init(
                source: "issue 18", target: target, status: r <= limit ? .met : .notMet,
                figure: String(format: "\(a) %.2f ms / \(b) %.2f ms = %.2fx", mx, my, r) + size)
        }
        var results = [
            line(targets[0], "child insert + save", c.childSaveMs, "parent insert", c.parentInsertMs, 1.5),
            line(targets[1], "merge \(c.merged)", c.mergeMs, "refetch \(c.merged)", c.refetchMs, 2),
            line(targets[2], "writeSync", c.writeSyncMs, "by hand", c.byHandMs, 1.2),
        ]
        let cycles = c.residentByCycle.keys.sorted()
        if let first = cycles.first(where: { $0 >= 10 }) ?? cycles.first, let last = cycles.last,
            let early = c.residentByCycle[first], let late = c.residentByCycle[last]
        {
            let mib = { (bytes: Int64) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            let growth = late - early
            let figures = cycles.map { "cycle \($0): \(mib(c.residentByCycle[$0] ?? 0))" }.joined(separator: ", ")
            results.append(
                .init(
                    source: "issue 18", target: targets[3],
                    status: Double(growth) <= 0.1 * Double(early) ? .met : .notMet,
                    figure:
                        "\(figures); growth from cycle \(first) to \(last): \(mib(growth)) (limit: 10% of cycle \(first))"
                        + size))
        }
        return results
    }

    /// Issue 19: adding an optional attribute to a SQLite store of 1,000,000 rows ≤ 2x the raw
    /// SQL, in place; a copying migration's peak memory at 1,000,000 rows ≤ 1.5x at 100,000.
    static func migrationTargets(_ migration: MigrationSectionResult?) -> [CheckResult] {
        let targets = [
            "migration: adding an optional attribute to a SQLite store of 1,000,000 rows ≤ 2x ALTER TABLE ADD COLUMN + the metadata by hand, in place",
            "migration: a copying migration's peak resident memory at 1,000,000 rows ≤ 1.5x at 100,000 rows",
        ]
        guard let m = migration else {
            return targets.map {
                .init(source: "issue 19", target: $0, status: .notMeasured, figure: "run with --migration")
            }
        }
        let strata = MigrationSectionResult.median(m.strataAddColumnMs)
        let raw = MigrationSectionResult.median(m.rawAddColumnMs)
        let r = raw > 0 ? strata / raw : .infinity
        let inPlace = m.addColumnStrategy == "inPlace" && m.addColumnKeptFile
        var results = [
            CheckResult(
                source: "issue 19", target: targets[0], status: r <= 2 && inPlace ? .met : .notMet,
                figure: String(format: "Strata %.2f ms / raw SQL %.2f ms = %.2fx", strata, raw, r)
                    + " at \(m.rows) rows; \(m.addColumnStrategy)\(m.addColumnKeptFile ? ", same file" : ", the file was replaced")"
            )
        ]
        if let small = m.copyPeakBytes[100_000], let large = m.copyPeakBytes[1_000_000], small > 0 {
            let growth = Double(large) / Double(small)
            let mib = { (bytes: Int64) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            results.append(
                .init(
                    source: "issue 19", target: targets[1], status: growth <= 1.5 ? .met : .notMet,
                    figure:
                        "\(m.copyDriver): peak \(mib(large)) at 1,000,000 rows (\(String(format: "%.0f", m.copyMs[1_000_000] ?? 0)) ms) / \(mib(small)) at 100,000 (\(String(format: "%.0f", m.copyMs[100_000] ?? 0)) ms) = \(String(format: "%.2f", growth))x; anonymous (heap) part at its largest: \(mib(m.copyAnonymousPeakBytes[1_000_000] ?? 0)) / \(mib(m.copyAnonymousPeakBytes[100_000] ?? 0))"
                ))
        } else {
            results.append(
                .init(
                    source: "issue 19", target: targets[1], status: .notMeasured,
                    figure: "the copying migration did not run"))
        }
        return results
    }

    /// Issue 20: batch insert ≤ 1.2x raw C inserts; a controller's update after 100 changes ≤ 0.1x
    /// a refetch; a batched walk of 1,000,000 rows under 64 MiB of peak resident growth.
    static func resultsTargets(_ r: ResultsSectionResult?) -> [CheckResult] {
        let targets = [
            "results: a batch insert of N rows on SQLite ≤ 1.2x raw sqlite3 C inserts of them (one transaction, prepared statement)",
            "results: a fetched results controller updating after 100 changes to N objects ≤ 0.1x a full refetch",
            "results: walking 1,000,000 rows fetched with fetchBatchSize = 500 grows peak resident memory < 64 MiB, on SQLite",
            "results: walking 1,000,000 rows fetched with fetchBatchSize = 500 grows peak resident memory < 64 MiB, on LMDB (the store file's pages in LMDB's memory map, page cache, not counted)",
        ]
        guard let r else {
            return targets.map {
                .init(source: "issue 20", target: $0, status: .notMeasured, figure: "run with --results")
            }
        }
        let size = r.rows == 100_000 ? "" : " (at \(r.rows) objects; the issue names 100,000)"
        func line(_ target: String, _ a: String, _ x: [Double], _ b: String, _ y: [Double], _ limit: Double)
            -> CheckResult
        {
            let mx = ResultsSectionResult.median(x)
            let my = ResultsSectionResult.median(y)
            let ratio = my > 0 ? mx / my : .infinity
            return .init(
                source: "issue 20", target: target, status: ratio <= limit ? .met : .notMet,
                figure: String(format: "\(a) %.2f ms / \(b) %.2f ms = %.3fx", mx, my, ratio) + size)
        }
        // The target is checked on the fastest form, the dictionaries of `objects:`; the managed
        // object handler form is reported beside it.
        var results = [
            line(
                targets[0], "batch insert (dictionary form, objects:)", r.batchInsertMs, "raw C inserts",
                r.rawInsertMs, 1.2)
        ]
        if let handler = r.batchInsertHandlerMs, !handler.isEmpty {
            var objects = line(
                targets[0], "batch insert (managedObjectHandler form)", handler, "raw C inserts", r.rawInsertMs, 1.2)
            objects.source = "issue 20 (information)"
            objects.target = "results: the same batch insert from a managedObjectHandler setting each object's values"
            objects.status = .info
            results.append(objects)
        }
        results += [
            line(targets[1], "update after \(r.changed) changes", r.controllerUpdateMs, "refetch", r.refetchMs, 0.1)
        ]
        for (index, driver) in [(2, "sqlite"), (3, "lmdb")] {
            guard let growth = r.walkGrowthBytes[driver] else {
                results.append(
                    .init(
                        source: "issue 20", target: targets[index], status: .notMeasured,
                        figure: "the driver is not linked"))
                continue
            }
            func mib(_ bytes: Int64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            let walked = r.walkedRows == 1_000_000 ? "" : " (walked \(r.walkedRows) rows; the issue names 1,000,000)"
            let mapped = r.walkMappedStoreBytes?[driver] ?? 0
            let own = growth - mapped
            var figure = "peak growth \(mib(growth))"
            if mapped > 0 {
                figure += ", of which \(mib(mapped)) the store file's pages in its memory map: \(mib(own)) without them"
            }
            if let anonymous = r.walkAnonymousGrowthBytes?[driver] {
                figure += "; anonymous (heap) part at most \(mib(anonymous))"
            }
            if let afterFetch = r.walkAfterFetchBytes?[driver] {
                figure += "; \(mib(afterFetch)) after the fetch of IDs"
            }
            figure += String(format: "; walk %.2f s (fetchBatchFaulting)", r.walkSeconds[driver] ?? 0)
            results.append(
                .init(
                    source: "issue 20", target: targets[index], status: Double(own) / 1_048_576 < 64 ? .met : .notMet,
                    figure: figure + walked))
        }
        return results
    }

    static func markdown(_ results: [CheckResult]) -> String {
        var lines = ["| source | target | status | figure |", "|---|---|---|---|"]
        for r in results { lines.append("| \(r.source) | \(r.target) | **\(r.status.rawValue)** | \(r.figure) |") }
        return lines.joined(separator: "\n")
    }

    static func text(_ results: [CheckResult]) -> String {
        results.map { "[\($0.status.rawValue)] \($0.source): \($0.target) — \($0.figure)" }.joined(separator: "\n")
    }
}
