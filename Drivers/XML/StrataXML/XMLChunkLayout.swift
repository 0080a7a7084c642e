import Foundation
import Strata

// XML CHUNK REUSE INVARIANTS
// R1. A chunk is the set of rows whose primary key shifted right by `XMLChunkLayout.keyShift` is
//     its number; objects are written in key order, so a chunk's objects are one run of the file.
// R2. A layout describes one file, named by its identity (device, inode, size, modification
//     time); a save copies bytes from the store file only when the file at the store path still
//     has that identity.
// R3. A chunk's bytes are copied only when no change since the layout was made touched a row of
//     it (the driver marks the chunk of every inserted, updated and deleted row before the engine
//     applies the batch) and no object of the file or of the state needs a remapped id (`pk`).
// R4. Positions a load recorded (the id of each chunk's first object) are trusted only after
//     they check out against the bytes: between `</databaseInfo>` and `</database>` there is no
//     comment, CDATA section or processing instruction (so every `<object` is markup); each
//     chunk starts at the line of the first `<object` with its first id, with only indentation
//     before it on that line; each range ends after `</object>` or `/>` and whitespace.

/// The identity of a file on disk, to tell whether the store file is still the one a layout
/// describes.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64  // nanoseconds

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
    }

    /// The identity of the file at `path`, or `nil` when it cannot be read.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }
}

/// Where the objects of each key chunk sit in the store file, so that a save can copy the bytes
/// of chunks no change touched instead of encoding their objects again (R1–R4).
struct XMLChunkLayout: Sendable {
    /// 4,096 keys per chunk.
    static let keyShift: Int64 = 12

    /// The chunk of a primary key.
    @inline(__always) static func chunk(of key: Int64) -> Int64 { key >> keyShift }

    enum Positions: Sendable {
        /// As a load saw them: each chunk's number and the id of its first object, in file order
        /// (R4 checks them before use).
        case firstObjects([(chunk: Int64, id: Int64)])
        /// As a save wrote them: each chunk's byte range.
        case bytes([Int64: Range<Int>])
    }

    /// The file the positions describe.
    var file: FileIdentity
    var positions: Positions

    /// The byte range of every chunk in `bytes` (the file this layout describes), or `nil` when
    /// recorded positions do not check out (R4).
    func ranges(in bytes: UnsafeRawBufferPointer) -> [Int64: Range<Int>]? {
        switch positions {
        case .bytes(let ranges): return ranges
        case .firstObjects(let starts): return Self.ranges(of: starts, in: bytes)
        }
    }

    /// The markup the scanner looks for, with their lengths taken from the text.
    private enum Markup {
        static let databaseInfoEnd: StaticString = "</databaseInfo>"
        static let objectTag: StaticString = "<object"
        static let idPrefix: StaticString = " id=\"z"
    }

    private static func ranges(of starts: [(chunk: Int64, id: Int64)], in bytes: UnsafeRawBufferPointer) -> [Int64:
        Range<Int>]?
    {
        guard let end = objectsEnd(in: bytes), let info = find(Markup.databaseInfoEnd, in: bytes, from: 0, to: end)
        else { return nil }
        let region = (info + Markup.databaseInfoEnd.utf8CodeUnitCount)..<end
        // "<!", "<?"
        guard !follows(0x3C, 0x21, in: bytes, region), !follows(0x3C, 0x3F, in: bytes, region) else { return nil }
        var offsets: [Int] = []
        offsets.reserveCapacity(starts.count + 1)
        var cursor = region.lowerBound
        for start in starts {
            // Object ids rise through the file, so the id of the first object at or after an
            // offset never falls as the offset grows: a binary search finds the first offset
            // whose next object has at least this chunk's first id.
            var low = cursor
            var high = end
            while low < high {
                let middle = low + (high - low) / 2
                if let next = nextObject(in: bytes, from: middle, end: end), next.id < start.id {
                    low = next.tag + Markup.objectTag.utf8CodeUnitCount
                } else {
                    high = middle
                }
            }
            guard let found = nextObject(in: bytes, from: low, end: end), found.id == start.id else { return nil }
            cursor = found.tag + Markup.objectTag.utf8CodeUnitCount
            var line = found.tag
            while line > region.lowerBound, bytes[line - 1] == 0x20 || bytes[line - 1] == 0x09 { line -= 1 }
            guard bytes[line - 1] == 0x0A else { return nil }
            offsets.append(line)
        }
        offsets.append(end)
        var ranges: [Int64: Range<Int>] = [:]
        ranges.reserveCapacity(starts.count)
        for (index, start) in starts.enumerated() {
            let range = offsets[index]..<offsets[index + 1]
            guard !range.isEmpty, endsWithWholeObject(bytes, range) else { return nil }
            ranges[start.chunk] = range
        }
        return ranges
    }

    /// The first `<object` tag at or after `from` and the number of its `id="zN"` (`Int64.max`
    /// when it has none that parses, which stops a search there).
    private static func nextObject(in bytes: UnsafeRawBufferPointer, from: Int, end: Int) -> (tag: Int, id: Int64)? {
        var at = from
        while let tag = find(Markup.objectTag, in: bytes, from: at, to: end) {
            at = tag + Markup.objectTag.utf8CodeUnitCount
            guard at < end, isSpace(bytes[at]) else { continue }
            guard let close = find(">", in: bytes, from: tag, to: end),
                let id = find(Markup.idPrefix, in: bytes, from: tag, to: close)
            else {
                return (tag, .max)
            }
            var index = id + Markup.idPrefix.utf8CodeUnitCount
            var number: Int64 = 0
            while index < close, bytes[index] >= 0x30, bytes[index] <= 0x39, number < Int64.max / 10 - 9 {
                number = number * 10 + Int64(bytes[index] - 0x30)
                index += 1
            }
            return (
                tag,
                index > id + Markup.idPrefix.utf8CodeUnitCount && index < close && bytes[index] == 0x22 ? number : .max
            )
        }
        return nil
    }

    /// Whether `second` follows `first` anywhere in `range`; searched by `second`, the rarer byte.
    private static func follows(_ first: UInt8, _ second: UInt8, in bytes: UnsafeRawBufferPointer, _ range: Range<Int>)
        -> Bool
    {
        guard let base = bytes.baseAddress else { return false }
        var at = range.lowerBound + 1
        while at < range.upperBound, let hit = memchr(base + at, Int32(second), range.upperBound - at) {
            let offset = base.distance(to: UnsafeRawPointer(hit))
            if bytes[offset - 1] == first { return true }
            at = offset + 1
        }
        return false
    }

    /// The offset of the first `needle` in `bytes[from..<to]`.
    private static func find(_ needle: StaticString, in bytes: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let count = needle.utf8CodeUnitCount
        let first = Int32(needle.utf8Start.pointee)
        var at = from
        while to - at >= count {
            guard let hit = memchr(base + at, first, to - at - count + 1) else { return nil }
            let offset = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(hit, needle.utf8Start, count) == 0 { return offset }
            at = offset + 1
        }
        return nil
    }

    /// The start of the line holding the closing `</database>`, when only whitespace surrounds
    /// it on that line and after it.
    private static func objectsEnd(in bytes: UnsafeRawBufferPointer) -> Int? {
        var end = bytes.count
        while end > 0, isSpace(bytes[end - 1]) { end -= 1 }
        let closing = Array("</database>".utf8)
        guard end >= closing.count, bytes[(end - closing.count)..<end].elementsEqual(closing) else { return nil }
        var start = end - closing.count
        while start > 0, bytes[start - 1] == 0x20 || bytes[start - 1] == 0x09 { start -= 1 }
        guard start == 0 || bytes[start - 1] == 0x0A else { return nil }
        return start
    }

    /// Whether `range` ends after `</object>` or `/>` and whitespace (R4).
    private static func endsWithWholeObject(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        var last = range.upperBound
        while last > range.lowerBound, isSpace(bytes[last - 1]) { last -= 1 }
        let close = Array("</object>".utf8)
        if last - range.lowerBound >= close.count, bytes[(last - close.count)..<last].elementsEqual(close) {
            return true
        }
        return last - range.lowerBound >= 2 && bytes[last - 2] == 0x2F && bytes[last - 1] == 0x3E  // "/>"
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
}

/// What a save may copy from the file it replaces.
struct XMLReuseSource {
    /// The old file's bytes.
    let bytes: UnsafeRawBufferPointer
    /// Each chunk's byte range in `bytes`.
    let ranges: [Int64: Range<Int>]
    /// Chunks changed since the file was written or read: these are encoded (R3).
    let dirty: Set<Int64>

    /// The old bytes of `chunk`, when they may be copied.
    func range(of chunk: Int64) -> Range<Int>? { dirty.contains(chunk) ? nil : ranges[chunk] }
}

/// The store file mapped read-only for one save, when it is still the file a layout describes.
///
/// Lifetime: unmapped by ``unmap()``; the caller keeps the mapping alive while a save copies.
struct XMLMappedFile {
    let bytes: UnsafeRawBufferPointer

    /// Maps the file at `path` when its identity is `expected` (R2); `nil` otherwise.
    init?(path: String, expected: FileIdentity) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, FileIdentity(status) == expected, status.st_size > 0 else { return nil }
        let size = Int(status.st_size)
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, descriptor, 0), address != MAP_FAILED
        else {
            return nil
        }
        bytes = UnsafeRawBufferPointer(start: address, count: size)
    }

    func unmap() {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}
