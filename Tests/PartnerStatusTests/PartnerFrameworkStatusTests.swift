import Foundation
import PartnerStatus
import Testing

/// `AP-Partner-Framework-Status` read as REST API v2 documents it, and `AP-Device-Identifier`.
@Suite("Partner framework status as documented")
struct PartnerFrameworkStatusTests {
    /// The header value of the backend's own sample request: granted, provider `Cablevision`,
    /// `expirationDate` the string `"2025430636000"` (in 2034).
    static let documentedSample =
        "ewogICAgImZyYW1ld29ya1Blcm1pc3Npb25JbmZvIjogewogICAgICAiYWNjZXNzU3RhdHVzIjogImdyYW50ZWQiCiAgICB9LAogICAgImZyYW1ld29ya1Byb3Zp"
        + "ZGVySW5mbyIgOiB7CiAgICAgICJpZCIgOiAiQ2FibGV2aXNpb24iLAogICAgICAiZXhwaXJhdGlvbkRhdGUiIDogIjIwMjU0MzA2MzYwMDAiCiAgICB9Cn0="

    static func header(_ json: String) -> String { Data(json.utf8).base64EncodedString() }

    static func status(access: String = "granted", expiration: String? = nil, extra: String = "") -> String {
        let expirationField = expiration.map { #","expirationDate":\#($0)"# } ?? ""
        return header(
            #"{"frameworkPermissionInfo":{"accessStatus":"\#(access)"},"frameworkProviderInfo":{"id":"Cablevision"\#(expirationField)\#(extra)}}"#)
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("the documentation's sample header is granted for Cablevision")
    func documentedSampleGranted() throws {
        let status = try PartnerFrameworkStatus.decode(header: Self.documentedSample)
        #expect(status.frameworkProviderInfo?.expirationDate == .init(milliseconds: 2_025_430_636_000, isString: true))
        #expect(status.verdict(now: Self.now) == .granted(providerID: "Cablevision"))
    }

    @Test("expirationDate: a string of milliseconds (documented) or a number (older documentation), the past is expired")
    func expirationForms() throws {
        let future = "1900000000000", past = "1700000000000"
        #expect(
            try PartnerFrameworkStatus.decode(header: Self.status(expiration: "\"\(future)\"")).verdict(now: Self.now)
                == .granted(providerID: "Cablevision"))
        #expect(
            try PartnerFrameworkStatus.decode(header: Self.status(expiration: future)).verdict(now: Self.now) == .granted(providerID: "Cablevision"))
        #expect(
            try PartnerFrameworkStatus.decode(header: Self.status(expiration: "\"\(past)\"")).verdict(now: Self.now)
                == .expired(providerID: "Cablevision"))
        #expect(
            try PartnerFrameworkStatus.decode(header: Self.status(expiration: past)).verdict(now: Self.now) == .expired(providerID: "Cablevision"))
        // Absent: no expiry to check (Apple's framework may not know one).
        #expect(try PartnerFrameworkStatus.decode(header: Self.status()).verdict(now: Self.now) == .granted(providerID: "Cablevision"))
    }

    @Test(
        "an expirationDate that is not milliseconds makes the header unreadable, naming the field",
        arguments: [#""""#, #""12a""#, #""-1""#, #""1.5""#, #"" 1""#, #""1234567890123456""#, "true", "-5", #"{"ms":1}"#])
    func badExpiration(_ value: String) {
        do {
            _ = try PartnerFrameworkStatus.decode(header: Self.status(expiration: value))
            Issue.record("\(value) was read as an expiration date")
        } catch {
            #expect(error.reason.contains("expirationDate"), "\(value): \(error.reason)")
        }
    }

    @Test("accessStatus: the documented values, pending read as notDetermined, anything else unreadable")
    func accessStatuses() throws {
        func verdict(_ access: String) throws -> PartnerStatusVerdict {
            try PartnerFrameworkStatus.decode(header: Self.status(access: access)).verdict(now: Self.now)
        }
        #expect(try verdict("granted") == .granted(providerID: "Cablevision"))
        #expect(try verdict("denied") == .denied)
        #expect(try verdict("restricted") == .restricted)
        #expect(try verdict("notDetermined") == .undetermined("notDetermined"))
        #expect(try verdict("pending") == .undetermined("pending"))
        #expect(try verdict("Granted") == .unreadable("unknown accessStatus"))
        #expect(try verdict("") == .unreadable("unknown accessStatus"))
    }

    @Test("granted without a provider or its id: the provider is not determined")
    func providerMissing() throws {
        let noProvider = try PartnerFrameworkStatus.decode(header: Self.header(#"{"frameworkPermissionInfo":{"accessStatus":"granted"}}"#))
        #expect(noProvider.verdict(now: Self.now) == .providerUndetermined("frameworkProviderInfo is missing"))
        let noID = try PartnerFrameworkStatus.decode(
            header: Self.header(#"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"expirationDate":"1"}}"#))
        #expect(noID.verdict(now: Self.now) == .providerUndetermined("frameworkProviderInfo.id is missing"))
    }

    @Test("the error objects: code as a string or a number, checked before the status")
    func errorObjects() throws {
        let permission = try PartnerFrameworkStatus.decode(
            header: Self.header(#"{"frameworkPermissionInfo":{"accessStatus":"granted","error":{"code":3,"message":"m"}}}"#))
        #expect(permission.verdict(now: Self.now) == .permissionError(code: "3"))
        let provider = try PartnerFrameworkStatus.decode(
            header: Self.header(
                #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"error":{"code":"VSErrorCodeX"}}}"#))
        #expect(provider.verdict(now: Self.now) == .providerError(code: "VSErrorCodeX"))
    }

    @Test("the header the demo builds carries expirationDate as a string and reads back the same")
    func roundTrip() throws {
        let status = PartnerFrameworkStatus(
            frameworkPermissionInfo: .init(accessStatus: "granted"),
            frameworkProviderInfo: .init(id: "Cablevision", expirationDate: .init(milliseconds: 1_900_000_000_000)))
        let json = String(decoding: Data(base64Encoded: status.headerValue) ?? Data(), as: UTF8.self)
        #expect(json.contains(#""expirationDate":"1900000000000""#), "\(json)")
        #expect(try PartnerFrameworkStatus.decode(header: status.headerValue).verdict(now: Self.now) == .granted(providerID: "Cablevision"))
    }

    @Test("AP-Device-Identifier: fingerprint, one space, base64 in one alphabet with padding only at the end")
    func deviceIdentifier() {
        for good in ["fingerprint YmEyM2QxNDEtZDcxNS01NjFjLTk0ZjQtZTllNGM5NjZiMWVi", "Fingerprint abc=", "fingerprint a-b_c", "FINGERPRINT ab+/"] {
            #expect(DeviceIdentifierHeader.isWellFormed(good), "\(good)")
        }
        for bad in [
            "", "fingerprint", "fingerprint ", "fingerprintabc", "device abc", "fingerprint abc def", "fingerprint ab\u{e9}", "abc",
            "fingerprint  abc", "fingerprint\tabc", "fingerprint\u{0}abc", "fingerprint a=b", "fingerprint ab-+", "fingerprint ab=",
            "fingerprint a===",
        ] {
            #expect(!DeviceIdentifierHeader.isWellFormed(bad), "\(bad)")
        }
    }

    @Test("Authorization: Bearer, one space, an RFC 6750 token, nothing else")
    func bearer() {
        #expect(BearerCredentials.token(in: "Bearer abc.DEF-_~+/==") == "abc.DEF-_~+/==")
        #expect(BearerCredentials.token(in: "bearer t") == "t")
        for bad in [
            "", "Bearer", "Bearer ", "Bearer  tok", "Bearer\ttok", "Bearer a b", "Bearer a,b", "Bearer \u{ff}", "Basic dXNlcg==", "Bearer =abc",
            "Bearer a=b", "Bearer\u{0}tok",
        ] {
            #expect(BearerCredentials.token(in: bad) == nil, "\(bad)")
        }
    }

    @Test(
        "a number expirationDate: a whole number of milliseconds below 10^15, like the string form",
        arguments: ["1e300", "17956896254820000000000", "1795689649336.5", "1e15"])
    func badNumberExpiration(_ value: String) {
        #expect(throws: PartnerFrameworkStatus.DecodeError.self, "\(value)") {
            _ = try PartnerFrameworkStatus.decode(header: Self.status(expiration: value))
        }
    }

    @Test("base64 in either alphabet, padded or not, between blanks; anything else, or past 4 KiB, is not base64")
    func headerBase64() throws {
        let json = #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"id":"a?b>c","expirationDate":"4102444800000"}}"#
        let standard = Data(json.utf8).base64EncodedString()
        #expect(standard.contains("+") || standard.contains("/") || standard.hasSuffix("="))
        let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        for value in [standard, urlSafe, urlSafe.replacingOccurrences(of: "=", with: ""), " \t\(standard) \t"] {
            #expect(try PartnerFrameworkStatus.decode(header: value).verdict(now: Self.now) == .granted(providerID: "a?b>c"), "\(value)")
        }
        for (value, reason) in [
            (standard + "=", "not base64"), ("e3", "not valid JSON"), ("e", "not base64"), ("e30=x", "not base64"), ("e3 0=", "not base64"),
            ("e30==", "not base64"), ("", "not valid JSON"), (String(repeating: "-", count: 4097), "longer than 4096 bytes"),
            ("e30\u{FFFD}", "not base64"),
        ] {
            do {
                _ = try PartnerFrameworkStatus.decode(header: value)
                Issue.record("accepted \(value.prefix(20))")
            } catch {
                #expect(error.reason == reason, "\(value.prefix(20))")
            }
        }
    }
}
