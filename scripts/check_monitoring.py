"""The monitoring checks of `make test` (run through scripts/check-monitoring.sh).

1. dashboard  deploy/monitoring/samlgate-dashboard.json is a Grafana dashboard (uid `samlgate`,
              schemaVersion 36 or later, a `datasource` variable of type prometheus); every panel
              but a row has a title, a gridPos inside the 24 columns, the `${datasource}` data
              source and at least one target with an expr and a refId (unique within the panel);
              panel ids are unique. Its PromQL parses: the exprs, with the Grafana variables
              replaced, go through `promtool check rules` as recording rules.
2. rules      deploy/monitoring/samlgate-alerts.yaml: every rule is an alert with expr, for,
              labels.severity (warning or critical), annotations summary, description and a
              runbook naming a heading of docs/operations.md; alert names are unique; every alert
              has a test in samlgate-alerts.test.yaml that expects it to fire.
              `promtool check rules` and `promtool test rules` pass.
3. metrics    every `samlgate_…` name the dashboard and the rules use (a histogram's `_bucket`,
              `_sum` and `_count` read as the histogram) is in the metrics table of docs/gateway.md.
4. series     with `.build/fresh-scrape.txt` (the `/metrics` of a fresh gateway with everything the
              dashboard watches, before any client request, written by `swift test`'s
              MetricSeriesTests; `make test` runs that first): every selector of the exprs has a
              series there — its name and its literal label matchers (`code="overloaded"`, each
              alternative of `result=~"updated|not_modified"`; `job`, `instance` and Grafana
              variables left out), so that no panel or alert waits for a first event that
              `rate()` and `increase()` cannot see; every metric there has `# HELP` and `# TYPE`
              and is in the metrics table. Without the file this part is skipped, with a note.

Each failure is printed; the exit status is 1 when there is any.
Usage: check_monitoring.py [--promtool PATH]
       check_monitoring.py --list-metrics    the metric names used, one per line (no checks)
"""

import argparse
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
MONITORING = ROOT / "deploy/monitoring"
DASHBOARD = MONITORING / "samlgate-dashboard.json"
RULES = MONITORING / "samlgate-alerts.yaml"
RULE_TESTS = MONITORING / "samlgate-alerts.test.yaml"
GATEWAY_DOC = ROOT / "docs/gateway.md"
FRESH_SCRAPE = ROOT / ".build/fresh-scrape.txt"
OPERATIONS_DOC = ROOT / "docs/operations.md"

PANEL_TYPES = {"timeseries", "stat", "table", "gauge", "bargauge", "text", "heatmap"}
SEVERITIES = {"warning", "critical"}
DATASOURCE = "${datasource}"
METRIC = re.compile(r"\bsamlgate_[a-z0-9_]+")
# A selector: a metric name and its label matchers, if any.
SELECTOR = re.compile(r"\b(samlgate_[a-z0-9_]+)\s*(?:\{([^}]*)\})?")
MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)\s*"((?:[^"\\]|\\.)*)"')
# A sample line of the text exposition format, and one label of it.
SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
# The labels Prometheus adds at the scrape: no gateway series has them.
TARGET_LABELS = {"job", "instance"}
# The Grafana variables the exprs use, and what stands for them when promtool parses them.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "$job": ".*", "$instance": ".*"}

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def rel(path):
    return str(path.relative_to(ROOT))


# ---------------------------------------------------------------------------------------------
# Reading


def load_dashboard():
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def load_yaml(path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def all_panels(dashboard):
    """Every panel, also those nested in a collapsed row."""
    for panel in dashboard.get("panels") or []:
        yield panel
        for nested in panel.get("panels") or []:
            yield nested


def dashboard_exprs(dashboard):
    """(where, expr) for every target of every panel and every query variable."""
    for panel in all_panels(dashboard):
        for target in panel.get("targets") or []:
            if isinstance(target, dict) and isinstance(target.get("expr"), str):
                yield f"panel {panel.get('id')} '{panel.get('title')}' {target.get('refId')}", target["expr"]
    for variable in (dashboard.get("templating") or {}).get("list") or []:
        if variable.get("type") == "query":
            query = variable.get("query")
            text = query.get("query") if isinstance(query, dict) else query
            if isinstance(text, str):
                yield f"variable {variable.get('name')}", text


def alert_rules(rules):
    for group in (rules or {}).get("groups") or []:
        for rule in group.get("rules") or []:
            yield group.get("name"), rule


def rule_exprs(rules):
    for _, rule in alert_rules(rules):
        if isinstance(rule.get("expr"), str):
            yield f"alert {rule.get('alert')}", rule["expr"]


# ---------------------------------------------------------------------------------------------
# 1. The dashboard


def is_datasource(value):
    return value == DATASOURCE or (isinstance(value, dict) and value.get("uid") == DATASOURCE)


def check_dashboard(dashboard):
    where = rel(DASHBOARD)
    if dashboard.get("uid") != "samlgate":
        fail(where, f"uid is {dashboard.get('uid')!r}, not 'samlgate'")
    if not isinstance(dashboard.get("schemaVersion"), int) or dashboard["schemaVersion"] < 36:
        fail(where, f"schemaVersion {dashboard.get('schemaVersion')!r}: 36 or later")
    if not dashboard.get("title"):
        fail(where, "no title")
    variables = {v.get("name"): v for v in (dashboard.get("templating") or {}).get("list") or []}
    source = variables.get("datasource")
    if not source or source.get("type") != "datasource" or source.get("query") != "prometheus":
        fail(where, "no template variable 'datasource' of type datasource with query prometheus")
    for name, variable in variables.items():
        if variable.get("type") == "query" and not is_datasource(variable.get("datasource")):
            fail(where, f"variable {name}: datasource is not {DATASOURCE}")
    ids = {}
    panels = list(all_panels(dashboard))
    if not panels:
        fail(where, "no panels")
    for panel in panels:
        label = f"panel {panel.get('id')} '{panel.get('title')}'"
        if not isinstance(panel.get("id"), int):
            fail(where, f"{label}: no integer id")
        elif panel["id"] in ids:
            fail(where, f"{label}: id {panel['id']} also used by '{ids[panel['id']]}'")
        else:
            ids[panel["id"]] = panel.get("title")
        if not panel.get("title"):
            fail(where, f"{label}: no title")
        grid = panel.get("gridPos")
        if not isinstance(grid, dict) or not all(isinstance(grid.get(k), int) for k in ("x", "y", "w", "h")):
            fail(where, f"{label}: gridPos needs integer x, y, w and h")
        elif grid["x"] < 0 or grid["w"] < 1 or grid["h"] < 1 or grid["x"] + grid["w"] > 24:
            fail(where, f"{label}: gridPos {grid} outside the 24 columns")
        if panel.get("type") == "row":
            continue
        if panel.get("type") not in PANEL_TYPES:
            fail(where, f"{label}: type {panel.get('type')!r} (expected one of {', '.join(sorted(PANEL_TYPES))})")
        if not is_datasource(panel.get("datasource")):
            fail(where, f"{label}: datasource is not {DATASOURCE}")
        targets = panel.get("targets")
        if not isinstance(targets, list) or not targets:
            fail(where, f"{label}: no target")
            continue
        refs = set()
        for target in targets:
            if not isinstance(target, dict) or not isinstance(target.get("expr"), str) or not target["expr"].strip():
                fail(where, f"{label}: a target without an expr")
                continue
            ref = target.get("refId")
            if not ref:
                fail(where, f"{label}: a target without a refId")
            elif ref in refs:
                fail(where, f"{label}: refId {ref} twice")
            refs.add(ref)
            if "datasource" in target and not is_datasource(target["datasource"]):
                fail(where, f"{label} {ref}: datasource is not {DATASOURCE}")


def promql_of_dashboard(dashboard):
    """A rule file whose recording rules are the dashboard's exprs, for promtool to parse."""
    rules = []
    for number, (where, expr) in enumerate(dashboard_exprs(dashboard)):
        if where.startswith("variable"):
            continue  # label_values(...) is Grafana's, not PromQL
        for variable, value in sorted(GRAFANA_VARIABLES.items(), key=lambda item: -len(item[0])):
            expr = expr.replace(variable, value)
        if "$" in expr:
            fail(rel(DASHBOARD), f"{where}: a Grafana variable this check does not know: {expr}")
            continue
        rules.append({"record": f"dashboard:expr_{number}", "expr": expr})
    return {"groups": [{"name": "dashboard", "rules": rules}]}


# ---------------------------------------------------------------------------------------------
# 2. The rules


def slug(heading):
    """GitHub's anchor for a heading (as scripts/check_docs.py computes it)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def operations_anchors():
    if not OPERATIONS_DOC.exists():
        return set()
    found = set()
    fence = False
    for line in OPERATIONS_DOC.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and (match := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)):
            found.add(slug(match.group(1)))
    return found


def check_rules(rules, tests):
    where = rel(RULES)
    if not isinstance(rules, dict) or not rules.get("groups"):
        fail(where, "no groups")
        return
    anchors = operations_anchors()
    names = set()
    for group, rule in alert_rules(rules):
        name = rule.get("alert")
        label = f"group {group}, alert {name or rule.get('record')}"
        if not name:
            fail(where, f"{label}: not an alerting rule (no alert)")
            continue
        if name in names:
            fail(where, f"{label}: alert name used twice")
        names.add(name)
        for key in ("expr", "for"):
            if not rule.get(key):
                fail(where, f"{label}: no {key}")
        severity = (rule.get("labels") or {}).get("severity")
        if severity not in SEVERITIES:
            fail(where, f"{label}: labels.severity {severity!r} (expected {' or '.join(sorted(SEVERITIES))})")
        annotations = rule.get("annotations") or {}
        for key in ("summary", "description", "runbook"):
            if not annotations.get(key):
                fail(where, f"{label}: no annotations.{key}")
        runbook = annotations.get("runbook")
        if runbook:
            page, _, anchor = runbook.partition("#")
            if page != "docs/operations.md" or not anchor:
                fail(where, f"{label}: runbook {runbook!r} is not docs/operations.md#<heading>")
            elif anchor not in anchors:
                fail(where, f"{label}: runbook {runbook!r}: no such heading in docs/operations.md")
    fired = set()
    for test in (tests or {}).get("tests") or []:
        for case in test.get("alert_rule_test") or []:
            if case.get("exp_alerts"):
                fired.add(case.get("alertname"))
    for name in sorted(names - fired):
        fail(rel(RULE_TESTS), f"alert {name}: no test expects it to fire")


# ---------------------------------------------------------------------------------------------
# 3. The metrics


def documented_metrics():
    """The names (with the samlgate_ prefix) in the table of gateway.md's "Metrics and logs"."""
    names = set()
    section = False
    for line in GATEWAY_DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line.strip() == "## Metrics and logs"
            continue
        if section and line.startswith("|"):
            cells = line.strip().strip("|").split("|")
            for name in re.findall(r"`([a-z][a-z0-9_]*)(?:\{[^}`]*\})?`", cells[0]):
                names.add("samlgate_" + name)
    return names


def used_metrics(dashboard, rules):
    """{name: [where, …]} for every samlgate_ metric in the exprs, histogram suffixes read off."""
    documented = documented_metrics()
    used = {}
    for where, expr in list(dashboard_exprs(dashboard)) + list(rule_exprs(rules)):
        for name in METRIC.findall(expr):
            for suffix in ("_bucket", "_sum", "_count"):
                base = name[: -len(suffix)]
                if name.endswith(suffix) and (suffix == "_bucket" or base in documented):
                    name = base
                    break
            used.setdefault(name, []).append(where)
    return used


def check_metrics(dashboard, rules):
    documented = documented_metrics()
    if not documented:
        fail(rel(GATEWAY_DOC), "no metric found in the table of section 'Metrics and logs'")
        return
    for name, places in sorted(used_metrics(dashboard, rules).items()):
        if name not in documented:
            fail(rel(GATEWAY_DOC), f"{name} (used by {places[0]}{' and others' if len(places) > 1 else ''}) is not in the metrics table")


# ---------------------------------------------------------------------------------------------
# 4. The series of a fresh gateway


def selectors(expr):
    """(name, {label: [values]}) for every samlgate_ selector of `expr`: the values its literal
    matchers ask for (`=`, or each alternative of an `=~` that is a plain alternation of words)."""
    for match in SELECTOR.finditer(expr):
        wanted = {}
        for label, operator, value in MATCHER.findall(match.group(2) or ""):
            if label in TARGET_LABELS or "$" in value or operator in ("!=", "!~"):
                continue
            if operator == "=":
                wanted[label] = [value]
            elif re.fullmatch(r"[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*", value):
                wanted[label] = value.split("|")
        yield match.group(1), wanted


def unescape(value):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def read_scrape(path):
    """({name: [labels, …]}, {name: help}, {name: type}) of a text exposition."""
    series, helps, types = {}, {}, {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# HELP "):
            name, _, text = line[len("# HELP "):].partition(" ")
            helps[name] = text
        elif line.startswith("# TYPE "):
            name, _, kind = line[len("# TYPE "):].partition(" ")
            types[name] = kind.strip()
        elif line and not line.startswith("#") and (match := SAMPLE.fullmatch(line.strip())):
            labels = {label: unescape(value) for label, value in LABEL.findall(match.group(2) or "")}
            series.setdefault(match.group(1), []).append(labels)
    return series, helps, types


def check_fresh_scrape(dashboard, rules):
    """Every selector of the exprs has a series in a fresh gateway's scrape; every metric there
    has HELP and TYPE and is documented. None (a note printed) without the scrape."""
    if not FRESH_SCRAPE.is_file():
        print(f"monitoring: note: no {rel(FRESH_SCRAPE)} (swift test writes it: MetricSeriesTests); "
              "the series of a fresh gateway not checked")
        return None
    where_scrape = rel(FRESH_SCRAPE)
    series, helps, types = read_scrape(FRESH_SCRAPE)
    if not series:
        fail(where_scrape, "no sample")
        return None
    documented = documented_metrics()
    for name in sorted(series):
        family = name
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and types.get(name[: -len(suffix)]) == "histogram":
                family = name[: -len(suffix)]
        if not helps.get(family):
            fail(where_scrape, f"{family}: no # HELP")
        if family not in types:
            fail(where_scrape, f"{family}: no # TYPE")
        if family.startswith("samlgate_") and family not in documented:
            fail(rel(GATEWAY_DOC), f"{family} (in /metrics) is not in the metrics table")
    reported = set()
    count = 0
    for where, expr in list(dashboard_exprs(dashboard)) + list(rule_exprs(rules)):
        for name, wanted in selectors(expr):
            labels = sorted(wanted)
            for values in itertools.product(*(wanted[label] for label in labels)):
                count += 1
                matchers = dict(zip(labels, values))
                if any(all(found.get(label) == value for label, value in matchers.items()) for found in series.get(name, [])):
                    continue
                selector = name + ("{" + ",".join(f'{label}="{value}"' for label, value in matchers.items()) + "}" if matchers else "")
                if selector not in reported:
                    reported.add(selector)
                    fail(where_scrape, f"{where}: no series {selector} before any traffic: rate() and increase() miss its first event")
    return count


# ---------------------------------------------------------------------------------------------
# promtool


def run_promtool(promtool, *arguments, cwd=ROOT):
    result = subprocess.run([promtool, *arguments], cwd=cwd, capture_output=True, text=True)
    output = (result.stdout + result.stderr).strip()
    return result.returncode == 0, output


def check_with_promtool(promtool, dashboard):
    for arguments, what in ((["check", "rules", rel(RULES)], "check rules"), (["test", "rules", rel(RULE_TESTS)], "test rules")):
        ok, output = run_promtool(promtool, *arguments)
        if ok:
            print(f"monitoring: promtool {what}: {output.splitlines()[-1].strip() if output else 'OK'}")
        else:
            fail(f"promtool {' '.join(arguments)}", "\n" + output)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "dashboard-exprs.yaml"
        document = promql_of_dashboard(dashboard)
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        ok, output = run_promtool(promtool, "check", "rules", str(path))
        count = len(document["groups"][0]["rules"])
        if ok:
            print(f"monitoring: the dashboard's {count} exprs parse (promtool check rules)")
        else:
            fail(rel(DASHBOARD), "promtool does not parse the exprs (variables replaced):\n" + output)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--promtool", default=shutil.which("promtool") or "/usr/bin/promtool")
    parser.add_argument("--list-metrics", action="store_true", help="print the metric names used, one per line, and exit")
    args = parser.parse_args()
    dashboard = load_dashboard()
    rules = load_yaml(RULES)
    if args.list_metrics:
        for name in sorted(used_metrics(dashboard, rules)):
            print(name)
        return
    check_dashboard(dashboard)
    check_rules(rules, load_yaml(RULE_TESTS))
    check_metrics(dashboard, rules)
    selected = check_fresh_scrape(dashboard, rules)
    if not Path(args.promtool).is_file():
        fail("promtool", f"{args.promtool} not found: run 'make deps' (it installs Debian's prometheus package)")
    else:
        check_with_promtool(args.promtool, dashboard)
    if failures:
        print(f"monitoring: {len(failures)} problem(s):", file=sys.stderr)
        for failure in failures:
            print(f"  {failure}", file=sys.stderr)
        sys.exit(1)
    panels = sum(1 for panel in all_panels(dashboard) if panel.get("type") != "row")
    alerts = sum(1 for _ in alert_rules(rules))
    metrics = len(used_metrics(dashboard, rules))
    print(f"monitoring: OK ({panels} panels, {alerts} alerts, {metrics} metrics, all in docs/gateway.md)")
    if selected is not None:
        print(f"monitoring: OK ({selected} selections, each with a series in a fresh gateway's scrape, {rel(FRESH_SCRAPE)})")


if __name__ == "__main__":
    main()
