"""The documentation checks of `make test` (run through scripts/check-docs.sh).

1. links    Every relative link in the repository's Markdown files (README.md, docs/, deploy/ …)
            resolves to a file or directory of the repository — tracked or about to be, never
            an ignored build product — and every `#anchor` to a heading of the target page.
            No text mentions `../shared` (outside the repository).
2. cli      Every command in a fenced `sh`/`bash`/`shell`/`console` (or unlabelled) block that
            runs `samlgate ` names a real verb (and sub-verb: `idp issue`) and only flags that
            verb has. The oracle is the built executable's `--help`. Output belongs in `text`
            blocks, which are not read. docs/cli.md has a section for every verb that documents
            each of its flags; docs/configuration.md has a row for every `samlgate serve` setting.
3. codes    docs/errors.md lists exactly the reasons the program can produce. The reasons are
            read from the sources (see `produced_codes`): the `static let name = ErrorCode("…")`
            constants each module declares in its `Errors/ErrorCode+….swift` (the encoder's, the
            verifier's, the trust store's in `ErrorCode+TrustStore.swift`, which never reach an
            HTTP client, the gateway's and the batch tool's; an `ErrorCode` made any other way
            fails the check), the CLI's among them. A client of the gateway gets the backend's published codes
            (`BackendErrorCode.swift`) instead: errors.md's table "The mapping" has a row for
            every reason the gateway answers, names only published codes, gives each the body
            `status` and `action` the sources document for it (and 401 for the codes whose action
            is `application-registration`), and names every code the gateway's mapping
            (`GatewayError+Backend.swift`) spells out; docs/openapi.yaml's `code` enums are
            exactly the codes of that table. The reference upstream's refusals (`.code` of
            `BackendErrorCode`, or OAuth strings) are its table's. A code passed as anything but a
            literal in the reference upstream fails the check (so a new way of making codes cannot
            slip past it).

Each failure is printed as `FILE:LINE: message`; the exit status is 1 when there is any.
Usage: check_docs.py [--samlgate PATH] [--only links,cli,codes]
"""

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
failures = []


def fail(path, line, message):
    rel = os.path.relpath(path, ROOT) if os.path.isabs(str(path)) else str(path)
    failures.append(f"{rel}:{line}: {message}")


# ---------------------------------------------------------------------------------------------
# Markdown reading

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)")


def markdown_lines(path):
    """Yields (line number, text, fence language or None when outside a fenced block)."""
    fence = None
    language = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence, language = match.group(2), match.group(3).lower()
            continue
        if fence is not None and line.strip().startswith(fence[0] * len(fence)) and line.strip().strip(fence[0]) == "":
            fence = None
            continue
        yield number, line, (language if fence is not None else None)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, seen = set(), {}
        for _, line, language in markdown_lines(path):
            match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if language is None and match:
                base = slug(match.group(1))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
            for explicit in re.findall(r'<a\s+(?:name|id)="([^"]+)"', line):
                found.add(explicit)
        cache[path] = found
    return cache[path]


def repository_files():
    """Tracked files and untracked ones that are not ignored (never .build/ and friends)."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                             cwd=ROOT, check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    files = {ROOT / name for name in out.decode().split("\0") if name}
    files = {path for path in files if path.exists()}
    directories = {parent for path in files for parent in path.parents if ROOT in parent.parents or parent == ROOT}
    return files, directories


def markdown_files():
    listed = repository_files()
    if listed is None:
        return sorted(p for p in ROOT.rglob("*.md") if ".build" not in p.parts)
    return sorted(p for p in listed[0] if p.suffix == ".md")


# ---------------------------------------------------------------------------------------------
# 1. Links

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")


def check_links():
    listed = repository_files()
    for page in markdown_files():
        for number, line, language in markdown_lines(page):
            if "../shared" in line:
                fail(page, number, "refers to ../shared, which is outside the repository")
            if language is not None:
                continue
            text = re.sub(r"`[^`]*`", "", line)  # code spans are not links
            targets = INLINE_LINK.findall(text)
            reference = REFERENCE_LINK.match(text)
            if reference:
                targets.append(reference.group(1))
            for target in targets:
                check_link(page, number, target, listed)


def check_link(page, number, target, listed):
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target) or target.startswith("//"):
        return  # another site: not checked here
    path_part, _, fragment = target.partition("#")
    if path_part:
        resolved = Path(os.path.normpath(page.parent / path_part))
        if resolved != ROOT and ROOT not in resolved.parents:
            fail(page, number, f"link '{target}' leaves the repository")
            return
        if listed is not None:
            files, directories = listed
            exists = resolved in files or resolved in directories
        else:
            exists = resolved.exists()
        if not exists:
            fail(page, number, f"link '{target}': {os.path.relpath(resolved, ROOT)} is not in the repository")
            return
    else:
        resolved = page
    if fragment:
        if resolved.suffix != ".md":
            fail(page, number, f"link '{target}': anchors are checked only in Markdown pages")
        elif fragment not in anchors(resolved):
            fail(page, number, f"link '{target}': no heading '#{fragment}' in {os.path.relpath(resolved, ROOT)}")


# ---------------------------------------------------------------------------------------------
# 2. Command lines against `samlgate … --help`

class Command:
    def __init__(self, path, flags, subcommands):
        self.path, self.flags, self.subcommands = path, flags, subcommands


def help_text(binary, path):
    result = subprocess.run([binary, *path, "--help"], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise SystemExit(f"docs: '{binary} {' '.join(path)} --help' failed: {result.stderr.strip()}")
    return result.stdout


def parse_help(text):
    flags, subcommands, section = set(), [], None
    for line in text.splitlines():
        header = re.match(r"^([A-Z][A-Z ]+):", line)
        if header:
            section = header.group(1)
            continue
        if section == "OPTIONS":
            match = re.match(r"^\s{2}(-\S.*?)(?:\s{2,}|$)", line)
            if match:
                flags |= set(re.findall(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9-]*)", match.group(1)))
        elif section == "SUBCOMMANDS":
            match = re.match(r"^\s{2}([a-z][a-z0-9-]*)(?:\s|$)", line)
            if match:
                subcommands.append(match.group(1))
    return flags, subcommands


def command_tree(binary):
    tree = {}

    def visit(path):
        flags, subcommands = parse_help(help_text(binary, path))
        tree[tuple(path)] = Command(path, flags, subcommands)
        for name in subcommands:
            visit(path + [name])

    visit([])
    return tree


COMMAND_BLOCKS = {"", "sh", "bash", "shell", "console", "zsh"}
INVOCATION = re.compile(r"(?:^|(?<=[\s|;&(]))(?:[\w./-]*/)?samlgate(?=\s)")


def command_lines(page):
    """(line number, command text) for each shell line in a command block; `\\` continuations joined."""
    pending, start = None, None
    for number, line, language in markdown_lines(page):
        if language is None or language not in COMMAND_BLOCKS:
            pending = None
            continue
        if language == "console":
            if pending is None and not line.lstrip().startswith("$ "):
                continue
        text = line.rstrip()
        if pending is not None:
            pending += " " + text.strip()
        else:
            pending, start = re.sub(r"^\s*\$\s+", "", text), number
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        yield start, pending
        pending = None


def invocations(text):
    """The argument lists of each `samlgate` run in a shell line (up to a pipe, `;`, `&&`, redirect, `)` or comment)."""
    for match in INVOCATION.finditer(text):
        if text[:match.start()].count("'") % 2 == 1:
            continue  # inside a quoted string, such as an echo
        tokens, depth = [], 0
        for token in text[match.end():].split():
            if token.startswith("#"):
                break
            if depth == 0 and (token in {"|", "||", "&&", ";", "&"} or re.match(r"^\d?>>?|^<", token)):
                break
            depth += token.count("[") + token.count("(") - token.count("]") - token.count(")")
            if depth < 0:  # the `)` that closes `$(samlgate …)`
                token = token.rstrip(")")
                if token:
                    tokens.append(token)
                break
            tokens.append(token)
        yield tokens


def check_invocation(page, number, tokens, tree):
    path = []
    node = tree[()]
    rest = list(tokens)
    while rest and node.subcommands:
        word = rest[0].strip("[]()")
        if word.startswith("<") or word.startswith("-"):
            break
        if word == "help":
            return
        if word not in node.subcommands:
            fail(page, number, f"'samlgate {' '.join(path + [word])}': no such verb "
                               f"(samlgate {' '.join(path)} has: {', '.join(node.subcommands)})".replace("  ", " "))
            return
        path.append(word)
        node = tree[tuple(path)]
        rest.pop(0)
    for token in rest:
        if token == "--":
            break
        flag = token.strip("[](){}").split("=", 1)[0].rstrip(",")
        if not re.match(r"^--?[A-Za-z]", flag):
            continue
        if flag not in node.flags:
            fail(page, number, f"'samlgate {' '.join(path)}' has no flag {flag}")


def check_cli(binary):
    tree = command_tree(binary)
    for page in markdown_files():
        for number, text in command_lines(page):
            for tokens in invocations(text):
                check_invocation(page, number, tokens, tree)
    check_cli_page(tree)
    check_configuration_page(tree)


def sections(page, level):
    """{heading text: (line number, body text)} for the headings of one level."""
    result, current, body, start = {}, None, [], 0
    marker = "#" * level + " "
    for number, line, language in markdown_lines(page):
        if language is None and (line.startswith(marker) or (line.startswith("#") and len(line) - len(line.lstrip("#")) < level)):
            if current is not None:
                result[current] = (start, "\n".join(body))
            current, body, start = (line[level + 1:].strip() if line.startswith(marker) else None), [], number
            continue
        body.append(line)
    if current is not None:
        result[current] = (start, "\n".join(body))
    return result


def check_cli_page(tree):
    page = ROOT / "docs/cli.md"
    if not page.exists():
        fail(page, 1, "missing")
        return
    verbs = {}
    for heading, (number, body) in sections(page, 2).items():
        match = re.match(r"^`samlgate ([a-z ]+?)`", heading)
        if match:
            verbs[tuple(match.group(1).split())] = (number, body)
    for path, command in tree.items():
        if not path or command.subcommands:
            continue
        name = "samlgate " + " ".join(path)
        if path not in verbs:
            fail(page, 1, f"no '## `{name}`' section")
            continue
        number, body = verbs[path]
        for flag in sorted(command.flags - {"-h", "--help", "--version"}):
            if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", body):
                fail(page, number, f"the section on {name} does not document {flag}")


def check_configuration_page(tree):
    page = ROOT / "docs/configuration.md"
    if not page.exists():
        fail(page, 1, "missing")
        return
    rows = set()
    for _, line, language in markdown_lines(page):
        cells = line.split("|")
        if language is None and line.startswith("|") and len(cells) > 2:
            rows |= set(re.findall(r"`([a-z][a-z0-9-]*)`", cells[1]))
    for flag in sorted(tree[("serve",)].flags - {"-h", "--help", "--version", "--config"}):
        if flag[2:] not in rows:
            fail(page, 1, f"the settings table has no row for `{flag[2:]}` (samlgate serve {flag})")


# ---------------------------------------------------------------------------------------------
# 3. Error codes

LITERAL = re.compile(r'^"([^"\\]*)"')


class Produced:
    """The codes the sources can produce, by where they surface."""

    def __init__(self):
        self.verifier, self.encoding, self.gateway, self.batch, self.cli, self.reference, self.trust = (set() for _ in range(7))
        # Codes the reference upstream may answer through `forParameter`/`generic` (by name or API).
        self.reference_dynamic = set()


# Expressions that pass on a code already counted elsewhere (a parameter, a typed code's raw value).
FORWARDED = {"code", "String", "error.code", "error.code.rawValue",
             "code.rawValue", "Code"}

BACKEND_CODES = "Sources/ServerSupport/Errors/BackendErrorCode.swift"
ERROR_ACTIONS = "Sources/ServerSupport/Errors/ErrorAction.swift"
GATEWAY_MAPPING = "Sources/Gateway/Errors/GatewayError+Backend.swift"


class Catalogue:
    """What BackendErrorCode.swift says of the backend's published codes: raw value of each case,
    the documented statuses (the first the usual one) and action, and the codes the two
    functions that pick a code by name or API can return."""

    def __init__(self):
        path = ROOT / BACKEND_CODES
        text = without_comments(path.read_text(encoding="utf-8"))
        self.raw = dict(re.findall(r'\bcase\s+(\w+)\s*=\s*"([a-z0-9_]+)"', text))
        actions = dict(re.findall(r'\bcase\s+(\w+)(?:\s*=\s*"([^"]+)")?',
                                  without_comments((ROOT / ERROR_ACTIONS).read_text(encoding="utf-8"))))
        actions = {name: value or name for name, value in actions.items()}
        self.statuses = self._switch(path, text, r"var documentedStatuses", lambda v: [int(n) for n in re.findall(r"\d+", v)])
        self.actions = self._switch(path, text, r"var action\b", lambda v: actions.get(v.strip().lstrip("."), "?"))
        self.dynamic = set()
        for function in ("forParameter", "generic"):
            body = self._body(path, text, r"static func " + function)
            self.dynamic |= {self.raw[name] for name in re.findall(r"\.(\w+)", body) if name in self.raw}
        if not self.raw or not self.dynamic:
            fail(path, 1, "cannot read the published codes (case name = \"code\") or forParameter/generic")

    @staticmethod
    def _body(path, text, start):
        match = re.search(start, text)
        if not match:
            fail(path, 1, f"no '{start}' to read")
            return ""
        depth, i = 0, text.index("{", match.end())
        for j in range(i, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                return text[i + 1:j]
        return text[i + 1:]

    def _switch(self, path, text, start, value):
        """{raw code: value} from a `switch self` of `case .a, .b: value` and `default: value`."""
        body = self._body(path, text, start)
        found, default = {}, None
        for names, result in re.findall(r"\bcase\s+((?:\.\w+\s*,\s*)*\.\w+)\s*:\s*([^\n]+)", body):
            for name in re.findall(r"\.(\w+)", names):
                found[self.raw.get(name, name)] = value(result)
        match = re.search(r"\bdefault\s*:\s*([^\n]+)", body)
        if match:
            default = value(match.group(1))
        if not found or default is None:
            fail(path, 1, f"cannot read the switch of '{start}' (case .x: value, default: value)")
        return {code: found.get(code, default) for code in self.raw.values()}

    def status(self, code, http):
        """The body's `status` for `code` answered with HTTP `http` (BackendErrorCode.status(forHTTP:))."""
        documented = self.statuses.get(code) or [0]
        return http if http in documented else documented[0]

    def cases(self, expression):
        """The raw codes of the `.case` names in a Swift expression."""
        return {self.raw[name] for name in re.findall(r"(?<![\w)])\.(\w+)", expression) if name in self.raw}


_CATALOGUE = []


def catalogue():
    if not _CATALOGUE:
        _CATALOGUE.append(Catalogue())
    return _CATALOGUE[0]

# Codes SAMLVerification defines for programs that set the expected values
# (`VerificationOptions.expectedDestination`, `expectedInResponseTo:`); samlgate never does, so
# neither the gateway nor the CLI can produce them.
LIBRARY_ONLY = {"in_response_to_mismatch", "destination_mismatch"}

# HTTP statuses the gateway answers without an enhanced error, as the backend does: its throttle
# answers 429 with an HTML page from its proxy. A mapping row with one of these statuses names no
# code on either API and has `—` for the body's status and action; every other row names a code.
WITHOUT_ENHANCED_ERROR = {429}


def swift_files(directory):
    return sorted((ROOT / directory).rglob("*.swift"))


def without_comments(text):
    """Swift source with `//` and `/* */` comments blanked (newlines kept, string literals intact)."""
    out, i, quoted = [], 0, False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                out.append(text[i:i + 2])
                i += 2
                continue
            quoted = c != '"' and c != "\n"
        elif text.startswith('"""', i):
            end = text.find('"""', i + 3)
            end = len(text) if end < 0 else end + 3
            out.append(text[i:end])
            i = end
            continue
        elif c == '"':
            quoted = True
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i)
            end = len(text) if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def argument_after(text, index):
    """The text of one call argument starting at `index` (up to a top-level `,`, `)` or line end)."""
    depth, i, quoted = 0, index, False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif c in ",\n" and depth == 0:
            break
        i += 1
    return text[index:i].strip()


def literal_codes(expression):
    """The string literals an argument can evaluate to: `"x"`, or `cond ? "x" : "y"`; None otherwise."""
    if "?" in expression and ":" in expression:
        branches = expression.split("?", 1)[1].split(":")
        values = [LITERAL.match(branch.strip()) for branch in branches]
        return [value.group(1) for value in values] if all(values) else None
    match = LITERAL.match(expression)
    return [match.group(1)] if match and match.end() == len(expression) else None


def collect(files, pattern, target, argument_index=0, typed=None):
    """Adds the literal codes passed at `pattern` (a regex ending where the argument list of
    interest starts) to `target`; a non-literal argument outside FORWARDED is a failure. With
    `typed` (a set), an argument of `BackendErrorCode` cases (`.invalidRequestor`, `x ? .a : .b`)
    counts as literal, and one that picks its code by name or API (`forParameter`, `generic`)
    adds what those can return to `typed` (codes it may produce, not that it must)."""
    for path in files:
        text = without_comments(path.read_text(encoding="utf-8"))
        for match in re.finditer(pattern, text):
            start = match.end()
            # An argument list may begin on the next line (the formatter breaks long calls).
            while start < len(text) and text[start] in " \n":
                start += 1
            for _ in range(argument_index):
                start += len(argument_after(text, start)) + 1
                while start < len(text) and text[start] in " \n":
                    start += 1
            expression = argument_after(text, start)
            codes = literal_codes(expression)
            line = text.count("\n", 0, match.start()) + 1
            if codes is None and typed is not None:
                if re.search(r"\b(?:forParameter|generic)\(", expression):
                    typed.update(catalogue().dynamic)
                    codes = list(catalogue().cases(re.sub(r"\((?:[^()]|\([^()]*\))*\)", "", expression)))
                elif re.fullmatch(r"[^?]*\?\s*\.\w+\s*:\s*\.\w+|\.\w+", expression.strip()):
                    branch = expression.split("?", 1)[-1]
                    codes = list(catalogue().cases(branch)) or None
            if codes is None:
                if expression.startswith("_ "):
                    continue  # the declaration of the function itself
                if expression.split(":")[0].strip() not in FORWARDED:
                    fail(path, line, f"error code given as '{expression}': use a string literal (or a typed code) "
                                     "so the documentation check can read it")
                continue
            target.update(codes)


CODE_DECLARATION = re.compile(r"\bstatic let\s+(\w+)\s*=\s*ErrorCode\(\s*\"([a-z0-9_]+)\"\s*\)")
CODE_MADE = re.compile(r"(?:\bErrorCode|(?<!\w)Code)\s*\(")
_DECLARED = {}


def declared_codes(files, target):
    """Adds the wire form of every `static let name = ErrorCode("wire")` (the named constants
    each module declares in its `Errors/` folder: the verifier's, the encoder's, the trust
    store's, the gateway's, the batch tool's). A code no source names (`.name`) outside its
    declaration is never raised: a failure, so the pages cannot document a code the program cannot
    produce. A name or a wire form declared twice fails too."""
    for path in files:
        text = without_comments(path.read_text(encoding="utf-8"))
        for match in CODE_DECLARATION.finditer(text):
            name, wire = match.group(1), match.group(2)
            line = text.count("\n", 0, match.start()) + 1
            target.add(wire)
            for key in (("name", name), ("code", wire)):
                if key in _DECLARED:
                    fail(path, line, f"{key[0]} '{key[1]}' is already declared at {_DECLARED[key]}")
                _DECLARED[key] = f"{os.path.relpath(path, ROOT)}:{line}"
            rest = text[:match.start()] + text[match.end():]
            if not re.search(r"\." + name + r"\b", rest) and not any(re.search(r"\." + name + r"\b", other) for other in other_sources(path)):
                fail(path, line, f"code '{wire}' is declared but never raised")


def codes_made_elsewhere():
    """An `ErrorCode(…)` (or `Code(…)`, through an error type's alias) anywhere but a
    declaration that `declared_codes` reads: a code this check would not see."""
    for path in swift_files("Sources"):
        text = without_comments(path.read_text(encoding="utf-8"))
        declarations = {match.start(0) + match.group(0).index("ErrorCode") for match in CODE_DECLARATION.finditer(text)}
        for match in CODE_MADE.finditer(text):
            if match.start() not in declarations:
                line = text.count("\n", 0, match.start()) + 1
                fail(path, line, "an error code made outside a `static let name = ErrorCode(\"code\")` declaration")


_SOURCES = {}


def other_sources(path):
    """The text of every Swift file under Sources/ except `path` (read once)."""
    if not _SOURCES:
        for source in swift_files("Sources"):
            _SOURCES[source] = without_comments(source.read_text(encoding="utf-8"))
    return (text for source, text in _SOURCES.items() if source != path)


def produced_codes():
    produced = Produced()
    # Typed codes: the `static let … = ErrorCode("…")` of each module. The trust store's own
    # codes (loading a store: start-up, reload, the CLI) are kept apart from the verifier's. A
    # code is made no other way: outside the package `ErrorCode` has no initialiser, and inside
    # it codes_made_elsewhere fails any other construction.
    verification = swift_files("Sources/SAMLVerification")
    trust_files = [path for path in verification if path.name == "ErrorCode+TrustStore.swift"]
    declared_codes([path for path in verification if path not in trust_files], produced.verifier)
    declared_codes(trust_files, produced.trust)
    declared_codes(swift_files("Sources/SAMLEncoding"), produced.encoding)
    # The gateway's and the batch tool's own codes (they also pass on the verifier's and encoder's).
    declared_codes(swift_files("Sources/Gateway"), produced.gateway)
    declared_codes(swift_files("Sources/SAMLBatch"), produced.batch)
    codes_made_elsewhere()
    # The command line's own codes (it also reports the batch tool's and the verifier's).
    declared_codes(swift_files("Sources/samlgate"), produced.cli)
    # The reference upstream: Refusal(status, .code, …), ReferenceReply.error(Object)(status, .code, …)
    # with published codes (BackendErrorCode), .oauth("code").
    reference = swift_files("Sources/ReferenceUpstream")
    dynamic = produced.reference_dynamic
    collect(reference, r"\bRefusal\(\s*", produced.reference, argument_index=1, typed=dynamic)
    collect(reference, r"\b(?:ReferenceReply\.)?error(?:Object)?\(\s*(?=[^_)])", produced.reference, argument_index=1, typed=dynamic)
    collect(reference, r"\b(?:ReferenceReply\.)?oauth\(\s*", produced.reference)
    return produced


MAPPING_SECTION = "What the client gets"
MAPPING_HEADER = ["reason", "case", "http", "rest api v2", "rest api v1", "status", "action"]


class MappingRow:
    """One row of errors.md's table "The mapping": reasons, HTTP status, and per API the
    published code (None for `—`), the body status and the action."""

    def __init__(self, line, cells):
        self.line = line
        self.reasons = re.findall(r"`([a-z0-9_]+)`", cells[0])
        self.http = int(cells[2]) if cells[2].isdigit() else None
        self.code = {}
        for api, cell in (("v2", cells[3]), ("v1", cells[4])):
            found = re.findall(r"`([a-z0-9_]+)`", cell)
            self.code[api] = found[0] if len(found) == 1 else None
        self.status = self.per_api(cells[5])
        self.action = self.per_api(cells[6].replace("`", ""))

    @staticmethod
    def per_api(cell):
        """`x` for both APIs, or `v2 x, v1 y`."""
        match = re.fullmatch(r"v2 (\S+), v1 (\S+)", cell.strip())
        return {"v2": match.group(1), "v1": match.group(2)} if match else {"v2": cell.strip(), "v1": cell.strip()}


def errors_page():
    """(index rows {code: (line, http, reported by)}, code headings {code: (line, section)},
    reference-table codes, rows of the mapping table)."""
    page = ROOT / "docs/errors.md"
    index, headings, reference, mapping = {}, {}, {}, []
    section, table = None, None
    for number, line, language in markdown_lines(page):
        if language is not None:
            continue
        if line.startswith("## "):
            section, table = line[3:].strip(), None
            continue
        heading = re.match(r"^###\s+`?([A-Za-z0-9_]+)`?\s*$", line)
        if heading:
            if heading.group(1) in headings:
                fail(page, number, f"{heading.group(1)} has two headings")
            headings[heading.group(1)] = (number, section)
            continue
        if not line.startswith("|"):
            table = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if table is None:
            table = [cell.lower() for cell in cells]
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        if table[:3] == ["code", "http", "reported by"]:
            for code in re.findall(r"`([A-Za-z0-9_]+)`", cells[0]):
                index[code] = (number, cells[1], cells[2])
        elif section == MAPPING_SECTION and table == MAPPING_HEADER:
            if len(cells) != len(MAPPING_HEADER):
                fail(page, number, f"a row of the mapping table needs {len(MAPPING_HEADER)} cells")
                continue
            mapping.append(MappingRow(number, cells))
        elif section == "Reference upstream" and "code" in table:
            for code in re.findall(r"`([A-Za-z0-9_]+)`", cells[table.index("code")]):
                reference.setdefault(code, number)
    return page, index, headings, reference, mapping


def openapi_codes():
    path = ROOT / "docs/openapi.yaml"
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    found = set()

    def walk(node):
        if isinstance(node, dict):
            code = node.get("properties", {}).get("code") if isinstance(node.get("properties"), dict) else None
            if isinstance(code, dict):
                found.update(str(value) for value in code.get("enum", []))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    text = path.read_text(encoding="utf-8")
    mentioned = {}
    for number, line in enumerate(text.splitlines(), 1):
        for code in re.findall(r"`([A-Za-z0-9_]+)`", line):
            mentioned.setdefault(code, number)
    return path, found, mentioned


def compare(where, line, label, have, want, lines=None):
    """`have` (listed) against `want` (produced); `lines` gives the line of each listed code."""
    lines = lines or {}
    for code in sorted(want - have):
        fail(where, line, f"{label}: {code} is missing")
    for code in sorted(have - want):
        fail(where, lines.get(code, line), f"{label}: {code} is listed but the program cannot produce it")


def check_codes():
    produced = produced_codes()
    http = (produced.gateway | produced.verifier | produced.encoding) - LIBRARY_ONLY
    batch = (produced.batch | produced.verifier | produced.encoding) - LIBRARY_ONLY
    everything = produced.gateway | produced.verifier | produced.encoding | produced.batch | produced.cli | produced.trust

    page, index, headings, reference, mapping = errors_page()
    rows = {code: number for code, (number, _, _) in index.items()}
    table = min(rows.values(), default=1)
    compare(page, table, "the index table (code | HTTP | reported by)", set(index), everything, rows)
    answered = {code for code, (_, status, _) in index.items() if re.search(r"\d{3}", status)}
    compare(page, table, "codes with an HTTP status in the index (the gateway's)", answered, http, rows)
    in_batch = {code for code, (_, _, by) in index.items() if "`batch`" in by}
    compare(page, table, "codes the index says `batch` reports", in_batch, batch, rows)
    library = {code for code, (_, status, by) in index.items() if "library" in by.lower()}
    compare(page, table, "codes the index marks library-only", library, LIBRARY_ONLY & produced.verifier, rows)
    for code, (number, _, _) in index.items():
        if code not in headings:
            fail(page, number, f"{code} has no '### {code}' section (the gateway's helpUrl points at it)")
    for code, (number, section) in headings.items():
        if code not in index:
            fail(page, number, f"### {code} is not in the index table")
    # Every code the reference upstream names must be listed; one it may answer by name or API
    # (forParameter, generic) may be.
    listed = set(reference)
    compare(page, min(reference.values(), default=1), "the Reference upstream table",
            listed - (produced.reference_dynamic - produced.reference), produced.reference, reference)

    sent = check_mapping(page, mapping, index, http)

    spec, enums, mentioned = openapi_codes()
    compare(spec, 1, "the error-code enums (the codes of errors.md's mapping table)", enums, sent, mentioned)
    for code in sorted(set(mentioned) & (everything - http - set(catalogue().raw.values()))):
        fail(spec, mentioned[code], f"mentions {code}, which the gateway never answers")


def check_mapping(page, mapping, index, http):
    """The table of what the client gets, against the reasons the gateway answers, the index's
    HTTP statuses and what BackendErrorCode.swift documents; returns the codes it names."""
    known = catalogue()
    published = set(known.raw.values())
    first = min((row.line for row in mapping), default=1)
    if not mapping:
        fail(page, 1, f"no table '{' | '.join(MAPPING_HEADER)}' under '## {MAPPING_SECTION}'")
    covered, sent = set(), set()
    for row in mapping:
        covered.update(row.reasons)
        if not row.reasons or row.http is None:
            fail(page, row.line, "a mapping row needs its reasons (`code`) and one HTTP status")
            continue
        for reason in row.reasons:
            if reason in index and str(row.http) not in index[reason][1]:
                fail(page, row.line, f"{reason}: HTTP {row.http} here, but the index says '{index[reason][1]}'")
        if row.http in WITHOUT_ENHANCED_ERROR:
            if row.code["v2"] is not None or row.code["v1"] is not None or set(row.status.values()) | set(row.action.values()) != {"—"}:
                fail(page, row.line, f"HTTP {row.http} is answered without an enhanced error: no code, `—` for status and action")
            continue
        if row.code["v2"] is None and row.code["v1"] is None:
            fail(page, row.line, "a mapping row needs a code for at least one API")
        for api, code in row.code.items():
            if code is None:
                continue
            sent.add(code)
            if code not in published:
                fail(page, row.line, f"{code} is not a code the backend publishes ({BACKEND_CODES})")
                continue
            want_status, want_action = str(known.status(code, row.http)), known.actions.get(code)
            if row.status[api] != want_status:
                fail(page, row.line, f"{api} {code} answered {row.http}: body status {want_status}, not {row.status[api]}")
            if row.action[api] != want_action:
                fail(page, row.line, f"{api} {code}: action {want_action}, not {row.action[api]}")
            if (want_action == "application-registration") != (row.http == 401):
                fail(page, row.line, f"{code}: answered 401 exactly when its action is application-registration")
    compare(page, first, "the reasons of the mapping table (the gateway's)", covered, http)
    mapping_source = ROOT / GATEWAY_MAPPING
    named = known.cases(without_comments(mapping_source.read_text(encoding="utf-8")))
    for code in sorted(named - sent):
        fail(page, first, f"the mapping table never names {code}, which {GATEWAY_MAPPING} answers with")
    return sent


# ---------------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samlgate", default=str(ROOT / ".build/debug/samlgate"))
    parser.add_argument("--only", default="links,cli,codes")
    args = parser.parse_args()
    checks = set(args.only.split(","))
    if "links" in checks:
        check_links()
    if "cli" in checks:
        if not os.access(args.samlgate, os.X_OK):
            raise SystemExit(f"docs: {args.samlgate} not found: build it first (swift build, or make test, which runs swift test)")
        check_cli(args.samlgate)
    if "codes" in checks:
        check_codes()
    if failures:
        print(f"docs: {len(failures)} problem(s):", file=sys.stderr)
        for failure in failures:
            print(f"  {failure}", file=sys.stderr)
        sys.exit(1)
    print(f"docs: {', '.join(sorted(checks))} OK ({len(markdown_files())} Markdown files)")


if __name__ == "__main__":
    main()
