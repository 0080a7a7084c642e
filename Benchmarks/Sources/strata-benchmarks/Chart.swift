import Foundation
import StrataTools

/// A hand-written SVG bar chart: one group per workload, one horizontal bar per contender, median
/// milliseconds on a logarithmic axis (shorter is faster).
enum Chart {
    static let palette: [String: String] = [
        "strata-memory": "#1f77b4", "strata-sqlite": "#2ca02c", "strata-xml": "#9467bd", "strata-lmdb": "#17becf",
        "driver-memory": "#aec7e8", "driver-sqlite": "#98df8a", "driver-xml": "#c5b0d5", "driver-lmdb": "#9edae5",
        "sqlite-c": "#ff7f0e", "lmdb-c": "#d62728", "grdb": "#8c564b",
        "strata-postgres": "#3a7d44", "driver-postgres": "#9cc5a1", "libpq-c": "#e377c2",
        "strata-sqlite-syncfull": "#6b8e23", "driver-sqlite-syncfull": "#c7e9a0",
        "strata-lmdb-nometasync": "#0e6f7a", "driver-lmdb-nometasync": "#c6eef2",
    ]

    /// The colour of `id`'s bars and lines.
    static func colour(_ id: String) -> String { palette[id] ?? "#777" }

    static func svg(_ report: BenchReport, machine: Machine) -> String {
        let contenders = report.contenders
        let workloads = BenchWorkload.allCases.filter { w in contenders.contains { $0.measurement(w) != nil } }
        let values = contenders.flatMap { $0.measurements.map(\.medianMs) }.filter { $0 > 0 }
        let lowDecade = floor(log10(values.min() ?? 0.01))
        let highDecade = max(ceil(log10(values.max() ?? 1)), lowDecade + 1)

        let width = 1000.0
        let left = 130.0
        let right = 80.0
        let barHeight = 12.0
        let barGap = 2.0
        let groupGap = 16.0
        let legendRows = Int(ceil(Double(contenders.count) / 4))
        let top = 92.0 + Double(legendRows) * 20
        let groupHeight = Double(contenders.count) * (barHeight + barGap) + groupGap
        let plotHeight = Double(workloads.count) * groupHeight
        let height = top + plotHeight + 50
        let plotWidth = width - left - right
        func x(_ ms: Double) -> Double {
            left + (log10(max(ms, 1e-9)) - lowDecade) / (highDecade - lowDecade) * plotWidth
        }

        var s: [String] = []
        s.append(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">"
        )
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>")
        s.append(
            text(
                left, 28,
                "Strata benchmarks: median time per workload, \(report.rows) rows, \(report.rounds) rounds (log scale, shorter is faster)",
                size: 15, weight: "bold"))
        s.append(text(left, 48, machine.summary, size: 11, fill: "#555"))
        for (i, c) in contenders.enumerated() {
            let lx = left + Double(i % 4) * 200
            let ly = 66 + Double(i / 4) * 20
            s.append("<rect x=\"\(lx)\" y=\"\(ly)\" width=\"14\" height=\"12\" fill=\"\(colour(c.id))\"/>")
            s.append(text(lx + 20, ly + 10.5, c.id, size: 12))
        }
        // Decade grid lines, labelled above and below the plot.
        var decade = lowDecade
        while decade <= highDecade {
            let gx = x(pow(10, decade))
            s.append(
                "<line x1=\"\(gx)\" y1=\"\(top - 6)\" x2=\"\(gx)\" y2=\"\(top + plotHeight)\" stroke=\"#ccc\" stroke-width=\"1\"/>"
            )
            for sub in 2...9 where decade < highDecade {
                let mx = x(Double(sub) * pow(10, decade))
                s.append(
                    "<line x1=\"\(mx)\" y1=\"\(top)\" x2=\"\(mx)\" y2=\"\(top + plotHeight)\" stroke=\"#eee\" stroke-width=\"1\"/>"
                )
            }
            let label = msLabel(pow(10, decade))
            s.append(text(gx, top - 10, label, size: 11, anchor: "middle", fill: "#333"))
            s.append(text(gx, top + plotHeight + 16, label, size: 11, anchor: "middle", fill: "#333"))
            decade += 1
        }
        for (g, w) in workloads.enumerated() {
            let gy = top + Double(g) * groupHeight + groupGap / 2
            if g > 0 {
                s.append(
                    "<line x1=\"10\" y1=\"\(gy - groupGap / 2)\" x2=\"\(width - 10)\" y2=\"\(gy - groupGap / 2)\" stroke=\"#ddd\"/>"
                )
            }
            let mid = gy + Double(contenders.count) * (barHeight + barGap) / 2
            s.append(text(10, mid - 2, w.rawValue, size: 13, weight: "bold"))
            s.append(text(10, mid + 12, short(w), size: 9, fill: "#666"))
            for (i, c) in contenders.enumerated() {
                guard let m = c.measurement(w) else { continue }
                let by = gy + Double(i) * (barHeight + barGap)
                let end = x(m.medianMs)
                s.append(
                    "<rect x=\"\(left)\" y=\"\(by)\" width=\"\(max(end - left, 1))\" height=\"\(barHeight)\" fill=\"\(colour(c.id))\"><title>\(c.id) \(w.rawValue): \(BenchReport.milliseconds(m.medianMs)) ms</title></rect>"
                )
                s.append(text(end + 4, by + 10, "\(BenchReport.milliseconds(m.medianMs)) ms", size: 10, fill: "#222"))
            }
        }
        s.append(
            text(
                left + plotWidth / 2, height - 12, "median milliseconds (logarithmic)", size: 12, anchor: "middle",
                fill: "#333"))
        s.append("</svg>")
        return s.joined(separator: "\n") + "\n"
    }

    static func short(_ w: BenchWorkload) -> String {
        switch w {
        case .insert: "insert + save"
        case .fetchAll: "fetch all"
        case .fetchAllAny: "fetch all, as? reads"
        case .lookupCold: "lookups, driver"
        case .lookupWarm: "lookups, cached"
        case .filtered: "filter + sort"
        case .update: "update all"
        case .delete: "delete all"
        case .graphFaulting: "graph, faulting"
        case .graphPrefetch: "graph, prefetch"
        case .saveFew: "save 10 of N"
        case .saveFewSmall: "save 10 of 1,000"
        }
    }

    private static func msLabel(_ ms: Double) -> String {
        if ms >= 1000 { return "\(Int(ms / 1000)) s" }
        if ms >= 1 { return "\(Int(ms)) ms" }
        return "\(ms < 0.01 ? String(format: "%.3f", ms) : String(format: "%.2g", ms)) ms"
    }

    private static func text(
        _ x: Double, _ y: Double, _ content: String, size: Int, weight: String = "normal", anchor: String = "start",
        fill: String = "#000"
    ) -> String {
        let escaped = content.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
        return
            "<text x=\"\(x)\" y=\"\(y)\" font-size=\"\(size)\" font-weight=\"\(weight)\" text-anchor=\"\(anchor)\" fill=\"\(fill)\">\(escaped)</text>"
    }
}
