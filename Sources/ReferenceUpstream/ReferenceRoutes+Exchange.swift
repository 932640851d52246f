import Crypto
import Foundation
import Hummingbird
import NIOCore
import PartnerStatus
import SAMLEncoding
import SAMLVerification
import ServerSupport

/// The two token exchanges, checked as the backend checks them, each fault answered with the
/// code the backend publishes for it:
///
/// - v1: the required fields (`requestor` → `invalid_requestor`, `deviceId` → `invalid_device_id`,
///   `mvpd` → `invalid_parameter_mvpd`, `deviceType` → `invalid_device_info`, `SAMLResponse`),
///   then an unknown requestor, a `deviceType` other than `iOS`/`tvOS`, an MVPD the requestor has
///   no partner SSO integration with (`unknown_integration`);
/// - v2: access token, service provider, device identifier, partner, the partner status
///   (`invalid_header_pfs_*`), the MVPD's integration (`invalid_integration`);
///
/// (an MVPD without partner SSO: platform services off, or not boarded — `PICKER`, as the
/// partner session answers `configuration_fallback` for it);
///
/// then, on both, one percent-decoding of the form and base64 of XML in `SAMLResponse`
/// (`invalid_parameter_saml_response`, samlgate's reason in `details`). They record an
/// authentication of source `partner` (v1 `tokenSource` `Apple`, v2 profile `appleSSO`).
extension ReferenceRoutes {
    static let deviceTypes: Set<String> = ["iOS", "tvOS"]

    func addExchanges(to router: Router<BasicRequestContext>) {
        router.post("/api/v1/tokens/authn") { request, _ in try await exchangeV1(request) }
        router.post("/api/v2/:serviceProvider/profiles/sso/:partner") { request, context in
            try await exchangeV2(
                request, serviceProvider: context.parameters.get("serviceProvider") ?? "",
                partner: context.parameters.get("partner") ?? "")
        }
    }

    func exchangeV1(_ request: Request) async throws -> Response {
        guard let fields = try await form(request) else { return brokenForm(request) }
        for name in ["requestor", "deviceId", "mvpd", "deviceType", "SAMLResponse"] where (fields[name]?.decoded.isEmpty ?? true) {
            return missing(name, request)
        }
        let requestor = text(fields["requestor"]!.decoded), mvpdID = text(fields["mvpd"]!.decoded)
        guard configuration.requestor(requestor) != nil else { return unknownRequestor(request) }
        guard Self.deviceTypes.contains(text(fields["deviceType"]!.decoded)) else {
            return ReferenceReply.error(400, .invalidDeviceInfo, "deviceType must be iOS or tvOS", for: request)
        }
        guard let mvpd = configuration.mvpd(mvpdID, of: requestor), mvpd.supportsPartnerSSO else { return notIntegrated(request) }
        let xml = try checkSAML(fields["SAMLResponse"]!.decoded)
        let now = Date()
        store.authenticate(
            ReferenceAuthentication(
                requestor: requestor, deviceID: text(fields["deviceId"]!.decoded), mvpd: mvpd.id, source: .partner,
                userID: SAMLSubject.userID(xml: xml), notBefore: now, notAfter: now.addingTimeInterval(configuration.authenticationTTL)))
        store.record(RecordedExchange(route: "v1", requestor: requestor, samlResponse: fields["SAMLResponse"]!.raw, requestID: trace(request)))
        return ReferenceReply.empty(204)
    }

    func exchangeV2(_ request: Request, serviceProvider: String, partner: String) async throws -> Response {
        let caller = try v2Caller(request, serviceProvider: serviceProvider)
        guard partner.lowercased() == "apple" else {
            return ReferenceReply.error(400, .invalidParameterPartner, "unknown partner \(partner)", for: request)
        }
        let mvpd = try partnerMVPD(request, serviceProvider: serviceProvider)
        guard mvpd.supportsPartnerSSO else { return notIntegrated(request) }
        guard let fields = try await form(request) else { return brokenForm(request) }
        guard let saml = fields["SAMLResponse"], !saml.decoded.isEmpty else { return missing("SAMLResponse", request) }
        let xml = try checkSAML(saml.decoded)
        let now = Date()
        let authentication = ReferenceAuthentication(
            requestor: serviceProvider, deviceID: caller.deviceID, mvpd: mvpd.id, source: .partner,
            userID: SAMLSubject.userID(xml: xml), notBefore: now, notAfter: now.addingTimeInterval(configuration.authenticationTTL))
        store.authenticate(authentication)
        store.record(RecordedExchange(route: "v2", requestor: serviceProvider, samlResponse: saml.raw, requestID: trace(request)))
        return ReferenceReply.json(201, ["profiles": [mvpd.id: profileObject(authentication)]])
    }

    /// The MVPD a granted partner status names, or the backend's `invalid_header_pfs_*` error.
    func partnerMVPD(_ request: Request, serviceProvider: String) throws(Refusal) -> ReferenceMVPD {
        guard let value = header(request, PartnerFrameworkStatus.headerName) else {
            throw Refusal(400, .invalidHeaderPFSPermissionAccessNotPresent, "AP-Partner-Framework-Status is missing")
        }
        guard let status = try? PartnerFrameworkStatus.decode(header: value) else {
            throw Refusal(400, .invalidHeaderPFSPermissionAccessNotPresent, "AP-Partner-Framework-Status cannot be read")
        }
        switch status.verdict(now: Date()) {
        case .granted(let id):
            guard let mvpd = configuration.mvpd(platformMappingID: id, of: serviceProvider) else {
                throw Refusal(400, .invalidHeaderPFSProviderIDNotDetermined, "the partner status names a provider this service provider does not use")
            }
            return mvpd
        case .expired:
            throw Refusal(400, .invalidHeaderPFSProviderInfoExpired, "the provider information has expired")
        case .undetermined, .permissionError:
            throw Refusal(400, .invalidHeaderPFSPermissionAccessNotDetermined, "the user's permission is not determined")
        case .denied, .restricted:
            throw Refusal(400, .invalidHeaderPFSPermissionAccessNotGranted, "access to the TV provider account is not granted")
        case .providerError, .providerUndetermined:
            throw Refusal(400, .invalidHeaderPFSProviderIDNotDetermined, "the provider cannot be determined")
        case .unreadable:
            throw Refusal(400, .invalidHeaderPFSPermissionAccessNotPresent, "the permission's access status cannot be read")
        }
    }

    /// What the backend demands of `SAMLResponse` after its one percent-decoding: no `%` left
    /// (that would be a second encoding layer), valid base64, XML inside. Returns the XML.
    func checkSAML(_ value: [UInt8]) throws(Refusal) -> [UInt8] {
        if value.withUnsafeBytes({ bytes in bytes.baseAddress.map { memchr($0, Int32(UInt8(ascii: "%")), bytes.count) != nil } ?? false }) {
            throw Refusal(400, .invalidParameterSAMLResponse, "SAMLResponse is still percent-encoded after one decoding", details: "double_encoded")
        }
        var valid = true
        let decoded = [UInt8](unsafeUninitializedCapacity: Base64.maximumDecodedCount(value.count)) { output, count in
            do {
                count = try value.withUnsafeBytes { input in try Base64.decode(input, into: UnsafeMutableRawBufferPointer(output)) }
            } catch _ {
                valid = false
                count = 0
            }
        }
        guard valid else {
            throw Refusal(400, .invalidParameterSAMLResponse, "SAMLResponse is not valid base64", details: "malformed_base64")
        }
        // XML as the cookbook encodes it: a byte-order mark the client's file started with is
        // kept, so it may come first.
        guard decoded.withUnsafeBytes(SAMLForm.startsLikeXML) else {
            throw Refusal(
                400, .invalidParameterSAMLResponse, "SAMLResponse does not decode to an XML document", details: "unrecognized_saml_form")
        }
        return decoded
    }

    /// A v2 profile: `notBefore`, `notAfter`, `issuer`, `type`, `attributes`.
    func profileObject(_ authentication: ReferenceAuthentication) -> [String: Any] {
        [
            "notBefore": ReferenceReply.millis(authentication.notBefore), "notAfter": ReferenceReply.millis(authentication.notAfter),
            "issuer": authentication.tokenSource, "type": authentication.profileType,
            "attributes": ["userID": ["value": authentication.userID, "state": "plain"]],
        ]
    }
}

// MARK: - The subject's id

/// Gives the subject of a token exchange's response a stable, opaque id (the gateway in front
/// has already verified the signature; the NameID is read where the gateway read it). The id is
/// a keyed hash with a key drawn per process, so it cannot be turned back into the NameID by
/// guessing; the NameID itself is not kept in the authentication (the raw exchange log of
/// `/reference/exchanges` does hold the responses as received — the reference upstream is a
/// stand-in for tests and demos, not a place for real subscribers' data).
enum SAMLSubject {
    /// 256 random bits per process (the system generator is cryptographically secure). Kept as
    /// bytes: swift-crypto's `SymmetricKey` is not `Sendable`, so it cannot be a static.
    static let key: [UInt8] = (0..<32).map { _ in UInt8.random(in: .min ... .max) }

    /// The hashed `NameID` of a response, `anonymous` when it has none or is not a response the
    /// verifier would read (the reference upstream also takes bare XML, for scripted tests).
    /// The NameID is the one the gateway verified, read from a parsed document (see
    /// ``SubjectReader``), never the first `NameID`-looking text: a comment such as
    /// `<!--<NameID>admin@victim.example<-->` before the Assertion must not pick the identity.
    static func userID(xml: [UInt8]) -> String {
        let name = xml.withUnsafeBytes { bytes in try? SubjectReader.nameID(bytes) }
        guard let name else { return "anonymous" }
        return userID(name: Array(name.utf8))
    }

    /// 16 hex digits of HMAC-SHA256(key, name).
    static func userID(name: [UInt8]) -> String {
        HexDigits.lowercase(HMAC<SHA256>.authenticationCode(for: name, using: SymmetricKey(data: key)).prefix(8))
    }
}
