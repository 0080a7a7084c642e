import Dispatch
import Foundation
import Strata
import Synchronization

extension XMLStoreEncoder {
    /// Rows encoded per piece of work.
    static let chunkRows = 4_096

    /// Writes the `<object>` elements in file order. Large stores are encoded a window of chunks at
    /// a time, the chunks of a window on every core at once, each into memory of its own; a serial
    /// queue appends each finished window to `writer` in order while the next window is encoded.
    /// The bytes are exactly those of one pass, and memory stays bounded by two windows.
    func writeObjects(
        _ rows: [RowSnapshot], order: [Int], ids: ObjectIDs, store: String, to writer: inout XMLByteWriter, cores: Int
    ) throws {
        guard cores > 1, order.count >= 2 * Self.chunkRows else {
            return try writeRun(rows, order: order[...], ids: ids, store: store, to: &writer)
        }
        let chunks = stride(from: 0, to: order.count, by: Self.chunkRows).map { $0..<min($0 + Self.chunkRows, order.count) }
        let windowSize = 2 * cores
        let output = SharedWriter(writer)
        let writing = DispatchQueue(label: "strata.xml.write")
        let failure = Mutex<(any Error)?>(nil)
        for windowStart in stride(from: 0, to: chunks.count, by: windowSize) {
            let window = Array(chunks[windowStart..<min(windowStart + windowSize, chunks.count)])
            let encoded = window.map { _ in EncodedChunk() }
            DispatchQueue.concurrentPerform(iterations: window.count) { index in
                var chunkWriter = XMLByteWriter(capacity: Self.chunkRows * 512)
                do {
                    try writeRun(rows, order: order[window[index]], ids: ids, store: store, to: &chunkWriter)
                    encoded[index].writer = chunkWriter
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
            if failure.withLock({ $0 != nil }) { break }
            writing.async {
                guard failure.withLock({ $0 == nil }) else { return }
                do {
                    // Every iteration set its chunk before concurrentPerform returned, and this
                    // block was queued after that.
                    for chunk in encoded { try output.writer.append(contentsOf: chunk.writer!) }
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        writing.sync {}  // every queued window written
        writer = output.writer
        if let error = failure.withLock({ $0 }) { throw error }
    }
}

/// One chunk's bytes, handed from the iteration that encoded them to the writing queue.
///
/// `@unchecked Sendable`: each instance is written by exactly one iteration of
/// `concurrentPerform` and read only by a block queued after `concurrentPerform` returned, which
/// orders the write before the read; nothing else touches it.
private final class EncodedChunk: @unchecked Sendable {
    var writer: XMLByteWriter?
}

/// The file writer while windows are being written.
///
/// `@unchecked Sendable`: between its creation and `writing.sync {}` in
/// ``XMLStoreEncoder/writeObjects(_:order:ids:store:to:cores:)`` only blocks of the serial
/// writing queue touch it, one at a time; the caller reads it again only after that `sync`, which
/// waits for every queued block.
private final class SharedWriter: @unchecked Sendable {
    var writer: XMLByteWriter
    init(_ writer: XMLByteWriter) { self.writer = writer }
}
