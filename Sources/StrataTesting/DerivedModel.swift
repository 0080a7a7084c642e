import Foundation
import Strata

/// A model read from Xcode's XML with fetched properties and derived attributes, for the
/// conformance suite: departments with employees.
///
/// - `Department.managers` fetches the department's employees whose title is the fetched
///   property's `userInfo` `title` (`$FETCH_SOURCE`, `$FETCHED_PROPERTY`);
///   `Department.namesakes` fetches employees whose surname is the department's name, ignoring
///   case (`$FETCH_SOURCE.name`).
/// - `Department.headcount` (`employees.@count`), `payroll` (`employees.@sum.salary`),
///   `searchName` (`canonical:(name)`), `stamp` (`now()`, a date) and `Employee.departmentName`
///   (`department.name`) are derived.
public enum DerivedModel {
    /// The model's file, as Xcode writes it.
    public static let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Department" representedClassName="Department" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <attribute name="headcount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="employees.@count" usesScalarValueType="YES"/>
                <attribute name="payroll" optional="YES" attributeType="Double" derived="YES" derivationExpression="employees.@sum.salary" usesScalarValueType="YES"/>
                <attribute name="searchName" optional="YES" attributeType="String" derived="YES" derivationExpression="canonical:(name)"/>
                <attribute name="stamp" optional="YES" attributeType="Date" derived="YES" derivationExpression="now()"/>
                <relationship name="employees" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Employee" inverseName="department" inverseEntity="Employee"/>
                <fetchedProperty name="managers" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Employee" predicateString="department == $FETCH_SOURCE AND title == $FETCHED_PROPERTY.userInfo.title"/>
                    <userInfo>
                        <entry key="title" value="Manager"/>
                    </userInfo>
                </fetchedProperty>
                <fetchedProperty name="namesakes" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Employee" predicateString="surname ==[c] $FETCH_SOURCE.name"/>
                </fetchedProperty>
            </entity>
            <entity name="Employee" representedClassName="Employee" syncable="YES">
                <attribute name="surname" attributeType="String"/>
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="salary" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
                <attribute name="departmentName" optional="YES" attributeType="String" derived="YES" derivationExpression="department.name"/>
                <relationship name="department" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Department" inverseName="employees" inverseEntity="Department"/>
            </entity>
        </model>
        """

    /// The model.
    public static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(xmlData: Data(xml.utf8), fileName: "DerivedModel.xcdatamodel")
        } catch {
            // The text above is fixed; a failure here is a bug in the loader that every test using it reports.
            fatalError("DerivedModel does not load: \(error)")
        }
    }()

    /// Inserts a department with employees (surname, title, salary).
    @discardableResult
    public static func department(
        _ name: String, employees: [(String, String?, Double?)], in context: ManagedObjectContext
    ) throws -> ManagedObject {
        let department = try context.insertNewObject(forEntityName: "Department")
        try department.setConvertedValue(name, forKey: "name")
        for (surname, title, salary) in employees {
            let employee = try context.insertNewObject(forEntityName: "Employee")
            try employee.setConvertedValue(surname, forKey: "surname")
            try employee.setConvertedValue(title, forKey: "title")
            try employee.setConvertedValue(salary, forKey: "salary")
            employee.setValue(department, forKey: "department")
        }
        return department
    }
}
