import BenchPeers
import Foundation
import StrataTools

/// The Markdown report: timings, rows per second, ratios, memory, disk, settings.
enum ResultsReport {
    /// The raw engine Strata on `engine` is compared with.
    static func rawEngine(for engine: String) -> String? {
        switch engine {
        case "sqlite": "sqlite-c"
        case "lmdb": "lmdb-c"
        case "postgres": "libpq-c"
        default: nil
        }
    }

    /// Ratio columns: (title, numerator, denominator). Above 1 means the numerator is slower.
    /// Contenders at another durability appear only in the matched-durability columns.
    static func ratioColumns(_ report: BenchReport) -> [(String, String, String)] {
        var columns: [(String, String, String)] = []
        let present = Set(report.contenders.map(\.id))
        let defaults = report.contenders.filter { !ContenderCatalog.isDurabilityVariant($0.id) }
        for c in defaults where c.id.hasPrefix("strata-") {
            if let raw = rawEngine(for: c.engine), present.contains(raw) {
                columns.append(("\(c.id) ÷ \(raw)", c.id, raw))
            }
            if present.contains("grdb") { columns.append(("\(c.id) ÷ grdb", c.id, "grdb")) }
        }
        // The driver level: each driver against its raw engine, and what the object layer adds on top of it.
        for c in defaults where c.id.hasPrefix("driver-") {
            if let raw = rawEngine(for: c.engine), present.contains(raw) {
                columns.append(("\(c.id) ÷ \(raw)", c.id, raw))
            }
            let strata = "strata-" + c.id.dropFirst("driver-".count)
            if present.contains(strata) { columns.append(("\(strata) ÷ \(c.id)", strata, c.id)) }
        }
        if present.contains("grdb"), present.contains("sqlite-c") {
            columns.append(("grdb ÷ sqlite-c", "grdb", "sqlite-c"))
        }
        for level in ["strata-", "driver-"] {
            for (lmdb, sqlite, _) in Check.matchedDurability
            where present.contains(level + lmdb) && present.contains(level + sqlite) {
                columns.append(("\(level + lmdb) ÷ \(level + sqlite)", level + lmdb, level + sqlite))
            }
        }
        return columns
    }

    /// The XML figures: XML driver open and save against libxml2's reader and write + fsync.
    static func xmlSection(_ xml: XMLSectionResult) -> String {
        func ms(_ samples: [Double]) -> (String, String) {
            (BenchReport.milliseconds(XMLSectionResult.median(samples)), BenchReport.milliseconds(samples.min() ?? 0))
        }
        let rows: [(String, [Double], String)] = [
            ("(a) XML driver: open (every object loaded)", xml.openMs, "(b)"),
            ("(b) libxml2 streaming reader over the file, every value touched", xml.readerMs, ""),
            ("(c) XML driver: save one changed object (whole file rewritten, fsync, rename)", xml.saveMs, "(d)"),
            ("(d) write the same bytes, fsync, rename, fsync the directory", xml.writeMs, ""),
        ]
        var lines = [
            "### XML store: \(xml.rows) objects, \(BenchReport.bytes(xml.fileBytes)) file\n",
            "| step | median ms | min ms | ratio |", "|---|---:|---:|---:|",
        ]
        let medians = rows.map { XMLSectionResult.median($0.1) }
        for (i, row) in rows.enumerated() {
            let (median, min) = ms(row.1)
            let ratio =
                row.2.isEmpty || medians[i + 1] <= 0
                ? "" : String(format: "%.2fx \(row.2)", medians[i] / medians[i + 1])
            lines.append("| \(row.0) | \(median) | \(min) | \(ratio) |")
        }
        func perObject(_ bytes: Double?) -> String { bytes.map { String(format: "%.0f B", $0) } ?? "not measured" }
        lines.append(
            "\nThe XML driver's memory per row at rest (resident set after opening − before, ÷ \(xml.rows)): "
                + "\(perObject(xml.xmlBytesPerObject)). The reader visited \(xml.readerNodes) nodes."
        )
        return lines.joined(separator: "\n")
    }

    /// `a` ÷ `b` on `workload`, of the minimums or of the medians.
    static func ratio(_ report: BenchReport, _ workload: BenchWorkload, _ a: String, _ b: String, minimums: Bool)
        -> Double?
    {
        guard let x = report.contender(a)?.measurement(workload), let y = report.contender(b)?.measurement(workload)
        else { return nil }
        let (top, bottom) = minimums ? (x.minMs, y.minMs) : (x.medianMs, y.medianMs)
        return bottom > 0 ? top / bottom : nil
    }

    static func markdown(
        _ report: BenchReport, machine: Machine, baseline: ContenderResult?, xml: XMLSectionResult?,
        sections: [String] = [], checks: [CheckResult]
    ) -> String {
        var out: [String] = []
        out.append("## Results: \(report.rows) rows, \(report.rounds) rounds\n")
        out.append("Machine: \(machine.summary).\n")
        out.append("### Median time and rows per second\n")
        out.append(report.markdownTable())
        out.append("\n### Minimum time (ms)\n")
        var minTable = ["| workload | " + report.contenders.map(\.id).joined(separator: " | ") + " |"]
        minTable.append("|---|" + report.contenders.map { _ in "---:|" }.joined())
        for w in BenchWorkload.allCases {
            let cells = report.contenders.map { c in c.measurement(w).map { BenchReport.milliseconds($0.minMs) } ?? "–"
            }
            minTable.append("| \(w.rawValue) | " + cells.joined(separator: " | ") + " |")
        }
        out.append(minTable.joined(separator: "\n"))
        let columns = ratioColumns(report)
        for minimums in [true, false] where !columns.isEmpty {
            out.append(
                minimums
                    ? "\n### Ratios of minimums (the targets' figure; above 1: the first is slower)\n"
                    : "\n### Ratios of medians (above 1: the first is slower)\n")
            var lines = ["| workload | " + columns.map(\.0).joined(separator: " | ") + " |"]
            lines.append("|---|" + columns.map { _ in "---:|" }.joined())
            for w in BenchWorkload.allCases {
                let cells = columns.map { col in
                    ratio(report, w, col.1, col.2, minimums: minimums).map { String(format: "%.2f", $0) } ?? "–"
                }
                if cells.allSatisfy({ $0 == "–" }) { continue }
                lines.append("| \(w.rawValue) | " + cells.joined(separator: " | ") + " |")
            }
            out.append(lines.joined(separator: "\n"))
        }
        out.append("\n### Memory, disk and settings\n")
        var lines = ["| contender | peak RSS | store after W1 | settings |", "|---|---:|---:|---|"]
        if let baseline, let peak = baseline.peakMemoryBytes {
            lines.append("| (baseline: runtime + dataset) | \(BenchReport.bytes(peak)) | – | \(baseline.settings) |")
        }
        for c in report.contenders {
            let peak = c.peakMemoryBytes.map(BenchReport.bytes) ?? "not measured"
            lines.append("| \(c.id) | \(peak) | \(BenchReport.bytes(c.bytesOnDisk)) | \(c.settings) |")
        }
        out.append(lines.joined(separator: "\n"))
        if !report.skipped.isEmpty {
            out.append("\nSkipped: " + report.skipped.map { "\($0.id) (\($0.reason))" }.joined(separator: "; ") + ".")
        }
        if let xml { out.append("\n" + xmlSection(xml)) }
        for section in sections { out.append("\n" + section) }
        if !checks.isEmpty {
            out.append("\n### Targets\n")
            out.append(Check.markdown(checks))
        }
        return out.joined(separator: "\n") + "\n"
    }
}
