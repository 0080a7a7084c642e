import Foundation

/// Appends XML to a byte buffer, escaping as it goes, and hands full chunks to a file descriptor.
///
/// The XML store's writer: faster than libxml2's `xmlTextWriter` for this fixed layout (no
/// per-call string conversions) and in full control of escaping:
/// - text: `&` `<` `>` become entities and carriage returns `&#13;` (a parser would otherwise
///   turn them into line feeds);
/// - attribute values: also `"`, tab and line feed as character references, which attribute-value
///   normalization would otherwise turn into spaces.
///
/// Characters XML 1.0 cannot carry at all (C0 controls other than tab, line feed and carriage
/// return; U+FFFE and U+FFFF) are the caller's business: ``isRepresentable(_:)`` finds them, and
/// the store writes such strings base64-encoded instead (docs/formats/xml.md).
///
/// Thread safety: a value owned by one save.
struct XMLByteWriter {
    /// The bytes not yet written to ``descriptor``.
    private(set) var buffer: [UInt8] = []
    /// Where full chunks go; `-1` keeps everything in ``buffer``.
    let descriptor: Int32
    /// The file name for error messages.
    let path: String
    private let chunkSize = 1 << 20

    init(descriptor: Int32 = -1, path: String = "") {
        self.descriptor = descriptor
        self.path = path
        buffer.reserveCapacity(descriptor >= 0 ? chunkSize + 4096 : 1 << 16)
    }

    /// Appends bytes that need no escaping (markup of our own).
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    /// Appends a string that needs no escaping (names from the model are escaped by ``attribute(_:)``).
    mutating func raw(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    /// Appends prepared bytes (markup of our own).
    mutating func raw(_ bytes: UnsafeBufferPointer<UInt8>) { buffer.append(contentsOf: bytes) }

    /// Appends a decimal integer without allocating.
    mutating func integer(_ value: Int64) {
        if value == 0 { buffer.append(UInt8(ascii: "0")); return }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes hold the 20 digits of UInt64.max
        var count = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            while magnitude > 0 {
                scratch[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            if value < 0 { buffer.append(UInt8(ascii: "-")) }
            buffer.append(contentsOf: scratch[(24 - count)...])
        }
    }

    /// Appends a double as `Double.description` spells it, for values that description writes
    /// positionally, without building a `String` when the value has at most two decimals; `false`
    /// when the caller must format it (other values, zero, huge and tiny magnitudes).
    ///
    /// Why the digits are the same: `Double(n) / 100` is the double nearest to n/100, exactly what
    /// parsing the two-decimal text gives, and below 10^12 no two such texts share a double, so the
    /// text (trailing zeros dropped, one kept) is the shortest that reads back, as description's is.
    mutating func hundredths(_ value: Double) -> Bool {
        let magnitude = abs(value)
        guard magnitude >= 0.01, magnitude < 1e12 else { return false }
        let scaled = (value * 100).rounded()
        guard Double(scaled) / 100 == value, let n = Int64(exactly: scaled) else { return false }
        if n < 0 { buffer.append(UInt8(ascii: "-")) }
        integer(Int64(n.magnitude / 100))
        buffer.append(UInt8(ascii: "."))
        let cents = Int(n.magnitude % 100)
        buffer.append(UInt8(ascii: "0") + UInt8(cents / 10))
        if cents % 10 != 0 { buffer.append(UInt8(ascii: "0") + UInt8(cents % 10)) }
        return true
    }

    /// Appends `text` escaped for element content.
    mutating func text(_ text: String) { escape(text, inAttribute: false) }

    /// Appends `text` escaped for a double-quoted attribute value.
    mutating func attribute(_ text: String) { escape(text, inAttribute: true) }

    /// Appends bytes that are already plain ASCII with nothing to escape (base64, numbers).
    mutating func ascii(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    /// Appends `data` as base64.
    mutating func base64(_ data: Data) {
        buffer.append(contentsOf: data.base64EncodedData())
    }

    private mutating func escape(_ text: String, inAttribute: Bool) {
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in bytes.indices {
                let byte = bytes[index]
                let replacement: StaticString
                switch byte {
                case UInt8(ascii: "&"): replacement = "&amp;"
                case UInt8(ascii: "<"): replacement = "&lt;"
                case UInt8(ascii: ">"): replacement = "&gt;"
                case 0x0D: replacement = "&#13;"
                case UInt8(ascii: "\"") where inAttribute: replacement = "&quot;"
                case 0x0A where inAttribute: replacement = "&#10;"
                case 0x09 where inAttribute: replacement = "&#9;"
                default: continue
                }
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                replacement.withUTF8Buffer { buffer.append(contentsOf: $0) }
                start = index + 1
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
    }

    /// Writes the buffer out when it holds a full chunk.
    mutating func flushIfFull() throws {
        if descriptor >= 0, buffer.count >= chunkSize { try flush() }
    }

    /// Writes everything buffered to ``descriptor``.
    mutating func flush() throws {
        guard descriptor >= 0, !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)  // non-empty buffer
                if written < 0 {
                    if errno == EINTR { continue }
                    throw XMLStoreFile.ioError("could not write", path: path, errno: errno)
                }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Whether XML 1.0 can carry every character of `text` (see the type's documentation).
    static func isRepresentable(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte < 0x20, byte != 0x09, byte != 0x0A, byte != 0x0D { return false }
                // U+FFFE and U+FFFF are EF BF BE and EF BF BF in UTF-8.
                if byte == 0xEF, index + 2 < bytes.count, bytes[index + 1] == 0xBF, bytes[index + 2] >= 0xBE {
                    return false
                }
                index += 1
            }
            return true
        }
    }
}
