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

// MARK: - The expiration date

extension PartnerFrameworkStatus {
    /// `frameworkProviderInfo.expirationDate`: milliseconds since the Unix epoch, documented as a
    /// string of decimal digits (`"1735689600000"`). A JSON number is read too, as older
    /// documentation gave it, if it is a whole number below 10^15; anything else (a fraction, a
    /// sign, an exponent in a string, a date text, a number past the string form's 15 digits) is
    /// not an expiration date and makes the header unreadable.
    public struct ExpirationDate: Codable, Sendable, Equatable {
        public var milliseconds: Double
        /// Written back as it came: a string, or a number.
        public var isString: Bool

        public init(milliseconds: Double, isString: Bool = true) {
            self.milliseconds = milliseconds
            self.isString = isString
        }

        /// At most 15 digits: past year 30,000 a date is not a date, and every 15-digit number is
        /// exact in a `Double` (below 2^53), so the value reads back as it was written.
        static let maximumDigits = 15

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                guard !text.isEmpty, text.utf8.count <= Self.maximumDigits,
                    text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let value = Double(text)
                else {
                    throw DecodingError.dataCorruptedError(
                        in: container, debugDescription: "expirationDate must be a string of decimal milliseconds")
                }
                self.init(milliseconds: value, isString: true)
                return
            }
            // A number: a whole number of milliseconds below 10^15, as the string form.
            let number = try container.decode(Double.self)
            guard number.isFinite, number >= 0, number < 1e15, number.rounded(.towardZero) == number else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expirationDate must be a whole number of milliseconds below 10^15")
            }
            self.init(milliseconds: number, isString: false)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            if isString {
                try container.encode(String(Int64(milliseconds)))
            } else {
                try container.encode(milliseconds)
            }
        }
    }
}

// MARK: - The verdict

/// What an `AP-Partner-Framework-Status` says about partner single sign-on (see
/// ``PartnerFrameworkStatus/verdict(now:)``). The gateway and the reference upstream map it to the
/// backend's `invalid_header_pfs_*` codes on the exchange; on the partner session the reference
/// upstream falls back to basic authentication instead.
public enum PartnerStatusVerdict: Sendable, Equatable {
    /// Access granted and a provider profile that has not expired: SSO may proceed.
    case granted(providerID: String)
    /// The user refused access to the TV provider account.
    case denied
    /// The app is not allowed to access the TV provider account (parental or device management
    /// restrictions).
    case restricted
    /// `notDetermined` (or the older `pending`): the user has not decided.
    case undetermined(String)
    /// `frameworkPermissionInfo.error`: the framework failed while asking for the permission.
    case permissionError(code: String?)
    /// `frameworkProviderInfo.error`: the framework failed while asking for the provider.
    case providerError(code: String?)
    /// Access granted, but no provider named (no `frameworkProviderInfo`, or no `id` in it).
    case providerUndetermined(String)
    /// The provider profile on the device has expired.
    case expired(providerID: String)
    /// Well-formed JSON that does not say enough (an `accessStatus` the documentation does not
    /// list).
    case unreadable(String)
}

// MARK: - The header's base64

/// Base64 in a header value, as the partner status carries it: blanks (space, tab) around it,
/// the standard alphabet, the URL-safe one or both (`-` read as `+`, `_` as `/`), and `=`
/// padding optional — but only as much as completes the last group.
///
/// One pass over the value's bytes and one output array of the decoded size: the cost of a
/// hostile value is its length, whatever it holds.
enum HeaderBase64 {
    /// The decoded bytes, or `nil` when the value is not base64 as above.
    static func decode(_ value: String.UTF8View) -> [UInt8]? {
        var text = value[...]
        while let first = text.first, first == 0x20 || first == 0x09 { text.removeFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text.removeLast() }
        var padding = 0
        while padding < 3, text.last == UInt8(ascii: "=") {
            text.removeLast()
            padding += 1
        }
        // A last group of one symbol holds no whole byte; padding completes a group, no more.
        let tail = text.count % 4
        guard tail != 1, padding == 0 || (tail != 0 && padding <= 4 - tail) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3 + 2)
        // Invariant: `bits` holds the `count` low bits not yet written, fewer than 8.
        var bits: UInt32 = 0
        var count = 0
        for byte in text {
            let sextet = table[Int(byte)]
            guard sextet != invalid else { return nil }
            bits = bits << 6 | UInt32(sextet)
            count += 6
            if count >= 8 {
                count -= 8
                out.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
                bits &= (1 << UInt32(count)) - 1
            }
        }
        return out
    }

    private static let invalid: UInt8 = 0xFF

    /// Each byte's 6-bit value in either alphabet, ``invalid`` for any other byte.
    private static let table: [UInt8] = (0..<256).map { value in
        switch UInt8(value) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt8(value) - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt8(value) - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(value) - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: invalid
        }
    }
}
