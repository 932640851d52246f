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
