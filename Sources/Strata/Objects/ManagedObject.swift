import Foundation

/// An object of an entity, registered in a context: uniqued per object ID, faulting, change-tracked.
open class ManagedObject {
    public required init() {}
}
