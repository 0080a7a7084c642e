import Foundation
import Strata

/// A small model with composite attributes, for the conformance suite and tool tests: earthquakes
/// with a magnitude and a location (the location nesting a place), recorded by stations that have
/// a location too.
///
/// `Quake.depth` (an attribute) and `Quake.magnitude.depth` (an element) share a name, so stores
/// that name columns after elements must tell them apart.
public enum CompositeModel {
    /// The `Place` composite: a city and a country.
    public static let place = AttributeDescription.composite(
        "place", elements: [AttributeDescription("city", .string), AttributeDescription("country", .string)],
        compositeName: "Place")

    /// The `Location` composite: latitude, longitude and a nested place.
    public static let location = AttributeDescription.composite(
        "location",
        elements: [AttributeDescription("latitude", .double), AttributeDescription("longitude", .double), place],
        compositeName: "Location")

    /// The model.
    public static let model: ManagedObjectModel = {
        let quake = EntityDescription(
            "Quake",
            properties: [
                .attribute("code", .string, isOptional: false), .attribute("depth", .integer32),
                .composite(
                    "magnitude",
                    elements: [
                        AttributeDescription("richter", .double, isOptional: false),
                        AttributeDescription("depth", .float),
                    ], compositeName: "Magnitude"),
                .attribute(location), .toOne("station", "Station", inverse: "quakes"),
            ])
        let station = EntityDescription(
            "Station",
            properties: [
                .attribute("name", .string, isOptional: false), .attribute(location),
                .toMany("quakes", "Quake", inverse: "station"),
            ])
        // A fixed, valid model.
        return try! ManagedObjectModel(entities: [quake, station])
    }()

    /// The seeded quakes: code → (richter, magnitude depth, latitude, longitude, city, country, station).
    public static let quakes:
        [(
            code: String, richter: Double?, depth: Float?, latitude: Double?, longitude: Double?, city: String?,
            country: String?, station: String?
        )] = [
            ("a", 6.1, 10.5, 35.6, 139.7, "Tokyo", "JP", "North"),
            ("b", 4.2, 2, -12.0, -77.0, "Lima", "PE", "South"),
            ("c", 7.3, nil, 38.3, 142.4, nil, nil, "North"),
            ("d", nil, nil, nil, nil, nil, nil, nil),
            ("e", 4.5, 33, 0, 0, "lima", nil, nil),
        ]

    /// Inserts two stations and the ``quakes``, setting composites as dictionaries, and saves.
    public static func seed(_ context: ManagedObjectContext) throws {
        var stations: [String: ManagedObject] = [:]
        for (name, latitude, longitude, city) in [
            ("North", 10.0, 20.0, "Oslo" as String?), ("South", -33.0, 151.0, nil),
        ] {
            let station = try context.insertNewObject(forEntityName: "Station")
            try station.setConvertedValue(name, forKey: "name")
            var location: [String: Any] = ["latitude": latitude, "longitude": longitude]
            if let city { location["place"] = ["city": city] }
            try station.setConvertedValue(location, forKey: "location")
            stations[name] = station
        }
        for quake in quakes {
            let object = try context.insertNewObject(forEntityName: "Quake")
            try object.setConvertedValue(quake.code, forKey: "code")
            if quake.code == "a" { try object.setConvertedValue(10, forKey: "depth") }
            if let richter = quake.richter {
                try object.setConvertedValue(["richter": richter, "depth": quake.depth as Any?], forKey: "magnitude")
            }
            if let latitude = quake.latitude {
                let place: [String: Any?] = ["city": quake.city, "country": quake.country]
                try object.setConvertedValue(
                    ["latitude": latitude, "longitude": quake.longitude as Any?, "place": place], forKey: "location")
            }
            if let station = quake.station { object.setValue(stations[station], forKey: "station") }
        }
        try context.save()
    }
}
