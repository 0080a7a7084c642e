import Foundation

/// What happened to an object or section (Core Data's `NSFetchedResultsChangeType`, same raw values).
public enum FetchedResultsChangeType: UInt, Sendable, Hashable {
    /// Inserted: at the new index path.
    case insert = 1
    /// Deleted: from the old index path.
    case delete = 2
    /// Moved from the old index path to the new one (its sort values changed).
    case move = 3
    /// Changed in place: its values changed, its position did not (both index paths given).
    case update = 4
}

/// One object's change in an update of a ``FetchedResultsController``, as IDs.
///
/// `indexPath` is the position before the update (deletes, moves, updates), `newIndexPath` the
/// position after it (inserts, moves, updates), as `UITableView`'s batch updates read them.
public struct FetchedResultsObjectChange: Sendable, Hashable {
    /// What happened.
    public var type: FetchedResultsChangeType
    /// The object's ID (after the update: a saved insert has its permanent ID).
    public var objectID: ManagedObjectID
    /// The position before the update; `nil` for an insert.
    public var indexPath: IndexPath?
    /// The position after the update; `nil` for a delete.
    public var newIndexPath: IndexPath?

    /// Creates a change.
    public init(
        type: FetchedResultsChangeType, objectID: ManagedObjectID, indexPath: IndexPath?, newIndexPath: IndexPath?
    ) {
        self.type = type
        self.objectID = objectID
        self.indexPath = indexPath
        self.newIndexPath = newIndexPath
    }
}

/// One section's change: inserted (index after the update) or deleted (index before it).
public struct FetchedResultsSectionChange: Sendable, Hashable {
    /// `.insert` or `.delete`.
    public var type: FetchedResultsChangeType
    /// The section's name.
    public var name: String
    /// Its index: after the update for an insert, before it for a delete.
    public var index: Int

    /// Creates a change.
    public init(type: FetchedResultsChangeType, name: String, index: Int) {
        self.type = type
        self.name = name
        self.index = index
    }
}

/// Everything one update of a ``FetchedResultsController`` changed, as values that may cross
/// threads: the element of ``FetchedResultsController/updates()``.
public struct FetchedResultsUpdate: Sendable, Hashable {
    /// Sections deleted (descending old indexes) then inserted (ascending new indexes).
    public var sectionChanges: [FetchedResultsSectionChange]
    /// Object changes: deletes, inserts, moves, updates.
    public var objectChanges: [FetchedResultsObjectChange]
    /// The change of the flat list of object IDs (all sections in order), as Swift's
    /// `CollectionDifference` (Core Data's `didChangeContentWith difference:`); moves are a
    /// removal and an insertion associated with each other; updates in place do not appear.
    public var difference: CollectionDifference<ManagedObjectID>
}

/// The controller's content as IDs: sections by name, each with its objects' IDs in order (Core
/// Data's diffable data source snapshot of `didChangeContentWith snapshot:`).
public struct FetchedResultsSnapshot: Sendable, Hashable {
    /// Section names, in order.
    public var sectionIdentifiers: [String]
    /// Each section's object IDs, in order.
    public var itemIdentifiersBySection: [[ManagedObjectID]]

    /// Creates a snapshot.
    public init(sectionIdentifiers: [String], itemIdentifiersBySection: [[ManagedObjectID]]) {
        self.sectionIdentifiers = sectionIdentifiers
        self.itemIdentifiersBySection = itemIdentifiersBySection
    }

    /// Every object ID, section after section.
    public var itemIdentifiers: [ManagedObjectID] { itemIdentifiersBySection.flatMap { $0 } }
    /// The number of sections.
    public var numberOfSections: Int { sectionIdentifiers.count }
    /// The number of objects.
    public var numberOfItems: Int { itemIdentifiersBySection.reduce(0) { $0 + $1.count } }

    /// The object IDs of the section named `identifier` (empty when there is none).
    public func itemIdentifiers(inSection identifier: String) -> [ManagedObjectID] {
        sectionIdentifiers.firstIndex(of: identifier).map { itemIdentifiersBySection[$0] } ?? []
    }
}

/// The delegate of a ``FetchedResultsController`` (Core Data's `NSFetchedResultsControllerDelegate`).
///
/// Every method has a default that does nothing, so implement the ones you need. After each
/// update the controller calls, in order: ``controllerWillChangeContent(_:)``, the section
/// changes, the object changes, ``controllerDidChangeContent(_:)``, then
/// ``controller(_:didChangeContentWith:)-(_,CollectionDifference<ManagedObjectID>)`` and, when
/// ``wantsSnapshots`` is true, the snapshot method. Calls come on the context's executor.
public protocol FetchedResultsControllerDelegate: AnyObject {
    /// An update begins.
    func controllerWillChangeContent(_ controller: FetchedResultsController)
    /// An object was inserted, deleted, moved or updated (see ``FetchedResultsObjectChange``).
    func controller(
        _ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// A section was inserted (its new index) or deleted (its old index).
    func controller(
        _ controller: FetchedResultsController, didChange section: FetchedResultsSection,
        atSectionIndex sectionIndex: Int,
        for type: FetchedResultsChangeType)
    /// An update ended.
    func controllerDidChangeContent(_ controller: FetchedResultsController)
    /// An update as the difference of the flat lists of object IDs before and after it.
    func controller(
        _ controller: FetchedResultsController, didChangeContentWith difference: CollectionDifference<ManagedObjectID>)
    /// An update as the snapshot after it (only when ``wantsSnapshots`` is true: building one costs O(n)).
    func controller(_ controller: FetchedResultsController, didChangeContentWith snapshot: FetchedResultsSnapshot)
    /// The index title of a section; `nil` for the default (the name's first letter, capitalized).
    func controller(_ controller: FetchedResultsController, sectionIndexTitleForSectionName sectionName: String)
        -> String?
    /// Whether the controller builds a snapshot after each update for
    /// ``controller(_:didChangeContentWith:)-(_,FetchedResultsSnapshot)``. `false` by default.
    var wantsSnapshots: Bool { get }
}

extension FetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: FetchedResultsController) {}
    public func controller(
        _ controller: FetchedResultsController, didChange object: ManagedObject, at indexPath: IndexPath?,
        for type: FetchedResultsChangeType, newIndexPath: IndexPath?
    ) {}
    public func controller(
        _ controller: FetchedResultsController, didChange section: FetchedResultsSection,
        atSectionIndex sectionIndex: Int,
        for type: FetchedResultsChangeType
    ) {}
    public func controllerDidChangeContent(_ controller: FetchedResultsController) {}
    public func controller(
        _ controller: FetchedResultsController, didChangeContentWith difference: CollectionDifference<ManagedObjectID>
    ) {}
    public func controller(
        _ controller: FetchedResultsController, didChangeContentWith snapshot: FetchedResultsSnapshot
    ) {}
    public func controller(_ controller: FetchedResultsController, sectionIndexTitleForSectionName sectionName: String)
        -> String?
    { nil }
    public var wantsSnapshots: Bool { false }
}

/// One section of a ``FetchedResultsController`` (Core Data's `NSFetchedResultsSectionInfo`): a
/// live view, so ``numberOfObjects`` and ``objects`` follow later updates.
///
/// Not `Sendable`: use it on the controller's context's executor.
public struct FetchedResultsSection: CustomStringConvertible {
    let storage: SectionStorage

    /// The section's name: the section key path's value as text (`""` for `nil` and for the one
    /// section of a controller without a section key path).
    public var name: String { storage.name }
    /// The section's index title.
    public var indexTitle: String? { storage.indexTitle }
    /// The number of objects in the section.
    public var numberOfObjects: Int { storage.entries.count }
    /// The section's objects, in order.
    ///
    /// - Complexity: O(number of objects).
    public var objects: [ManagedObject] { storage.entries.elements.map(\.object) }

    public var description: String { "section '\(name)' (\(numberOfObjects) objects)" }
}

/// A section's storage, shared by the controller and the ``FetchedResultsSection`` views of it.
final class SectionStorage {
    let name: String
    let indexTitle: String?
    var entries: OrderedEntries<ResultEntry>

    init(name: String, indexTitle: String?, entries: OrderedEntries<ResultEntry>) {
        self.name = name
        self.indexTitle = indexTitle
        self.entries = entries
    }
}

/// One object of a controller with the sort values it was placed by.
struct ResultEntry {
    let object: ManagedObject
    /// The sort keys' values, read when the entry was made.
    var key: [StoreValue]
    /// The object's row ID when placed (ties are broken by it, as fetches break them), then the
    /// position of its store in the coordinator.
    var tie: RowID
    var store: Int
}

#if !canImport(UIKit) && !canImport(AppKit)
    // Core Data code reads `indexPath.section` and `indexPath.row` (or `.item`), which UIKit and AppKit
    // add to IndexPath. Where neither exists (Linux), Strata adds the same members so that code ports
    // unchanged; on Apple platforms the system's own are used and these are not compiled, so nothing
    // clashes.
    extension IndexPath {
        /// Creates an index path of a row in a section (UIKit's initializer).
        public init(row: Int, section: Int) { self.init(indexes: [section, row]) }
        /// Creates an index path of an item in a section (AppKit's initializer).
        public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
        /// The section (the first index).
        public var section: Int {
            get { self[0] }
            set { self[0] = newValue }
        }
        /// The row in the section (the second index).
        public var row: Int {
            get { self[1] }
            set { self[1] = newValue }
        }
        /// The item in the section (the second index).
        public var item: Int {
            get { self[1] }
            set { self[1] = newValue }
        }
    }
#endif
