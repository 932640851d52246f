import Foundation

/// The `AP-Partner-Framework-Status` header: base64 of the JSON the app builds from Apple's VSA
/// framework (`frameworkPermissionInfo` and `frameworkProviderInfo`).
///
/// Shared by the gateway and the reference upstream (which answer the backend's
/// `invalid_header_pfs_*` codes on the exchange) and the demo (which builds it, playing the
/// framework), so the three read the header the same way.
public struct PartnerFrameworkStatus: Codable, Sendable {
    public static let headerName = "AP-Partner-Framework-Status"

    public struct ReportedError: Codable, Sendable {
        public var code: String?
        public var message: String?

        public init(code: String?, message: String? = nil) {
            self.code = code
            self.message = message
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // Apps send the code as a number or a string.
            if let number = try? container.decodeIfPresent(Int.self, forKey: .code) {
                code = String(number)
            } else {
                code = try container.decodeIfPresent(String.self, forKey: .code)
            }
            message = try container.decodeIfPresent(String.self, forKey: .message)
        }

        enum CodingKeys: String, CodingKey { case code, message }
    }

    public struct PermissionInfo: Codable, Sendable {
        /// `granted`, `denied`, `restricted` or `notDetermined` (and `pending`, which older
        /// documentation listed, read as `notDetermined`).
        public var accessStatus: String
        public var error: ReportedError?

        public init(accessStatus: String, error: ReportedError? = nil) {
            self.accessStatus = accessStatus
            self.error = error
        }
    }

    public struct ProviderInfo: Codable, Sendable {
        /// The provider's platform-mapping id.
        public var id: String?
        /// Epoch milliseconds after which the framework's provider profile is no longer valid.
        public var expirationDate: ExpirationDate?
        public var error: ReportedError?

        public init(id: String?, expirationDate: ExpirationDate?, error: ReportedError? = nil) {
            self.id = id
            self.expirationDate = expirationDate
            self.error = error
        }
    }

    public var frameworkPermissionInfo: PermissionInfo
    public var frameworkProviderInfo: ProviderInfo?

    public init(frameworkPermissionInfo: PermissionInfo, frameworkProviderInfo: ProviderInfo?) {
        self.frameworkPermissionInfo = frameworkPermissionInfo
        self.frameworkProviderInfo = frameworkProviderInfo
    }

    /// Why a header value could not be read; `reason` never echoes the content.
    public struct DecodeError: Error, Sendable {
        public var reason: String
    }

    /// The longest header value read: a status is a few hundred bytes (two small objects, a
    /// provider id, a date and at most two short error texts); 4 KiB leaves room for long error
    /// messages and keeps the work on a hostile value small and bounded before anything is decoded.
    public static let maximumHeaderLength = 4096

    /// Decodes the header value: optional blanks around base64 of the JSON (the standard or the
    /// URL-safe alphabet, padding optional), read in one pass over its bytes.
    /// The JSON must pass ``StrictJSON`` first: Foundation would silently take the first of two
    /// `frameworkProviderInfo` keys where the backend's parser may take the last.
    public static func decode(header: String) throws(DecodeError) -> PartnerFrameworkStatus {
        guard header.utf8.count <= maximumHeaderLength else {
            throw DecodeError(reason: "longer than \(maximumHeaderLength) bytes")
        }
        guard let json = HeaderBase64.decode(header.utf8) else {
            throw DecodeError(reason: "not base64")
        }
        do {
            try StrictJSON.check(json)
        } catch {
            throw DecodeError(reason: error.reason)
        }
        do {
            return try JSONDecoder().decode(PartnerFrameworkStatus.self, from: Data(json))
        } catch {
            throw DecodeError(reason: "not the expected JSON object (\(Self.describe(error)))")
        }
    }

    /// The header value: base64 of the JSON object.
    public var headerValue: String {
        let encoder = JSONEncoder()
        // Without `\/` for `/`: the value must read back within the size it was read at.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return ((try? encoder.encode(self)) ?? Data()).base64EncodedString()
    }

    /// What the status says about single sign-on, in the order the SDK checks it: a framework
    /// error first, then the permission, then the provider.
    public func verdict(now: Date) -> PartnerStatusVerdict {
        let permission = frameworkPermissionInfo
        if let error = permission.error { return .permissionError(code: error.code) }
        switch permission.accessStatus {
        case "granted": break
        case "denied": return .denied
        case "restricted": return .restricted
        case "notDetermined", "pending": return .undetermined(permission.accessStatus)
        default: return .unreadable("unknown accessStatus")
        }
        guard let provider = frameworkProviderInfo else { return .providerUndetermined("frameworkProviderInfo is missing") }
        if let error = provider.error { return .providerError(code: error.code) }
        guard let id = provider.id, !id.isEmpty else { return .providerUndetermined("frameworkProviderInfo.id is missing") }
        if let expiration = provider.expirationDate, expiration.milliseconds < now.timeIntervalSince1970 * 1000 {
            return .expired(providerID: id)
        }
        return .granted(providerID: id)
    }

    /// Names the missing or mistyped key of a decoding error, without echoing the content.
    static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?: return "missing \(key.stringValue)"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            return "wrong type at " + context.codingPath.map(\.stringValue).joined(separator: ".")
        case .dataCorrupted(let context)? where !context.codingPath.isEmpty:
            return "invalid value at " + context.codingPath.map(\.stringValue).joined(separator: ".")
        default: return "unreadable JSON"
        }
    }
}
