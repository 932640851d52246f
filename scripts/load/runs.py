"""The runs of a load script's CSV, grouped by proxy and one other column, for the reports of
`make load-compare` (by connections) and `make load-scale` (by cores)."""
import csv
import statistics
from collections import defaultdict

LABELS = {
    "nginx": "nginx pass-through",
    "haproxy": "HAProxy pass-through",
    "caddy": "Caddy pass-through",
    "nio-floor": "NIO floor pass-through",
    "samlgate-pass-through": "samlgate pass-through",
    "samlgate-exchange": "samlgate v1 exchange",
    "baseline-pass-through": "baseline build pass-through",
    "baseline-exchange": "baseline build v1 exchange",
}


def workloads(path):
    """The workloads of CSV `path` in the order of their first row (one, "", without the column)."""
    with open(path) as f:
        return list(dict.fromkeys(row.get("workload") or "" for row in csv.DictReader(f)))


class Runs:
    """Rows of CSV `path` by (proxy, int(row[column])); only the workload's when one is named."""

    def __init__(self, path, column, workload=None):
        self.rows = defaultdict(list)
        with open(path) as f:
            for row in csv.DictReader(f):
                if workload is None or (row.get("workload") or "") == workload:
                    self.rows[(row["proxy"], int(row[column]))].append(row)
        self.keys = sorted({key for _, key in self.rows})
        self.proxies = [p for p in LABELS if any((p, key) in self.rows for key in self.keys)]
        self.rounds = max(len(v) for v in self.rows.values())

    def has(self, proxy, key):
        return (proxy, key) in self.rows

    def values(self, proxy, key, field):
        return [float(r[field]) for r in self.rows.get((proxy, key), [])]

    def median(self, proxy, key, field):
        values = self.values(proxy, key, field)
        return statistics.median(values) if values else float("nan")

    def spread(self, proxy, key, field):
        values = self.values(proxy, key, field)
        return f"{min(values):.0f}–{max(values):.0f}" if values else ""
