import CSQLite
import Foundation
import Testing

@testable import StrataSQLite

/// Compresses with zlib's raw DEFLATE (windowBits -15), the way Core Data writes Z_MODELCACHE.
func rawDeflate(_ data: Data) -> Data {
    var stream = z_stream()
    _ = deflateInit2_(
        &stream, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
    defer { deflateEnd(&stream) }
    var input = [UInt8](data)
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 16)
    let count = input.withUnsafeMutableBufferPointer { source in
        output.withUnsafeMutableBufferPointer { target in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            stream.next_out = target.baseAddress
            stream.avail_out = uInt(target.count)
            _ = deflate(&stream, Z_FINISH)
            return target.count - Int(stream.avail_out)
        }
    }
    return Data(output[0..<count])
}

@Suite("RawDeflate")
struct RawDeflateTests {
    @Test("inflating raw DEFLATE output gives back the original bytes")
    func roundTrip() throws {
        let original = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7 / 13) })
        #expect(try RawDeflate.inflate(rawDeflate(original)) == original)
    }

    @Test("a highly compressible input grows past the first output chunk")
    func growsOutput() throws {
        let original = Data(repeating: 0x41, count: 3_000_000)
        #expect(try RawDeflate.inflate(rawDeflate(original)) == original)
    }

    @Test("garbage input throws a corrupt error instead of crashing")
    func garbage() {
        #expect(throws: SQLiteError.self) { try RawDeflate.inflate(Data([0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x12])) }
        do {
            _ = try RawDeflate.inflate(Data([0xFF, 0xFF, 0xFF, 0xFF]))
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            #expect(error.code == .corrupt)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("empty and truncated streams throw corrupt errors")
    func truncated() throws {
        #expect(throws: SQLiteError.self) { try RawDeflate.inflate(Data()) }
        let compressed = rawDeflate(Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        #expect(throws: SQLiteError.self) { try RawDeflate.inflate(compressed.prefix(compressed.count / 2)) }
    }

    @Test("output beyond the size limit is refused")
    func sizeLimit() throws {
        let compressed = rawDeflate(Data(repeating: 0, count: 1_000_000))
        #expect(throws: SQLiteError.self) { try RawDeflate.inflate(compressed, maximumOutputSize: 100_000) }
    }
}
