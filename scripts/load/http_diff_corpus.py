"""The requests make http-diff sends through nginx and the gateway (see http_diff.py): each case
one connection's bytes, in the order and pieces they are sent."""

from __future__ import annotations

from dataclasses import dataclass

P = b"/api/v2/REF/configuration"
HOST = b"Host: example.com"


def m(*lines: bytes, body: bytes = b"", eol: bytes = b"\r\n") -> bytes:
    """A request from its lines (request line first), the empty line, then body."""
    return eol.join(lines) + eol + eol + body


def get(*headers: bytes, target: bytes = P, line: bytes | None = None, body: bytes = b"") -> bytes:
    return m(line or b"GET " + target + b" HTTP/1.1", HOST, *headers, body=body)


def post(*headers: bytes, body: bytes = b"hello", target: bytes = P) -> bytes:
    return m(b"POST " + target + b" HTTP/1.1", HOST, *headers, body=body)


def post_cl(*headers: bytes, body: bytes = b"hello") -> bytes:
    return post(b"Content-Length: %d" % len(body), *headers, body=body)


def post_te(te: bytes, chunks: bytes = b"5\r\nhello\r\n0\r\n\r\n", *headers: bytes) -> bytes:
    return post(b"Transfer-Encoding: " + te, *headers, body=chunks)


def chunked(chunks: bytes, *headers: bytes) -> bytes:
    return post(b"Transfer-Encoding: chunked", *headers, body=chunks)


SMUGGLED = b"GET /api/v2/REF/smuggled HTTP/1.1\r\nHost: example.com\r\n\r\n"
FOLLOW = b"GET /api/v2/REF/follow-up HTTP/1.1\r\nHost: example.com\r\n\r\n"
WS = (b"Connection: Upgrade", b"Upgrade: websocket", b"Sec-WebSocket-Version: 13",
      b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")
H2C = (b"Connection: Upgrade, HTTP2-Settings", b"Upgrade: h2c", b"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA")


@dataclass
class Case:
    id: str
    group: str
    what: str
    parts: list  # bytes sent in turn, PAUSE between them
    expect: int = 1  # requests the client means to send (answers to wait for)
    head_first: bool = False  # the first request is a HEAD (its answer has no body)

    @property
    def data(self) -> bytes:
        return b"".join(self.parts)


PAUSE = 0.3


def corpus() -> list[Case]:
    cases: list[Case] = []

    def add(cid: str, group: str, what: str, data, expect: int = 1, head_first: bool = False):
        parts = data if isinstance(data, list) else [data]
        cases.append(Case(cid, group, what, parts, expect, head_first))

    # --- controls: what both must forward unchanged
    add("ctl-get", "control", "plain GET", get(b"Accept: */*"))
    add("ctl-post-cl", "control", "POST with Content-Length", post_cl(b"Content-Type: text/plain"))
    add("ctl-post-chunked", "control", "POST chunked", chunked(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"))
    add("ctl-head", "control", "HEAD", get(line=b"HEAD " + P + b" HTTP/1.1"), head_first=True)
    add("ctl-query", "control", "GET with a query", get(target=P + b"?a=1&b=%20x"))

    # --- request line
    g = "request-line"
    add("rl-absolute", g, "absolute-form, Host equal", get(line=b"GET http://example.com" + P + b" HTTP/1.1"))
    add("rl-absolute-other-host", g, "absolute-form, Host differs",
        m(b"GET http://other.example" + P + b" HTTP/1.1", HOST))
    add("rl-absolute-no-host", g, "absolute-form without Host header",
        m(b"GET http://example.com" + P + b" HTTP/1.1", b"Accept: */*"))
    add("rl-absolute-https", g, "absolute-form https scheme", get(line=b"GET https://example.com" + P + b" HTTP/1.1"))
    add("rl-absolute-userinfo", g, "absolute-form with userinfo",
        get(line=b"GET http://user:pw@example.com" + P + b" HTTP/1.1"))
    add("rl-absolute-port", g, "absolute-form with port", get(line=b"GET http://example.com:8080" + P + b" HTTP/1.1"))
    add("rl-absolute-upper-scheme", g, "absolute-form HTTP:// upper case",
        get(line=b"GET HTTP://example.com" + P + b" HTTP/1.1"))
    add("rl-absolute-ftp", g, "absolute-form ftp scheme", get(line=b"GET ftp://example.com" + P + b" HTTP/1.1"))
    add("rl-absolute-no-path", g, "absolute-form without path", get(line=b"GET http://example.com HTTP/1.1"))
    add("rl-absolute-bad-authority", g, "absolute-form, authority with space-less junk",
        get(line=b"GET http://exa%6dple.com" + P + b" HTTP/1.1"))
    add("rl-v12", g, "version HTTP/1.2", get(line=b"GET " + P + b" HTTP/1.2"))
    add("rl-v20", g, "version HTTP/2.0 on HTTP/1 framing", get(line=b"GET " + P + b" HTTP/2.0"))
    add("rl-v30", g, "version HTTP/3.0", get(line=b"GET " + P + b" HTTP/3.0"))
    add("rl-v09", g, "no version (HTTP/0.9 form)", b"GET " + P + b"\r\n")
    add("rl-v-lower", g, "version http/1.1 lower case", get(line=b"GET " + P + b" http/1.1"))
    add("rl-v-leading-zero", g, "version HTTP/01.1", get(line=b"GET " + P + b" HTTP/01.1"))
    add("rl-v-two-digits", g, "version HTTP/1.10", get(line=b"GET " + P + b" HTTP/1.10"))
    add("rl-v-junk", g, "version HTTP/1.1x", get(line=b"GET " + P + b" HTTP/1.1x"))
    add("rl-method-lower", g, "method get in lower case", get(line=b"get " + P + b" HTTP/1.1"))
    add("rl-method-mixed", g, "method Get in mixed case", get(line=b"Get " + P + b" HTTP/1.1"))
    add("rl-method-unknown", g, "unknown method FOO", get(line=b"FOO " + P + b" HTTP/1.1"))
    add("rl-method-odd-token", g, "method with tchar: G-T", get(line=b"G-T " + P + b" HTTP/1.1"))
    add("rl-method-nontoken", g, "method with non-token char: GE(T", get(line=b"GE(T " + P + b" HTTP/1.1"))
    add("rl-tab-sep", g, "tab between method and target", get(line=b"GET\t" + P + b" HTTP/1.1"))
    add("rl-tab-sep2", g, "tab between target and version", get(line=b"GET " + P + b"\tHTTP/1.1"))
    add("rl-two-spaces", g, "two spaces after method", get(line=b"GET  " + P + b" HTTP/1.1"))
    add("rl-two-spaces2", g, "two spaces before version", get(line=b"GET " + P + b"  HTTP/1.1"))
    add("rl-trailing-space", g, "space after version", get(line=b"GET " + P + b" HTTP/1.1 "))
    add("rl-leading-space", g, "space before method", get(line=b" GET " + P + b" HTTP/1.1"))
    add("rl-leading-crlf", g, "empty line before request line", b"\r\n" + get())
    add("rl-leading-2crlf", g, "two empty lines before request line", b"\r\n\r\n" + get())
    add("rl-space-in-target", g, "space inside target", get(line=b"GET " + P + b"/a b HTTP/1.1"))
    add("rl-target-nonascii", g, "raw byte 0xE9 in query", get(target=P + b"?q=caf\xe9"))
    add("rl-target-nonascii-path", g, "raw byte 0xE9 in path", get(target=P + b"/caf\xe9"))
    add("rl-target-nul-escape", g, "%00 in query", get(target=P + b"?q=%00"))
    add("rl-target-nul-raw", g, "raw NUL in target", get(target=P + b"?q=\x00"))
    add("rl-target-ctl-raw", g, "raw 0x01 in target", get(target=P + b"?q=\x01"))
    add("rl-target-del-raw", g, "raw DEL in target", get(target=P + b"?q=\x7f"))
    add("rl-target-fragment", g, "#fragment in target", get(target=P + b"#frag"))
    add("rl-target-star", g, "GET *", get(line=b"GET * HTTP/1.1"))
    add("rl-options-star", g, "OPTIONS *", get(line=b"OPTIONS * HTTP/1.1"))
    add("rl-connect", g, "CONNECT authority-form", get(line=b"CONNECT example.com:443 HTTP/1.1"))
    add("rl-trace", g, "TRACE", get(line=b"TRACE " + P + b" HTTP/1.1"))
    add("rl-no-slash", g, "origin-form without leading /", get(line=b"GET api/v2/REF/configuration HTTP/1.1"))
    add("rl-dot-segments", g, "dot segments /../", get(target=b"/api/v2/REF/x/../configuration"))
    add("rl-dot-above-root", g, "dot segments above the root", get(target=b"/../../api/v2/REF/configuration"))
    add("rl-escaped-slash", g, "escaped slash %2F", get(target=b"/api/v2/REF%2Fconfiguration"))
    add("rl-escaped-unreserved", g, "escaped unreserved %61", get(target=b"/%61pi/v2/REF/configuration"))
    add("rl-escaped-lower-hex", g, "lower-case hex escape %2e", get(target=P + b"/a%2eb"))
    add("rl-bad-escape", g, "malformed escape %zz", get(target=P + b"/%zz"))
    add("rl-backslash", g, "backslash in path", get(target=b"/api/v2/REF\\configuration"))
    add("rl-semicolon", g, "path parameter ;x", get(target=P + b";jsessionid=1"))
    add("rl-double-slash", g, "empty segment //", get(target=b"/api/v2//REF/configuration"))
    add("rl-long-target", g, "10 KB query", get(target=P + b"?q=" + b"a" * 10000))
    add("rl-bare-lf", g, "bare LF line ends throughout", m(b"GET " + P + b" HTTP/1.1", HOST, b"X-A: 1", eol=b"\n"))
    add("rl-bare-cr", g, "bare CR line ends throughout", m(b"GET " + P + b" HTTP/1.1", HOST, b"X-A: 1", eol=b"\r"))
    add("rl-cr-in-line", g, "bare CR inside request line", get(line=b"GET " + P + b"\rX HTTP/1.1"))

    # --- Host
    g = "host"
    line11 = b"GET " + P + b" HTTP/1.1"
    add("host-missing", g, "HTTP/1.1 without Host", m(line11, b"Accept: */*"))
    add("host-two-same", g, "two equal Host headers", m(line11, HOST, HOST))
    add("host-two-diff", g, "two different Host headers", m(line11, HOST, b"Host: evil.example"))
    add("host-path", g, "Host with a path", m(line11, b"Host: example.com/evil"))
    add("host-space", g, "Host with an inner space", m(line11, b"Host: exa mple.com"))
    add("host-comma", g, "Host list with comma", m(line11, b"Host: example.com, evil.example"))
    add("host-userinfo", g, "Host with userinfo", m(line11, b"Host: user@example.com"))
    add("host-port-big", g, "Host port 99999", m(line11, b"Host: example.com:99999"))
    add("host-port-alpha", g, "Host port abc", m(line11, b"Host: example.com:abc"))
    add("host-port-empty", g, "Host with empty port", m(line11, b"Host: example.com:"))
    add("host-port-sign", g, "Host port -1", m(line11, b"Host: example.com:-1"))
    add("host-two-colons", g, "Host example.com:80:80", m(line11, b"Host: example.com:80:80"))
    add("host-ipv6", g, "Host [::1]:8080", m(line11, b"Host: [::1]:8080"))
    add("host-ipv6-bare", g, "Host ::1 without brackets", m(line11, b"Host: ::1"))
    add("host-ipv6-open", g, "Host [::1 unclosed", m(line11, b"Host: [::1"))
    add("host-ipv6-junk", g, "Host [zz::1]", m(line11, b"Host: [zz::1]"))
    add("host-empty", g, "Host empty", m(line11, b"Host:"))
    add("host-blank", g, "Host only blanks", m(line11, b"Host:    "))
    add("host-http10-none", g, "HTTP/1.0 without Host", m(b"GET " + P + b" HTTP/1.0", b"Accept: */*"))
    add("host-http10", g, "HTTP/1.0 with Host", m(b"GET " + P + b" HTTP/1.0", HOST))
    add("host-trailing-dot", g, "Host with trailing dot", m(line11, b"Host: example.com."))
    add("host-upper", g, "Host in upper case", m(line11, b"Host: EXAMPLE.COM"))
    add("host-underscore", g, "Host with underscore", m(line11, b"Host: ex_ample.com"))
    add("host-tab-inside", g, "Host with an inner tab", m(line11, b"Host: exa\tmple.com"))
    add("host-obs-text", g, "Host with byte 0xE9", m(line11, b"Host: caf\xe9.example"))
    add("host-utf8", g, "Host with UTF-8", m(line11, "Host: café.example".encode()))
    add("host-space-colon", g, "Host name with space before colon", m(line11, b"Host : example.com"))
    add("host-long", g, "Host of 300 bytes", m(line11, b"Host: " + b"a" * 296 + b".com"))
    add("host-ows", g, "Host with surrounding blanks", m(line11, b"Host: \t example.com \t"))
    add("host-escape", g, "Host with percent escape", m(line11, b"Host: ex%61mple.com"))
    add("host-lower-name", g, "host name in lower case", m(line11, b"host: example.com"))
    add("host-fold", g, "Host value folded (obs-fold)", m(line11, b"Host: example.com", b" evil.example"))

    # --- header names and values
    g = "header"
    add("hdr-obs-fold", g, "obs-fold continuation line", get(b"X-A: first", b" second"))
    add("hdr-obs-fold-tab", g, "obs-fold with tab", get(b"X-A: first", b"\tsecond"))
    add("hdr-first-line-space", g, "header line after request line starts with a space",
        m(line11, b" X-A: b", HOST))
    add("hdr-bare-cr-value", g, "bare CR inside a value", get(b"X-A: a\rb"))
    add("hdr-bare-lf-line", g, "one header line ending with bare LF", get(b"X-A: a\nX-B: b"))
    add("hdr-nul-value", g, "NUL in a value", get(b"X-A: a\x00b"))
    add("hdr-nul-name", g, "NUL in a name", get(b"X-\x00A: b"))
    add("hdr-del-value", g, "DEL in a value", get(b"X-A: a\x7fb"))
    add("hdr-ctl-value", g, "0x01 in a value", get(b"X-A: a\x01b"))
    add("hdr-vt-value", g, "vertical tab in a value", get(b"X-A: a\x0bb"))
    add("hdr-esc-value", g, "ESC in a value", get(b"X-A: a\x1b[31mb"))
    add("hdr-tab-value", g, "tab inside a value", get(b"X-A: a\tb"))
    add("hdr-obs-text", g, "obs-text byte 0xE9 (not UTF-8)", get(b"X-A: caf\xe9"))
    add("hdr-obs-text-all", g, "every byte 0x80-0xFF in one value", get(b"X-A: " + bytes(range(0x80, 0x100))))
    add("hdr-utf8", g, "UTF-8 value", get("X-A: café ☕".encode()))
    add("hdr-utf8-overlong", g, "overlong UTF-8 (C0 AF)", get(b"X-A: a\xc0\xafb"))
    add("hdr-replacement-char", g, "the character U+FFFD itself", get("X-A: a\ufffdb".encode()))
    add("hdr-name-obs-text", g, "byte 0xE9 in a name", get(b"X-\xe9: b"))
    add("hdr-long-6k", g, "6 KB value", get(b"X-A: " + b"v" * 6000))
    add("hdr-long-9k", g, "9 KB value", get(b"X-A: " + b"v" * 9000))
    add("hdr-long-20k", g, "20 KB value", get(b"X-A: " + b"v" * 20000))
    add("hdr-long-70k", g, "70 KB value", get(b"X-A: " + b"v" * 70000))
    add("hdr-long-100k", g, "100 KB value", get(b"X-A: " + b"v" * 100000))
    add("hdr-long-name", g, "9 KB header name", get(b"X-" + b"n" * 9000 + b": v"))
    add("hdr-underscore", g, "name with underscore X_Custom", get(b"X_Custom: 1"))
    add("hdr-underscore-xff", g, "X_Forwarded_For", get(b"X_Forwarded_For: 6.6.6.6"))
    add("hdr-dot-name", g, "name with dot X.A", get(b"X.A: 1"))
    add("hdr-tilde-name", g, "name with tilde X~A", get(b"X~A: 1"))
    add("hdr-paren-name", g, "name with ( X(A)", get(b"X(A): 1"))
    add("hdr-slash-name", g, "name with / X/A", get(b"X/A: 1"))
    add("hdr-space-colon", g, "space before colon", get(b"X-A : b"))
    add("hdr-tab-colon", g, "tab before colon", get(b"X-A\t: b"))
    add("hdr-space-in-name", g, "space inside a name", get(b"X A: b"))
    add("hdr-empty-name", g, "empty name", get(b": value"))
    add("hdr-no-colon", g, "line without a colon", get(b"JustText"))
    add("hdr-empty-value", g, "empty value", get(b"X-A:"))
    add("hdr-ows", g, "value with surrounding blanks", get(b"X-A: \t  b c \t "))
    add("hdr-colon-value", g, "colon inside a value", get(b"X-A: a:b::c"))
    add("hdr-dup", g, "same header twice (order kept?)", get(b"X-A: 1", b"X-B: x", b"X-A: 2"))
    add("hdr-lower-names", g, "lower-case names", get(b"x-a: 1", b"accept: */*"))
    add("hdr-ct-twice", g, "Content-Type twice on POST", post_cl(b"Content-Type: text/plain", b"Content-Type: application/json"))
    add("hdr-auth-twice", g, "Authorization twice", get(b"Authorization: Bearer a", b"Authorization: Bearer b"))
    add("hdr-cookie-twice", g, "Cookie twice", get(b"Cookie: a=1", b"Cookie: b=2"))
    add("hdr-100", g, "100 headers", get(*[b"X-H%d: v" % i for i in range(100)]))
    add("hdr-1000", g, "1000 headers", get(*[b"X-H%d: v" % i for i in range(1000)]))
    add("hdr-5000", g, "5000 headers (~50 KB)", get(*[b"X-H%d: v" % i for i in range(5000)]))
    add("hdr-10000-tiny", g, "10000 tiny headers (~60 KB)", get(*[b"A: b" for _ in range(10000)]))
    add("hdr-20000-tiny", g, "20000 tiny headers (~120 KB)", get(*[b"A: b" for _ in range(20000)]))
    add("hdr-100000-tiny", g, "100000 tiny headers (~600 KB)", get(*[b"A: b" for _ in range(100000)]))
    add("hdr-head-90k", g, "head just over 80 KB in 30 headers", get(*[b"X-H%d: " % i + b"v" * 3000 for i in range(30)]))

    # --- framing
    g = "framing"
    add("fr-cl-te", g, "Content-Length and Transfer-Encoding: chunked",
        post(b"Content-Length: 5", b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-cl", g, "Transfer-Encoding: chunked then Content-Length",
        post(b"Transfer-Encoding: chunked", b"Content-Length: 5", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-cl-te-smuggle", g, "CL.TE: CL covers a chunked body hiding a request",
        post(b"Content-Length: %d" % len(b"0\r\n\r\n" + SMUGGLED), b"Transfer-Encoding: chunked", body=b"0\r\n\r\n" + SMUGGLED))
    add("fr-te-cl-smuggle", g, "TE.CL: chunked body whose CL points inside it",
        post(b"Transfer-Encoding: chunked", b"Content-Length: 4",
             body=b"%x\r\n" % len(SMUGGLED) + SMUGGLED + b"\r\n0\r\n\r\n"))
    add("fr-cl-twice-same", g, "Content-Length twice, equal", post(b"Content-Length: 5", b"Content-Length: 5"))
    add("fr-cl-twice-diff", g, "Content-Length twice, different", post(b"Content-Length: 5", b"Content-Length: 6", body=b"hello!"))
    add("fr-cl-list-same", g, "Content-Length: 5, 5", post(b"Content-Length: 5, 5"))
    add("fr-cl-list-diff", g, "Content-Length: 5, 6", post(b"Content-Length: 5, 6", body=b"hello!"))
    add("fr-cl-plus", g, "Content-Length: +5", post(b"Content-Length: +5"))
    add("fr-cl-minus", g, "Content-Length: -1", post(b"Content-Length: -1"))
    add("fr-cl-ows", g, "Content-Length with blanks around", post(b"Content-Length:   5  "))
    add("fr-cl-leading-ows", g, "Content-Length with blanks before", post(b"Content-Length:   5"))
    add("fr-cl-trailing-ows", g, "Content-Length with a blank after", post(b"Content-Length: 5 "))
    add("fr-cl-inner-space", g, "Content-Length: 5 5", post(b"Content-Length: 5 5"))
    add("fr-cl-zeros", g, "Content-Length: 005", post(b"Content-Length: 005"))
    add("fr-cl-hex", g, "Content-Length: 0x5", post(b"Content-Length: 0x5"))
    add("fr-cl-huge", g, "Content-Length of 20 digits", post(b"Content-Length: 99999999999999999999"))
    add("fr-cl-empty", g, "Content-Length empty", post(b"Content-Length:", body=b""))
    add("fr-cl-space-colon", g, "Content-Length : 5 (space before colon)", post(b"Content-Length : 5"))
    add("fr-cl-underscore", g, "Content_Length: 5", post(b"Content_Length: 5"))
    add("fr-cl-fold", g, "Content-Length folded", post(b"Content-Length:", b" 5"))
    add("fr-cl-get-body", g, "GET with Content-Length body", get(b"Content-Length: 5", body=b"hello"))
    add("fr-cl-short", g, "body longer than Content-Length: rest is a 2nd request",
        post(b"Content-Length: 5", body=b"hello" + SMUGGLED), expect=2)
    add("fr-cl-zero-trailing", g, "Content-Length: 0 followed by a request",
        post(b"Content-Length: 0", body=SMUGGLED), expect=2)
    add("fr-no-cl-body", g, "POST without framing, body bytes then a request",
        m(b"POST " + P + b" HTTP/1.1", HOST, body=b"hello" + SMUGGLED), expect=2)
    add("fr-te-chunked-gzip", g, "Transfer-Encoding: chunked, gzip", post_te(b"chunked, gzip"))
    add("fr-te-gzip-chunked", g, "Transfer-Encoding: gzip, chunked", post_te(b"gzip, chunked"))
    add("fr-te-identity", g, "Transfer-Encoding: identity", post_te(b"identity", b"hello"))
    add("fr-te-identity-chunked", g, "Transfer-Encoding: identity, chunked", post_te(b"identity, chunked"))
    add("fr-te-chunked-twice", g, "Transfer-Encoding: chunked, chunked", post_te(b"chunked, chunked"))
    add("fr-te-two-headers", g, "two Transfer-Encoding: chunked headers",
        post(b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-gzip-then-chunked", g, "Transfer-Encoding: gzip, then a second header chunked",
        post(b"Transfer-Encoding: gzip", b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-xchunked", g, "Transfer-Encoding: xchunked", post_te(b"xchunked"))
    add("fr-te-chunked-x", g, "Transfer-Encoding: chunkedx", post_te(b"chunkedx"))
    add("fr-te-trailing-space", g, "Transfer-Encoding: 'chunked '", post_te(b"chunked "))
    add("fr-te-leading-tab", g, "Transfer-Encoding: '\\tchunked'", post_te(b"\tchunked"))
    add("fr-te-trailing-tab", g, "Transfer-Encoding: 'chunked\\t'", post_te(b"chunked\t"))
    add("fr-te-capital", g, "Transfer-Encoding: Chunked", post_te(b"Chunked"))
    add("fr-te-upper", g, "Transfer-Encoding: CHUNKED", post_te(b"CHUNKED"))
    add("fr-te-empty-element", g, "Transfer-Encoding: , chunked", post_te(b", chunked"))
    add("fr-te-vt", g, "Transfer-Encoding: chunked + vertical tab", post_te(b"chunked\x0b"))
    add("fr-te-quoted", g, 'Transfer-Encoding: "chunked"', post_te(b'"chunked"'))
    add("fr-te-param", g, "Transfer-Encoding: chunked;q=1", post_te(b"chunked;q=1"))
    add("fr-te-fold", g, "Transfer-Encoding folded onto a 2nd line",
        post(b"Transfer-Encoding:", b" chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-space-colon", g, "Transfer-Encoding : chunked (space before colon)",
        post(b"Transfer-Encoding : chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-underscore", g, "Transfer_Encoding: chunked",
        post(b"Transfer_Encoding: chunked", b"Content-Length: 5", body=b"hello"))
    add("fr-te-http10", g, "chunked on HTTP/1.0",
        m(b"POST " + P + b" HTTP/1.0", HOST, b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-te-get", g, "GET with a chunked body", get(b"Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-0x", g, "chunk size 0x5", chunked(b"0x5\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-plus", g, "chunk size +5", chunked(b"+5\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-minus", g, "chunk size -5", chunked(b"-5\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-leading-space", g, "chunk size ' 5'", chunked(b" 5\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-trailing-space", g, "chunk size '5 '", chunked(b"5 \r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-trailing-tab", g, "chunk size '5\\t'", chunked(b"5\t\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-upper-hex", g, "chunk size A (upper-case hex)", chunked(b"A\r\nhellohello\r\n0\r\n\r\n"))
    add("fr-ch-zeros", g, "chunk size 0005", chunked(b"0005\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-huge", g, "chunk size of 17 hex digits", chunked(b"ffffffffffffffff1\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-overflow-wrap", g, "chunk size 2^64+5 (wraps to 5)", chunked(b"10000000000000005\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-empty-size", g, "empty chunk-size line", chunked(b"\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext", g, "chunk extension ;foo=bar", chunked(b"5;foo=bar\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext-quoted", g, 'chunk extension with quoted ";"', chunked(b'5;a="b;c"\r\nhello\r\n0\r\n\r\n'))
    add("fr-ch-ext-bare", g, "chunk extension bare ;", chunked(b"5;\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext-space", g, "chunk extension with blanks: 5 ; a = b", chunked(b"5 ; a = b\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext-ctl", g, "chunk extension with a control byte", chunked(b"5;a=\x01\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext-long", g, "chunk extension of 8 KB", chunked(b"5;a=" + b"x" * 8000 + b"\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-ext-last", g, "extension on the last chunk", chunked(b"5\r\nhello\r\n0;end=1\r\n\r\n"))
    add("fr-ch-data-long", g, "chunk data longer than its size", chunked(b"3\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-data-short", g, "chunk data shorter than its size", chunked(b"7\r\nhello\r\n0\r\n\r\n"))
    add("fr-ch-no-crlf", g, "no CRLF after chunk data", chunked(b"5\r\nhello0\r\n\r\n"))
    add("fr-ch-lf-only", g, "bare LF line ends in the chunked body", chunked(b"5\nhello\n0\n\n"))
    add("fr-ch-lf-size", g, "bare LF after a chunk size only", chunked(b"5\nhello\r\n0\r\n\r\n"))
    add("fr-ch-lf-data", g, "bare LF after chunk data only", chunked(b"5\r\nhello\n0\r\n\r\n"))
    add("fr-ch-cr-only", g, "bare CR after chunk data", chunked(b"5\r\nhello\r0\r\n\r\n"))
    add("fr-ch-trailer", g, "trailer field X-T", chunked(b"5\r\nhello\r\n0\r\nX-T: v\r\n\r\n"))
    add("fr-ch-trailer-declared", g, "trailer declared by Trailer: X-T",
        chunked(b"5\r\nhello\r\n0\r\nX-T: v\r\n\r\n", b"Trailer: X-T"))
    add("fr-ch-trailer-cl", g, "Content-Length in the trailer", chunked(b"5\r\nhello\r\n0\r\nContent-Length: 50\r\n\r\n"))
    add("fr-ch-trailer-host", g, "Host in the trailer", chunked(b"5\r\nhello\r\n0\r\nHost: evil.example\r\n\r\n"))
    add("fr-ch-trailer-te", g, "Transfer-Encoding in the trailer",
        chunked(b"5\r\nhello\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n"))
    add("fr-ch-trailer-fold", g, "folded trailer line", chunked(b"5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n"))
    add("fr-ch-trailer-nocolon", g, "trailer line without colon", chunked(b"5\r\nhello\r\n0\r\nJunk\r\n\r\n"))
    add("fr-ch-trailer-lf", g, "trailer section ended by bare LF", chunked(b"5\r\nhello\r\n0\r\nX-T: v\n\n"))
    add("fr-ch-unterminated", g, "chunked body without last chunk (client stops)", chunked(b"5\r\nhello\r\n"))
    add("fr-ch-then-request", g, "chunked body then a pipelined request",
        chunked(b"5\r\nhello\r\n0\r\n\r\n" + SMUGGLED), expect=2)
    add("fr-ch-zero-then-junk", g, "0-chunk then junk before the empty line", chunked(b"0\r\nGET / HTTP/1.1\r\n\r\n"))
    add("fr-ch-size-smuggle", g, "chunk size hides a request in its extension",
        chunked(b"5;" + SMUGGLED.replace(b"\r\n", b" ") + b"\r\nhello\r\n0\r\n\r\n"))

    # --- Expect
    g = "expect"
    head100 = m(b"POST " + P + b" HTTP/1.1", HOST, b"Content-Length: 5", b"Expect: 100-continue")
    add("exp-100", g, "Expect: 100-continue, body after a pause", [head100, b"hello"])
    add("exp-100-eager", g, "Expect: 100-continue, body sent at once", head100 + b"hello")
    add("exp-100-case", g, "Expect: 100-Continue", [head100.replace(b"100-continue", b"100-Continue"), b"hello"])
    add("exp-100-get", g, "Expect: 100-continue on GET without body", get(b"Expect: 100-continue"))
    add("exp-other", g, "Expect: something-else", post_cl(b"Expect: something-else"))
    add("exp-twice", g, "Expect twice", [m(b"POST " + P + b" HTTP/1.1", HOST, b"Content-Length: 5",
                                         b"Expect: 100-continue", b"Expect: 100-continue"), b"hello"])
    add("exp-http10", g, "Expect: 100-continue on HTTP/1.0",
        [m(b"POST " + P + b" HTTP/1.0", HOST, b"Content-Length: 5", b"Expect: 100-continue"), b"hello"])
    add("exp-chunked", g, "Expect: 100-continue with a chunked body",
        [m(b"POST " + P + b" HTTP/1.1", HOST, b"Transfer-Encoding: chunked", b"Expect: 100-continue"),
         b"5\r\nhello\r\n0\r\n\r\n"])

    # --- Upgrade
    g = "upgrade"
    add("up-websocket", g, "websocket upgrade", get(*WS))
    add("up-websocket-follow", g, "websocket upgrade + pipelined GET", get(*WS) + FOLLOW, expect=2)
    add("up-websocket-frame", g, "websocket upgrade + bytes of a frame", get(*WS) + b"\x81\x85\x00\x00\x00\x00hello")
    add("up-h2c", g, "h2c upgrade", get(*H2C))
    add("up-h2c-follow", g, "h2c upgrade + pipelined GET", get(*H2C) + FOLLOW, expect=2)
    add("up-h2c-preface", g, "h2c upgrade + HTTP/2 preface", get(*H2C) + b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    add("up-no-connection", g, "Upgrade without Connection: upgrade", get(b"Upgrade: websocket") + FOLLOW, expect=2)
    add("up-connection-only", g, "Connection: Upgrade without Upgrade", get(b"Connection: Upgrade") + FOLLOW, expect=2)
    add("up-post-body", g, "upgrade on POST with a body + pipelined GET",
        post_cl(*WS) + FOLLOW, expect=2)
    add("up-h2-preface", g, "HTTP/2 prior-knowledge preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
    add("up-http2-settings-only", g, "HTTP2-Settings without Upgrade", get(b"HTTP2-Settings: AAMAAABkAAQ"))

    # --- Connection and hop-by-hop headers
    g = "connection"
    add("conn-close-follow", g, "Connection: close + pipelined GET", get(b"Connection: close") + FOLLOW, expect=2)
    add("conn-names-custom", g, "Connection names X-Secret", get(b"Connection: keep-alive, X-Secret", b"X-Secret: s"))
    add("conn-names-auth", g, "Connection names Authorization", get(b"Connection: Authorization", b"Authorization: Bearer t"))
    add("conn-names-cookie", g, "Connection names Cookie", get(b"Connection: Cookie", b"Cookie: a=1"))
    add("conn-names-xff", g, "Connection names X-Forwarded-For", get(b"Connection: X-Forwarded-For", b"X-Forwarded-For: 6.6.6.6"))
    add("conn-names-own", g, "Connection names the headers a proxy sets itself",
        get(b"Connection: X-Forwarded-For, X-Forwarded-Host, X-Forwarded-Proto, X-Request-Id, traceparent"))
    add("conn-names-host", g, "Connection names Host", get(b"Connection: Host"))
    add("conn-names-cl", g, "Connection names Content-Length", post_cl(b"Connection: Content-Length"))
    add("conn-names-te", g, "Connection names Transfer-Encoding",
        chunked(b"5\r\nhello\r\n0\r\n\r\n", b"Connection: Transfer-Encoding"))
    add("conn-names-ct", g, "Connection names Content-Type", post_cl(b"Connection: Content-Type", b"Content-Type: text/plain"))
    add("conn-names-40", g, "Connection lists 40 names", get(b"Connection: " + b", ".join(b"X-C%d" % i for i in range(40))))
    add("conn-names-two-headers", g, "two Connection headers naming X-A and X-B",
        get(b"Connection: X-A", b"Connection: X-B", b"X-A: 1", b"X-B: 2", b"X-C: 3"))
    add("conn-keep-alive-hdr", g, "Keep-Alive header", get(b"Keep-Alive: timeout=5"))
    add("conn-te-trailers", g, "TE: trailers", get(b"TE: trailers"))
    add("conn-te-gzip", g, "TE: gzip", get(b"TE: gzip"))
    add("conn-proxy-auth", g, "Proxy-Authorization", get(b"Proxy-Authorization: Basic dTpw"))
    add("conn-proxy-connection", g, "Proxy-Connection: keep-alive", get(b"Proxy-Connection: keep-alive"))
    add("conn-trailer-hdr", g, "Trailer header on a GET", get(b"Trailer: X-T"))
    add("conn-http10-keepalive", g, "HTTP/1.0 keep-alive + pipelined GET",
        m(b"GET " + P + b" HTTP/1.0", HOST, b"Connection: keep-alive") + FOLLOW, expect=2)
    add("conn-close-token-list", g, "Connection: X-A, close + pipelined GET", get(b"Connection: X-A, close", b"X-A: 1") + FOLLOW, expect=2)

    # --- forwarding claims
    g = "forwarded"
    add("fw-xff", g, "X-Forwarded-For spoof", get(b"X-Forwarded-For: 6.6.6.6"))
    add("fw-xff-twice", g, "X-Forwarded-For twice", get(b"X-Forwarded-For: 6.6.6.6", b"X-Forwarded-For: 7.7.7.7"))
    add("fw-xff-lower", g, "x-forwarded-for lower case", get(b"x-forwarded-for: 6.6.6.6"))
    add("fw-xff-space-colon", g, "X-Forwarded-For with space before colon", get(b"X-Forwarded-For : 6.6.6.6"))
    add("fw-xfh", g, "X-Forwarded-Host spoof", get(b"X-Forwarded-Host: evil.example"))
    add("fw-xfp", g, "X-Forwarded-Proto spoof", get(b"X-Forwarded-Proto: https"))
    add("fw-xf-ssl", g, "X-Forwarded-Ssl spoof", get(b"X-Forwarded-Ssl: on"))
    add("fw-xf-port", g, "X-Forwarded-Port spoof", get(b"X-Forwarded-Port: 443"))
    add("fw-forwarded", g, "Forwarded spoof", get(b"Forwarded: for=6.6.6.6;host=evil.example;proto=https"))
    add("fw-real-ip", g, "X-Real-IP spoof", get(b"X-Real-IP: 6.6.6.6"))
    add("fw-client-ip", g, "Client-IP / True-Client-IP spoof", get(b"Client-IP: 6.6.6.6", b"True-Client-IP: 6.6.6.6"))
    add("fw-original-url", g, "X-Original-URL", get(b"X-Original-URL: /admin"))
    add("fw-rewrite-url", g, "X-Rewrite-URL", get(b"X-Rewrite-URL: /admin"))
    add("fw-method-override", g, "X-HTTP-Method-Override", get(b"X-HTTP-Method-Override: DELETE"))
    add("fw-xhost", g, "X-Host", get(b"X-Host: evil.example"))
    add("fw-request-id", g, "X-Request-Id valid", get(b"X-Request-Id: abc-123"))
    add("fw-request-id-bad", g, "X-Request-Id with quotes", get(b'X-Request-Id: a"b'))
    add("fw-traceparent", g, "traceparent valid",
        get(b"traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", b"tracestate: a=b"))
    add("fw-traceparent-bad", g, "traceparent invalid + tracestate",
        get(b"traceparent: 00-XYZ-b7ad6b7169203331-01", b"tracestate: a=b"))

    # --- pipelined pairs
    g = "pipeline"
    add("pl-two-gets", g, "two GETs", get() + FOLLOW, expect=2)
    add("pl-post-get", g, "POST with CL + GET", post_cl() + FOLLOW, expect=2)
    add("pl-chunked-get", g, "chunked POST + GET", chunked(b"5\r\nhello\r\n0\r\n\r\n") + FOLLOW, expect=2)
    add("pl-head-get", g, "HEAD + GET", get(line=b"HEAD " + P + b" HTTP/1.1") + FOLLOW, expect=2, head_first=True)
    add("pl-three", g, "three GETs", get() + FOLLOW + SMUGGLED, expect=3)
    add("pl-bad-then-good", g, "bad request (two CLs) + GET",
        post(b"Content-Length: 5", b"Content-Length: 6", body=b"hello!") + FOLLOW, expect=2)
    add("pl-lf-then-crlf", g, "bare-LF request + CRLF request",
        m(b"GET " + P + b" HTTP/1.1", HOST, eol=b"\n") + FOLLOW, expect=2)
    add("pl-get-body-no-cl", g, "GET + bytes that look like a body, no framing",
        get() + b"hello\r\n" + FOLLOW, expect=2)
    return cases


# --------------------------------------------------------------------------------------------
# the client side
# --------------------------------------------------------------------------------------------

