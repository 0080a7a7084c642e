import Foundation

/// A small SHA-256 (FIPS 180-4) used for version hashes and content digests, so the core needs no
/// C library or package for it.
public struct SHA256Digest: Sendable {
    private var state: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// Starts an empty digest.
    public init() { buffer.reserveCapacity(64) }

    /// Adds bytes.
    ///
    /// - Complexity: O(n); contiguous collections are read in whole 64-byte blocks.
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done != nil { return }
        for byte in bytes {
            buffer.append(byte)
            length &+= 1
            if buffer.count == 64 { flushBuffer() }
        }
    }

    /// Adds the bytes of `raw`.
    public mutating func update(_ raw: UnsafeRawBufferPointer) {
        var rest = raw[...]
        length &+= UInt64(raw.count)
        if !buffer.isEmpty {
            let take = min(64 - buffer.count, rest.count)
            buffer.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            if buffer.count == 64 { flushBuffer() }
        }
        while rest.count >= 64, let base = raw.baseAddress {
            compress(base + rest.startIndex)
            rest = rest.dropFirst(64)
        }
        if !rest.isEmpty { buffer.append(contentsOf: rest) }
    }

    /// Adds a string's UTF-8 bytes followed by a zero byte, so that concatenations stay unambiguous.
    public mutating func update(field: String) {
        var field = field
        field.withUTF8 { update(UnsafeRawBufferPointer($0)) }
        update(byte: 0)
    }

    /// Adds one byte.
    public mutating func update(byte: UInt8) {
        buffer.append(byte)
        length &+= 1
        if buffer.count == 64 { flushBuffer() }
    }

    /// Finishes and returns the 32-byte digest.
    public func finalize() -> Data {
        var copy = self
        let bitLength = length &* 8
        copy.update(byte: 0x80)
        while copy.buffer.count != 56 { copy.update(byte: 0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            copy.buffer.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        copy.flushBuffer()
        var out = Data(capacity: 32)
        for word in copy.state {
            for shift in [24, 16, 8, 0] { out.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return out
    }

    /// The digest of `data`.
    public static func hash<Bytes: Sequence>(_ data: Bytes) -> Data where Bytes.Element == UInt8 {
        var digest = SHA256Digest()
        digest.update(data)
        return digest.finalize()
    }

    /// Compresses the full 64-byte buffer and empties it.
    private mutating func flushBuffer() {
        let block = buffer
        block.withUnsafeBytes { compress($0.baseAddress!) }  // 64 bytes, so a base address
        buffer.removeAll(keepingCapacity: true)
    }

    /// Compresses the 64 bytes at `block` into the state.
    private mutating func compress(_ block: UnsafeRawPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<16 {
                w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
            }
            for i in 16..<64 {
                let s0 = w[i - 15].rotatedRight(7) ^ w[i - 15].rotatedRight(18) ^ (w[i - 15] >> 3)
                let s1 = w[i - 2].rotatedRight(17) ^ w[i - 2].rotatedRight(19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            Self.k.withUnsafeBufferPointer { k in
                state.withUnsafeMutableBufferPointer { state in
                    var (a, b, c, d) = (state[0], state[1], state[2], state[3])
                    var (e, f, g, h) = (state[4], state[5], state[6], state[7])
                    for i in 0..<64 {
                        let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                        let ch = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ ch &+ k[i] &+ w[i]
                        let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                        let maj = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = s0 &+ maj
                        (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
                    }
                    state[0] &+= a
                    state[1] &+= b
                    state[2] &+= c
                    state[3] &+= d
                    state[4] &+= e
                    state[5] &+= f
                    state[6] &+= g
                    state[7] &+= h
                }
            }
        }
    }
}

extension UInt32 {
    fileprivate func rotatedRight(_ n: UInt32) -> UInt32 { (self >> n) | (self << (32 - n)) }
}

extension Data {
    /// Lower-case hexadecimal digits of the bytes.
    public var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
