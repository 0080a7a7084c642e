import Dispatch
import Foundation
import Strata
import Synchronization

extension XMLStoreEncoder {
    /// Rows encoded per piece of work, at least.
    static let chunkRows = 4_096

    /// Writes the `<object>` elements in file order and returns each key chunk's byte range in
    /// the output (offsets of `writer`'s ``XMLByteWriter/position``) and how many bytes were
    /// copied from the old file.
    ///
    /// Chunks that `reuse` holds unchanged are copied from the old file (R3); the rest are
    /// encoded. Large stores are encoded a window of units at a time, the units of a window on
    /// every core at once, each into memory of its own; a serial queue appends each finished
    /// window to `writer` in order while the next window is encoded. The bytes are exactly those
    /// of one pass, and memory stays bounded by two windows.
    func writeObjects(
        _ rows: ObjectRows, order: [Int], ids: ObjectIDs, store: String, reuse: XMLReuseSource?,
        to writer: inout XMLByteWriter, cores: Int
    ) throws -> (ranges: [Int64: Range<Int>], copied: Int) {
        let (units, pieces, encodedRows) = Self.plan(rows, order: order, reuse: reuse)
        let output = SharedOutput(writer, source: reuse?.bytes)
        output.ranges.reserveCapacity(pieces.count)
        guard cores > 1, encodedRows >= 2 * Self.chunkRows else {
            for unit in units {
                var encoded: XMLByteWriter?
                var ends: [Int] = []
                if case .encode(let positions, let held) = unit {
                    (encoded, ends) = try encode(
                        rows, order: order, positions: positions, pieces: pieces[held], ids: ids, store: store)
                }
                try output.append(unit, encoded: encoded, ends: ends, pieces: pieces)
            }
            writer = output.writer
            return (output.ranges, output.copied)
        }
        let windowSize = 2 * cores
        let writing = DispatchQueue(label: "strata.xml.write")
        let failure = Locked<(any Error)?>(nil)
        for windowStart in stride(from: 0, to: units.count, by: windowSize) {
            let window = Array(units[windowStart..<min(windowStart + windowSize, units.count)])
            let encoded = window.map { _ in EncodedUnit() }
            DispatchQueue.concurrentPerform(iterations: window.count) { index in
                guard case .encode(let positions, let held) = window[index] else { return }
                do {
                    (encoded[index].writer, encoded[index].ends) = try encode(
                        rows, order: order, positions: positions, pieces: pieces[held], ids: ids, store: store)
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
            if failure.withLock({ $0 != nil }) { break }
            writing.async {
                guard failure.withLock({ $0 == nil }) else { return }
                do {
                    // Every iteration set its unit before concurrentPerform returned, and this
                    // block was queued after that.
                    for (unit, result) in zip(window, encoded) {
                        try output.append(unit, encoded: result.writer, ends: result.ends, pieces: pieces)
                    }
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        writing.sync {}  // every queued window written
        writer = output.writer
        if let error = failure.withLock({ $0 }) { throw error }
        return (output.ranges, output.copied)
    }

    /// Splits the objects into chunks and the chunks into units: runs of chunks to copy whose
    /// old bytes follow each other, and runs of chunks to encode of at least ``chunkRows`` rows.
    private static func plan(
        _ rows: ObjectRows, order: [Int], reuse: XMLReuseSource?
    ) -> (units: [Unit], pieces: [Piece], encodedRows: Int) {
        var units: [Unit] = []
        var pieces: [Piece] = []
        var encodedRows = 0
        var start = 0
        while start < order.count {
            let number = XMLChunkLayout.chunk(of: rows.keys[order[start]])
            var end = start + 1
            while end < order.count, XMLChunkLayout.chunk(of: rows.keys[order[end]]) == number { end += 1 }
            let old = reuse?.range(of: number)
            pieces.append(Piece(number: number, end: end, old: old ?? 0..<0))
            let piece = pieces.count - 1
            switch (units.last, old) {
            case (.copy(let bytes, let held)?, let old?) where bytes.upperBound == old.lowerBound:
                units[units.count - 1] = .copy(bytes.lowerBound..<old.upperBound, pieces: held.lowerBound..<(piece + 1))
            case (_, let old?):
                units.append(.copy(old, pieces: piece..<(piece + 1)))
            case (.encode(let positions, let held)?, nil) where positions.count < chunkRows:
                units[units.count - 1] = .encode(positions.lowerBound..<end, pieces: held.lowerBound..<(piece + 1))
                encodedRows += end - start
            case (_, nil):
                units.append(.encode(start..<end, pieces: piece..<(piece + 1)))
                encodedRows += end - start
            }
            start = end
        }
        return (units, pieces, encodedRows)
    }

    /// Encodes one unit into memory of its own; returns the bytes and where each chunk ends in them.
    private func encode(
        _ rows: ObjectRows, order: [Int], positions: Range<Int>, pieces: ArraySlice<Piece>, ids: ObjectIDs,
        store: String
    ) throws -> (XMLByteWriter, [Int]) {
        var writer = XMLByteWriter(capacity: positions.count * 512)
        var ends: [Int] = []
        ends.reserveCapacity(pieces.count)
        var start = positions.lowerBound
        for piece in pieces {
            try writeRun(rows, order: order[start..<piece.end], ids: ids, store: store, to: &writer)
            ends.append(writer.count)
            start = piece.end
        }
        return (writer, ends)
    }
}

/// One key chunk (``XMLChunkLayout``) of the objects being written.
private struct Piece {
    var number: Int64
    /// Where the chunk's positions end in `order`.
    var end: Int
    /// The chunk's bytes in the file being replaced, when they are copied.
    var old: Range<Int>
}

/// A piece of work: chunks to encode (positions of `order`), or old bytes to copy, with the
/// chunks they hold (indexes into the pieces).
private enum Unit {
    case encode(Range<Int>, pieces: Range<Int>)
    case copy(Range<Int>, pieces: Range<Int>)
}

/// One unit's bytes, handed from the iteration that encoded them to the writing queue.
///
/// `@unchecked Sendable`: each instance is written by exactly one iteration of
/// `concurrentPerform` and read only by a block queued after `concurrentPerform` returned, which
/// orders the write before the read; nothing else touches it.
private final class EncodedUnit: @unchecked Sendable {  // safe: written once, read after concurrentPerform
    var writer: XMLByteWriter?
    var ends: [Int] = []
}

/// The file writer, the old file's bytes and the chunk ranges while units are being written.
///
/// `@unchecked Sendable`: between its creation and `writing.sync {}` in
/// ``XMLStoreEncoder/writeObjects(_:order:ids:store:reuse:to:cores:)`` only blocks of the serial
/// writing queue touch it, one at a time; the caller reads it again only after that `sync`, which
/// waits for every queued block. `source` is a read-only mapping the caller keeps alive until
/// the write returns.
private final class SharedOutput: @unchecked Sendable {  // safe: only the serial writing queue touches it
    var writer: XMLByteWriter
    let source: UnsafeRawBufferPointer?
    var ranges: [Int64: Range<Int>] = [:]
    var copied = 0

    init(_ writer: XMLByteWriter, source: UnsafeRawBufferPointer?) {
        self.writer = writer
        self.source = source
    }

    /// Appends a unit: its encoded bytes, or its bytes copied from the old file; records where
    /// each of its chunks landed.
    func append(_ unit: Unit, encoded: XMLByteWriter?, ends: [Int], pieces: [Piece]) throws {
        let base = writer.position
        switch unit {
        case .encode(_, let held):
            // Encoded units come with their bytes and one end per piece.
            try writer.append(contentsOf: encoded!)
            var start = base
            for (piece, end) in zip(pieces[held], ends) {
                ranges[piece.number] = start..<(base + end)
                start = base + end
            }
        case .copy(let bytes, let held):
            // Copy units exist only when there is a source (`XMLReuseSource.range(of:)`).
            try writer.copy(UnsafeRawBufferPointer(rebasing: source![bytes]))
            copied += bytes.count
            for piece in pieces[held] {
                ranges[piece.number] =
                    (base + piece.old.lowerBound - bytes.lowerBound)..<(base + piece.old.upperBound - bytes.lowerBound)
            }
        }
    }
}
