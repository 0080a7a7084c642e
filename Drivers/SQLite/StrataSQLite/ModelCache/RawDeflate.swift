import CSQLite
import Foundation

/// Raw DEFLATE (RFC 1951, no zlib or gzip header) decompression, as Core Data uses for the
/// `Z_MODELCACHE.Z_CONTENT` blob of its SQLite stores.
///
/// Thread safety: stateless; call from any thread.
public enum RawDeflate {
    /// The default ceiling on decompressed size: 256 MiB, far above any model cache seen.
    public static let defaultMaximumOutputSize = 256 << 20

    /// Decompresses a raw DEFLATE stream.
    ///
    /// - Parameters:
    ///   - data: The compressed bytes; the stream must be complete.
    ///   - maximumOutputSize: The most bytes the output may grow to; a larger result is
    ///     reported as corrupt rather than exhausting memory.
    /// - Returns: The decompressed bytes.
    /// - Throws: ``SQLiteError`` with code ``SQLiteError/Code/corrupt`` for invalid, truncated
    ///   or oversized input.
    /// - Complexity: O(n) in the output size.
    public static func inflate(_ data: Data, maximumOutputSize: Int = defaultMaximumOutputSize) throws -> Data {
        guard !data.isEmpty else { throw SQLiteError(.corrupt, "raw DEFLATE data is empty") }
        // zlib counts input in 32-bit units.
        guard data.count <= Int(UInt32.max) else {
            throw SQLiteError(
                .corrupt, "raw DEFLATE data of \(data.count) bytes is larger than any model cache; refusing it")
        }
        var stream = z_stream()
        // windowBits -15: raw DEFLATE with a 32 KiB window and no header or checksum.
        var status = inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            throw SQLiteError(.corrupt, "zlib could not start inflating (status \(status))")
        }
        defer { inflateEnd(&stream) }

        var output = Data()
        var chunkSize = Swift.min(Swift.max(data.count * 4, 4096), 1 << 20)
        let input = [UInt8](data)
        status = try input.withUnsafeBufferPointer { source -> Int32 in
            // zlib never writes through next_in; the cast only satisfies its non-const declaration.
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = uInt(source.count)
            var chunk = [UInt8](repeating: 0, count: chunkSize)
            while true {
                let produced = chunk.withUnsafeMutableBufferPointer { target -> (Int32, Int) in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    let result = CSQLite.inflate(&stream, Z_NO_FLUSH)
                    return (result, target.count - Int(stream.avail_out))
                }
                let (result, count) = produced
                if count > 0 {
                    guard output.count + count <= maximumOutputSize else {
                        throw SQLiteError(
                            .corrupt, "raw DEFLATE data expands beyond \(maximumOutputSize) bytes; refusing to continue"
                        )
                    }
                    output.append(contentsOf: chunk[0..<count])
                }
                switch result {
                case Z_STREAM_END:
                    return result
                case Z_OK:
                    if count == chunkSize && chunkSize < (8 << 20) {
                        chunkSize *= 2
                        chunk = [UInt8](repeating: 0, count: chunkSize)
                    }
                case Z_BUF_ERROR where stream.avail_in == 0:
                    throw SQLiteError(.corrupt, "raw DEFLATE data is truncated (the stream ends before its last block)")
                case Z_BUF_ERROR:
                    continue
                default:
                    let reason = stream.msg.map { String(cString: $0) } ?? "status \(result)"
                    throw SQLiteError(.corrupt, "raw DEFLATE data is invalid: \(reason)")
                }
            }
        }
        return output
    }
}
