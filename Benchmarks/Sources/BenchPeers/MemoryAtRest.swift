import CLibXML2Bench
import Foundation
import StrataTools

#if canImport(Glibc)
    import Glibc
#endif

/// Memory per object at rest: the resident set after a store holds N objects minus the resident
/// set before, divided by N. Each figure is taken in a child process of its own (so no earlier
/// work's heap is reused), after `malloc_trim(0)` so freed heap goes back to the system before
/// each reading. What is left is what the store keeps: rows, values, strings and indexes.
public enum MemoryAtRest {
    /// This process's own resident-set high-water mark, in bytes: `VmHWM` of /proc/self/status.
    ///
    /// Not `getrusage`'s `ru_maxrss`: on Linux, `execve` folds the high-water mark of the memory
    /// it replaces into the new program's `ru_maxrss`, and a child started by `posix_spawn` (as
    /// `Process` starts one) replaces its parent's memory, which it shares until then; fork then
    /// exec does the same with the parent's copied pages. So a child's `ru_maxrss` is at least the
    /// parent's resident set when it was started: every child of the benchmarks read about 90 MiB,
    /// whatever it did. `VmHWM` is the high-water mark of the child's own address space, which
    /// starts empty at `execve`. Falls back to `ru_maxrss` where /proc is not there.
    public static func peakResidentBytes() -> Int64 {
        if let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int64(line.split(separator: " ").dropFirst().first ?? "")
        {
            return kilobytes * 1024
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int64(usage.ru_maxrss) * 1024  // kilobytes on Linux
    }

    /// The resident set now, in bytes (`/proc/self/statm`), after returning freed heap to the system.
    public static func residentBytes() -> Int64 {
        _ = malloc_trim(0)
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return 0 }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Opens the XML store at `url` (every object loaded) and returns resident bytes per object.
    public static func xml(store url: URL, rows: Int) throws -> Double {
        let before = residentBytes()
        let driver = try XMLSection.open(url)
        let after = residentBytes()
        withExtendedLifetime(driver) {}
        try driver.close()
        return Double(after - before) / Double(max(rows, 1))
    }

    /// Fills an in-memory store with N rows (inserted 1,000 at a time so the batches in flight stay
    /// small, the dataset dropped afterwards so the store's strings are its own) and returns
    /// resident bytes per object.
    public static func inMemory(rows: Int, in directory: URL) throws -> Double {
        guard let contender = try DriverBenchContender(kind: .memory) else {
            throw BenchError("the in-memory driver is not linked")
        }
        try contender.open(in: directory)
        let before = residentBytes()
        do {
            let dataset = BenchDataset(rows: rows, parents: 0)
            var start = 0
            while start < dataset.rows.count {
                let end = min(start + 1_000, dataset.rows.count)
                _ = try contender.insert(dataset.rows[start..<end])
                start = end
            }
        }
        let after = residentBytes()
        try contender.close()
        return Double(after - before) / Double(max(rows, 1))
    }
}
