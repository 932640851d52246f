import Foundation
import ServerSupport
import Yams

/// What the reference upstream knows: requestors, MVPDs and lifetimes. Read from the YAML file
/// of `samlgate upstream --config`; without one, ``standard`` — one requestor `REF` with an MVPD
/// for each cookbook path (partner SSO, picker only, no SSO at all).
package struct ReferenceConfiguration: Codable, Sendable {
    package var requestors: [ReferenceRequestor]
    package var mvpds: [ReferenceMVPD]
    /// Lifetime of authentication tokens and profiles, seconds.
    package var authenticationTTL: Double = 86_400
    /// Lifetime of v2 access tokens, seconds.
    package var accessTokenTTL: Double = 3_600
    /// Lifetime of registration codes and basic-authentication sessions, seconds.
    package var registrationCodeTTL: Double = 1_800
    /// Lifetime of authorizations and media tokens, seconds.
    package var authorizationTTL: Double = 600
    /// Access tokens accepted without client registration (for curl and scripted tests); the
    /// tokens `/o/client/token` issues are always accepted.
    package var staticAccessTokens: [String] = []

    package init(requestors: [ReferenceRequestor], mvpds: [ReferenceMVPD]) {
        self.requestors = requestors
        self.mvpds = mvpds
    }

    /// `REF` with `Cablevision` (partner SSO), `PickerCable` (Apple picker only) and
    /// `SecondScreenTV` (no platform services: second-screen authentication only).
    package static let standard = ReferenceConfiguration(
        requestors: [ReferenceRequestor(id: "REF", mvpds: ["Cablevision", "PickerCable", "SecondScreenTV"])],
        mvpds: [
            ReferenceMVPD(id: "Cablevision", displayName: "Cablevision (test)", deniedResources: ["premium-sports"]),
            ReferenceMVPD(id: "PickerCable", displayName: "Picker Cable (test)", boardingStatus: "PICKER"),
            ReferenceMVPD(
                id: "SecondScreenTV", displayName: "Second Screen TV (test)", enablePlatformServices: false,
                boardingStatus: "NOT_SUPPORTED", displayInPlatformPicker: false),
        ])

    package func requestor(_ id: String) -> ReferenceRequestor? { requestors.first { $0.id == id } }

    package func mvpd(_ id: String) -> ReferenceMVPD? { mvpds.first { $0.id == id } }

    /// The requestor's MVPD with this id, when the requestor is integrated with it.
    package func mvpd(_ id: String, of requestor: String) -> ReferenceMVPD? {
        guard self.requestor(requestor)?.mvpds.contains(id) == true else { return nil }
        return mvpd(id)
    }

    /// The requestor's MVPD Apple's framework names with this platform-mapping id.
    package func mvpd(platformMappingID: String, of requestor: String) -> ReferenceMVPD? {
        guard let ids = self.requestor(requestor)?.mvpds else { return nil }
        return mvpds.first { ids.contains($0.id) && $0.platformMappingId == platformMappingID }
    }

    enum CodingKeys: String, CodingKey {
        case requestors, mvpds, authenticationTTL, accessTokenTTL, registrationCodeTTL, authorizationTTL, staticAccessTokens
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        requestors = try c.decode([ReferenceRequestor].self, forKey: .requestors)
        mvpds = try c.decode([ReferenceMVPD].self, forKey: .mvpds)
        authenticationTTL = try c.decodeIfPresent(Double.self, forKey: .authenticationTTL) ?? authenticationTTL
        accessTokenTTL = try c.decodeIfPresent(Double.self, forKey: .accessTokenTTL) ?? accessTokenTTL
        registrationCodeTTL = try c.decodeIfPresent(Double.self, forKey: .registrationCodeTTL) ?? registrationCodeTTL
        authorizationTTL = try c.decodeIfPresent(Double.self, forKey: .authorizationTTL) ?? authorizationTTL
        staticAccessTokens = try c.decodeIfPresent([String].self, forKey: .staticAccessTokens) ?? []
    }

    /// Reads and checks a YAML file: every requestor's MVPDs exist, requestor and MVPD ids are
    /// unique, a requestor's platform-mapping ids are unique, lifetimes are 1 s … 10 years.
    package static func load(path: String) throws(ConfigurationError) -> ReferenceConfiguration {
        // Size, anchors, aliases and depth are checked before Yams builds anything.
        let text = try ConfigurationFile.read(path)
        let configuration: ReferenceConfiguration
        do {
            configuration = try YAMLDecoder().decode(ReferenceConfiguration.self, from: text)
        } catch let error as DecodingError {
            throw ConfigurationError("\(path): \(ConfigurationError.describe(error))")
        } catch {
            throw ConfigurationError("\(path): not valid YAML (\(error))")
        }
        try configuration.check(path)
        return configuration
    }

    func check(_ path: String) throws(ConfigurationError) {
        let ids = mvpds.map(\.id)
        if let duplicate = ids.first(where: { id in ids.filter { $0 == id }.count > 1 }) {
            throw ConfigurationError("\(path): MVPD \(duplicate) is listed twice")
        }
        guard !requestors.isEmpty else { throw ConfigurationError("\(path): no requestors") }
        let requestorIDs = requestors.map(\.id)
        if let duplicate = requestorIDs.first(where: { id in requestorIDs.filter { $0 == id }.count > 1 }) {
            throw ConfigurationError("\(path): requestor \(duplicate) is listed twice")
        }
        for requestor in requestors {
            for id in requestor.mvpds where !ids.contains(id) {
                throw ConfigurationError("\(path): requestor \(requestor.id) names MVPD \(id), which is not in mvpds")
            }
            let mappings = requestor.mvpds.compactMap(mvpd).map(\.platformMappingId)
            if let duplicate = mappings.first(where: { id in mappings.filter { $0 == id }.count > 1 }) {
                throw ConfigurationError("\(path): requestor \(requestor.id) has two MVPDs with platformMappingId \(duplicate)")
            }
        }
        for (name, value) in [
            ("authenticationTTL", authenticationTTL), ("accessTokenTTL", accessTokenTTL),
            ("registrationCodeTTL", registrationCodeTTL), ("authorizationTTL", authorizationTTL),
        ]
        where !Self.validLifetime(value) {
            throw ConfigurationError("\(path): \(name) must be 1 second … 10 years")
        }
    }

    /// 1 s … 10 years (finite, so every expiry is a representable date).
    package static func validLifetime(_ seconds: Double) -> Bool {
        seconds.isFinite && seconds >= 1 && seconds <= 315_360_000
    }
}

// MARK: - Requestors

/// A requestor (programmer / service provider) and the MVPDs it is integrated with.
package struct ReferenceRequestor: Codable, Sendable, Equatable {
    package var id: String
    /// MVPD ids, in the order the configuration endpoints list them.
    package var mvpds: [String]

    package init(id: String, mvpds: [String]) {
        self.id = id
        self.mvpds = mvpds
    }
}

// MARK: - MVPDs

/// One MVPD (TV provider) as the backend configures it for a requestor, with the properties
/// the Apple SSO cookbooks read from the configuration endpoints.
package struct ReferenceMVPD: Codable, Sendable, Equatable {
    package var id: String
    package var displayName: String
    /// The MVPD takes part in partner (Apple) single sign-on.
    package var enablePlatformServices: Bool
    /// `SUPPORTED` (full partner SSO), `PICKER` (listed in Apple's picker only) or
    /// `NOT_SUPPORTED`.
    package var boardingStatus: String
    package var displayInPlatformPicker: Bool
    /// The id Apple's framework reports for this provider (defaults to `id`).
    package var platformMappingId: String
    /// User attributes the profile request asks the TV provider for.
    package var requiredMetadataFields: [String]
    /// Resources this MVPD denies (authorization answers `Deny`); everything else is permitted.
    package var deniedResources: [String]

    package init(
        id: String, displayName: String? = nil, enablePlatformServices: Bool = true, boardingStatus: String = "SUPPORTED",
        displayInPlatformPicker: Bool = true, platformMappingId: String? = nil,
        requiredMetadataFields: [String] = ["userID", "upstreamUserID", "zip"], deniedResources: [String] = []
    ) {
        self.id = id
        self.displayName = displayName ?? id
        self.enablePlatformServices = enablePlatformServices
        self.boardingStatus = boardingStatus
        self.displayInPlatformPicker = displayInPlatformPicker
        self.platformMappingId = platformMappingId ?? id
        self.requiredMetadataFields = requiredMetadataFields
        self.deniedResources = deniedResources
    }

    /// Partner SSO is possible: platform services on and fully boarded.
    package var supportsPartnerSSO: Bool { enablePlatformServices && boardingStatus == "SUPPORTED" }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let id = try c.decode(String.self, forKey: .id)
        self.init(
            id: id,
            displayName: try c.decodeIfPresent(String.self, forKey: .displayName),
            enablePlatformServices: try c.decodeIfPresent(Bool.self, forKey: .enablePlatformServices) ?? true,
            boardingStatus: try c.decodeIfPresent(String.self, forKey: .boardingStatus) ?? "SUPPORTED",
            displayInPlatformPicker: try c.decodeIfPresent(Bool.self, forKey: .displayInPlatformPicker) ?? true,
            platformMappingId: try c.decodeIfPresent(String.self, forKey: .platformMappingId),
            requiredMetadataFields: try c.decodeIfPresent([String].self, forKey: .requiredMetadataFields) ?? ["userID", "upstreamUserID", "zip"],
            deniedResources: try c.decodeIfPresent([String].self, forKey: .deniedResources) ?? [])
    }
}
