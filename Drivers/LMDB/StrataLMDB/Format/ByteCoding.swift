import Foundation

/// Appends the fixed-width and length-prefixed fields of the LMDB format to a byte buffer.
///
/// Multi-byte numbers in row bodies are little-endian; keys use ``appendBigEndian(_:)`` so that
/// LMDB's byte-wise key order is numeric order.
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    mutating func append(_ byte: UInt8) { bytes.append(byte) }

    /// Byte by byte: for these few bytes cheaper than a generic `append(contentsOf:)`.
    @inline(__always)
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        var bits = UInt64(truncatingIfNeeded: value)
        for _ in 0..<MemoryLayout<T>.size {
            bytes.append(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
        }
    }

    @inline(__always)
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        let bits = UInt64(truncatingIfNeeded: value)
        var shift = (MemoryLayout<T>.size - 1) * 8
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
            shift -= 8
        }
    }

    /// `count` zero bytes.
    mutating func appendZeros(_ count: Int) {
        for _ in 0..<count { bytes.append(0) }
    }

    /// A `u32` length, then the bytes.
    mutating func appendLengthPrefixed<C: Collection>(_ data: C) where C.Element == UInt8 {
        appendLittleEndian(UInt32(data.count))
        bytes.append(contentsOf: data)
    }

    mutating func appendLengthPrefixed(_ string: String) {
        var string = string
        string.withUTF8 { appendLengthPrefixed($0) }
    }

    mutating func append<C: Collection>(contentsOf data: C) where C.Element == UInt8 { bytes.append(contentsOf: data) }
}

/// Reads the fields ``ByteWriter`` wrote, straight from borrowed memory (an LMDB value inside its
/// transaction). Every read checks bounds and throws ``FormatError`` instead of trapping.
///
/// Lifetime: the buffer is borrowed; a reader must not outlive the transaction the memory came
/// from. Values it returns (`String`, `Data`) are copies and may.
struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    private(set) var offset: Int = 0

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    var remaining: Int { buffer.count - offset }
    var isAtEnd: Bool { offset == buffer.count }

    @inline(__always)
    /// The next `count` bytes, borrowed like the buffer.
    mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else {
            throw FormatError("needs \(count) bytes at offset \(offset), only \(remaining) left")
        }
        // The bounds were checked just above.
        let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
        offset += count
        return slice
    }

    @inline(__always)
    mutating func byte() throws -> UInt8 { try take(1)[0] }

    @inline(__always)
    mutating func littleEndian<T: FixedWidthInteger>(_: T.Type = T.self) throws -> T {
        let raw = try take(MemoryLayout<T>.size)
        var value = T.zero
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: raw) }
        return T(littleEndian: value)
    }

    @inline(__always)
    mutating func bigEndian<T: FixedWidthInteger>(_: T.Type = T.self) throws -> T {
        let raw = try take(MemoryLayout<T>.size)
        var value = T.zero
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: raw) }
        return T(bigEndian: value)
    }

    @inline(__always)
    mutating func double() throws -> Double { Double(bitPattern: try littleEndian(UInt64.self)) }

    /// A `u32` length, then that many bytes, borrowed.
    @inline(__always)
    mutating func lengthPrefixed() throws -> UnsafeRawBufferPointer {
        let count = try littleEndian(UInt32.self)
        return try take(Int(count))
    }

    @inline(__always)
    mutating func bytes(_ count: Int) throws -> UnsafeRawBufferPointer { try take(count) }

    /// A length-prefixed string that must be valid UTF-8.
    mutating func string() throws -> String {
        let raw = try lengthPrefixed()
        let bytes = raw.bindMemory(to: UInt8.self)
        // ASCII is valid UTF-8 as it stands; only other text goes through the full validation.
        if Self.isASCII(raw) { return String(decoding: bytes, as: UTF8.self) }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw FormatError("a string at offset \(offset - raw.count) is not valid UTF-8")
        }
        return string
    }

    mutating func data() throws -> Data { Data(try lengthPrefixed()) }

    /// Whether every byte is below 0x80, eight bytes at a time.
    static func isASCII(_ raw: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        var bits: UInt64 = 0
        while index + 8 <= raw.count {
            bits |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < raw.count {
            bits |= UInt64(raw[index])
            index += 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }
}

/// Bytes that break the LMDB format's rules; drivers wrap it in ``StoreError`` with code
/// ``StoreError/Code/corrupt`` naming the store.
struct FormatError: Error, Sendable, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
