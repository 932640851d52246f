import CLITestSupport
import Foundation
import Gateway
import ServerSupport
import Testing

/// YAML configuration files: anchors and aliases refused before Yams builds anything, depth and
/// size bounded; through the reader and through both server commands.
@Suite("Configuration files")
struct ConfigurationFileTests {
    /// Nested aliases: `levels` lines expand to 9^levels scalars in Yams' values.
    static func bomb(levels: Int) -> String {
        var text = "# settings\na: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n"
        var previous = "a"
        for level in 1..<levels {
            let name = "l\(level)"
            text += "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ",") + "]\n"
            previous = name
        }
        return text
    }

    static func refusal(_ text: String) -> String? {
        do {
            try ConfigurationFile.check(yaml: text, path: "c.yaml")
            return nil
        } catch {
            return error.message
        }
    }

    @Test("anchors, aliases and merge keys are refused with the file and line; & and * in quoted text or comments are text")
    func anchorsAndAliases() {
        #expect(Self.refusal(Self.bomb(levels: 9))?.hasPrefix("c.yaml: line 2: YAML anchors") == true)
        #expect(Self.refusal("port: 1\nhost: *h\n")?.hasPrefix("c.yaml: line 2: YAML aliases") == true)
        #expect(Self.refusal("base: &b {port: 1}\n") != nil)
        #expect(Self.refusal("x:\n  <<: *b\n") != nil)
        #expect(Self.refusal("upstreams: &u\n  - http://a:1\n") != nil)
        #expect(Self.refusal("? &k key\n: 1\n") != nil)
        for text in [
            "help-url: \"https://x.example/a&b*c\"\n", "audience: '&not-an-anchor *nor-an-alias'\n", "# &a *a\nport: 1 # *b\n",
            "help-url: https://x.example/?a=1&b=*\n", "audience: |\n  &a *b\n", "",
        ] {
            #expect(Self.refusal(text) == nil, "\(text)")
        }
    }

    @Test("nesting past the limit, a file over 1 MiB, and broken YAML are refused")
    func bounds() throws {
        let depth = ConfigurationFile.maximumDepth
        #expect(Self.refusal(String(repeating: "[", count: depth) + String(repeating: "]", count: depth)) == nil)
        #expect(
            Self.refusal(String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1))?
                .contains("nested deeper than \(depth) levels") == true)
        // Deep enough to overflow Yams' recursive construction: refused by the event walk first.
        #expect(Self.refusal(String(repeating: "[", count: 200_000)) != nil)
        #expect(Self.refusal("port: [1\nhost: x\n")?.contains("not valid YAML") == true)
        let comment = "#" + String(repeating: "x", count: ConfigurationFile.maximumSize) + "\n"
        let big = try SamlgateProcess.temporaryFile("big.yaml", Data(comment.utf8))
        do {
            _ = try ConfigurationFile.read(big)
            Issue.record("read a file over the limit")
        } catch {
            #expect(error.message == "\(big): larger than \(ConfigurationFile.maximumSize) bytes")
        }
        var configuration = GatewayConfiguration()
        #expect(throws: ConfigurationError.self) { try configuration.apply(yaml: Self.bomb(levels: 3), path: "c.yaml") }
    }

    @Test("samlgate serve --config and samlgate upstream --config refuse an alias bomb at once, naming the file and line")
    func commands() throws {
        let path = try SamlgateProcess.temporaryFile("bomb.yaml", Data(Self.bomb(levels: 5).utf8))
        for command in [["serve", "--config", path, "--log-format", "text"], ["upstream", "--config", path, "--port", "0", "--log-format", "text"]] {
            let result = try SamlgateProcess.run(command, timeout: 20)
            #expect(result.status == 2, "\(command[0]): \(result.stderr)")
            #expect(result.stderr.contains("\(path): line 2: YAML anchors (&name) are not accepted"), "\(command[0]): \(result.stderr)")
        }
    }
}
