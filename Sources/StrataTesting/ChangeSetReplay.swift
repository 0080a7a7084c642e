import Strata

/// Hands fixed change sets to ``StoreDriver/apply(inParts:)`` one at a time, from the first again
/// whenever the driver starts over, and counts the starts.
///
/// Not thread-safe: one driver call uses it, on the caller's thread.
public final class ChangeSetReplay {
    private let parts: [ChangeBatch]
    private var position = 0
    /// How many times the driver asked for the first change set.
    public private(set) var starts = 0

    /// Replays `parts`, in order.
    public init(_ parts: [ChangeBatch]) { self.parts = parts }

    /// The `next` closure of ``StoreDriver/apply(inParts:)``.
    public func next(_ first: Bool) -> ChangeBatch? {
        if first {
            starts += 1
            position = 0
        }
        guard position < parts.count else { return nil }
        position += 1
        return parts[position - 1]
    }
}
