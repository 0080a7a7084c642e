import Strata

/// Ordered relationships a bulk writer states twice.
enum MemberOrders {
    /// The ordered to-many relationships of `entity` whose order a store may keep in the members'
    /// rows (SQLite's `Z_FOK_` column): those whose inverse is to-one, and those without an
    /// inverse. A member written after its owner has no row to take its place when the owner's
    /// row is written, so a writer that cannot order owners after members (`strata convert`,
    /// `strata import`) updates the owners once every row is there, restating these slots.
    static func restatedSlots(of entity: EntityDescription, model: ManagedObjectModel) -> [Int] {
        entity.properties.indices.filter { slot in
            guard let relationship = entity.properties[slot].relationship, relationship.isToMany,
                relationship.isOrdered, !relationship.isTransient
            else { return false }
            guard let inverse = relationship.inverseName else { return true }
            return model.entity(named: relationship.destinationEntityName)?.property(named: inverse)?.relationship?
                .isToMany == false
        }
    }
}
