import Foundation

/// Reads a JSON interchange document (docs/formats/json.md) as it streams by, one element of its
/// `objects` array at a time, so a file of any size is never held whole: memory is one object's
/// JSON and the reader's buffer.
///
/// The document's top-level members are handed over whole, except the first `objects` member
/// when it is an array: that one is handed over element by element. Syntax is checked as strictly as ``JSONParser`` does, with the same
/// messages, lines and columns counted from the start of the file. A document that is not a JSON
/// object at the top is read whole and handed over as one value.
struct InterchangeStreamReader {
    /// What the reader finds, in file order.
    enum Event {
        /// A top-level member other than the streamed `objects` array.
        case member(String, JSONValue)
        /// The streamed `objects` array starts.
        case objectsStart
        /// One element of the `objects` array, with its index.
        case object(Int, JSONValue)
        /// The top-level value is not an object: here it is, whole.
        case document(JSONValue)
    }

    private let nextChunk: () throws -> [UInt8]?
    private var buffer: [UInt8] = []
    /// The next unread byte in `buffer`.
    private var position = 0
    private var atEnd = false
    /// Line and column of `buffer[position]` in the file.
    private var line = 1
    private var column = 1

    /// A reader of the chunks `nextChunk` returns (`nil` at the end).
    init(nextChunk: @escaping () throws -> [UInt8]?) { self.nextChunk = nextChunk }

    /// A reader of `data`, in 1 MiB chunks.
    init(data: Data) {
        var offset = 0
        self.init {
            guard offset < data.count else { return nil }
            let end = min(offset + (1 << 20), data.count)
            defer { offset = end }
            return [UInt8](data[data.startIndex + offset..<data.startIndex + end])
        }
    }

    /// A reader of the open file `handle`, in 1 MiB reads.
    init(handle: FileHandle) {
        self.init {
            guard let data = try handle.read(upToCount: 1 << 20), !data.isEmpty else { return nil }
            return [UInt8](data)
        }
    }

    /// Reads the whole document, calling `body` for each event.
    ///
    /// - Throws: ``JSONSyntaxError``; whatever `body` or the chunk source throws.
    mutating func read(_ body: (Event) throws -> Void) throws {
        if try peek() == 0xEF, try available(3), buffer[position + 1] == 0xBB, buffer[position + 2] == 0xBF {
            advance(3)  // counted as one column, as JSONParser counts it
        }
        try skipSpace()
        guard try peek() == UInt8(ascii: "{") else {
            let value = try readValue()
            try skipSpace()
            if try peek() != nil { throw error("unexpected text after the document") }
            try body(.document(value))
            return
        }
        advance(1)
        var sawObjects = false
        try skipSpace()
        if try peek() == UInt8(ascii: "}") {
            advance(1)
        } else {
            while true {
                try skipSpace()
                guard try peek() == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                guard case .string(let key) = try readValue() else { throw error("expected a member name in quotes") }
                try skipSpace()
                guard try peek() == UInt8(ascii: ":") else { throw error("expected ':' after member name") }
                advance(1)
                try skipSpace()
                if key == "objects", !sawObjects, try peek() == UInt8(ascii: "[") {
                    sawObjects = true
                    try body(.objectsStart)
                    try readObjects(body)
                } else {
                    if key == "objects" { sawObjects = true }
                    try body(.member(key, try readValue()))
                }
                try skipSpace()
                guard let byte = try peek() else { throw error("unexpected end inside an object") }
                advance(1)
                if byte == UInt8(ascii: ",") { continue }
                if byte == UInt8(ascii: "}") { break }
                retreat()
                throw error("expected ',' or '}' in an object")
            }
        }
        try skipSpace()
        if try peek() != nil { throw error("unexpected text after the document") }
    }

    /// Where ``nextObject()`` has got to.
    private var pulling = Pull.start
    private enum Pull {
        case start
        case inObjects(Int)
        case done
    }

    /// The next element of the document's first `objects` member, with its index, or `nil` after
    /// the last: a document read again after ``read(_:)`` checked it. Members before `objects`
    /// are skipped and nothing after the array is read.
    ///
    /// - Throws: ``JSONSyntaxError`` (the file changed since it was checked); what the chunk
    ///   source throws.
    mutating func nextObject() throws -> (index: Int, value: JSONValue)? {
        if case .start = pulling { try findObjects() }
        guard case .inObjects(let index) = pulling else { return nil }
        try skipSpace()
        let value = try readValue()
        try skipSpace()
        guard let byte = try peek() else { throw error("unexpected end inside an array") }
        advance(1)
        if byte == UInt8(ascii: ",") {
            pulling = .inObjects(index + 1)
        } else if byte == UInt8(ascii: "]") {
            pulling = .done
        } else {
            retreat()
            throw error("expected ',' or ']' in an array")
        }
        return (index, value)
    }

    /// Reads up to the first element of the `objects` array (``nextObject()``).
    private mutating func findObjects() throws {
        pulling = .done
        if try peek() == 0xEF, try available(3), buffer[position + 1] == 0xBB, buffer[position + 2] == 0xBF {
            advance(3)
        }
        try skipSpace()
        guard try peek() == UInt8(ascii: "{") else { throw error("expected an object at the top") }
        advance(1)
        while true {
            try skipSpace()
            guard try peek() == UInt8(ascii: "\""), case .string(let key) = try readValue() else {
                throw error("expected a member name in quotes")
            }
            try skipSpace()
            guard try peek() == UInt8(ascii: ":") else { throw error("expected ':' after member name") }
            advance(1)
            try skipSpace()
            if key == "objects" {
                guard try peek() == UInt8(ascii: "[") else { return }
                advance(1)
                try skipSpace()
                if try peek() == UInt8(ascii: "]") { return }
                pulling = .inObjects(0)
                return
            }
            _ = try readValue()
            try skipSpace()
            guard try peek() == UInt8(ascii: ",") else { return }
            advance(1)
        }
    }

    private mutating func readObjects(_ body: (Event) throws -> Void) throws {
        advance(1)
        try skipSpace()
        if try peek() == UInt8(ascii: "]") {
            advance(1)
            return
        }
        var index = 0
        while true {
            try skipSpace()
            try body(.object(index, try readValue()))
            index += 1
            try skipSpace()
            guard let byte = try peek() else { throw error("unexpected end inside an array") }
            advance(1)
            if byte == UInt8(ascii: ",") { continue }
            if byte == UInt8(ascii: "]") { return }
            retreat()
            throw error("expected ',' or ']' in an array")
        }
    }

    /// Reads the value starting at the current byte: finds where it ends (strings and nesting
    /// tracked), then parses those bytes with ``JSONParser``.
    private mutating func readValue() throws -> JSONValue {
        let end = try valueEnd()
        let bytes = Array(buffer[position..<end])
        do {
            let value = try JSONParser.parseValue(bytes)
            advance(end - position)
            return value
        } catch var syntax as JSONSyntaxError {
            if syntax.line == 1 { syntax.column += column - 1 }
            syntax.line += line - 1
            throw syntax
        }
    }

    /// The index in `buffer` just past the value starting at `position`, so that the parser
    /// sees what it would have seen in the whole document: a string, object or array up to its
    /// closing byte (strings and nesting tracked), a literal's letters, a number's characters.
    /// At the end of the file, the end of the file (the parser then says what is missing).
    private mutating func valueEnd() throws -> Int {
        guard let first = try peek() else { return position }
        switch first {
        case UInt8(ascii: "t"), UInt8(ascii: "n"), UInt8(ascii: "f"):
            let length = first == UInt8(ascii: "f") ? 5 : 4
            _ = try available(length)
            return min(position + length, buffer.count)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try scan { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                    UInt8(ascii: "e"), UInt8(ascii: "E"):
                    false
                default: true
                }
            } ?? buffer.count
        case UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var inString = false
            var escaped = false
            let closing = try scan { byte in
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                        return depth == 0
                    }
                    return false
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    return depth == 0
                default: break
                }
                return false
            }
            return closing.map { $0 + 1 } ?? buffer.count
        default: return position + 1  // the parser names the unexpected character
        }
    }

    /// The index of the first byte from `position` on for which `stop` returns `true`, reading
    /// more as needed; `nil` when the file ends first.
    private mutating func scan(_ stop: (UInt8) -> Bool) throws -> Int? {
        var offset = 0
        while true {
            if position + offset == buffer.count {
                guard try fill() else { return nil }
                continue
            }
            if stop(buffer[position + offset]) { return position + offset }
            offset += 1
        }
    }

    private func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(line: line, column: column, message: message)
    }

    /// The byte at `position`, reading more when needed; `nil` at the end of the file.
    private mutating func peek() throws -> UInt8? {
        if position == buffer.count, !(try fill()) { return nil }
        return buffer[position]
    }

    /// Whether `count` bytes from `position` are in the buffer (reading more when needed).
    private mutating func available(_ count: Int) throws -> Bool {
        while buffer.count - position < count {
            guard try fill() else { return false }
        }
        return true
    }

    private mutating func skipSpace() throws {
        while let byte = try peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { advance(1) }
    }

    /// Moves past `count` bytes, counting lines and columns as ``JSONParser`` does.
    private mutating func advance(_ count: Int) {
        for byte in buffer[position..<position + count] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        position += count
    }

    /// Steps back over one ASCII byte that is not a line feed (for an error's position).
    private mutating func retreat() {
        position -= 1
        column -= 1
    }

    /// Reads the next chunk, first dropping what was read when that is most of the buffer.
    private mutating func fill() throws -> Bool {
        guard !atEnd else { return false }
        guard let chunk = try nextChunk(), !chunk.isEmpty else {
            atEnd = true
            return false
        }
        if position > 0, position >= buffer.count / 2 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: chunk)
        return true
    }
}
