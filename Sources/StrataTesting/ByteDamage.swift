/// Deterministic damage to stored bytes, for testing that a reader of files (a driver, a decoder)
/// meets any damage with a typed error instead of a crash.
///
/// Every function takes a ``SeededGenerator``, so the same seed damages the same bytes the same
/// way and a failing case can be replayed alone. Each returns a short description of what it did
/// ("flip bit 3 of byte 0x1a2f"), for reports.
///
/// ```swift
/// var random = SeededGenerator(seed: 42)
/// var bytes = Array(try Data(contentsOf: storeURL))
/// let what = ByteDamage.damage(&bytes, using: &random)
/// try Data(bytes).write(to: storeURL)  // then open it: a StoreError or a result, never a trap
/// ```
public enum ByteDamage {
    /// Integers that tend to break readers: zero and ±1, the limits of every signed and unsigned
    /// width from 8 to 64 bits and their neighbours, 2^32 + k (a 64-bit count that wraps when
    /// truncated to 32 bits), and a few large counts.
    public static let interestingIntegers: [Int64] = [
        0, 1, -1, 2, 7, 8, 16, 32, 64, 100, 127, 128, 255, 256, 4_096, 32_767, 32_768, 65_535, 65_536, -128, -129,
        -32_768, -32_769, Int64(Int32.max), Int64(Int32.max) + 1, Int64(Int32.min), Int64(Int32.min) - 1,
        Int64(UInt32.max), 1 << 32, (1 << 32) + 1, (1 << 32) + 7, 1 << 40, 1 << 53, (1 << 53) + 1,
        Int64.max, Int64.max - 1, Int64.min, Int64.min + 1, 1_000_000_000, -1_000_000_000,
    ]

    /// One interesting integer, chosen by `random`.
    public static func interestingInteger(using random: inout SeededGenerator) -> Int64 {
        interestingIntegers[Int.random(in: 0..<interestingIntegers.count, using: &random)]
    }

    /// Writes the low `width` bytes (1, 2, 4 or 8) of `value` at `offset`, little- or big-endian,
    /// clipped at the end of `bytes`.
    public static func write(_ value: Int64, width: Int, bigEndian: Bool, at offset: Int, in bytes: inout [UInt8]) {
        let bits = UInt64(bitPattern: value)
        for index in 0..<width where offset + index >= 0 && offset + index < bytes.count {
            let shift = bigEndian ? (width - 1 - index) * 8 : index * 8
            bytes[offset + index] = UInt8(truncatingIfNeeded: bits >> UInt64(shift))
        }
    }

    /// Applies one random kind of damage to `bytes` and describes it: a bit flip, a random byte,
    /// a truncation, an interesting integer (any width, either byte order), a zeroed, duplicated
    /// or removed span.
    ///
    /// - Parameter offsets: Places worth hitting (headers, length fields, page starts); about
    ///   half of the damage lands at or just after one of them when given, the rest anywhere.
    public static func damage(
        _ bytes: inout [UInt8], using random: inout SeededGenerator, near offsets: [Int] = []
    ) -> String {
        guard !bytes.isEmpty else {
            bytes = [UInt8.random(in: 0...255, using: &random)]
            return "empty file: one random byte"
        }
        var at = Int.random(in: 0..<bytes.count, using: &random)
        if !offsets.isEmpty, Bool.random(using: &random) {
            let base = offsets[Int.random(in: 0..<offsets.count, using: &random)]
            at = min(max(0, base + Int.random(in: 0..<16, using: &random)), bytes.count - 1)
        }
        let hex = "0x" + String(at, radix: 16)
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
            let bit = Int.random(in: 0..<8, using: &random)
            bytes[at] ^= UInt8(1 << bit)
            return "flip bit \(bit) of byte \(hex)"
        case 1:
            let value = UInt8.random(in: 0...255, using: &random)
            bytes[at] = value
            return "set byte \(hex) to \(value)"
        case 2:
            bytes.removeSubrange(at...)
            return "truncate to \(at) bytes"
        case 3, 4:
            let value = interestingInteger(using: &random)
            let width = [1, 2, 4, 8][Int.random(in: 0..<4, using: &random)]
            let bigEndian = Bool.random(using: &random)
            write(value, width: width, bigEndian: bigEndian, at: at, in: &bytes)
            return "write \(value) as \(width * 8)-bit \(bigEndian ? "big" : "little")-endian at \(hex)"
        case 5:
            let end = min(bytes.count, at + Int.random(in: 1...512, using: &random))
            for index in at..<end { bytes[index] = 0 }
            return "zero bytes \(hex)..<0x\(String(end, radix: 16))"
        case 6:
            let end = min(bytes.count, at + Int.random(in: 1...256, using: &random))
            let copy = Array(bytes[at..<end])
            let target = Int.random(in: 0..<bytes.count, using: &random)
            for (index, byte) in copy.enumerated() where target + index < bytes.count { bytes[target + index] = byte }
            return "copy bytes \(hex)..<0x\(String(end, radix: 16)) over 0x\(String(target, radix: 16))"
        default:
            let end = min(bytes.count, at + Int.random(in: 1...64, using: &random))
            bytes.removeSubrange(at..<end)
            return "remove bytes \(hex)..<0x\(String(end, radix: 16))"
        }
    }
}
