"""The tables and plots of `make load-compare`: medians over the rounds in compare.csv, per workload.

Usage: compare_report.py CSV OUT_DIR — prints one Markdown table per workload (also written to
OUT_DIR/compare.md) and writes throughput-WORKLOAD.png, p99-WORKLOAD.png and cpu-WORKLOAD.png to
OUT_DIR. "CPU × nginx" is against nginx in the same workload at the same connection count; "− NIO
floor", on the rows of samlgate builds, is their CPU per request above the NIO floor's there.
"""
import math
import sys

import matplotlib

from runs import LABELS, Runs, workloads

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

WORKLOADS = {
    "form": "form: POSTs of ~11 KB form bodies (the exchange: the same bodies, each a signed response)",
    "get204": "get204: GETs the upstream answers 204, no body",
}


def table(runs):
    median = runs.median
    lines = [
        "| connections | proxy | requests/s | p50 | p99 | proxy CPU per request | CPU × nginx | − NIO floor |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in runs.keys:
        anchor = median("nginx", c, "cpu_us_per_request")
        floor = median("nio-floor", c, "cpu_us_per_request")
        for proxy in runs.proxies:
            if not runs.has(proxy, c):
                continue
            cpu = median(proxy, c, "cpu_us_per_request")
            ratio = "" if math.isnan(anchor) or anchor == 0 else f"{cpu / anchor:.1f}×"
            above = ""
            if proxy.startswith(("samlgate-", "baseline-")) and not math.isnan(floor):
                above = f"{cpu - floor:+.0f} µs"
            lines.append(
                f"| {c} | {LABELS[proxy]} | {median(proxy, c, 'requests_per_s'):,.0f} | "
                f"{median(proxy, c, 'p50_ms'):.2f} ms | {median(proxy, c, 'p99_ms'):.2f} ms | "
                f"{cpu:.0f} µs | {ratio} | {above} |"
            )
    return lines


def plots(runs, workload, out):
    connections, median = runs.keys, runs.median
    suffix = f"-{workload}" if workload else ""
    for field, name, ylabel, log in [
        ("requests_per_s", "throughput", "requests/s", False),
        ("p99_ms", "p99", "p99 latency (ms)", True),
        ("cpu_us_per_request", "cpu", "proxy CPU per request (µs)", False),
    ]:
        fig, ax = plt.subplots(figsize=(6, 4))
        for proxy in runs.proxies:
            ax.plot(connections, [median(proxy, c, field) for c in connections], marker="o", label=LABELS[proxy])
        ax.set_xscale("log", base=2)
        if log:
            ax.set_yscale("log")
        ax.set_xticks(connections, [str(c) for c in connections])
        ax.set_xlabel("connections (wrk, 1 thread)")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=None if log else 0)
        if workload:
            ax.set_title(f"workload {workload}", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(f"{out}/{name}{suffix}.png", dpi=100)
        plt.close(fig)


def main(path, out):
    lines = []
    for workload in workloads(path):
        runs = Runs(path, "connections", workload)
        if lines:
            lines.append("")
        if workload:
            lines += [f"Workload {WORKLOADS.get(workload, workload)}", ""]
        lines += [
            f"Medians of {runs.rounds} interleaved rounds; CPU is the proxy's own (user + system) per request.",
            "",
        ]
        lines += table(runs)
        plots(runs, workload, out)
    text = "\n".join(lines)
    print(text)
    with open(f"{out}/compare.md", "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
