import ArgumentParser
import Foundation
@_spi(Benchmarks) import SAMLBatch
import SAMLVerification
import ServerSupport
import Workers

#if canImport(Glibc)
import Glibc
#endif

/// `samlgate batch`: re-encodes (and optionally verifies) captured responses by the million.
struct BatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Re-encode and verify captured SAML responses: files, directories, JSON Lines, HAR, gzip.",
        discussion: """
            Each input is detected from its name and content: a document (raw XML, base64 or the \
            cookbook-encoded form; one record), JSON Lines (one record per line, the response in \
            --field), a HAR file (one record per request carrying a SAMLResponse), any of them \
            gzip-compressed; directories are read recursively in name order; '-' is standard input. \
            One output record per input record, in input order whatever --jobs. A bad record is \
            reported with its location and code and the run goes on. Exit status: 0; 1 when an \
            input could not be read, the output could not be written, or (with --fail-on-error) \
            any record failed; 2 for usage errors.
            """
    )

    @Argument(help: "Input files or directories; '-' for standard input.")
    var inputs: [String] = []

    @Option(
        help: """
            Where records go: a file (written whole at the end), or an existing directory for one .encoded file per record \
            (with --verify, per record that verifies). Default: standard output.
            """
    )
    var out: String?

    @Option(help: "Output format: jsonl or csv.")
    var format: String = OutputFormat.jsonl.rawValue

    @Option(help: "The JSON Lines field holding the response.")
    var field: String = BatchOptions().field

    @Option(help: "Only files matching this pattern (fnmatch, on the name or path) are read from directories.")
    var glob: String?

    @Flag(help: "Verify each response's signature and SAML rules (needs --trust or --trust-store).")
    var verify = false

    @OptionGroup var trust: TrustOptions

    @Option(help: "The MVPD whose trust applies to every record (default: the record's mvpd field, or the store's only MVPD).")
    var mvpd: String?

    @Option(help: "Judge validity windows as of this instant (ISO 8601, e.g. 2026-11-01T12:00:00Z) instead of now.")
    var now: String?

    @Flag(
        name: .customLong("replay-check"),
        help: """
            Reject an assertion id seen earlier in the run (off: captures repeat). Runs on one worker, so the first in input order \
            is the one accepted.
            """
    )
    var replayCheck = false

    @Option(help: "Worker threads (default: one per CPU the process may use).")
    var jobs: Int = UsableCPUs.count

    @Option(help: "Take only records whose index mod N is I (I/N, 0-based).")
    var shard: String?

    @Option(name: .customLong("max-record-bytes"), help: "Records larger than this are reported, not read.")
    var maxRecordBytes: Int = BatchOptions().maxRecordBytes

    @Option(help: "Progress on standard error: auto (bar on a terminal, lines otherwise), bar, lines or none.")
    var progress: String = ProgressMode.auto.rawValue

    @Option(name: .customLong("status-interval"), help: "Seconds between status lines when progress is lines.")
    var statusInterval: Double = BatchOptions().statusInterval

    @Flag(name: .customLong("fail-on-error"), help: "Exit with status 1 when any record failed.")
    var failOnError = false

    func validate() throws {
        if inputs.isEmpty { throw ValidationError("no inputs (use '-' for standard input)") }
        if OutputFormat(rawValue: format) == nil { throw ValidationError("--format must be jsonl or csv") }
        if ProgressMode(rawValue: progress) == nil { throw ValidationError("--progress must be auto, bar, lines or none") }
        if let shard, Shard(shard) == nil { throw ValidationError("--shard must be I/N with 0 <= I < N") }
        if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if maxRecordBytes < 1 { throw ValidationError("--max-record-bytes must be positive") }
        if statusInterval <= 0 { throw ValidationError("--status-interval must be positive") }
        if let now, Self.parseInstant(now) == nil { throw ValidationError("--now must be an ISO 8601 instant such as 2026-11-01T12:00:00Z") }
        if verify {
            if !trust.givesTrust { throw ValidationError("--verify needs --trust PEM or --trust-store DIR") }
        } else if trust.givesTrust || mvpd != nil || now != nil || replayCheck {
            throw ValidationError("--trust, --trust-store, --mvpd, --now and --replay-check only apply with --verify")
        }
        if inputs.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input ('-') can be read only once") }
    }

    func run() throws {
        var options = BatchOptions()
        options.field = field
        options.glob = glob
        options.format = OutputFormat(rawValue: format)!
        // Which of two equal assertions is "replayed" must not depend on thread timing: the
        // first in input order is accepted, so replay checking runs on one worker.
        options.jobs = replayCheck ? 1 : jobs
        options.shard = shard.flatMap(Shard.init) ?? .all
        options.maxRecordBytes = maxRecordBytes
        options.progress = ProgressMode(rawValue: progress)!
        options.statusInterval = statusInterval
        if let out {
            let path = RawArguments.paths([out])[0]
            var info = stat()
            if path.withCString({ stat($0, &info) }) == 0, info.st_mode & S_IFMT == S_IFDIR {
                options.output = .directory(path)
            } else {
                options.output = .file(path)
            }
        }
        if verify { options.verification = try makeVerification() }

        let report = BatchRunner.run(paths: RawArguments.paths(inputs), options: options) { StandardStreams.writeError($0) }
        StandardStreams.writeError(BatchSummary.render(report, verify: verify))
        for path in report.unreadableInputs {
            StandardStreams.writeError("samlgate batch: \(path): could not be read (see unreadable_input above)\n")
        }
        if let failure = report.outputFailure {
            StandardStreams.writeError("samlgate batch: output_failed: \(failure)\n")
            throw ExitCode.failure
        }
        // An --out DIR file that could not be written is lost output, whatever --fail-on-error.
        if report.statistics.failuresByCode["output_failed", default: 0] > 0 { throw ExitCode.failure }
        if !report.unreadableInputs.isEmpty || (failOnError && report.statistics.failed > 0) {
            throw ExitCode.failure
        }
    }

    private func makeVerification() throws -> BatchVerification {
        // `--trust` keys form one provider, which every record uses.
        let mvpdID = trust.trustStore == nil ? "cli" : mvpd
        let store: TrustStore
        do {
            store = try trust.loadStore(pemMVPD: "cli")
            if let mvpdID, store.provider(for: mvpdID) == nil, let directory = trust.trustStore {
                throw TrustStoreError("\(directory): no MVPD named \(mvpdID)")
            }
        } catch {
            StandardStreams.writeError("samlgate: trust: \(error)\n")
            throw ExitCode(2)
        }
        let verifier = Verifier(
            trustStore: store, options: trust.verificationOptions, replayCache: replayCheck ? InMemoryReplayCache() : nil)
        return BatchVerification(verifier: verifier, mvpd: mvpdID, now: now.flatMap(Self.parseInstant))
    }

    static func parseInstant(_ text: String) -> Date? {
        try? Date(text, strategy: .iso8601)
    }
}
