import Foundation

/// A typed attribute of a ``ManagedObject`` subclass, stored in the object's value buffer:
///
/// ```swift
/// final class Person: ManagedObject {
///     @ManagedAttribute("name") var name: String?
///     @ManagedAttribute("age") var age: Int16
/// }
/// ```
/// Reading and writing go through the same storage as ``ManagedObject/value(forKey:)``. A `nil`
/// stored value reads as `nil` for optionals and as zero or empty for scalars.
@propertyWrapper
public struct ManagedAttribute<Value: AttributeValueConvertible> {
    /// The attribute's name in the model.
    public let key: String

    /// Declares the attribute named `key`.
    public init(_ key: String) { self.key = key }

    @available(*, unavailable, message: "@ManagedAttribute is only for ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object, wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            let key = object[keyPath: storageKeyPath].key
            let slot = object.requireSlot(key)
            object.checkConfinement("value(forKey: \"\(key)\")")
            object.fireFault()
            guard !object.values.isEmpty else { return Value.valueForNil }
            return Value(storeValue: object.values[slot]) ?? Value.valueForNil
        }
        set {
            object.setValue(newValue.storeValue, forKey: object[keyPath: storageKeyPath].key)
        }
    }
}

/// A typed to-one relationship of a ``ManagedObject`` subclass; setting it updates the inverse.
///
/// ```swift
/// @ManagedToOne("department") var department: Department?
/// ```
@propertyWrapper
public struct ManagedToOne<Destination: ManagedObject> {
    /// The relationship's name in the model.
    public let key: String

    /// Declares the to-one relationship named `key`.
    public init(_ key: String) { self.key = key }

    @available(*, unavailable, message: "@ManagedToOne is only for ManagedObject subclasses")
    public var wrappedValue: Destination? {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object, wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Destination?>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Destination? {
        get { object.value(forKey: object[keyPath: storageKeyPath].key) as? Destination }
        set { object.setValue(newValue, forKey: object[keyPath: storageKeyPath].key) }
    }
}

/// A typed unordered to-many relationship of a ``ManagedObject`` subclass; changes update the
/// inverses.
///
/// ```swift
/// @ManagedToMany("employees") var employees: Set<Person>
/// ```
@propertyWrapper
public struct ManagedToMany<Destination: ManagedObject> {
    /// The relationship's name in the model.
    public let key: String

    /// Declares the to-many relationship named `key`.
    public init(_ key: String) { self.key = key }

    @available(*, unavailable, message: "@ManagedToMany is only for ManagedObject subclasses")
    public var wrappedValue: Set<Destination> {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object, wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Set<Destination>>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Set<Destination> {
        get { Set(object.objects(forKey: object[keyPath: storageKeyPath].key).compactMap { $0 as? Destination }) }
        set {
            object.setValue(
                Set<ManagedObject>(newValue.map { $0 as ManagedObject }), forKey: object[keyPath: storageKeyPath].key)
        }
    }
}

/// A typed ordered to-many relationship of a ``ManagedObject`` subclass; the array's order is
/// stored.
///
/// ```swift
/// @ManagedOrderedToMany("chapters") var chapters: [Chapter]
/// ```
@propertyWrapper
public struct ManagedOrderedToMany<Destination: ManagedObject> {
    /// The relationship's name in the model.
    public let key: String

    /// Declares the ordered to-many relationship named `key`.
    public init(_ key: String) { self.key = key }

    @available(*, unavailable, message: "@ManagedOrderedToMany is only for ManagedObject subclasses")
    public var wrappedValue: [Destination] {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object, wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, [Destination]>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> [Destination] {
        get { object.objects(forKey: object[keyPath: storageKeyPath].key).compactMap { $0 as? Destination } }
        set { object.setValue(newValue.map { $0 as ManagedObject }, forKey: object[keyPath: storageKeyPath].key) }
    }
}
