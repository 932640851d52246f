"""The table and plot of `make load-scale`: medians over the rounds in scale.csv, by cores given.

Usage: scale_report.py CSV OUT_DIR — prints a Markdown table (also written to OUT_DIR/scale.md) and
writes OUT_DIR/scale.png (requests/s and proxy CPU per request against the cores).
"""
import sys

import matplotlib

from runs import LABELS, Runs

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path, out):
    runs = Runs(path, "k")
    cores, proxies, rounds = runs.keys, runs.proxies, runs.rounds
    median, spread = runs.median, runs.spread

    lines = [
        f"Medians of {rounds} interleaved rounds (min–max); each proxy pinned to K cores, the load on the others; "
        "CPU is the proxy's own (user + system) per request.",
        "",
        "| cores (K) | proxy | requests/s | p99 | proxy CPU per request | CPU × nginx |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for k in cores:
        anchor = median("nginx", k, "cpu_us_per_request")
        for proxy in proxies:
            if not runs.has(proxy, k):
                continue
            cpu = median(proxy, k, "cpu_us_per_request")
            lines.append(
                f"| {k} | {LABELS[proxy]} | {median(proxy, k, 'requests_per_s'):,.0f} "
                f"({spread(proxy, k, 'requests_per_s')}) | {median(proxy, k, 'p99_ms'):.2f} ms | "
                f"{cpu:.0f} µs ({spread(proxy, k, 'cpu_us_per_request')}) | {cpu / anchor:.1f}× |"
            )
    table = "\n".join(lines)
    print(table)
    with open(f"{out}/scale.md", "w") as f:
        f.write(table + "\n")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, field, ylabel in [
        (axes[0], "requests_per_s", "requests/s"),
        (axes[1], "cpu_us_per_request", "proxy CPU per request (µs)"),
    ]:
        for proxy in proxies:
            ax.plot(cores, [median(proxy, k, field) for k in cores], marker="o", label=LABELS[proxy])
        ax.set_xticks(cores, [str(k) for k in cores])
        ax.set_xlabel("cores given to the proxy (taskset)")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(f"{out}/scale.png", dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
