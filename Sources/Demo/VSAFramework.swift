import Foundation
import PartnerStatus
import TestIdP

/// Plays Apple's Video Subscriber Account framework on the device, with the test IdP as the TV
/// provider: it reports the account access status and provider (the app turns that into
/// `AP-Partner-Framework-Status`) and answers a profile request with a signed SAML
/// attribute-query response.
struct VSAFramework: Sendable {
    let idp: TestIdentityProvider
    /// `granted`, `denied`, `restricted` or `notDetermined`.
    var accessStatus: String
    /// The provider the user is signed in to (its platform-mapping id).
    var providerID: String
    /// When the provider session on the device ends.
    var providerExpiration: Date

    var status: PartnerFrameworkStatus {
        PartnerFrameworkStatus(
            frameworkPermissionInfo: .init(accessStatus: accessStatus),
            frameworkProviderInfo: accessStatus == "granted"
                // A string of milliseconds, as the backend documents the field.
                ? .init(id: providerID, expirationDate: .init(milliseconds: (providerExpiration.timeIntervalSince1970 * 1000).rounded()))
                : .init(id: nil, expirationDate: nil))
    }

    /// The `AP-Partner-Framework-Status` value the app sends.
    var header: String { status.headerValue }

    /// The signed response to a profile request (`verificationToken`, base64 of an
    /// `AttributeQuery`), releasing `attributeNames`. With `expiredSession` the TV provider's
    /// assertion is already past its validity (the user's provider session has lapsed).
    func respond(verificationToken: String, attributeNames: [String], mvpd: String, expiredSession: Bool) throws -> [UInt8] {
        var options = IssueOptions(
            mvpd: mvpd, user: "demo-user@example.com",
            attributes: attributeNames.map { SAMLAttribute($0, Self.sampleValue(for: $0)) }, sign: .both)
        options.inResponseTo = Self.queryID(verificationToken)
        if expiredSession {
            options.now = Date().addingTimeInterval(-7_200)
            options.ttl = 600
        }
        return try idp.issue(options)
    }

    /// The `ID` of the `AttributeQuery` inside the token (so the response answers it).
    static func queryID(_ token: String) -> String? {
        guard let data = Data(base64Encoded: token.trimmingCharacters(in: .whitespacesAndNewlines)),
            let xml = String(data: data, encoding: .utf8), let range = xml.range(of: " ID=\"")
        else { return nil }
        return xml[range.upperBound...].split(separator: "\"", maxSplits: 1).first.map(String.init)
    }

    /// The attribute names the `AttributeQuery` asks for (VSA's `attributeNames` in v1, where the
    /// app takes them from `requiredMetadataFields`).
    static func requestedAttributes(_ token: String) -> [String] {
        guard let data = Data(base64Encoded: token.trimmingCharacters(in: .whitespacesAndNewlines)),
            let xml = String(data: data, encoding: .utf8)
        else { return [] }
        return xml.components(separatedBy: "Attribute Name=\"").dropFirst().compactMap { $0.split(separator: "\"").first.map(String.init) }
    }

    static func sampleValue(for attribute: String) -> String {
        switch attribute {
        case "zip": return "10001"
        case "userID", "upstreamUserID": return "demo-subscriber-0001"
        default: return "demo-" + attribute
        }
    }
}
