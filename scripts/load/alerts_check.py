"""make alerts-check: drives failures into running gateways and reads, through Prometheus's HTTP
API (/api/v1/alerts), which of the shipped alerts fire. scripts/alerts-check.sh starts the
processes and says which alerts are covered and why; this script runs the phases in order:

  baseline   nothing driven: no alert pending or firing (gw-a has one of its two upstreams down)
  trust      SIGHUP to both gateways after a broken file in gw-a's store and, in gw-b's, a
             certificate valid 3 days, metadata valid 3 and 30 days, a metadata.url nobody answers
  overload   300 KB signed responses from 16 connections at gw-b (one worker, queue 1)
  replay     redis-server stopped, then one exchange on gw-a
  upstream   the reference upstream stopped (gw-a probes it, gw-b has no traffic)
  target     gw-b killed

Each phase waits until its alerts are firing (up to --fire-timeout seconds), then watches
SETTLE more seconds; an expected-silent alert seen pending or firing in its phase fails, and so
does any alert pending or firing that no phase so far has driven. Prints one table; exit 1 on a
failed expectation.
"""

import argparse
import http.client
import json
import os
import signal
import sys
import threading
import time
import urllib.parse
import urllib.request

POLL = 0.25
SETTLE = 3.0


class Expectation:
    """An alert (and labels) expected firing or not in a phase. `evidence`: (name, PromQL) pairs
    read at the end of the phase and shown (each must return one sample: a silent alert over no
    series proves nothing); `want`: what they must say (a predicate over {name: value})."""

    def __init__(self, alert, target, labels, condition, firing, evidence=(), want=None):
        self.alert, self.target, self.labels, self.condition, self.firing = alert, target, labels, condition, firing
        self.evidence, self.want = evidence, want
        self.values = {}
        self.seen = "inactive"  # the most alarming state seen in its phase
        self.fired_after = None

    def matches(self, alert):
        labels = alert["labels"]
        return labels.get("alertname") == self.alert and all(labels.get(k) == v for k, v in self.labels.items())

    @property
    def evidence_text(self):
        return " ".join(f"{name}={'none' if value is None else f'{value:g}'}" for name, value in self.values.items())

    @property
    def passed(self):
        if any(value is None for value in self.values.values()):
            return False
        if self.want and not self.want(self.values):
            return False
        return (self.seen == "firing") if self.firing else (self.seen == "inactive")


class Check:
    def __init__(self, args):
        self.args = args
        self.prometheus = args.prometheus
        self.gwa_port, self.gwa_pid = (int(x) for x in args.gw_a.split(":"))
        self.gwb_port, self.gwb_pid = (int(x) for x in args.gw_b.split(":"))
        # gw-c serves TLS; its instance is its plain probe listener, where it is scraped.
        self.gwc_port, self.gwc_pid = (int(x) for x in args.gw_c.split(":"))
        self.gwa = f"127.0.0.1:{self.gwa_port}"
        self.gwb = f"127.0.0.1:{self.gwb_port}"
        self.gwc = f"127.0.0.1:{self.gwc_port}"
        self.rows = []
        self.allowed = []  # expectations driven to fire so far: the alerts that may be active
        self.unexpected = {}  # key -> (phase, state)
        self.notes = []  # (phase, what the action saw)

    # -- Prometheus ------------------------------------------------------------------------

    def api(self, path):
        with urllib.request.urlopen(self.prometheus + path, timeout=5) as answer:
            body = json.load(answer)
        if body.get("status") != "success":
            raise RuntimeError(f"{path}: {body}")
        return body["data"]

    def alerts(self):
        return self.api("/api/v1/alerts")["alerts"]

    def value(self, expr):
        """The one sample of `expr` now, or None."""
        result = self.api("/api/v1/query?query=" + urllib.parse.quote(expr))["result"]
        return round(float(result[0]["value"][1]), 1) if len(result) == 1 else None

    def wait_for_targets(self, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            targets = self.api("/api/v1/targets")["activeTargets"]
            if len(targets) == 3 and all(t["health"] == "up" for t in targets):
                return
            time.sleep(POLL)
        raise SystemExit("alerts-check: Prometheus does not scrape the three gateways: " + json.dumps(targets))

    # -- what the phases do -----------------------------------------------------------------

    def post_exchange(self, port, saml, conn=None):
        body = f"requestor=REF&deviceId=alerts-device&mvpd={self.args.mvpd}&deviceType=iOS&SAMLResponse={saml}"
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.request("POST", "/api/v1/tokens/authn", body=body.encode(),
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
            answer = conn.getresponse()
            payload = answer.read()
            return answer.status, payload
        finally:
            if own:
                conn.close()

    @staticmethod
    def stop_process(pid, sig=signal.SIGTERM, timeout=10):
        """Signals pid and waits until it has exited (a zombie of the shell counts as exited)."""
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                        return
            except (FileNotFoundError, ProcessLookupError):
                return  # reaped between the listing and the read: gone either way
            time.sleep(0.05)
        raise SystemExit(f"alerts-check: process {pid} did not exit")

    def sighup_with(self, pid, staged, store):
        for name in sorted(os.listdir(staged)):
            os.rename(os.path.join(staged, name), os.path.join(store, name))
        os.kill(pid, signal.SIGHUP)

    def trust_action(self):
        d = self.args.dir
        self.sighup_with(self.gwa_pid, f"{d}/staged-a", f"{d}/trust-a")
        self.sighup_with(self.gwb_pid, f"{d}/staged-b", f"{d}/trust-b")

    def overload_action(self):
        responses = [line.strip() for line in open(f"{self.args.dir}/heavy.txt") if line.strip()]
        stop = threading.Event()
        statuses = {}
        lock = threading.Lock()

        def client(index):
            conn = http.client.HTTPConnection("127.0.0.1", self.gwb_port, timeout=10)
            n = index
            while not stop.is_set():
                try:
                    status, _ = self.post_exchange(self.gwb_port, responses[n % len(responses)], conn)
                except (OSError, http.client.HTTPException):
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", self.gwb_port, timeout=10)
                    status = "error"
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1
                n += 1
            conn.close()

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(16)]
        for thread in threads:
            thread.start()

        def finish():
            stop.set()
            for thread in threads:
                thread.join(timeout=15)
            return "answers " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items(), key=str))

        return finish

    def replay_action(self):
        self.stop_process(self.args.redis_pid)
        saml = open(f"{self.args.dir}/small.txt").readline().strip()
        status, body = self.post_exchange(self.gwa_port, saml)
        code = json.loads(body or b"{}").get("code", "-") if body.startswith(b"{") else "-"
        return lambda: f"exchange on gw-a: {status} {code}"

    def upstream_action(self):
        self.stop_process(self.args.upstream_pid)

    def publish_tls(self, certificate, key):
        """Writes gw-c's TLS pair (each file replaced whole), then SIGHUP."""
        d = f"{self.args.dir}/tls-c"
        for source, target in ((key, "tls.key"), (certificate, "tls.pem")):
            with open(f"{d}/{source}", "rb") as src, open(f"{d}/{target}.new", "wb") as dst:
                dst.write(src.read())
            os.replace(f"{d}/{target}.new", f"{d}/{target}")
        os.kill(self.gwc_pid, signal.SIGHUP)

    def tls_mismatch_action(self):
        self.publish_tls("short.pem", "other.key")

    def tls_short_action(self):
        self.publish_tls("short.pem", "short.key")

    def target_action(self):
        self.stop_process(self.gwb_pid, signal.SIGKILL)

    # -- the phase loop ---------------------------------------------------------------------

    def phase(self, name, action, expectations, watch=None):
        positives = [e for e in expectations if e.firing]
        started = time.monotonic()
        finish = action() if action else None
        self.allowed.extend(positives)
        deadline = started + self.args.fire_timeout
        settle_from = started if not positives else None
        while True:
            now = time.monotonic()
            active = [a for a in self.alerts() if a["state"] in ("pending", "firing")]
            for e in expectations:
                for alert in active:
                    if e.matches(alert):
                        if alert["state"] == "firing" or e.seen == "inactive":
                            e.seen = alert["state"]
                        if alert["state"] == "firing" and e.fired_after is None:
                            e.fired_after = now - started
            for alert in active:
                if not any(e.matches(alert) for e in self.allowed):
                    labels = alert["labels"]
                    key = (labels["alertname"], labels.get("instance", ""), labels.get("mvpd", ""), labels.get("source", ""))
                    if key not in self.unexpected:
                        self.unexpected[key] = (name, alert["state"])
                    elif alert["state"] == "firing":
                        self.unexpected[key] = (self.unexpected[key][0], "firing")
            if settle_from is None and all(e.fired_after is not None for e in positives):
                settle_from = now
            if settle_from is not None and now - settle_from >= (watch or SETTLE):
                break
            if now > deadline:
                break
            time.sleep(POLL)
        if finish:
            self.notes.append((name, finish()))
        for e in expectations:
            e.phase = name
            e.values = {label: self.value(expr) for label, expr in e.evidence}
            self.rows.append(e)
        return time.monotonic() - started

    def run(self):
        a, b, mvpd = self.gwa, self.gwb, self.args.mvpd
        t0 = time.monotonic()
        timings = {}
        self.wait_for_targets()

        def on(gateway):
            return f'instance="{gateway}"'

        days = 86400
        baseline = [
            Expectation("SamlgateNoHealthyUpstream", "gw-a", {"instance": a}, "start: 1 of 2 upstreams down (health checks)", False,
                        [("healthy", f"samlgate_upstreams_healthy{{{on(a)}}}"), ("of", f"samlgate_upstreams_configured{{{on(a)}}}")],
                        lambda v: v["healthy"] == 1 and v["of"] == 2),
            Expectation("SamlgateReplayStoreDown", "gw-a", {"instance": a}, "start: Redis up", False,
                        [("up", f"samlgate_replay_store_up{{{on(a)}}}")], lambda v: v["up"] == 1),
        ]
        timings["baseline"] = self.phase("baseline", None, baseline, watch=5.0)

        trust = [
            Expectation("SamlgateTrustStoreReloadFailing", "gw-a", {"instance": a}, "garbage cert.pem + SIGHUP", True,
                        [("failed", f'samlgate_trust_store_reloads_total{{{on(a)},result="failed"}}')]),
            Expectation("SamlgateTrustStoreReloadFailing", "gw-b", {"instance": b}, "valid additions + SIGHUP", False,
                        [("failed", f'samlgate_trust_store_reloads_total{{{on(b)},result="failed"}}'),
                         ("ok", f'samlgate_trust_store_reloads_total{{{on(b)},result="ok"}}')],
                        lambda v: v["failed"] == 0 and v["ok"] >= 1),
            Expectation("SamlgateTrustCertificateExpiring", "mvpd=ShortCert", {"mvpd": "ShortCert"}, "cert valid 3 days + SIGHUP", True,
                        [("days", f'min(samlgate_trust_certificate_expiry_seconds{{mvpd="ShortCert"}}) / {days}')]),
            Expectation("SamlgateTrustCertificateExpiring", f"mvpd={mvpd}", {"mvpd": mvpd}, "cert valid 10 years", False,
                        [("days", f'min(samlgate_trust_certificate_expiry_seconds{{mvpd="{mvpd}"}}) / {days}')]),
            Expectation("SamlgateTrustMetadataExpiring", "mvpd=ShortMeta", {"mvpd": "ShortMeta"}, "validUntil in 3 days + SIGHUP", True,
                        [("days", f'min(samlgate_trust_metadata_expiry_seconds{{mvpd="ShortMeta"}}) / {days}')]),
            Expectation("SamlgateTrustMetadataExpiring", "mvpd=LongMeta", {"mvpd": "LongMeta"}, "validUntil in 30 days + SIGHUP", False,
                        [("days", f'min(samlgate_trust_metadata_expiry_seconds{{mvpd="LongMeta"}}) / {days}')]),
            Expectation("SamlgateMetadataRefreshFailing", "source=Fetched", {"source": "Fetched"}, "metadata.url nobody answers + SIGHUP", True,
                        [("failures", 'sum(samlgate_metadata_refresh_failures_total{source="Fetched"})')]),
        ]
        timings["trust"] = self.phase("trust", self.trust_action, trust)

        overload = [
            Expectation("SamlgateOverloadRefusals", "gw-b", {"instance": b}, "16 conns of 300 KB exchanges, 1 worker", True,
                        [("overloaded", f'samlgate_errors_total{{{on(b)},code="overloaded"}}')]),
            Expectation("SamlgateWorkerQueueSaturated", "gw-b", {"instance": b}, "the same (queue 1)", True,
                        [("max_depth", f"max_over_time(samlgate_worker_queue_depth{{{on(b)}}}[15s])"),
                         ("limit", f"samlgate_worker_queue_limit{{{on(b)}}}")]),
            Expectation("SamlgateOverloadRefusals", "gw-a", {"instance": a}, "no load", False,
                        [("overloaded", f'samlgate_errors_total{{{on(a)},code="overloaded"}}')], lambda v: v["overloaded"] == 0),
            Expectation("SamlgateExchangeRefusalsJump", "any", {}, "refusals with no history (10 m = 1 d)", False,
                        [("refused", f'sum(samlgate_exchanges_total{{{on(b)},outcome="refused"}})')], lambda v: v["refused"] >= 20),
        ]
        timings["overload"] = self.phase("overload", self.overload_action, overload)

        replay = [Expectation("SamlgateReplayStoreDown", "gw-a", {"instance": a}, "Redis stopped + 1 exchange", True,
                              [("up", f"samlgate_replay_store_up{{{on(a)}}}")])]
        timings["replay"] = self.phase("replay", self.replay_action, replay)

        c = self.gwc
        tls_failed = [
            Expectation("SamlgateTLSReloadFailing", "gw-c", {"instance": c}, "a key of another certificate + SIGHUP", True,
                        [("failed", f'samlgate_tls_reloads_total{{{on(c)},result="failed"}}')]),
            Expectation("SamlgateTLSCertificateExpiresSoon", "gw-c", {"instance": c}, "the 30-day certificate still served", False,
                        [("days", f"(samlgate_tls_certificate_not_after_timestamp_seconds{{{on(c)}}} - time()) / {days}")],
                        lambda v: v["days"] > 20),
        ]
        timings["tls-reload"] = self.phase("tls-reload", self.tls_mismatch_action, tls_failed)
        tls_short = [
            Expectation("SamlgateTLSCertificateExpiresSoon", "gw-c", {"instance": c}, "a good pair valid 3 days + SIGHUP", True,
                        [("days", f"(samlgate_tls_certificate_not_after_timestamp_seconds{{{on(c)}}} - time()) / {days}"),
                         ("ok", f'samlgate_tls_reloads_total{{{on(c)},result="ok"}}')], lambda v: v["ok"] == 1 and v["days"] < 4),
        ]
        timings["tls-expiry"] = self.phase("tls-expiry", self.tls_short_action, tls_short)

        upstream = [
            Expectation("SamlgateNoHealthyUpstream", "gw-a", {"instance": a}, "upstream stopped, probes every 0.5 s", True,
                        [("healthy", f"samlgate_upstreams_healthy{{{on(a)}}}")]),
            Expectation("SamlgateNoHealthyUpstream", "gw-b", {"instance": b}, "upstream stopped, passive, no traffic", False,
                        [("healthy", f"samlgate_upstreams_healthy{{{on(b)}}}")], lambda v: v["healthy"] == 1),
        ]
        timings["upstream"] = self.phase("upstream", self.upstream_action, upstream)

        target = [
            Expectation("SamlgateTargetDown", "gw-b", {"instance": b}, "gw-b killed (SIGKILL)", True, [("up", f"up{{{on(b)}}}")]),
            Expectation("SamlgateTargetDown", "gw-a", {"instance": a}, "gw-a running", False, [("up", f"up{{{on(a)}}}")],
                        lambda v: v["up"] == 1),
        ]
        timings["target"] = self.phase("target", self.target_action, target)
        return time.monotonic() - t0, timings

    def report(self, total, timings):
        header = ("phase", "alert", "on", "condition driven", "expected", "observed", "to firing", "evidence (Prometheus)", "ok")
        lines = []
        for e in self.rows:
            lines.append((e.phase, e.alert, e.target, e.condition, "firing" if e.firing else "not firing", e.seen,
                          f"{e.fired_after:.1f} s" if e.fired_after is not None else "-", e.evidence_text, "ok" if e.passed else "FAIL"))
        for (alert, instance, mvpd, source), (phase, state) in sorted(self.unexpected.items()):
            who = instance or (f"mvpd={mvpd}" if mvpd else f"source={source}" if source else "-")
            who = {self.gwa: "gw-a", self.gwb: "gw-b", self.gwc: "gw-c"}.get(who, who)
            lines.append((phase, alert, who, "(not driven)", "not firing", state, "-", "-", "FAIL"))
        widths = [max(len(str(row[i])) for row in [header] + lines) for i in range(len(header))]
        for row in [header] + lines:
            print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
        for phase, note in self.notes:
            print(f"  {phase}: {note}")
        print("phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()) + f"; checks {total:.1f} s")
        failed = [row for row in lines if row[-1] == "FAIL"]
        print(f"alerts-check: {'FAILED' if failed else 'passed'} ({len(lines) - len(failed)} of {len(lines)} rows ok)")
        return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--prometheus", required=True)
    parser.add_argument("--gw-a", required=True, help="PORT:PID")
    parser.add_argument("--gw-b", required=True, help="PORT:PID")
    parser.add_argument("--gw-c", required=True, help="PROBE-PORT:PID (the TLS gateway, scraped on its probe listener)")
    parser.add_argument("--upstream-pid", type=int, required=True)
    parser.add_argument("--redis-pid", type=int, required=True)
    parser.add_argument("--mvpd", default="Cablevision")
    parser.add_argument("--fire-timeout", type=float, default=25)
    args = parser.parse_args()
    check = Check(args)
    total, timings = check.run()
    sys.exit(check.report(total, timings))


if __name__ == "__main__":
    main()
