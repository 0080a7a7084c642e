import Foundation

extension CaseWorker.Failure {
    /// What identifies the failure across cases: for a crash, the runtime's message and the first
    /// frame in the project's own sources (`Sources/…` or `Drivers/…`), or "recursion" and the
    /// repeated function for a stack overflow, or the first frame of a C library; for a `fail`, its
    /// message without paths and numbers. Cases with the same signature are most likely one bug.
    public var signature: String {
        let lines = detail.split(separator: "\n").map(String.init)
        guard kind != "fail" else {
            // Paths and numbers differ from case to case; the words around them name the failure.
            let words = detail.split(separator: " ").filter { !$0.contains("/") }.joined(separator: " ")
            return String(words.filter { !$0.isNumber }.prefix(160))
        }
        let message =
            lines.first { $0.contains("Fatal error") || $0.contains("Program crashed") } ?? lines.first ?? kind
        var cleaned = message.replacingOccurrences(of: "*** ", with: "").replacingOccurrences(of: " ***", with: "")
        if let address = cleaned.range(of: " at 0x") { cleaned = String(cleaned[..<address.lowerBound]) }
        // Frames of the crashed thread: "  3 [ra] 0x… symbol + 12 in image at /path/file.swift:48:79".
        let frames = lines.drop { !($0.hasPrefix("Thread ") && $0.hasSuffix(" crashed:")) }.dropFirst().prefix {
            !$0.hasPrefix("Thread ")
        }
        .filter { $0.contains(" 0x") }
        // A function repeated down the stack is a recursion that ran out of stack.
        let functions = frames.compactMap { frame -> String? in
            guard let start = frame.range(of: #"0x[0-9a-f]+ "#, options: .regularExpression),
                let end = frame.range(of: " + ", range: start.upperBound..<frame.endIndex)
            else { return nil }
            return String(frame[start.upperBound..<end.lowerBound])
        }
        let counts = Dictionary(functions.map { ($0, 1) }, uniquingKeysWith: +)
        if let most = counts.values.max(), most >= 10 {
            // Mutual recursion alternates between functions: name all that repeat.
            let repeated = counts.filter { $0.value >= 4 }.keys.sorted()
            return "\(cleaned): recursion in \(repeated.joined(separator: ", "))"
        }
        // The first frame in the project's own sources, else the first frame at all (a C library).
        let location =
            frames.lazy.compactMap { line -> String? in
                guard let at = line.range(of: " at /") else { return nil }
                let path = line[line.index(before: at.upperBound)...].split(separator: "/")
                guard let top = path.firstIndex(where: { $0 == "Sources" || $0 == "Drivers" }) else { return nil }
                return path[top...].joined(separator: "/")
            }.first ?? functions.first.map { "\($0) (\(frames.first?.components(separatedBy: " in ").last ?? "?"))" }
        return [String(cleaned.prefix(200)), location].compactMap { $0 }.joined(separator: " at ")
    }
}

extension CaseWorker.Report {
    /// The failures grouped by ``CaseWorker/Failure/signature``, in the order each first occurred.
    public var failureGroups: [(signature: String, failures: [CaseWorker.Failure])] {
        var order: [String] = []
        var byKey: [String: [CaseWorker.Failure]] = [:]
        for failure in failures {
            let key = failure.signature
            if byKey[key] == nil { order.append(key) }
            byKey[key, default: []].append(failure)
        }
        return order.map { ($0, byKey[$0] ?? []) }
    }
}
