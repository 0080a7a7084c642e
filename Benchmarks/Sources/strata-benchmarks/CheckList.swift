import Foundation
import StrataTools

/// The targets of one report, collected one comparison at a time (``Check/evaluate``).
struct CheckList {
    let report: BenchReport
    var results: [CheckResult] = []

    init(report: BenchReport) { self.report = report }

    /// Why `ids` have no results: skipped (and why), or not asked for.
    func missing(_ ids: [String]) -> String {
        var absent: [String] = []
        for id in ids where report.contender(id) == nil && !absent.contains(id) { absent.append(id) }
        return absent.map { id in
            if let skipped = report.skipped.first(where: { $0.id == id }) { return "\(id) not run: \(skipped.reason)" }
            return "\(id) was not run"
        }.joined(separator: "; ")
    }

    /// `a`'s `w` against `b`'s `wb` (`w` when `nil`): `a ≤ limit × b`, or `a < limit × b` when
    /// strict, on the ratio of minimums.
    mutating func ratio(
        _ source: String, _ target: String, _ a: String, _ b: String, _ w: BenchWorkload, _ wb: BenchWorkload? = nil,
        limit: Double, strict: Bool = false, note: String = "", info: Bool = false
    ) {
        guard let x = report.contender(a)?.measurement(w)?.samplesMs,
            let y = report.contender(b)?.measurement(wb ?? w)?.samplesMs
        else {
            results.append(.init(source: source, target: target, status: .notMeasured, figure: missing([a, b])))
            return
        }
        results.append(
            Check.compare(
                source, target, "\(a) \(w.rawValue)", x, "\(b) \((wb ?? w).rawValue)", y, limit: limit, strict: strict,
                info: info, note: note))
    }

    /// One ``ratio(_:_:_:_:_:_:limit:strict:note:info:)`` per workload of `workloads`; a single
    /// "not measured" line when `a` or `b` did not run.
    mutating func everyOne(
        _ source: String, _ a: String, _ b: String, _ workloads: [BenchWorkload], limit: Double, strict: Bool = false,
        info: Bool = false, _ target: (BenchWorkload) -> String
    ) {
        guard report.contender(a) != nil, report.contender(b) != nil else {
            let all = workloads.map(\.rawValue).joined(separator: ", ")
            results.append(
                .init(
                    source: source, target: target(workloads[0]) + " (and on \(all))", status: .notMeasured,
                    figure: missing([a, b])))
            return
        }
        for w in workloads { ratio(source, target(w), a, b, w, limit: limit, strict: strict, info: info) }
    }
}
