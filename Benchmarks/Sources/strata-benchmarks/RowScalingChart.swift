import Foundation
import StrataTools

/// The scaling chart: one log–log panel per workload, microseconds per object against rows, one
/// line per contender (flat: the time grows with the work; W8 flat: a save costs O(k)).
enum RowScalingChart {
    static func svg(_ result: RowScalingResult, machine: Machine) -> String {
        let contenders = result.contenders
        let columns = 3
        let cellWidth = 350.0  // a plot and its axis labels
        let panelHeight = 230.0
        let left = 20.0
        let top = 92.0
        let gapY = 70.0
        let panels = RowScaling.workloads.count + 1  // the last cell holds the legend
        let rows = (panels + columns - 1) / columns
        let width = left + Double(columns) * cellWidth + 10
        let height = top + Double(rows) * (panelHeight + gapY) + 10
        let sizes = result.sizes.filter { size in result.points.contains { $0.rows == size } }
        let lowRows = floor(log10(Double(sizes.min() ?? 10_000)))
        let highRows = max(ceil(log10(Double(sizes.max() ?? 1_000_000))), lowRows + 1)

        var s = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
            text(
                left, 26,
                "Strata benchmarks: microseconds per object against rows (log–log; flat: time grows with the work)",
                size: 14, weight: "bold"),
            text(
                left, 44,
                "fastest of \(result.rounds) round\(result.rounds == 1 ? "" : "s") per point; W3 per lookup of 10,000, W8 per changed object of 10",
                size: 11, fill: "#555"),
            text(left, 60, machine.summary, size: 11, fill: "#555"),
        ]
        for (index, workload) in RowScaling.workloads.enumerated() {
            let px = left + Double(index % columns) * cellWidth
            let py = top + Double(index / columns) * (panelHeight + gapY)
            let values = result.points.compactMap { $0.microsecondsPerObject(workload) }.filter { $0 > 0 }
            let low = floor(log10(values.min() ?? 0.1))
            let high = max(ceil(log10(values.max() ?? 1)), low + 1)
            let plotLeft = px + 48
            let plotWidth = cellWidth - 70
            func x(_ rows: Int) -> Double {
                plotLeft + (log10(Double(rows)) - lowRows) / (highRows - lowRows) * plotWidth
            }
            func y(_ us: Double) -> Double { py + panelHeight - (log10(us) - low) / (high - low) * panelHeight }
            s.append(
                "<rect x=\"\(plotLeft)\" y=\"\(py)\" width=\"\(plotWidth)\" height=\"\(panelHeight)\" fill=\"none\" stroke=\"#999\"/>"
            )
            s.append(text(plotLeft, py - 8, "\(workload.rawValue): \(Chart.short(workload))", size: 12, weight: "bold"))
            var decade = low
            while decade <= high {
                let gy = y(pow(10, decade))
                s.append(
                    "<line x1=\"\(plotLeft)\" y1=\"\(gy)\" x2=\"\(plotLeft + plotWidth)\" y2=\"\(gy)\" stroke=\"#ddd\"/>"
                )
                s.append(text(plotLeft - 4, gy + 4, usLabel(pow(10, decade)), size: 10, anchor: "end", fill: "#333"))
                decade += 1
            }
            var rowDecade = lowRows
            while rowDecade <= highRows {
                let gx = x(Int(pow(10, rowDecade)))
                s.append(
                    "<line x1=\"\(gx)\" y1=\"\(py)\" x2=\"\(gx)\" y2=\"\(py + panelHeight)\" stroke=\"#eee\"/>")
                s.append(
                    text(
                        gx, py + panelHeight + 14, rowsLabel(pow(10, rowDecade)), size: 10, anchor: "middle",
                        fill: "#333"))
                rowDecade += 1
            }
            for id in contenders {
                let points = sizes.compactMap { rows -> (Double, Double)? in
                    guard let us = result.point(id, rows)?.microsecondsPerObject(workload), us > 0 else { return nil }
                    return (x(rows), y(us))
                }
                guard !points.isEmpty else { continue }
                let colour = Chart.colour(id)
                let path = points.map { String(format: "%.1f,%.1f", $0.0, $0.1) }.joined(separator: " ")
                s.append(
                    "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\"><title>\(id)</title></polyline>"
                )
                for (cx, cy) in points {
                    s.append("<circle cx=\"\(cx)\" cy=\"\(cy)\" r=\"3\" fill=\"\(colour)\"/>")
                }
            }
            s.append(
                text(plotLeft + plotWidth / 2, py + panelHeight + 30, "rows", size: 10, anchor: "middle", fill: "#555"))
        }
        // The legend, in the last cell.
        let legendIndex = RowScaling.workloads.count
        let lx = left + Double(legendIndex % columns) * cellWidth + 48
        let ly = top + Double(legendIndex / columns) * (panelHeight + gapY)
        s.append(text(lx, ly, "µs per object (log), by contender:", size: 12, weight: "bold"))
        for (i, id) in contenders.enumerated() {
            let ey = ly + 18 + Double(i) * 17
            s.append(
                "<line x1=\"\(lx)\" y1=\"\(ey - 4)\" x2=\"\(lx + 24)\" y2=\"\(ey - 4)\" stroke=\"\(Chart.colour(id))\" stroke-width=\"3\"/>"
            )
            s.append(text(lx + 30, ey, id, size: 11))
        }
        s.append("</svg>")
        return s.joined(separator: "\n") + "\n"
    }

    private static func usLabel(_ us: Double) -> String {
        if us >= 1_000 { return String(format: "%.0f ms", us / 1_000) }
        if us >= 1 { return String(format: "%.0f µs", us) }
        return String(format: "%.2g µs", us)
    }

    private static func rowsLabel(_ rows: Double) -> String {
        if rows >= 1e6 { return String(format: "%.0fM", rows / 1e6) }
        if rows >= 1e3 { return String(format: "%.0fk", rows / 1e3) }
        return String(format: "%.0f", rows)
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
