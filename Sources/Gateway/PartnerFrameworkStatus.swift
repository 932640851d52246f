import Foundation

/// The `AP-Partner-Framework-Status` header: base64 of the JSON the app builds from Apple's VSA
/// framework (`frameworkPermissionInfo` and `frameworkProviderInfo`).
public struct PartnerFrameworkStatus: Decodable, Sendable {
    public struct ReportedError: Decodable, Sendable {
        public var code: String?
        public var message: String?

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

    public struct PermissionInfo: Decodable, Sendable {
        /// `granted`, `denied`, `pending` or `notDetermined`.
        public var accessStatus: String
        public var error: ReportedError?
    }

    public struct ProviderInfo: Decodable, Sendable {
        /// The provider's platform-mapping id.
        public var id: String?
        /// Epoch milliseconds after which the framework's provider profile is no longer valid.
        public var expirationDate: Double?
        public var error: ReportedError?
    }

    public var frameworkPermissionInfo: PermissionInfo
    public var frameworkProviderInfo: ProviderInfo?

    /// Decodes the header value (base64, standard or URL-safe alphabet, padding optional).
    public static func decode(header: String) throws(GatewayError) -> PartnerFrameworkStatus {
        var text = header.trimmingCharacters(in: .whitespaces)
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let json = Data(base64Encoded: text) else {
            throw GatewayError.invalidParameter(PartnerStatusHeader.name, "not base64")
        }
        do {
            return try JSONDecoder().decode(PartnerFrameworkStatus.self, from: json)
        } catch {
            throw GatewayError.invalidParameter(PartnerStatusHeader.name, "not the expected JSON object (\(Self.describe(error)))")
        }
    }

    /// Names the missing or mistyped key of a decoding error, without echoing the content.
    static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?: return "missing \(key.stringValue)"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            return "wrong type at " + context.codingPath.map(\.stringValue).joined(separator: ".")
        default: return "unreadable JSON"
        }
    }
}
