/// What happens to a relationship's destinations when its source is deleted, with Core Data's
/// `NSDeleteRule` raw values.
public enum DeleteRule: Int, Sendable, Hashable, CaseIterable {
    /// Leave the destinations alone; their inverse keeps pointing at the deleted object.
    case noAction = 0
    /// Remove the deleted object from the destinations' inverse relationship.
    case nullify = 1
    /// Delete the destinations too.
    case cascade = 2
    /// Refuse to delete the source while it has destinations; the save fails.
    case deny = 3

    /// The name Xcode writes (`deletionRule="Cascade"`).
    public var xcodeName: String {
        switch self {
        case .noAction: "No Action"
        case .nullify: "Nullify"
        case .cascade: "Cascade"
        case .deny: "Deny"
        }
    }

    /// The rule Xcode names `name`, or `nil`.
    public init?(xcodeName name: String) {
        guard let match = Self.allCases.first(where: { $0.xcodeName == name }) else { return nil }
        self = match
    }
}
