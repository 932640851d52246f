/// A `code` of the backend's enhanced errors, from the lists it publishes for REST API v2 and
/// (legacy) REST API v1, with the `status` and `action` it documents for each.
///
/// The gateway and the reference upstream can only answer with a case of this enum, so neither
/// can send a code a client of the backend does not know. Which code answers which of samlgate's
/// own reasons is decided by the caller (the gateway's refusal mapping, the reference upstream's
/// checks); this type only knows what the backend publishes.
public enum BackendErrorCode: String, Sendable, CaseIterable {
    // REST API v2, action `none`.
    case invalidParameterServiceProvider = "invalid_parameter_service_provider"
    case invalidParameterMVPD = "invalid_parameter_mvpd"
    case invalidParameterCode = "invalid_parameter_code"
    case invalidParameterResources = "invalid_parameter_resources"
    case invalidParameterRedirectURL = "invalid_parameter_redirect_url"
    case invalidParameterPartner = "invalid_parameter_partner"
    case invalidParameterSAMLResponse = "invalid_parameter_saml_response"
    case invalidHeaderDeviceInfo = "invalid_header_device_info"
    case invalidHeaderDeviceIdentifier = "invalid_header_device_identifier"
    case invalidHeaderIdentityForTemporaryAccess = "invalid_header_identity_for_temporary_access"
    case invalidHeaderPFSPermissionAccessNotPresent = "invalid_header_pfs_permission_access_not_present"
    case invalidHeaderPFSPermissionAccessNotDetermined = "invalid_header_pfs_permission_access_not_determined"
    case invalidHeaderPFSPermissionAccessNotGranted = "invalid_header_pfs_permission_access_not_granted"
    case invalidHeaderPFSProviderIDNotDetermined = "invalid_header_pfs_provider_id_not_determined"
    case invalidHeaderPFSProviderIDMismatch = "invalid_header_pfs_provider_id_mismatch"
    case invalidHeaderPFSProviderInfoExpired = "invalid_header_pfs_provider_info_expired"
    case invalidIntegration = "invalid_integration"
    case invalidAuthenticationSession = "invalid_authentication_session"
    case preauthorizationDeniedByMVPD = "preauthorization_denied_by_mvpd"
    case authorizationDeniedByMVPD = "authorization_denied_by_mvpd"
    case authorizationDeniedByParentalControls = "authorization_denied_by_parental_controls"
    case authorizationDeniedByDegradationRule = "authorization_denied_by_degradation_rule"
    case internalServerError = "internal_server_error"
    // REST API v2, action `configuration`.
    case tooManyResources = "too_many_resources"
    // REST API v2, action `application-registration`.
    case invalidAccessTokenServiceProvider = "invalid_access_token_service_provider"
    case invalidAccessTokenClientApplication = "invalid_access_token_client_application"
    // REST API v2, action `authentication`.
    case authenticatedProfileMissing = "authenticated_profile_missing"
    case authenticatedProfileExpired = "authenticated_profile_expired"
    case authenticatedProfileInvalidated = "authenticated_profile_invalidated"
    // Both lists, action `retry`.
    case networkReceivedError = "network_received_error"
    case networkConnectionTimeout = "network_connection_timeout"
    case maximumExecutionTimeExceeded = "maximum_execution_time_exceeded"
    // (Legacy) REST API v1, action `none` and `configuration`.
    case invalidRequestor = "invalid_requestor"
    case invalidDeviceInfo = "invalid_device_info"
    case invalidDeviceID = "invalid_device_id"
    case missingResource = "missing_resource"
    case internalError = "internal_error"
    case unknownIntegration = "unknown_integration"
    // (Legacy) REST API v1, action `authentication`.
    case authenticationSessionMissing = "authentication_session_missing"
    case authenticationSessionExpired = "authentication_session_expired"

    /// The `status` values the backend documents for the code; the first is the usual one.
    public var documentedStatuses: [Int] {
        switch self {
        case .internalServerError: [500]
        case .invalidAccessTokenServiceProvider, .invalidAccessTokenClientApplication: [401]
        case .preauthorizationDeniedByMVPD, .authorizationDeniedByMVPD, .authorizationDeniedByParentalControls,
            .authorizationDeniedByDegradationRule, .tooManyResources, .authenticatedProfileMissing, .authenticatedProfileExpired,
            .authenticatedProfileInvalidated, .networkReceivedError, .networkConnectionTimeout, .maximumExecutionTimeExceeded:
            [403]
        case .missingResource, .unknownIntegration: [400, 412]
        case .internalError: [500, 400, 405]
        case .authenticationSessionMissing, .authenticationSessionExpired: [403, 412]
        default: [400]
        }
    }

    /// The body's `status` for an answer sent with HTTP status `http`: `http` itself when the
    /// backend documents it for this code, otherwise the code's usual one (the backend says the
    /// two may differ, as for a `503` the gateway sends with a `retry` code).
    public func status(forHTTP http: Int) -> Int {
        documentedStatuses.contains(http) ? http : documentedStatuses[0]
    }

    /// The `action` the backend documents for the code.
    public var action: ErrorAction {
        switch self {
        case .tooManyResources, .unknownIntegration: .configuration
        case .invalidAccessTokenServiceProvider, .invalidAccessTokenClientApplication: .applicationRegistration
        case .authenticatedProfileMissing, .authenticatedProfileExpired, .authenticatedProfileInvalidated, .authenticationSessionMissing,
            .authenticationSessionExpired:
            .authentication
        case .networkReceivedError, .networkConnectionTimeout, .maximumExecutionTimeExceeded: .retry
        default: .none
        }
    }

    /// The code the backend uses for a missing or invalid request parameter or header on `api`:
    /// v1's own where its list has one (`requestor`, `deviceId`, `deviceType`, the `mvpd` of an
    /// unknown integration), v2's otherwise (clients are told to handle the whole catalogue
    /// whichever API answers). `nil` for a name the backend publishes no code for.
    public static func forParameter(_ name: String, api: BackendAPI) -> BackendErrorCode? {
        switch (name.lowercased(), api) {
        case ("samlresponse", _): .invalidParameterSAMLResponse
        case ("requestor", .v1), ("appid", .v1): .invalidRequestor
        case ("deviceid", .v1), ("deviceuser", .v1): .invalidDeviceID
        case ("devicetype", .v1): .invalidDeviceInfo
        case ("mvpd", _): .invalidParameterMVPD
        case ("serviceprovider", _), ("requestor", .v2): .invalidParameterServiceProvider
        case ("partner", _): .invalidParameterPartner
        case ("redirecturl", _): .invalidParameterRedirectURL
        case ("code", _): .invalidParameterCode
        case ("resource", .v1): .missingResource
        case ("resources", _): .invalidParameterResources
        case ("authorization", _): .invalidAccessTokenClientApplication
        case ("ap-device-identifier", _): .invalidHeaderDeviceIdentifier
        case ("x-device-info", _): .invalidHeaderDeviceInfo
        case ("ap-partner-framework-status", _): .invalidHeaderPFSPermissionAccessNotPresent
        case ("ap-temppass-identity", _): .invalidHeaderIdentityForTemporaryAccess
        default: nil
        }
    }

    /// The code for a request the backend's lists name no parameter for (a broken request line,
    /// a method the route does not serve): v1's `internal_error`, which it documents with `400`
    /// and `405`, and v2's `internal_server_error`.
    public static func generic(api: BackendAPI) -> BackendErrorCode {
        api == .v1 ? .internalError : .internalServerError
    }
}
