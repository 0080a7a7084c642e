import Foundation

/// How strings are stored in `text` columns, which cannot hold U+0000.
///
/// U+0001 is the escape character: U+0000 is stored as U+0001 U+0001 and U+0001 as U+0001 U+0002;
/// every other character is stored as it is. So a string without U+0000 and U+0001 (nearly every
/// string) is stored unchanged, and the stored form of any string is unique and keeps its order:
/// stored strings compare (byte by byte, equal or ordered) exactly as the strings do, because the
/// escape sequences sort where the characters they stand for sort (below every other character,
/// U+0000 below U+0001). Equality, ordering and `normalize(…, NFC)` (U+0000 and U+0001 are
/// starters without decompositions) commute with the escaping, which is what pushed-down
/// comparisons need. Substring tests do not commute (U+0001 U+0002 may appear across the escape of
/// U+0000 followed by U+0002), so they are never pushed down on stored text.
enum TextEscaping {
    /// The escape character.
    static let escape: UInt8 = 1

    /// Appends the stored form of `string` (UTF-8) to `bytes`.
    static func appendEscaped(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { utf8 in
            guard utf8.contains(where: { $0 <= escape }) else {
                bytes.append(contentsOf: utf8)
                return
            }
            for byte in utf8 {
                switch byte {
                case 0:
                    bytes.append(escape)
                    bytes.append(1)
                case escape:
                    bytes.append(escape)
                    bytes.append(2)
                default: bytes.append(byte)
                }
            }
        }
    }

    /// The stored form of `string`.
    static func escaped(_ string: String) -> String {
        guard string.utf8.contains(where: { $0 <= escape }) else { return string }
        var bytes: [UInt8] = []
        appendEscaped(string, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The string whose stored form is the UTF-8 `bytes`. A U+0001 not followed by U+0001 or U+0002
    /// (text another program wrote) is kept as it is.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> String {
        // memchr looks for the escape many bytes at a time; a plain scan read every string byte by byte.
        guard let start = bytes.baseAddress, memchr(start, Int32(escape), bytes.count) != nil else {
            return String(decoding: bytes, as: UTF8.self)
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == escape, index + 1 < bytes.count, bytes[index + 1] == 1 || bytes[index + 1] == 2 {
                decoded.append(bytes[index + 1] == 1 ? 0 : escape)
                index += 2
            } else {
                decoded.append(byte)
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
