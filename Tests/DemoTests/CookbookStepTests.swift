import Demo
import Foundation
import Testing

/// One test per cookbook step and per fallback scenario, over real HTTP: the demo plays the app
/// and VSA against a reference upstream behind a real gateway on loopback; each test checks one
/// step's status and deciding field against the cookbook table below.
@Suite("Cookbook flows through the gateway")
struct CookbookStepTests {
    static func v1Authenticated(_ mvpd: String, _ source: String) -> [(String, Int?, String)] {
        [
            ("GET /api/v1/tokens/authn", 200, "mvpd=\(mvpd)"),
            ("GET /api/v1/authorize", 200, "resource=REF"),
            ("GET /api/v1/mediatoken", 200, "serializedToken=present"),
            ("GET /api/v1/tokens/usermetadata", 200, "tokenSource=\(source)"),
            ("DELETE /api/v1/logout", 204, "(empty)"),
            ("GET /api/v1/checkauthn", 403, "code=authentication_session_missing"),
        ]
    }
    static func v1SecondScreen(_ mvpd: String) -> [(String, Int?, String)] {
        [
            ("POST /reggie/v1/REF/regcode", 201, "code issued"),
            ("GET /api/v1/authenticate", 302, "Location=/reference/login"),
            ("POST /reference/login", 200, "signed in"),
        ] + v1Authenticated(mvpd, mvpd)
    }
    static let vsa = "VSA (on the device)"
    static let v2Start: [(String, Int?, String)] = [
        ("POST /o/client/register", 201, "client_id issued"),
        ("POST /o/client/token", 201, "token_type=bearer"),
    ]
    static func v2Fallback(_ mvpd: String, _ denied: String) -> [(String, Int?, String)] {
        [
            ("GET /api/v2/REF/authenticate", 302, "Location=/reference/login"),
            ("POST /reference/login", 200, "signed in"),
            ("GET /api/v2/REF/profiles", 200, "\(mvpd)=regular"),
            ("POST /api/v2/REF/decisions/preauthorize/\(mvpd)", 200, "REF=Permit premium-sports=\(denied) mediaToken=no"),
            ("POST /api/v2/REF/decisions/authorize/\(mvpd)", 200, "REF=Permit mediaToken=yes"),
            ("GET /api/v2/REF/logout/\(mvpd)", 200, "actionName=logout actionType=interactive"),
        ]
    }

    static let table: [(DemoFlow, DemoScenario, [(String, Int?, String)])] = [
        (
            .v1, .happy,
            [
                ("GET /api/v1/checkauthn", 403, "code=authentication_session_missing"),
                (vsa, nil, "accessStatus=granted provider=Cablevision"),
                ("GET /api/v1/config/REF", 200, "Cablevision: enablePlatformServices=true boardingStatus=SUPPORTED"),
                ("GET /api/v1/REF/profile-requests/Cablevision", 200, "verificationToken=AttributeQuery"),
                (vsa, nil, "signed response"),
                ("POST /api/v1/tokens/authn", 204, "(empty)"),
            ] + v1Authenticated("Cablevision", "Apple")
        ),
        (
            .v1, .denied,
            [
                ("GET /api/v1/checkauthn", 403, "code=authentication_session_missing"),
                (vsa, nil, "accessStatus=denied → invalid_header_pfs_permission_access_not_granted"),
            ] + v1SecondScreen("Cablevision")
        ),
        (
            .v1, .unsupported,
            [
                ("GET /api/v1/checkauthn", 403, "code=authentication_session_missing"),
                (vsa, nil, "accessStatus=granted provider=SecondScreenTV"),
                ("GET /api/v1/config/REF", 200, "SecondScreenTV: enablePlatformServices=false boardingStatus=NOT_SUPPORTED"),
            ] + v1SecondScreen("SecondScreenTV")
        ),
        (
            .v1, .expired,
            [
                ("GET /api/v1/checkauthn", 403, "code=authentication_session_missing"),
                (vsa, nil, "accessStatus=granted provider=Cablevision"),
                ("GET /api/v1/config/REF", 200, "Cablevision: enablePlatformServices=true boardingStatus=SUPPORTED"),
                ("GET /api/v1/REF/profile-requests/Cablevision", 200, "verificationToken=AttributeQuery"),
                (vsa, nil, "signed response, session expired"),
                ("POST /api/v1/tokens/authn", 400, "code=invalid_parameter_saml_response reason=expired"),
            ] + v1SecondScreen("Cablevision")
        ),
        (
            .v2, .happy,
            v2Start + [
                (vsa, nil, "accessStatus=granted provider=Cablevision"),
                ("GET /api/v2/REF/profiles", 200, "profiles=none"),
                ("GET /api/v2/REF/configuration", 200, "Cablevision: enablePlatformServices=true boardingStatus=SUPPORTED"),
                ("POST /api/v2/REF/sessions/sso/apple", 200, "actionName=partner_profile actionType=direct authenticationRequest.type=saml"),
                (vsa, nil, "signed response"),
                ("POST /api/v2/REF/profiles/sso/apple", 201, "Cablevision=appleSSO"),
                ("GET /api/v2/REF/profiles", 200, "Cablevision=appleSSO"),
                ("POST /api/v2/REF/decisions/preauthorize/Cablevision", 200, "REF=Permit premium-sports=Deny mediaToken=no"),
                ("POST /api/v2/REF/decisions/authorize/Cablevision", 200, "REF=Permit mediaToken=yes"),
                ("GET /api/v2/REF/logout/Cablevision", 200, "actionName=partner_logout actionType=partner_interactive"),
            ]
        ),
        (
            .v2, .denied,
            v2Start + [
                (vsa, nil, "accessStatus=denied → invalid_header_pfs_permission_access_not_granted"),
                ("GET /api/v2/REF/profiles", 200, "profiles=none"),
                ("GET /api/v2/REF/configuration", 200, "Cablevision: enablePlatformServices=true boardingStatus=SUPPORTED"),
                ("POST /api/v2/REF/sessions/sso/apple", 200, "actionName=authenticate actionType=interactive reasonType=pfs_fallback"),
                (
                    "POST /api/v2/REF/profiles/sso/apple", 400,
                    "code=invalid_header_pfs_permission_access_not_granted reason=partner_access_not_granted"
                ),
            ] + v2Fallback("Cablevision", "Deny")
        ),
        (
            .v2, .unsupported,
            v2Start + [
                (vsa, nil, "accessStatus=granted provider=SecondScreenTV"),
                ("GET /api/v2/REF/profiles", 200, "profiles=none"),
                ("GET /api/v2/REF/configuration", 200, "SecondScreenTV: enablePlatformServices=false boardingStatus=NOT_SUPPORTED"),
                ("POST /api/v2/REF/sessions/sso/apple", 200, "actionName=authenticate actionType=interactive reasonType=configuration_fallback"),
            ] + v2Fallback("SecondScreenTV", "Permit")
        ),
        (
            .v2, .expired,
            v2Start + [
                (vsa, nil, "accessStatus=granted provider=Cablevision expired → invalid_header_pfs_provider_info_expired"),
                ("GET /api/v2/REF/profiles", 200, "profiles=none"),
                ("GET /api/v2/REF/configuration", 200, "Cablevision: enablePlatformServices=true boardingStatus=SUPPORTED"),
                ("POST /api/v2/REF/sessions/sso/apple", 200, "actionName=authenticate actionType=interactive reasonType=pfs_fallback"),
                (
                    "POST /api/v2/REF/profiles/sso/apple", 400,
                    "code=invalid_header_pfs_provider_info_expired reason=partner_provider_expired"
                ),
            ] + v2Fallback("Cablevision", "Deny")
        ),
    ]

    static let steps: [CookbookStep] = table.flatMap { flow, scenario, rows in
        rows.enumerated().map { index, row in
            CookbookStep(flow: flow, scenario: scenario, number: index + 1, call: row.0, status: row.1, decisive: row.2)
        }
    }

    @Test("each step gets the cookbook's status and deciding field", arguments: steps)
    func step(_ expected: CookbookStep) async throws {
        let walked = try await FlowRuns.shared.steps(expected.flow, expected.scenario)
        let seen = try #require(walked.first { $0.number == expected.number }, "the walk stopped before step \(expected.number)")
        // The second-screen login page of v2 carries the session code in its path.
        let call = seen.call.hasPrefix("GET /api/v2/authenticate/REF/") ? "GET /api/v2/REF/authenticate" : seen.call
        #expect(call == expected.call)
        #expect(seen.status == expected.status)
        #expect(seen.decisive == expected.decisive)
    }

    @Test("each scenario walks exactly the cookbook's steps, all passing", arguments: table.map { ($0.0, $0.1) })
    func scenario(_ flow: DemoFlow, _ scenario: DemoScenario) async throws {
        let walked = try await FlowRuns.shared.steps(flow, scenario)
        let rows = try #require(Self.table.first { $0.0 == flow && $0.1 == scenario }?.2)
        #expect(walked.count == rows.count)
        #expect(walked.allSatisfy { $0.passed }, "\(walked.filter { !$0.passed }.map { "\($0.number) \($0.call) \($0.decisive)" })")
    }
}
