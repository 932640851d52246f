"""The table and plots of `make load-compare`: medians over the rounds in compare.csv.

Usage: compare_report.py CSV OUT_DIR — prints a Markdown table (also written to OUT_DIR/compare.md)
and writes throughput.png, p99.png and cpu.png to OUT_DIR.
"""
import sys

import matplotlib

from runs import LABELS, Runs

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path, out):
    runs = Runs(path, "connections")
    connections, rounds = runs.keys, runs.rounds
    median = runs.median

    lines = [
        f"Medians of {rounds} interleaved rounds; CPU is the proxy's own (user + system) per request.",
        "",
        "| connections | proxy | requests/s | p50 | p99 | proxy CPU per request | CPU × nginx |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for c in connections:
        anchor = median("nginx", c, "cpu_us_per_request")
        for proxy in runs.proxies:
            if not runs.has(proxy, c):
                continue
            cpu = median(proxy, c, "cpu_us_per_request")
            lines.append(
                f"| {c} | {LABELS[proxy]} | {median(proxy, c, 'requests_per_s'):,.0f} | "
                f"{median(proxy, c, 'p50_ms'):.2f} ms | {median(proxy, c, 'p99_ms'):.2f} ms | "
                f"{cpu:.0f} µs | {cpu / anchor:.1f}× |"
            )
    table = "\n".join(lines)
    print(table)
    with open(f"{out}/compare.md", "w") as f:
        f.write(table + "\n")

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
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(f"{out}/{name}.png", dpi=100)
        plt.close(fig)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
