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
    /// The bytes, in memory of our own: appending a few bytes is a bounds check and a copy, with
    /// none of `Array`'s per-call bookkeeping (a save appends tens of millions of small pieces).
    ///
    /// Lifetime: owned by one writer; a copied writer shares it, so writers are passed `inout` and
    /// never copied while in use.
    private final class Storage {
        var base: UnsafeMutableRawPointer
        var capacity: Int
        var count = 0
        /// Bytes already handed to the descriptor.
        var written = 0

        init(capacity: Int) {
            self.capacity = max(capacity, 64)
            base = .allocate(byteCount: self.capacity, alignment: 16)
        }

        deinit { base.deallocate() }

        func grow(toHold needed: Int) {
            let bigger = max(capacity * 2, needed)
            let fresh = UnsafeMutableRawPointer.allocate(byteCount: bigger, alignment: 16)
            fresh.copyMemory(from: base, byteCount: count)
            base.deallocate()
            base = fresh
            capacity = bigger
        }
    }

    private let storage: Storage
    /// Where full chunks go; `-1` keeps everything in memory.
    let descriptor: Int32
    /// The file name for error messages.
    let path: String
    private let chunkSize = 1 << 20

    init(descriptor: Int32 = -1, path: String = "", capacity: Int? = nil) {
        self.descriptor = descriptor
        self.path = path
        storage = Storage(capacity: capacity ?? (descriptor >= 0 ? chunkSize + 4096 : 1 << 12))
    }

    /// The bytes not yet written to ``descriptor``, copied out.
    var buffer: [UInt8] { Array(UnsafeRawBufferPointer(start: storage.base, count: storage.count)) }

    /// The number of bytes not yet written to ``descriptor``.
    var count: Int { storage.count }

    /// Every byte this writer has taken so far, written or buffered: the offset in the file of
    /// the next byte appended.
    var position: Int { storage.written + storage.count }

    @inline(__always)
    private mutating func append(_ source: UnsafeRawPointer, count: Int) {
        let storage = storage
        if storage.capacity - storage.count < count { storage.grow(toHold: storage.count + count) }
        (storage.base + storage.count).copyMemory(from: source, byteCount: count)
        storage.count += count
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        let storage = storage
        if storage.capacity == storage.count { storage.grow(toHold: storage.count + 1) }
        storage.base.storeBytes(of: byte, toByteOffset: storage.count, as: UInt8.self)
        storage.count += 1
    }

    @inline(__always)
    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let base = bytes.baseAddress { append(base, count: bytes.count) }
    }

    /// Appends bytes that need no escaping (markup of our own).
    mutating func raw(_ text: StaticString) {
        append(text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// Appends a string that needs no escaping (names from the model are escaped by ``attribute(_:)``).
    mutating func raw(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { append($0) } }

    /// Appends prepared bytes (markup of our own).
    mutating func raw(_ bytes: UnsafeBufferPointer<UInt8>) { append(bytes) }

    /// Appends bytes as they are (the bytes of a file being replaced): straight to
    /// ``descriptor`` when there is one.
    mutating func copy(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        guard descriptor >= 0 else { return append(base, count: bytes.count) }
        try flush()
        try write(base, count: bytes.count)
    }

    /// Appends everything another writer holds in memory: straight to ``descriptor`` (after what
    /// this writer holds) when there is one, so large pieces are not copied twice.
    mutating func append(contentsOf other: XMLByteWriter) throws {
        guard descriptor >= 0 else { return append(UnsafeRawPointer(other.storage.base), count: other.storage.count) }
        try flush()
        try write(UnsafeRawPointer(other.storage.base), count: other.storage.count)
    }

    /// Appends a decimal integer without allocating.
    mutating func integer(_ value: Int64) {
        if value == 0 {
            append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes hold the 20 digits of UInt64.max
        var count = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            while magnitude > 0 {
                scratch[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            if value < 0 { append(UInt8(ascii: "-")) }
            // scratch holds 24 bytes, count of them digits at its end.
            append(scratch.baseAddress! + (24 - count), count: count)
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
        if n < 0 { append(UInt8(ascii: "-")) }
        integer(Int64(n.magnitude / 100))
        append(UInt8(ascii: "."))
        let cents = Int(n.magnitude % 100)
        append(UInt8(ascii: "0") + UInt8(cents / 10))
        if cents % 10 != 0 { append(UInt8(ascii: "0") + UInt8(cents % 10)) }
        return true
    }

    /// Appends `text` escaped for element content.
    mutating func text(_ text: String) { escape(text, inAttribute: false) }

    /// Appends `prefix`, then `text` escaped for element content, when XML can carry every
    /// character of `text` (``isRepresentable(_:)``), checking and escaping in one pass; otherwise
    /// appends nothing and returns `false`.
    mutating func representableText(_ text: String, after prefix: StaticString) -> Bool {
        let mark = storage.count
        raw(prefix)
        var text = text
        let ok = text.withUTF8 { bytes -> Bool in
            var start = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                let replacement: StaticString
                switch byte {
                case UInt8(ascii: "&"): replacement = "&amp;"
                case UInt8(ascii: "<"): replacement = "&lt;"
                case UInt8(ascii: ">"): replacement = "&gt;"
                case 0x0D: replacement = "&#13;"
                case 0x09, 0x0A:
                    index += 1
                    continue
                case 0..<0x20: return false
                case 0xEF where index + 2 < bytes.count && bytes[index + 1] == 0xBF && bytes[index + 2] >= 0xBE:
                    return false  // U+FFFE or U+FFFF
                default:
                    index += 1
                    continue
                }
                append(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                raw(replacement)
                index += 1
                start = index
            }
            append(UnsafeBufferPointer(rebasing: bytes[start...]))
            return true
        }
        if !ok { storage.count = mark }
        return ok
    }

    /// Appends `text` escaped for a double-quoted attribute value.
    mutating func attribute(_ text: String) { escape(text, inAttribute: true) }

    /// Appends bytes that are already plain ASCII with nothing to escape (base64, numbers).
    mutating func ascii(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Appends `data` as base64.
    mutating func base64(_ data: Data) {
        data.base64EncodedData().withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { append(base, count: bytes.count) }
        }
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
                append(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                raw(replacement)
                start = index + 1
            }
            append(UnsafeBufferPointer(rebasing: bytes[start...]))
        }
    }

    /// Writes the buffer out when it holds a full chunk.
    mutating func flushIfFull() throws {
        if descriptor >= 0, storage.count >= chunkSize { try flush() }
    }

    /// Writes everything buffered to ``descriptor``.
    mutating func flush() throws {
        guard descriptor >= 0, storage.count > 0 else { return }
        try write(UnsafeRawPointer(storage.base), count: storage.count)
        storage.count = 0
    }

    /// Writes `count` bytes at `bytes` to ``descriptor``, retrying short writes and interruptions.
    private func write(_ bytes: UnsafeRawPointer, count: Int) throws {
        var offset = 0
        while offset < count {
            let written = Foundation.write(descriptor, bytes + offset, count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw XMLStoreFile.ioError("could not write", path: path, errno: errno)
            }
            offset += written
        }
        storage.written += count
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
