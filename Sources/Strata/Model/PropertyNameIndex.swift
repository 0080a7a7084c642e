/// The slots of an entity's properties by name (``EntityDescription/index(ofProperty:)``): every
/// name in slot order, searched by comparing words for entities of a few properties, and a table
/// for the rest.
struct PropertyNameIndex: Sendable {
    /// The most properties an entity may have for a lookup to compare names before hashing the
    /// key: below it a search of the entries is faster than a hash.
    static let scanLimit = 12

    /// A property's name and ``hint(_:)``, at its slot.
    struct Entry: Sendable {
        let name: String
        let hint: UInt64
    }

    /// Every property's name, in slot order.
    let entries: [Entry]
    /// Name → slot. The table hashes canonically, so any spelling of a name finds its slot.
    let slots: [String: Int]

    /// An index of `names` (in slot order) whose table `slots` maps each to its position.
    init(names: [String], slots: [String: Int]) {
        self.entries = names.map { Entry(name: $0, hint: Self.hint($0)) }
        self.slots = slots
    }

    /// The slot of the property named `name`, or `nil`.
    ///
    /// - Complexity: O(1) on average.
    func slot(of name: String) -> Int? {
        // A few names are found faster by comparing them than by hashing the key.
        if !entries.isEmpty, entries.count <= Self.scanLimit {
            let bits = Self.bits(name)
            for slot in entries.indices where Self.bits(entries[slot].name) == bits { return slot }
            let hint = Self.hint(name)
            for slot in entries.indices where entries[slot].hint == hint && entries[slot].name == name {
                return slot
            }
            // Swift strings that are equal may differ in bytes (a name spelled in another Unicode
            // normalization), and then in their hint: the table, which hashes canonically, decides.
        }
        return slots[name]
    }

    /// The slot of the property whose name matches `name` ignoring case: the property of exactly
    /// that name if there is one, else the first in slot order whose lower-cased name is
    /// `name`'s (XML stores write names lower-cased).
    ///
    /// - Complexity: O(*n*) when no name matches exactly.
    func slot(ignoringCase name: String) -> Int? {
        if let slot = slot(of: name) { return slot }
        let lowercased = name.lowercased()
        return entries.firstIndex { $0.name.lowercased() == lowercased }
    }

    /// A cheap summary of a name: its UTF-8 length and first byte (equal bytes have equal hints;
    /// a short string's length and bytes are read without touching memory elsewhere).
    static func hint(_ name: String) -> UInt64 {
        let utf8 = name.utf8
        return UInt64(utf8.count) << 8 | UInt64(utf8.first ?? 0)
    }

    /// The two words a `String` is made of. Equal words are the same string: the same storage,
    /// or the same short string held in the words themselves (15 UTF-8 bytes or fewer, which
    /// property names written in a program almost always are, and whose form is canonical). So a
    /// match needs no string comparison and reads no memory; a mismatch proves nothing and the
    /// lookup goes on comparing names.
    struct Bits: Equatable {
        var low: UInt64
        var high: UInt64
    }

    static func bits(_ name: String) -> Bits {
        // A String is two words on every platform Strata builds for (checked by the size test in
        // PropertyLookupTests); the words are only compared, never turned back into a string.
        let words = unsafeBitCast(name, to: (UInt64, UInt64).self)
        return Bits(low: words.0, high: words.1)
    }
}
