import Foundation
import Strata
import StrataTesting
import Testing

@testable import StrataLMDB

/// `scanRows` drops the map pages of each batch it has decoded from the resident set
/// (``MappedPages``): what it and later reads return must not change.
@Suite("LMDB scans")
struct LMDBScanTests {
    /// The string of item `index`: a few bytes for most, 5 to 20 KiB (on overflow pages) for every
    /// seventh.
    static func text(_ index: Int) -> String {
        let repeats = index % 7 == 0 ? 5_000 + (index * 97) % 15_000 : 1 + index % 5
        return "\(index):" + String(repeating: Character(UnicodeScalar(UInt8(65 + index % 26))), count: repeats)
    }

    @Test("rows read by scans that drop their pages, values on overflow pages included, read the same again")
    func scansReadTheSameAfterDroppingPages() throws {
        let directory = try TemporaryDirectory(prefix: "lmdb-scan")
        let url = directory.file("scan.lmdb")
        let count = 300
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        let store = try coordinator.addPersistentStore(type: .lmdb, at: url)
        let context = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<count {
            let item = try context.insertNewObject(forEntityName: "Item")
            item["string"] = Self.text(index)
            item["int64"] = index
        }
        try context.save()
        try coordinator.remove(store)

        let item = try #require(ConformanceModel.model.entity(named: "Item"))
        let string = try #require(item.index(ofProperty: "string"))
        let number = try #require(item.index(ofProperty: "int64"))
        let driver = try StoreType.lmdb.factory.makeDriver(
            StoreOpenRequest(
                url: url, model: ConformanceModel.model, configuration: nil,
                options: StoreOptions(isReadOnly: true, createIfMissing: false)))
        defer { try? driver.close() }  // read-only: closing cannot lose anything
        for pass in 0..<3 {
            var seen = 0
            try driver.scanRows(RowScan(entity: item, batchSize: 7)) { rows in
                for row in rows {
                    guard case .integer(let index) = row.values[number] else {
                        Issue.record("pass \(pass): a row without its number")
                        continue
                    }
                    #expect(row.values[string] == .string(Self.text(Int(index))), "pass \(pass), item \(index)")
                    seen += 1
                }
            }
            #expect(seen == count, "pass \(pass)")
        }
        // A fetch after the scans reads the same pages through the map again.
        let reader = PersistentStoreCoordinator(managedObjectModel: ConformanceModel.model)
        try reader.addPersistentStore(type: .lmdb, at: url, options: StoreOptions(isReadOnly: true))
        let fetched = try ManagedObjectContext(coordinator: reader).fetch(FetchRequest(entityName: "Item"))
        #expect(fetched.count == count)
        #expect(fetched.allSatisfy { ($0["string"] as? String) == Self.text(($0["int64"] as? Int) ?? -1) })
    }

    @Test("noted values widen one span of whole pages, which a new map generation starts again")
    func pageSpan() {
        let page = MappedPages.pageSize
        let base = UInt(1 << 30)
        var pages = MappedPages()
        func note(_ offset: UInt, _ count: Int) {
            pages.note(value: UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: base + offset), count: count))
        }
        pages.begin(generation: 0)
        #expect(pages.span == nil)
        note(5 * page + 10, 20)
        #expect(pages.span == (base + 5 * page)..<(base + 6 * page))
        note(7 * page - 5, 10)  // across pages 6 and 7
        #expect(pages.span == (base + 5 * page)..<(base + 8 * page))
        note(2 * page, 0)  // empty: nothing
        note(page + 1, 3 * Int(page))  // pages 1 to 4 (an overflow value)
        #expect(pages.span == (base + page)..<(base + 8 * page))
        pages.begin(generation: 0)
        #expect(pages.span == (base + page)..<(base + 8 * page), "the same map: the span is kept")
        pages.begin(generation: 1)
        #expect(pages.span == nil, "the map was set anew: its old addresses are forgotten")
        note(9 * page, 1)
        #expect(pages.span == (base + 9 * page)..<(base + 10 * page) && pages.generation == 1)
    }
}
