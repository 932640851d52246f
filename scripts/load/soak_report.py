"""make soak's verdict: reads the samples (CSV) and wrk's output, prints the figures against
the goals, draws the plot, and exits 1 when a goal is missed."""
import csv
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(samples_path, wrk_path, plot_path, warmup, duration):
    # Samples taken after the load ended (connections closed) say nothing about the soak.
    rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(open(samples_path))]
    rows = [row for row in rows if row["seconds"] <= duration]
    if len(rows) < 3:
        print(f"soak: only {len(rows)} samples in {samples_path}")
        return 1
    after = [row for row in rows if row["seconds"] >= warmup] or rows[-2:]
    base, last = after[0], rows[-1]
    growth = (last["rss_kb"] - base["rss_kb"]) / base["rss_kb"] * 100
    peak = max(row["rss_kb"] for row in after)
    fds = (min(r["fds"] for r in after), max(r["fds"] for r in after))
    threads = (min(r["threads"] for r in after), max(r["threads"] for r in after))
    wrk = open(wrk_path).read()
    summary = re.search(r"^SOAK (.*)$", wrk, re.M)
    fields = dict(item.split("=") for item in summary.group(1).split()) if summary else {}
    lost = sum(int(fields.get(key, "1")) for key in ("connect", "read", "write", "timeout"))
    unexpected = int(fields.get("unexpected", "1"))
    statuses = re.findall(r"^SOAK_STATUS (\S+) (\d+)$", wrk, re.M)
    span = last["seconds"] - base["seconds"]
    rate = (last["requests"] - base["requests"]) / span if span > 0 else 0
    cpu = (last["cpu_seconds"] - base["cpu_seconds"]) / (last["requests"] - base["requests"]) * 1e6 if last["requests"] > base["requests"] else 0

    goals = [
        (f"RSS after warm-up: {base['rss_kb'] / 1024:.1f} MiB -> {last['rss_kb'] / 1024:.1f} MiB ({growth:+.2f} %, peak {peak / 1024:.1f} MiB)", growth < 5),
        (f"open descriptors after warm-up: {fds[0]:.0f}..{fds[1]:.0f}", fds[1] - fds[0] <= 8),
        (f"threads after warm-up: {threads[0]:.0f}..{threads[1]:.0f}", threads[0] == threads[1]),
        (f"unexpected statuses: {unexpected}", unexpected == 0),
        (f"requests without an answer (wrk connect/read/write/timeout errors): {lost}", lost == 0),
    ]
    print(f"soak: {fields.get('requests', '?')} requests in {last['seconds']:.0f} s ({rate:.0f}/s after warm-up, "
          f"gateway CPU {cpu:.0f} µs per request), p50 {int(fields.get('p50_us', 0)) / 1000:.2f} ms, p99 {int(fields.get('p99_us', 0)) / 1000:.2f} ms")
    for kind_status, count in statuses:
        print(f"  {kind_status:<16} {int(count):>10}")
    failed = False
    for text, ok in goals:
        print(f"  [{'ok' if ok else 'MISSED'}] {text}")
        failed |= not ok

    figure, axes = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    seconds = [row["seconds"] for row in rows]
    axes[0].plot(seconds, [row["rss_kb"] / 1024 for row in rows], color="tab:blue")
    axes[0].set_ylabel("RSS (MiB)")
    axes[0].set_ylim(bottom=0)
    axes[1].plot(seconds, [row["fds"] for row in rows], label="open descriptors", color="tab:green")
    axes[1].plot(seconds, [row["threads"] for row in rows], label="threads", color="tab:orange")
    axes[1].set_ylim(bottom=0)
    axes[1].legend(loc="lower right")
    rates = [0] + [(b["requests"] - a["requests"]) / (b["seconds"] - a["seconds"]) if b["seconds"] > a["seconds"] else 0
                   for a, b in zip(rows, rows[1:])]
    axes[2].plot(seconds, rates, color="tab:purple")
    axes[2].set_ylabel("requests/s")
    axes[2].set_xlabel("seconds")
    axes[2].set_ylim(bottom=0)
    for axis in axes:
        axis.axvline(warmup, color="grey", linestyle="--", linewidth=0.8)
        axis.grid(alpha=0.3)
    axes[0].set_title("samlgate soak: gateway resident memory, descriptors, threads, throughput")
    figure.tight_layout()
    figure.savefig(plot_path, dpi=110)
    print(f"plot: {plot_path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])))
