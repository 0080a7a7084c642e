import CLibXML2Bench
import Foundation
import Strata
import StrataTools

#if canImport(Glibc)
    import Glibc
#endif

/// What the XML section measured: opening and saving a store of N `Item` objects with
/// the XML driver, against libxml2's own streaming reader over the same file and a plain write of
/// the same bytes with fsync; and memory per object at rest.
public struct XMLSectionResult: Codable, Sendable {
    /// Objects in the store.
    public var rows: Int
    /// Bytes of the store file.
    public var fileBytes: Int64
    /// (a) `makeDriver` on the file: the XML driver reads and loads every object.
    public var openMs: [Double]
    /// (b) libxml2's streaming reader over the file, every node read, every attribute and text value touched.
    public var readerMs: [Double]
    /// (c) a save of the opened store changing one row: the whole file rewritten (temporary file, fsync, rename, directory fsync).
    public var saveMs: [Double]
    /// (d) the same bytes written to a temporary file (1 MiB writes), fsync, rename, directory fsync.
    public var writeMs: [Double]
    /// Nodes the raw reader visited (a sanity figure).
    public var readerNodes: Int
    /// Resident bytes per row held by the XML driver alone after opening the store (see
    /// docs/benchmarks.md for the method; objects at rest are the memory section's).
    public var xmlBytesPerObject: Double?

    /// The median of `samples`.
    public static func median(_ samples: [Double]) -> Double {
        BenchMeasurement(workload: .insert, rows: 0, checksum: 0, samplesMs: samples).medianMs
    }
}

/// The XML section of the benchmarks. Every timing is taken with the runner's monotonic clock.
public enum XMLSection {
    /// Builds the store of `dataset`'s rows with the XML driver in `directory` (untimed) and returns its URL.
    public static func build(_ dataset: BenchDataset, in directory: URL) throws -> URL {
        guard let contender = try DriverBenchContender(kind: .xml) else {
            throw BenchError("the XML driver is not linked")
        }
        try contender.open(in: directory)
        _ = try contender.insert(dataset.rows[...])
        try contender.close()
        guard let name = KnownDriver.xml.fileName else { throw BenchError("the XML driver has no file name") }
        return directory.appendingPathComponent(name)
    }

    /// Opens the store at `url` with the XML driver's factory (the open loads every object).
    public static func open(_ url: URL) throws -> any StoreDriver {
        guard let type = KnownDriver.xml.storeType else { throw BenchError("the XML driver is not linked") }
        let request = StoreOpenRequest(
            url: url, model: try BenchModel.make(), configuration: nil, options: KnownDriver.xml.storeOptions)
        return try type.factory.makeDriver(request)
    }

    /// Times (a)–(d) `rounds` times on the store at `url`.
    public static func run(store url: URL, rows: Int, rounds: Int) throws -> XMLSectionResult {
        let model = try BenchModel.make()
        guard let item = model.entity(named: "Item"), let scoreSlot = item.index(ofProperty: "score") else {
            throw BenchError("the bench model has no Item.score")
        }
        var result = XMLSectionResult(
            rows: rows, fileBytes: BenchRunner.size(of: url), openMs: [], readerMs: [], saveMs: [], writeMs: [],
            readerNodes: 0)
        let copy = url.deletingLastPathComponent().appendingPathComponent("raw-write.xml")
        defer { try? FileManager.default.removeItem(at: copy) }
        for _ in 0..<max(rounds, 1) {
            let (nodes, readMs) = try BenchClock.measure { try streamRead(url.path) }
            result.readerMs.append(readMs)
            result.readerNodes = nodes
            let (driver, openMs) = try BenchClock.measure { try open(url) }
            result.openMs.append(openMs)
            // Untimed: the row to change.
            var first = StoreFetch(entity: item)
            first.limit = 1
            guard let row = try driver.fetch(first).rows.first, case .double(let score) = row.values[scoreSlot] else {
                throw BenchError("the XML store opened without Item rows")
            }
            var values = row.values
            values[scoreSlot] = .double(score + 1)
            var batch = ChangeBatch()
            batch.updates = [
                RowUpdate(id: row.id, expectedVersion: row.version, values: values, changedSlots: [scoreSlot])
            ]
            // Untimed: earlier rounds' writes flushed, so the save does not wait on their writeback.
            sync()
            let (_, saveMs) = try BenchClock.measure { try driver.apply(batch) }
            result.saveMs.append(saveMs)
            try driver.close()
            // Untimed: the bytes just saved; then the same bytes written the way the driver writes them.
            let bytes = try Data(contentsOf: url)
            result.fileBytes = Int64(bytes.count)
            sync()  // as before (c)
            let (_, writeMs) = try BenchClock.measure { try writeWithFsync(bytes, to: copy) }
            result.writeMs.append(writeMs)
        }
        return result
    }

    /// libxml2's streaming reader over `path`: every node read, every attribute value and text
    /// value touched (each byte summed). Returns the nodes visited.
    static func streamRead(_ path: String) throws -> Int {
        xmlInitParser()
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_HUGE.rawValue | XML_PARSE_BIG_LINES.rawValue)
        guard let reader = xmlReaderForFile(path, nil, options) else {
            throw BenchError("libxml2 could not open \(path)")
        }
        defer { xmlFreeTextReader(reader) }
        var nodes = 0
        var sum: UInt64 = 0
        func touch(_ value: UnsafePointer<xmlChar>?) {
            guard var p = value else { return }
            while p.pointee != 0 {
                sum &+= UInt64(p.pointee)
                p += 1
            }
        }
        while true {
            let rc = xmlTextReaderRead(reader)
            if rc == 0 { break }
            guard rc == 1 else { throw BenchError("libxml2's reader failed on \(path) after \(nodes) nodes") }
            nodes += 1
            switch xmlTextReaderNodeType(reader) {
            case Int32(XML_READER_TYPE_ELEMENT.rawValue):
                while xmlTextReaderMoveToNextAttribute(reader) == 1 { touch(xmlTextReaderConstValue(reader)) }
                xmlTextReaderMoveToElement(reader)
            case Int32(XML_READER_TYPE_TEXT.rawValue), Int32(XML_READER_TYPE_CDATA.rawValue):
                touch(xmlTextReaderConstValue(reader))
            default: break
            }
        }
        guard sum > 0 else { throw BenchError("libxml2's reader found no values in \(path)") }
        return nodes
    }

    /// Writes `bytes` as the XML driver writes a store: a temporary file in the same directory,
    /// 1 MiB `write`s (the driver's buffer size), `fsync`, `rename` over `url`, `fsync` of the directory.
    static func writeWithFsync(_ bytes: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/.raw-write-tmp"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BenchError("cannot create \(temporary): errno \(errno)") }
        try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < raw.count {
                // count > 0, so there is a base address
                let n = Glibc.write(fd, raw.baseAddress! + offset, min(1 << 20, raw.count - offset))
                guard n > 0 else {
                    Glibc.close(fd)
                    throw BenchError("write to \(temporary) failed: errno \(errno)")
                }
                offset += n
            }
        }
        guard fsync(fd) == 0, Glibc.close(fd) == 0 else {
            throw BenchError("fsync/close of \(temporary) failed: errno \(errno)")
        }
        guard rename(temporary, url.path) == 0 else { throw BenchError("rename to \(url.path) failed: errno \(errno)") }
        let dir = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 {
            defer { Glibc.close(dir) }
            guard fsync(dir) == 0 else { throw BenchError("fsync of \(directory) failed: errno \(errno)") }
        }
    }
}
