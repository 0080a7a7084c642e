import Foundation

/// What the results were measured on, for the report.
struct Machine: Codable {
    var cpu: String
    var cores: Int
    var memory: String
    var os: String
    var date: String
    /// The 1-minute load average when the run started (other work on the machine skews timings).
    var load: String?

    static func current() -> Machine {
        func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        let cpu =
            read("/proc/cpuinfo").split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
            ?? "unknown CPU"
        let memKB =
            read("/proc/meminfo").split(separator: "\n").first { $0.hasPrefix("MemTotal") }
            .flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Double($0) } } ?? 0
        let os =
            read("/etc/os-release").split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            ?? ProcessInfo.processInfo.operatingSystemVersionString
        let kernel = read("/proc/sys/kernel/osrelease").trimmingCharacters(in: .whitespacesAndNewlines)
        let load = read("/proc/loadavg").split(separator: " ").first.map(String.init)
        let formatter = ISO8601DateFormatter()
        return Machine(
            cpu: cpu, cores: ProcessInfo.processInfo.activeProcessorCount,
            memory: memKB > 0 ? String(format: "%.1f GiB", memKB / 1_048_576) : "unknown",
            os: kernel.isEmpty ? os : "\(os), Linux \(kernel)", date: formatter.string(from: Date()), load: load)
    }

    var summary: String {
        "\(cpu), \(cores) cores, \(memory) RAM, \(os); run \(date)"
            + (load.map { ", load average \($0) at start" } ?? "")
    }
}
