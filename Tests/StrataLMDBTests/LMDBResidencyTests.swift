import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

/// The residency limit (``MapResidency``): reads leave at most `residentMapLimit` of the memory
/// map in the process's resident set, and what they return does not change when pages are dropped.
@Suite("LMDB map residency")
struct LMDBResidencyTests {
    /// Resident bytes of this process's mappings of `url` (`Rss` in /proc/self/smaps).
    static func mappedResident(_ url: URL) throws -> Int {
        let path = url.resolvingSymlinksInPath().path
        // Read to the end: /proc files report no size, and a one-shot read of smaps stops short.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        defer { try? handle.close() }  // a read-only handle: closing cannot lose anything
        let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var inFile = false
        var total = 0
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), fields.count >= 5 {
                inFile = fields.count >= 6 && fields[5...].joined(separator: " ") == path
            } else if inFile, fields.first == "Rss:", fields.count >= 2, let kib = Int(fields[1]) {
                total += kib * 1024
            }
        }
        return total
    }

    /// The text of row `index`: 600 bytes (rows stay in their leaf pages, as most rows do), so
    /// 36,000 rows make a file of about 30 MiB.
    static func text(_ index: Int) -> String {
        "\(index):" + String(repeating: Character(UnicodeScalar(UInt8(65 + index % 26))), count: 600)
    }

    static let rows = 36_000

    /// Writes the rows to a new store at `url` and closes it (its environment with it).
    static func write(_ url: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: .lmdb, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<rows {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["string"] = text(index)
            item["int64"] = index
        }
        try context.save()
        try coordinator.remove(store)
    }

    /// Reads every row of the store at `url` opened with `limit` through a batch-faulting fetch
    /// (IDs first, then rows 500 at a time), checking each value; returns the largest resident
    /// part of the map seen after a batch.
    static func walk(_ url: URL, limit: String) throws -> Int {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(
            type: .lmdb, at: url, options: StoreOptions(isReadOnly: true, values: ["residentMapLimit": limit]))
        defer { try? coordinator.remove(store) }  // read-only: removing it cannot lose anything
        var request = FetchRequest(entityName: "Item")
        request.fetchBatchSize = 500
        let context = ManagedObjectContext(coordinator: coordinator)
        let items = try context.fetchBatchFaulting(request)
        var peak = try mappedResident(url)
        var seen = 0
        for (offset, item) in items.enumerated() {
            let index = try #require(item["int64"] as? Int)
            #expect(item["string"] as? String == text(index), "row \(index)")
            seen += 1
            if offset % 500 == 499 {
                peak = max(peak, try mappedResident(url))
                context.reset()
            }
        }
        #expect(seen == rows)
        return max(peak, try mappedResident(url))
    }

    @Test("a walk of a 30 MiB store keeps at most the limit of its map resident, and reads every value right")
    func walkStaysUnderTheLimit() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-residency")
        let limited = directory.file("limited.lmdb")
        let unlimited = directory.file("unlimited.lmdb")
        try Self.write(limited)
        try Self.write(unlimited)
        let fileSize = try #require(try FileManager.default.attributesOfItem(atPath: limited.path)[.size] as? Int)
        #expect(fileSize > 20 << 20)

        // Two reads of the same store: the second reads the pages the first dropped.
        let limit = 2 << 20
        for pass in 0..<2 {
            let peak = try Self.walk(limited, limit: "2M")
            // The limit, plus what one transaction reads between two reports (16 windows of
            // 64 KiB); the pages no value lies on (branch pages, and what the kernel maps around
            // them) lie within what a drop gives back.
            #expect(peak <= limit + (1 << 20), "pass \(pass): \(peak) bytes of the map resident")
        }
        // Without a limit, the same walk leaves most of the file resident: the bound above is the
        // limit's doing.
        let peak = try Self.walk(unlimited, limit: "0")
        #expect(peak > fileSize / 2, "\(peak) bytes of a \(fileSize)-byte file resident without a limit")
    }

    @Test("readers on several threads dropping pages under each other all read every value right")
    func concurrentReadersDroppingPages() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-residency")
        let url = directory.file("shared.lmdb")
        try Self.write(url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(
            type: .lmdb, at: url, options: StoreOptions(isReadOnly: true, values: ["residentMapLimit": "1M"]))
        defer { try? coordinator.remove(store) }  // read-only: removing it cannot lose anything
        // Each thread walks the whole store twice in its own context, in batches (a read
        // transaction each), so their reports and drops interleave.
        let failures = Locked<[String]>([])
        let done = DispatchGroup()
        for worker in 0..<3 {
            done.enter()
            Thread {
                defer { done.leave() }
                do {
                    for _ in 0..<2 {
                        var request = FetchRequest(entityName: "Item")
                        request.fetchBatchSize = 250
                        let context = ManagedObjectContext(coordinator: coordinator)
                        var seen = 0
                        for item in try context.fetchBatchFaulting(request) {
                            let index = item["int64"] as? Int ?? -1
                            if item["string"] as? String != Self.text(index) {
                                failures.withLock { $0.append("worker \(worker): row \(index) read wrong") }
                            }
                            seen += 1
                        }
                        if seen != Self.rows { failures.withLock { $0.append("worker \(worker): \(seen) rows") } }
                    }
                } catch {
                    failures.withLock { $0.append("worker \(worker): \(error)") }
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 300) == .success, "the readers finished")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        let resident = try Self.mappedResident(url)
        // Every read reported when it ended: what is left is at most the limit, and the branch
        // pages the last lookups faulted back in (a window each).
        #expect(resident <= 2 << 20, "the limit held with three readers: \(resident) bytes resident")
    }

    @Test("a store smaller than the limit keeps its pages: nothing is dropped")
    func smallStoreKeepsItsPages() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-residency")
        let url = directory.file("small.lmdb")
        try Self.write(url)
        let peak = try Self.walk(url, limit: "64M")
        #expect(peak > 20 << 20, "\(peak) bytes resident")
    }

    @Test("the option takes byte counts and 0, and names itself when it cannot read a value")
    func option() throws {
        #expect(LMDBOptions().residentMapLimit == 32 << 20)
        let parsed = try LMDBOptions(StoreOptions(values: ["residentMapLimit": "8M"]), store: "s.lmdb")
        #expect(parsed.residentMapLimit == 8 << 20)
        let off = try LMDBOptions(StoreOptions(values: ["residentMapLimit": " 0 "]), store: "s.lmdb")
        #expect(off.residentMapLimit == 0)
        for bad in ["-1", "lots", "", "9999999999T"] {
            let error = try #require(throws: StoreError.self, "'\(bad)'") {
                try LMDBOptions(StoreOptions(values: ["residentMapLimit": bad]), store: "s.lmdb")
            }
            #expect(error.code == .invalidRequest)
            #expect(error.message.contains("residentMapLimit"))
            #expect(error.message.contains("0 for no limit"))
            #expect(error.store == "s.lmdb")
        }
    }

    @Test("windows entered count once each while a read stays in them, and the span covers whole pages")
    func windowsAndSpan() {
        let page = MappedPages.pageSize
        let window = MapReads.window
        let base = UInt(1 << 30)
        var reads = MapReads(generation: 0)
        func note(_ offset: UInt, _ count: Int) -> Bool {
            reads.note(UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: base + offset), count: count))
        }
        #expect(reads.span == nil)
        #expect(!note(10, 100))
        #expect(reads.windows == 1)
        #expect(!note(page * 3, 100))  // the same window
        #expect(reads.windows == 1)
        #expect(reads.span == base..<(base + 4 * page))
        #expect(!note(window - 10, 20))  // crosses into the second window
        #expect(reads.windows == 2)
        #expect(!note(5 * window + 1, 3 * Int(window)))  // windows 5 to 8
        #expect(reads.windows == 6)
        #expect(!note(0, 0))  // empty: nothing
        #expect(reads.windows == 6)
        #expect(reads.span == base..<(base + 8 * window + page))
        var reported = false
        for index in 20..<40 where !reported { reported = note(UInt(index) * window, 8) }
        #expect(reported)
        #expect(reads.windows == MapReads.reportEvery)
        reads.clear()
        #expect(reads.span == nil)
        #expect(reads.windows == 0)
    }
}
