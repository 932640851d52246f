// Callgrind driver: verifies one response N times on the calling thread.
//
//   VerifyDriver gen DIR [rsa2048|p256] [SIZE]   writes DIR/key.pem, DIR/cert.pem, DIR/response.xml
//   VerifyDriver run DIR N [--no-normalization]  verifies DIR/response.xml N times (no replay cache)
//
// Instructions per verification = (Ir(N) - Ir(0)) / N.
import Foundation
import SAMLVerification
import TestIdP

let args = CommandLine.arguments
guard args.count >= 3 else {
    print("usage: VerifyDriver gen DIR [rsa2048|p256] [SIZE] | run DIR N [--no-normalization]")
    exit(2)
}
let dir = args[2]
switch args[1] {
case "gen":
    let algorithm = KeyAlgorithm(rawValue: args.count > 3 ? args[3] : "rsa2048") ?? .rsa2048
    let size = args.count > 4 ? Int(args[4]) ?? 8192 : 8192
    let pair = try TestIdP.keygen(outDir: dir, algorithm: algorithm)
    var options = IssueOptions(mvpd: "Bench", user: "bench-user", attributes: [SAMLAttribute("userID", "u-1")], sign: .assertion)
    options.ttl = 10 * 365 * 86_400
    options.padToSize = size
    let bytes = try TestIdentityProvider(keyPair: pair).issue(options)
    try Data(bytes).write(to: URL(fileURLWithPath: dir + "/response.xml"))
    print("wrote \(bytes.count) bytes")
case "run":
    let n = Int(args[3]) ?? 1
    let cert = try String(contentsOfFile: dir + "/cert.pem", encoding: .utf8)
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/response.xml")))
    let store = TrustStore(providers: [try IdentityProviderTrust(mvpd: "Bench", certificatesPEM: [cert])])
    var options = VerificationOptions()
    options.checkNormalization = !args.contains("--no-normalization")
    let verifier = Verifier(trustStore: store, options: options, replayCache: nil)
    // Warm-up outside the measured loop: library init, thread context, key.
    do {
        _ = try verifier.verify(bytes, mvpd: "Bench")
    } catch {
        print("verification failed: \(error)")
        exit(1)
    }
    var ok = 0
    let clock = ContinuousClock()
    let elapsed = clock.measure {
        bytes.withUnsafeBytes { buffer in
            for _ in 0..<n {
                if (try? verifier.verify(buffer, mvpd: "Bench")) != nil { ok += 1 }
            }
        }
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let perCall = n > 0 ? seconds / Double(n) * 1e6 : 0
    print("\(ok)/\(n) verified, \(String(format: "%.1f", perCall)) µs per verification")
default:
    print("unknown command")
    exit(2)
}
