// Callgrind driver: verifies one response N times on the calling thread.
//
//   VerifyDriver gen DIR [rsa2048|p256] [SIZE]   writes DIR/key.pem, DIR/cert.pem, DIR/response.xml
//   VerifyDriver run DIR N [--libxml2-c14n] [--threads T]
//                                               verifies DIR/response.xml N times on each of T
//                                               threads (no replay cache); --libxml2-c14n turns
//                                               the native canonicalizer off (the baseline)
//
// Instructions per verification = (Ir(N) - Ir(0)) / N.
import Foundation
import SAMLVerification
import TestIdP

/// Sums per-thread results.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var total = 0
    func add(_ n: Int) { lock.withLock { total += n } }
    var value: Int { lock.withLock { total } }
}

let args = CommandLine.arguments
guard args.count >= 3 else {
    print("usage: VerifyDriver gen DIR [rsa2048|p256] [SIZE] | run DIR N")
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
    options.nativeCanonicalization = !args.contains("--libxml2-c14n")
    let verifier = Verifier(trustStore: store, options: options, replayCache: nil)
    // Warm-up outside the measured loop: library init, thread context, key.
    do {
        _ = try verifier.verify(bytes, mvpd: "Bench")
    } catch {
        print("verification failed: \(error)")
        exit(1)
    }
    // `--threads T`: T Dispatch threads verify N documents each, concurrently.
    let threads = args.firstIndex(of: "--threads").flatMap { Int(args[$0 + 1]) } ?? 1
    let verified = Counter()
    let clock = ContinuousClock()
    let elapsed = clock.measure {
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            var ok = 0
            bytes.withUnsafeBytes { buffer in
                for _ in 0..<n {
                    if (try? verifier.verify(buffer, mvpd: "Bench")) != nil { ok += 1 }
                }
            }
            verified.add(ok)
        }
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let total = n * threads
    let perCall = total > 0 ? seconds / Double(total) * 1e6 : 0
    let rate = seconds > 0 ? Double(total) / seconds : 0
    print("\(verified.value)/\(total) verified, \(String(format: "%.1f", perCall)) µs per verification, \(Int(rate))/s on \(threads) thread(s)")
default:
    print("unknown command")
    exit(2)
}
