import BenchPeers
import Foundation
import StrataTools

/// One performance target and how it fared.
struct CheckResult: Codable {
    /// `info`: a figure reported without a target of its own.
    enum Status: String, Codable {
        case met
        case notMet = "not met"
        case notMeasured = "not measured"
        case info = "information"
    }
    /// What the target is about (SQLite, LMDB, peers, memory, …).
    var source: String
    var target: String
    var status: Status
    var figure: String
    /// The ratio judged, for a ratio target: of the minimums over every pooled sample, the figure
    /// that holds still on a shared machine.
    var ratio: Double?
    /// The ratio of the medians, printed beside it.
    var medianRatio: Double?
}

/// The targets of ../shared/DESIGN.md "Performance shape" and the driver and section targets,
/// judged on ratios of minimums measured in one pooled run (medians printed beside them).
enum Check {
    /// Every workload a contender runs (W2-any is Strata's alone, for information).
    static let everyWorkload = BenchWorkload.allCases.filter { $0 != .fetchAllAny }
    /// W1–W6: the single-store workloads.
    static let w1ToW6: [BenchWorkload] = [.insert, .fetchAll, .lookupCold, .lookupWarm, .filtered, .update, .delete]

    /// The LMDB and SQLite contenders that lose the same on a power failure (docs/benchmarks.md,
    /// "Durability settings"): LMDB, SQLite, and the durability in words.
    static let matchedDurability = [
        ("lmdb", "sqlite-syncfull", "both syncing every commit"),
        ("lmdb-nometasync", "sqlite", "neither syncing the commit record at every commit"),
    ]

    static func evaluate(
        _ report: BenchReport, xml: XMLSectionResult? = nil, contexts: ContextSectionResult? = nil,
        scaling: PostgresScaling.Result? = nil, migration: MigrationSectionResult? = nil,
        results resultsSection: ResultsSectionResult? = nil, memory: MemorySectionResult? = nil,
        parallel: ParallelSectionResult? = nil
    ) -> [CheckResult] {
        var list = CheckList(report: report)
        let n = report.rows
        let sizeNote = n == 1_000_000 ? "" : " (at \(n) rows; --scaling measures W8 up to 1,000,000)"

        // SQLite: the whole stack against the C API, at the same durability (WAL, synchronous=NORMAL).
        list.everyOne("SQLite", "strata-sqlite", "sqlite-c", w1ToW6 + [.graphPrefetch, .saveFew], limit: 1.5) {
            "SQLite: Strata ≤ 1.5x the C API on \($0.rawValue)"
        }
        list.ratio(
            "SQLite", "SQLite: Strata ≤ 2x the C API on W7-fault", "strata-sqlite", "sqlite-c", .graphFaulting,
            limit: 2)
        list.ratio(
            "SQLite", "SQLite: saving 10 changed objects in a large store < 2x saving them in a 1,000-row store",
            "strata-sqlite", "strata-sqlite", .saveFew, .saveFewSmall, limit: 2, strict: true, note: sizeNote)
        list.everyOne("SQLite", "driver-sqlite", "sqlite-c", w1ToW6, limit: 1.5, info: true) {
            "SQLite driver against the C API on \($0.rawValue) (driver level)"
        }

        // LMDB: the whole stack and the driver against the C API, at the same durability (sync on commit).
        list.everyOne("LMDB", "strata-lmdb", "lmdb-c", everyWorkload, limit: 2) {
            "LMDB: Strata ≤ 2x the C API on \($0.rawValue)"
        }
        list.everyOne("LMDB", "driver-lmdb", "lmdb-c", w1ToW6, limit: 2) {
            "LMDB driver ≤ 2x the C API on \($0.rawValue) (driver level)"
        }
        list.ratio(
            "LMDB", "LMDB: saving 10 changed objects costs O(k): large store < 2x the 1,000-row store",
            "strata-lmdb", "strata-lmdb", .saveFew, .saveFewSmall, limit: 2, strict: true, note: sizeNote)

        // LMDB against SQLite at matched durability, whole stack and driver level.
        for (lmdb, sqlite, words) in matchedDurability {
            list.everyOne(
                "matched durability", "strata-\(lmdb)", "strata-\(sqlite)", everyWorkload, limit: 1, strict: true
            ) {
                "LMDB faster than SQLite on \($0.rawValue), \(words) (strata-\(lmdb) against strata-\(sqlite))"
            }
        }
        for (lmdb, sqlite, words) in matchedDurability {
            list.everyOne(
                "matched durability", "driver-\(lmdb)", "driver-\(sqlite)", w1ToW6, limit: 1, strict: true
            ) {
                "LMDB driver faster than the SQLite driver on \($0.rawValue), \(words) (driver level)"
            }
        }

        // Peers: faster than GRDB through every driver.
        for kind in KnownDriver.allCases {
            list.everyOne("peers", "strata-\(kind.rawValue)", "grdb", everyWorkload, limit: 1, strict: true) {
                "Strata on \(kind.rawValue) faster than GRDB on \($0.rawValue)"
            }
        }

        // Row cache: a hit through the whole stack against a lookup in memory.
        for kind in KnownDriver.allCases {
            list.ratio(
                "row cache",
                "strata-\(kind.rawValue): W3-warm (row cache hits) ≤ 3x driver-memory's W3-warm (a lookup in memory)",
                "strata-\(kind.rawValue)", "driver-memory", .lookupWarm, limit: 3)
        }

        // PostgreSQL: the whole stack against raw libpq; the driver level and writer processes for information.
        for w in [BenchWorkload.insert, .fetchAll, .lookupCold, .lookupWarm, .update, .delete] {
            list.ratio(
                "PostgreSQL", "PostgreSQL: Strata within 1.5x of raw libpq on \(w.rawValue)", "strata-postgres",
                "libpq-c", w, limit: 1.5)
        }
        list.ratio(
            "PostgreSQL", "PostgreSQL: Strata against raw libpq on W4 (filter and sort)", "strata-postgres", "libpq-c",
            .filtered, limit: 1.5, info: true)
        list.everyOne(
            "PostgreSQL", "driver-postgres", "libpq-c", w1ToW6 + [.saveFew], limit: 1.5, info: true
        ) {
            "PostgreSQL driver against raw libpq on \($0.rawValue) (driver level)"
        }
        let writersTarget = "PostgreSQL: throughput with 1, 2 and 4 writer processes (charted)"
        if let scaling {
            let figures = scaling.points.map {
                String(format: "%d writer%@: %.0f saves/s", $0.writers, $0.writers == 1 ? "" : "s", $0.savesPerSecond)
            }
            list.results.append(
                .init(
                    source: "PostgreSQL", target: writersTarget, status: .info, figure: figures.joined(separator: ", "))
            )
        } else {
            list.results.append(
                .init(
                    source: "PostgreSQL", target: writersTarget, status: .notMeasured,
                    figure: "the writer processes did not run (they run with strata-postgres)"))
        }

        var results = list.results
        results += MemorySection.targets(memory)
        results += ParallelSection.targets(parallel)
        results += xmlTargets(xml)
        results += contextTargets(contexts)
        results += migrationTargets(migration)
        results += resultsTargets(resultsSection)
        return results
    }

    /// `a` against `b`: the ratio of their minimums judged (`a ≤ limit × b`, or `<` when strict),
    /// the ratio of their medians beside it.
    static func compare(
        _ source: String, _ target: String, _ aName: String, _ a: [Double], _ bName: String, _ b: [Double],
        limit: Double, strict: Bool = false, info: Bool = false, note: String = "", digits: Int = 2
    ) -> CheckResult {
        guard let minA = a.min(), let minB = b.min(), minB > 0, median(b) > 0 else {
            return .init(source: source, target: target, status: .notMeasured, figure: "no samples of \(bName)")
        }
        let r = minA / minB
        let m = median(a) / median(b)
        let ok = strict ? r < limit : r <= limit
        let format = "%.\(digits)f"
        let figure =
            "min \(aName) \(ms(minA)) / \(bName) \(ms(minB)) = \(String(format: format, r))x; "
            + "medians \(ms(median(a))) / \(ms(median(b))) = \(String(format: format, m))x\(note)"
        return .init(
            source: source, target: target, status: info ? .info : ok ? .met : .notMet, figure: figure, ratio: r,
            medianRatio: m)
    }

    /// The median of `samples` (the mean of the middle two when their count is even).
    static func median(_ samples: [Double]) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return 0 }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    /// Milliseconds with their unit.
    static func ms(_ value: Double) -> String { BenchReport.milliseconds(value) + " ms" }

    /// XML: open ≤ 2x libxml2's streaming reader, save ≤ 2x writing the bytes with fsync; the
    /// driver's memory per row at rest reported.
    static func xmlTargets(_ xml: XMLSectionResult?) -> [CheckResult] {
        let openTarget = "XML: open a 100,000-object store ≤ 2x libxml2's streaming reader over the file"
        let saveTarget = "XML: save it ≤ 2x writing the same bytes with fsync"
        guard let xml else {
            let why = "the XML section did not run (it runs with strata-xml or driver-xml among the contenders)"
            return [
                .init(source: "XML", target: openTarget, status: .notMeasured, figure: why),
                .init(source: "XML", target: saveTarget, status: .notMeasured, figure: why),
            ]
        }
        func line(_ target: String, _ a: String, _ x: [Double], _ b: String, _ y: [Double]) -> CheckResult {
            let size = xml.rows == 100_000 ? "" : " (at \(xml.rows) objects; the target names 100,000)"
            return compare("XML", target, a, x, b, y, limit: 2, note: size)
        }
        var results = [
            line(openTarget, "XML driver open", xml.openMs, "libxml2 reader", xml.readerMs),
            line(saveTarget, "XML driver save", xml.saveMs, "write + fsync + rename", xml.writeMs),
        ]
        results.append(
            .init(
                source: "XML",
                target: "XML: the XML driver's memory per row at rest (resident set after open − before, ÷ rows)",
                status: xml.xmlBytesPerObject == nil ? .notMeasured : .info,
                figure: xml.xmlBytesPerObject.map { String(format: "%.0f B per row (%d rows)", $0, xml.rows) }
                    ?? "measured in a child process (not with --in-process)"))
        return results
    }

    /// Contexts: child saves ≤ 1.5x the parent's own inserts, merges ≤ 2x refetching, writeSync ≤
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
                .init(source: "contexts", target: $0, status: .notMeasured, figure: "run with --contexts")
            }
        }
        let size = c.rows == 100_000 ? "" : " (at \(c.rows) objects; the target names 100,000)"
        func line(_ target: String, _ a: String, _ x: [Double], _ b: String, _ y: [Double], _ limit: Double)
            -> CheckResult
        {
            compare("contexts", target, a, x, b, y, limit: limit, note: size)
        }
        var results = [
            line(targets[0], "child insert + save", c.childSaveMs, "parent insert", c.parentInsertMs, 1.5),
            line(targets[1], "merge \(c.merged)", c.mergeMs, "refetch \(c.merged)", c.refetchMs, 2),
            line(targets[2], "writeSync", c.writeSyncMs, "by hand", c.byHandMs, 1.2),
        ]
        if let step = c.childSaveStepMs, !step.isEmpty {
            // The route above includes making the objects in the child, which costs what the
            // parent's own inserts cost; the save step is what moving them into the parent adds.
            var saveStep = line(
                "contexts (information): the child's save() alone against inserting in the parent directly",
                "child save() step", step, "parent insert", c.parentInsertMs, 1.5)
            saveStep.source = "contexts (information)"
            saveStep.status = .info
            results.append(saveStep)
        }
        let cycles = c.residentByCycle.keys.sorted()
        if let first = cycles.first(where: { $0 >= 10 }) ?? cycles.first, let last = cycles.last,
            let early = c.residentByCycle[first], let late = c.residentByCycle[last]
        {
            let mib = { (bytes: Int64) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            let growth = late - early
            let figures = cycles.map { "cycle \($0): \(mib(c.residentByCycle[$0] ?? 0))" }.joined(separator: ", ")
            results.append(
                .init(
                    source: "contexts", target: targets[3],
                    status: Double(growth) <= 0.1 * Double(early) ? .met : .notMet,
                    figure:
                        "\(figures); growth from cycle \(first) to \(last): \(mib(growth)) (limit: 10% of cycle \(first))"
                        + size))
        }
        return results
    }

    /// Migration: adding an optional attribute to a SQLite store of 1,000,000 rows ≤ 2x the raw
    /// SQL, in place; a copying migration's peak memory at 1,000,000 rows ≤ 1.5x at 100,000.
    static func migrationTargets(_ migration: MigrationSectionResult?) -> [CheckResult] {
        let targets = [
            "migration: adding an optional attribute to a SQLite store of 1,000,000 rows ≤ 2x ALTER TABLE ADD COLUMN + the metadata by hand, in place",
            "migration: a copying migration's peak resident memory at 1,000,000 rows ≤ 1.5x at 100,000 rows",
        ]
        guard let m = migration else {
            return targets.map {
                .init(source: "migration", target: $0, status: .notMeasured, figure: "run with --migration")
            }
        }
        let inPlace = m.addColumnStrategy == "inPlace" && m.addColumnKeptFile
        var addColumn = compare(
            "migration", targets[0], "Strata", m.strataAddColumnMs, "raw SQL", m.rawAddColumnMs, limit: 2,
            note:
                " at \(m.rows) rows; \(m.addColumnStrategy)\(m.addColumnKeptFile ? ", same file" : ", the file was replaced")"
        )
        if !inPlace, addColumn.status == .met { addColumn.status = .notMet }
        var results = [addColumn]
        if let small = m.copyPeakBytes[100_000], let large = m.copyPeakBytes[1_000_000], small > 0 {
            let growth = Double(large) / Double(small)
            let mib = { (bytes: Int64) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            results.append(
                .init(
                    source: "migration", target: targets[1], status: growth <= 1.5 ? .met : .notMet,
                    figure:
                        "\(m.copyDriver): peak \(mib(large)) at 1,000,000 rows (\(String(format: "%.0f", m.copyMs[1_000_000] ?? 0)) ms) / \(mib(small)) at 100,000 (\(String(format: "%.0f", m.copyMs[100_000] ?? 0)) ms) = \(String(format: "%.2f", growth))x; anonymous (heap) part at its largest: \(mib(m.copyAnonymousPeakBytes[1_000_000] ?? 0)) / \(mib(m.copyAnonymousPeakBytes[100_000] ?? 0))"
                ))
        } else {
            results.append(
                .init(
                    source: "migration", target: targets[1], status: .notMeasured,
                    figure: "the copying migration did not run"))
        }
        if let peaks = m.sqliteCopyPeakBytes, let small = peaks[100_000], let large = peaks[1_000_000], small > 0 {
            let mib = { (bytes: Int64) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            let anonymous = m.sqliteCopyAnonymousPeakBytes ?? [:]
            results.append(
                .init(
                    source: "migration (information)",
                    target: "the same copying migration on SQLite (entity numbers changed, so it copies)",
                    status: .info,
                    figure:
                        "SQLite: peak \(mib(large)) at 1,000,000 rows (\(String(format: "%.0f", m.sqliteCopyMs?[1_000_000] ?? 0)) ms) / \(mib(small)) at 100,000 = \(String(format: "%.2f", Double(large) / Double(small)))x; anonymous part at its largest: \(mib(anonymous[1_000_000] ?? 0)) / \(mib(anonymous[100_000] ?? 0))"
                ))
        }
        return results
    }

    /// Results: batch insert ≤ 1.2x raw C inserts; a controller's update after 100 changes ≤ 0.1x
    /// a refetch; a batched walk of 1,000,000 rows under 64 MiB of peak resident growth.
    static func resultsTargets(_ r: ResultsSectionResult?) -> [CheckResult] {
        let targets = [
            "results: a batch insert of N rows on SQLite ≤ 1.2x raw sqlite3 C inserts of them (one transaction, prepared statement)",
            "results: a fetched results controller updating after 100 changes to N objects ≤ 0.1x a full refetch",
            "results: walking 1,000,000 rows fetched with fetchBatchSize = 500 grows peak resident memory < 64 MiB, on SQLite",
            "results: walking 1,000,000 rows fetched with fetchBatchSize = 500 grows peak resident memory < 64 MiB, on LMDB (the store file's pages in LMDB's memory map counted)",
        ]
        guard let r else {
            return targets.map {
                .init(source: "results", target: $0, status: .notMeasured, figure: "run with --results")
            }
        }
        let size = r.rows == 100_000 ? "" : " (at \(r.rows) objects; the target names 100,000)"
        func line(_ target: String, _ a: String, _ x: [Double], _ b: String, _ y: [Double], _ limit: Double)
            -> CheckResult
        {
            compare("results", target, a, x, b, y, limit: limit, note: size, digits: 3)
        }
        // The target is checked on the fastest form, the dictionaries of `objects:`; the managed
        // object handler form is reported beside it.
        var insert = line(
            targets[0], "batch insert (dictionary form, objects:)", r.batchInsertMs, "raw C inserts",
            r.rawInsertMs, 1.2)
        if let cpu = r.batchInsertCpuMs, let rawCPU = r.rawInsertCpuMs, let a = cpu.min(), let b = rawCPU.min(), b > 0 {
            // CPU beside wall time: what each side computed, without its wait for the disk.
            insert.figure += "; thread CPU min \(ms(a)) / \(ms(b)) = \(String(format: "%.3f", a / b))x"
        }
        var results = [insert]
        if let handler = r.batchInsertHandlerMs, !handler.isEmpty {
            var objects = line(
                targets[0], "batch insert (managedObjectHandler form)", handler, "raw C inserts", r.rawInsertMs, 1.2)
            objects.source = "results (information)"
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
                        source: "results", target: targets[index], status: .notMeasured,
                        figure: "the driver is not linked"))
                continue
            }
            func mib(_ bytes: Int64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            let walked = r.walkedRows == 1_000_000 ? "" : " (walked \(r.walkedRows) rows; the target names 1,000,000)"
            let mapped = r.walkMappedStoreBytes?[driver] ?? 0
            var figure = "peak growth \(mib(growth))"
            if mapped > 0 {
                figure += "; \(mib(mapped)) of the store file's pages resident in its memory map at the end"
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
                    source: "results", target: targets[index], status: Double(growth) / 1_048_576 < 64 ? .met : .notMet,
                    figure: figure + walked))
        }
        return results
    }

    /// The targets as a table: the ratio of minimums (judged) and of medians beside each figure.
    static func markdown(_ results: [CheckResult]) -> String {
        var lines = [
            "| source | target | status | ratio of minimums | ratio of medians | figure |",
            "|---|---|---|---:|---:|---|",
        ]
        for r in results {
            lines.append(
                "| \(r.source) | \(r.target) | **\(r.status.rawValue)** | \(ratioText(r.ratio)) | \(ratioText(r.medianRatio)) | \(r.figure) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    static func text(_ results: [CheckResult]) -> String {
        results.map { r in
            let ratios = r.ratio.map { "min \(ratioText($0)), median \(ratioText(r.medianRatio)): " } ?? ""
            return "[\(r.status.rawValue)] \(r.source): \(r.target) — \(ratios)\(r.figure)"
        }.joined(separator: "\n")
    }

    private static func ratioText(_ ratio: Double?) -> String {
        guard let ratio else { return "" }
        return ratio < 0.1 ? String(format: "%.3fx", ratio) : String(format: "%.2fx", ratio)
    }
}
