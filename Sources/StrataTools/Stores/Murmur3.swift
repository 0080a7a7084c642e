/// MurmurHash3 x64-128 (Austin Appleby's, public domain): a fast 128-bit hash, not a
/// cryptographic one. ``ContentDigest`` chains it row by row (each row hashed with the previous
/// row's hash as its seed), to tell two stores' contents apart at the speed of a read.
///
/// With the seed `(0, 0)` it gives the reference implementation's `MurmurHash3_x64_128` with seed 0.
enum Murmur3 {
    private static let c1: UInt64 = 0x87c3_7b91_1142_53d5
    private static let c2: UInt64 = 0x4cf5_ad43_2745_937f

    /// The hash `(h1, h2)` of `bytes`, starting from `seed` instead of the reference's `(s, s)`.
    ///
    /// - Complexity: O(n), 16 bytes per step.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: (UInt64, UInt64)) -> (UInt64, UInt64) {
        var (h1, h2) = seed
        let count = bytes.count
        let blocks = count / 16
        for block in 0..<blocks {
            var k1 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: block * 16, as: UInt64.self))
            var k2 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: block * 16 + 8, as: UInt64.self))
            k1 = rotate(k1 &* c1, 31) &* c2
            h1 ^= k1
            h1 = (rotate(h1, 27) &+ h2) &* 5 &+ 0x52dc_e729
            k2 = rotate(k2 &* c2, 33) &* c1
            h2 ^= k2
            h2 = (rotate(h2, 31) &+ h1) &* 5 &+ 0x3849_5ab5
        }
        let tail = blocks * 16
        let rest = count - tail
        if rest > 8 {
            var k2: UInt64 = 0
            for index in stride(from: rest - 1, through: 8, by: -1) { k2 = k2 << 8 | UInt64(bytes[tail + index]) }
            h2 ^= rotate(k2 &* c2, 33) &* c1
        }
        if rest > 0 {
            var k1: UInt64 = 0
            for index in stride(from: min(rest, 8) - 1, through: 0, by: -1) {
                k1 = k1 << 8 | UInt64(bytes[tail + index])
            }
            h1 ^= rotate(k1 &* c1, 31) &* c2
        }
        h1 ^= UInt64(count)
        h2 ^= UInt64(count)
        h1 &+= h2
        h2 &+= h1
        h1 = mix(h1)
        h2 = mix(h2)
        h1 &+= h2
        h2 &+= h1
        return (h1, h2)
    }

    private static func rotate(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    private static func mix(_ k: UInt64) -> UInt64 {
        var k = k
        k ^= k >> 33
        k &*= 0xff51_afd7_ed55_8ccd
        k ^= k >> 33
        k &*= 0xc4ce_b9fe_1a85_ec53
        k ^= k >> 33
        return k
    }
}
