"""RESULTS.md and a PNG chart from the harness's raw results (results.json).

Every ratio is pykafkad / Kafka, from the means of the rounds of one run of the harness.  The
hand-written notes (optimisations and their measured effect, next steps) live in
benchmarks/NOTES.md and are copied in verbatim, so the report can be regenerated at any time:
`python -m benchmarks report <results.json>`.  The three-broker cluster section (between its
markers), which `python -m benchmarks.cluster` writes from its own results, is kept as it is.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

from benchmarks import machine_speed

NOTES = Path(__file__).resolve().parent / "NOTES.md"
BROKERS = ("pykafkad", "kafka")

# metric -> (label, better: "higher" | "lower", target ratio or None).  Issue 32 raised the targets for
# consume (1.5x), CPU per GB consumed (0.5x), the median (1.0x) and p99 (0.5x) latency, and creation.
METRICS: dict[str, dict[str, tuple[str, str, float | None]]] = {
    "throughput": {
        "produce_mb_s": ("produce MB/s", "higher", 1.0),
        "produce_records_s": ("produce records/s", "higher", None),
        "consume_mb_s": ("consume MB/s", "higher", 1.5),
        "consume_records_s": ("consume records/s", "higher", None),
        "consume_fetch_pauses": ("librdkafka fetch pauses while consuming (local queue full)", "lower", None),
        "produce_latency_p99_ms": ("producer-reported p99 latency ms (saturated)", "lower", None),
        "produce_cpu_s_per_gb": ("broker CPU s per GB produced", "lower", None),
        "consume_cpu_s_per_gb": ("broker CPU s per GB consumed", "lower", 0.5),
        "rss_peak_mb": ("broker peak RSS MB", "lower", 0.25),
    },
    "latency": {
        "p50_ms": ("end-to-end p50 ms", "lower", 1.0),
        "p99_ms": ("end-to-end p99 ms", "lower", 0.5),
        "p999_ms": ("end-to-end p99.9 ms", "lower", None),
        "rss_peak_mb": ("broker peak RSS MB", "lower", 0.25),
        "cpu_s_per_s": ("broker CPU s per second", "lower", None),
    },
    "scale": {
        "create_partitions_s": ("create the partitions, s", "lower", 1.0),
        "write_every_partition_s": ("one record to every partition, s", "lower", None),
        "read_every_partition_s": ("a Java consumer reads every partition's record, s", "lower", None),
        "connect_s": ("open the idle connections, s", "lower", None),
        "rss_before_mb": ("broker RSS before, MB", "lower", None),
        "rss_idle_mb": ("broker RSS holding them, MB", "lower", 0.25),
        "idle_cpu_s_per_s": ("broker CPU s per second while idle", "lower", None),
    },
}
STARTUP = ("startup_s", "process start to first acknowledged produce, s", "lower", 0.2)
# The metrics compared between pykafkad and pykafkad with metrics.listener (the "pykafkad-metrics" runs).
METRICS_COST = {
    "throughput": ("produce_mb_s", "consume_mb_s", "produce_cpu_s_per_gb", "consume_cpu_s_per_gb", "rss_peak_mb"),
    "latency": ("p50_ms", "p99_ms", "cpu_s_per_s", "rss_peak_mb"),
    "scale": ("create_partitions_s", "rss_idle_mb", "idle_cpu_s_per_s"),
}


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def _ratio(r: float | None) -> str:
    if r is None:
        return "–"
    return f"{r:.2f}" if r >= 0.1 else f"{r:.4f}"


def _values(runs: list[dict[str, Any]], broker: str, metric: str) -> list[float]:
    out = []
    for run in runs:
        if run["broker"] == broker and "metrics" in run and metric in run["metrics"]:
            v = run["metrics"][metric]
            if v is not None and not (isinstance(v, float) and math.isnan(v)):
                out.append(float(v))
    return out


def _mean(xs: list[float]) -> float | None:
    return statistics.fmean(xs) if xs else None


def _verdict(ratio: float | None, better: str, target: float | None) -> str:
    if target is None or ratio is None:
        return ""
    ok = ratio >= target if better == "higher" else ratio <= target
    sign = "≥" if better == "higher" else "≤"
    return f"{'met' if ok else '**missed**'} ({sign} {target:g})"


def _row(label: str, py: list[float], kf: list[float], better: str, target: float | None) -> tuple[str, float | None]:
    mp, mk = _mean(py), _mean(kf)
    ratio = mp / mk if mp is not None and mk else None
    cells = [label, " / ".join(_fmt(x) for x in py) or "–", _fmt(mp), " / ".join(_fmt(x) for x in kf) or "–",
             _fmt(mk), _ratio(ratio), _verdict(ratio, better, target)]
    return "| " + " | ".join(cells) + " |", ratio


TABLE_HEAD = ("| metric | pykafkad runs | pykafkad mean | Kafka runs | Kafka mean | ratio pykafkad/Kafka | target |\n"
              "|---|---:|---:|---:|---:|---:|---|")


def summarise(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Per target: every (workload, metric) ratio that it applies to."""
    rows = []
    for wl in results["workloads"]:
        kind = wl["description"]["kind"]
        for metric, (label, better, target) in METRICS[kind].items():
            if target is None:
                continue
            py, kf = _values(wl["runs"], "pykafkad", metric), _values(wl["runs"], "kafka", metric)
            mp, mk = _mean(py), _mean(kf)
            ratio = mp / mk if mp is not None and mk else None
            rows.append({"workload": wl["description"]["key"], "metric": label, "ratio": ratio, "better": better,
                         "target": target})
    all_runs = [r for wl in results["workloads"] for r in wl["runs"]]
    py, kf = _values_startup(all_runs, "pykafkad"), _values_startup(all_runs, "kafka")
    if py and kf:
        rows.append({"workload": "every start", "metric": STARTUP[1],
                     "ratio": statistics.median(py) / statistics.median(kf), "better": "lower", "target": STARTUP[3]})
    return rows


def _values_startup(runs: list[dict[str, Any]], broker: str) -> list[float]:
    return [r["startup_s"] for r in runs if r["broker"] == broker and r.get("startup_s") is not None]


def render_markdown(results: dict[str, Any], chart_name: str | None) -> str:
    meta = results["meta"]
    out = ["# pykafkad against Apache Kafka", ""]
    out += ["Generated by `benchmarks/` (`make bench`) from `results.json`; every ratio is pykafkad / Kafka "
            "from the same run on the same machine, each workload run on one broker at a time, alternating "
            "pykafkad, Kafka, pykafkad, Kafka (one fresh broker process and log directory per run). "
            "A ratio says more than an absolute figure: the machine was shared (see load average).", ""]
    out += ["## Run", ""]
    out += [f"- Command: `{meta['command']}` (profile `{meta['profile']}`, {meta['rounds']} round(s))",
            f"- Started {meta['started']}, finished {meta.get('finished', '(unfinished)')}",
            *[f"- Added from a second run, same machine: `{a['command']}` ({a['started']} to {a.get('finished')})"
              for a in meta.get("also", [])],
            f"- Machine: {meta['machine']['cpu']}, {meta['machine']['cores']} cores, "
            f"{meta['machine']['mem_gb']:.1f} GB RAM, {meta['machine']['kernel']}; data on {meta['machine']['disk']}",
            f"- pykafkad {meta['versions']['pykafkad']} on {meta['versions']['python']}",
            f"- Apache Kafka {meta['versions']['kafka']}, JVM flags as kafka-server-start.sh (-Xmx1G -Xms1G, G1)",
            f"- librdkafka {meta['versions'].get('librdkafka', '?')} (confluent-kafka "
            f"{meta['versions'].get('confluent_kafka', '?')})"]
    loads = meta.get("loadavg", [])
    if loads:
        ones = [x["1m"] for x in loads]
        busy = max(ones) > meta["machine"]["cores"] * 1.25
        out += [f"- Load average (1 min) sampled at each run's start and end: min {min(ones):.2f}, "
                f"mean {statistics.fmean(ones):.2f}, max {max(ones):.2f} on {meta['machine']['cores']} cores; "
                "the benchmark's own broker and load generator account for up to about 2"
                + (" — **other work was running on the machine at times during this run; the figures are noisy**"
                   if busy else "")]
    if "machine_speed" in meta:
        out.append(machine_speed.describe(meta["machine_speed"]))
    out += ["- Both brokers run their default configuration; the harness sets only the listener (127.0.0.1), "
            "the log directory and `group.initial.rebalance.delay.ms=0` on both.", ""]

    summary = summarise(results)
    if summary:
        out += ["## Targets", "", "| workload | metric | ratio pykafkad/Kafka | target |", "|---|---|---:|---|"]
        for row in summary:
            ratio = row["ratio"]
            out.append(f"| {row['workload']} | {row['metric']} | {_ratio(ratio)} | "
                       f"{_verdict(ratio, row['better'], row['target'])} |")
        out.append("")
    notes = NOTES.read_text().rstrip() if NOTES.exists() else ""
    summary, rest = _split_summary(notes)
    if summary:
        out += [summary, ""]
    if chart_name:
        out += [f"![throughput and latency]({chart_name})", ""]

    out += ["## Start-up", ""]
    all_runs = [r for wl in results["workloads"] for r in wl["runs"]]
    py, kf = _values_startup(all_runs, "pykafkad"), _values_startup(all_runs, "kafka")
    if py and kf:
        ratio = statistics.median(py) / statistics.median(kf)
        out += ["Every run starts a fresh broker: seconds from exec to the first produce acknowledged "
                "(acks=all, auto-created topic), over all runs. Kafka's one-off `kafka-storage format` of a new "
                "log directory is not included (mean "
                f"{_fmt(_mean([r['format_s'] for r in all_runs if r.get('format_s')]))} s).", "",
                "| broker | runs | min | median | max |", "|---|---:|---:|---:|---:|",
                f"| pykafkad | {len(py)} | {_fmt(min(py))} | {_fmt(statistics.median(py))} | {_fmt(max(py))} |",
                f"| Kafka | {len(kf)} | {_fmt(min(kf))} | {_fmt(statistics.median(kf))} | {_fmt(max(kf))} |",
                "", f"Ratio of medians pykafkad/Kafka: **{ratio:.2f}** "
                f"({_verdict(ratio, 'lower', STARTUP[3])}).", ""]

    out += metrics_cost_section(results)
    out += ["## Workloads", ""]
    for wl in results["workloads"]:
        d = wl["description"]
        out += [f"### {d['key']}", "", _workload_sentence(d), ""]
        errors = [r for r in wl["runs"] if "error" in r]
        out.append(TABLE_HEAD)
        for metric, (label, better, target) in METRICS[d["kind"]].items():
            py, kf = _values(wl["runs"], "pykafkad", metric), _values(wl["runs"], "kafka", metric)
            if py or kf:
                out.append(_row(label, py, kf, better, target)[0])
        out.append("")
        for r in errors:
            out.append(f"- {r['broker']} round {r['round'] + 1} failed: `{r['error'][:300]}`")
        if errors:
            out.append("")
    if rest:
        out += [rest, ""]
    return "\n".join(out)


def metrics_cost_section(results: dict[str, Any]) -> list[str]:
    """pykafkad with ``metrics.listener`` (scraped every second) against pykafkad without, per workload."""
    with_metrics = "pykafkad-metrics"
    all_runs = [r for wl in results["workloads"] for r in wl["runs"]]
    if not any(r["broker"] == with_metrics for r in all_runs):
        return []
    out = ["## What `metrics.listener` costs", "",
           "Every workload also ran on pykafkad with `metrics.listener` set, as `make run` starts it, and its "
           "`/metrics` scraped once a second during the whole run (Prometheus scrapes every 15 s by default). "
           "The ratio is with / without: below 1.00 on a higher-is-better metric, or above 1.00 on a "
           "lower-is-better one, is what the metrics cost, within the spread of the rounds.", "",
           "| workload | metric | pykafkad | with metrics.listener | ratio | scrapes (mean ms, kB) |",
           "|---|---|---:|---:|---:|---|"]
    for wl in results["workloads"]:
        kind = wl["description"]["kind"]
        scrapes = [r["scrape"] for r in wl["runs"] if r["broker"] == with_metrics and "scrape" in r]
        seen = ""
        if scrapes:
            seen = (f"{sum(s['scrapes'] for s in scrapes)} ({_fmt(_mean([s['scrape_ms'] for s in scrapes]))} ms, "
                    f"{_fmt(_mean([s['scrape_kb'] for s in scrapes]))} kB)")
            failed = sum(s["scrape_failures"] for s in scrapes)
            seen += f", {failed} failed" if failed else ""
        for metric in METRICS_COST[kind]:
            plain, measured = _mean(_values(wl["runs"], "pykafkad", metric)), _mean(_values(wl["runs"], with_metrics,
                                                                                             metric))
            if plain is None and measured is None:
                continue
            ratio = measured / plain if measured is not None and plain else None
            out.append(f"| {wl['description']['key']} | {METRICS[kind][metric][0]} | {_fmt(plain)} | "
                       f"{_fmt(measured)} | {_ratio(ratio)} | {seen} |")
            seen = ""
    plain_start, metrics_start = _values_startup(all_runs, "pykafkad"), _values_startup(all_runs, with_metrics)
    if plain_start and metrics_start:
        ratio = statistics.median(metrics_start) / statistics.median(plain_start)
        out.append(f"| every start | {STARTUP[1]} (median) | {_fmt(statistics.median(plain_start))} | "
                   f"{_fmt(statistics.median(metrics_start))} | {_ratio(ratio)} | |")
    return out + [""]


def _split_summary(notes: str) -> tuple[str, str]:
    """NOTES.md's leading "## Summary" section (shown after the targets) and the rest (shown last)."""
    if not notes.startswith("## Summary"):
        return "", notes
    cut = notes.find("\n## ", 1)
    if cut < 0:
        return notes, ""
    return notes[:cut].rstrip(), notes[cut + 1:].lstrip()


def _workload_sentence(d: dict[str, Any]) -> str:
    size = f"{d.get('record_size', 0)}-byte records"
    if d["kind"] == "throughput":
        tool = ("Kafka's `kafka-producer-perf-test` (--throughput -1) then `kafka-consumer-perf-test` "
                "(fetch rate, excluding the group join)" if d["client"] == "java" else
                "librdkafka (confluent-kafka) producer as fast as it takes records, then an assign() consumer")
        return (f"{tool}: {d['records']:,} {size}, {d['partitions']} partition(s), acks={d['acks']}, "
                f"compression {d['compression']}; "
                + (f"in transactions committed every {d['transaction_ms']} ms (`--transaction-duration-ms`); "
                   if d.get("transaction_ms") else "")
                + (f"consumer {', '.join(f'`{k}={v}`' for k, v in d['consumer_config'])}; "
                   if d.get("consumer_config") else "")
                + "client defaults otherwise. An unmeasured warm-up of "
                f"{max(1000, d['records'] // 5):,} records to another topic comes first.")
    if d["kind"] == "latency":
        if d["client"] == "java":
            return (f"Kafka's `EndToEndLatency` tool: {int(d['rate'] * d['seconds']):,} {size}, one in flight "
                    f"at a time, acks={d['acks']} (the tool reports whole milliseconds), after an unmeasured "
                    "warm-up run on another topic.")
        return (f"librdkafka producer at a fixed {d['rate']:,} records/s for {d['seconds']:g} s, {size} stamped "
                f"with CLOCK_MONOTONIC, acks={d['acks']}, linger.ms=0; a consumer in the same process reads them "
                "back; latency = receive time − send time. An unmeasured "
                f"{d.get('warmup_s', 5.0):g} s warm-up on another topic comes first "
                "(a fresh JVM answers its first seconds hundreds of milliseconds late), and the first second of "
                "the measured run is dropped too.")
    return (f"Create one topic of {d['partitions']:,} partitions (topics of 2,000 one after another beyond "
            "that), write one record to each, read them back with Kafka's Java consumer (from the run that "
            "added this step on), then open "
            f"{d['connections']:,} connections that each send one ApiVersions request and stay idle for "
            f"{d['idle_s']:g} s.")


def render_chart(results: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    tput = [wl for wl in results["workloads"] if wl["description"]["kind"] == "throughput"]
    lat = [wl for wl in results["workloads"] if wl["description"]["kind"] == "latency"]
    fig, axes = plt.subplots(1, 2, figsize=(16, 7))
    colors = {"pykafkad": "#3b7dd8", "kafka": "#d8663b"}

    ax = axes[0]
    labels = []
    width = 0.2
    for i, wl in enumerate(tput):
        labels.append(wl["description"]["key"])
        for j, (broker, metric) in enumerate([(b, m) for m in ("produce_mb_s", "consume_mb_s") for b in BROKERS]):
            v = _mean(_values(wl["runs"], broker, metric))
            ax.bar(i + (j - 1.5) * width, v or 0, width, color=colors[broker],
                   alpha=1.0 if metric == "produce_mb_s" else 0.55,
                   label=f"{broker} {metric.split('_')[0]}" if i == 0 else None)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("MB/s (mean of rounds)")
    ax.set_title("Throughput (solid: produce, light: consume)")
    ax.legend(fontsize=8)

    ax = axes[1]
    labels = []
    for i, wl in enumerate(lat):
        labels.append(wl["description"]["key"])
        for j, (broker, metric) in enumerate([(b, m) for m in ("p50_ms", "p99_ms") for b in BROKERS]):
            v = _mean(_values(wl["runs"], broker, metric))
            ax.bar(i + (j - 1.5) * width, v or 0, width, color=colors[broker],
                   alpha=0.55 if metric == "p50_ms" else 1.0,
                   label=f"{broker} {metric.split('_')[0]}" if i == 0 else None)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("ms (mean of rounds, log scale)")
    ax.set_title("End-to-end latency (light: p50, solid: p99)")
    ax.legend(fontsize=8)
    fig.suptitle(f"pykafkad vs Apache Kafka {results['meta']['versions']['kafka'].split()[0]} — "
                 f"{results['meta']['started']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def merge_into(results_path: Path, others: list[Path]) -> None:
    """Add the workloads (and load samples, commands) of other runs to ``results_path``."""
    results = json.loads(results_path.read_text())
    for other_path in others:
        other = json.loads(other_path.read_text())
        keys = {wl["description"]["key"] for wl in results["workloads"]}
        results["workloads"] += [wl for wl in other["workloads"] if wl["description"]["key"] not in keys]
        results["meta"]["loadavg"] += other["meta"].get("loadavg", [])
        if "machine_speed" in other["meta"]:
            results["meta"].setdefault("machine_speed", []).extend(other["meta"]["machine_speed"])
        results["meta"].setdefault("also", []).append(
            {"command": other["meta"]["command"], "started": other["meta"]["started"],
             "finished": other["meta"].get("finished")})
    results_path.write_text(json.dumps(results, indent=1))


def write_report(results_path: Path) -> Path:
    results = json.loads(results_path.read_text())
    out_dir = results_path.parent
    chart = out_dir / "results.png"
    has_chart = render_chart(results, chart)
    md = out_dir / "RESULTS.md"
    text = render_markdown(results, chart.name if has_chart else None)
    old = md.read_text() if md.exists() else ""
    kept = "\n\n".join(part for part in (cluster_section(old), schema_section(old), rest_section(old),
                                          delimited_section(old, SHARE_BEGIN, SHARE_END), recovery_section(old))
                         if part)
    md.write_text(text + ("\n" + kept + "\n" if kept else ""))
    return md


# The three-broker cluster section that `python -m benchmarks.cluster` writes into RESULTS.md from its own
# results (.cache/bench/cluster/results.json): regenerating the single-broker report keeps it, at the end.
CLUSTER_BEGIN = "<!-- cluster-benchmark:begin (written by `python -m benchmarks.cluster`; notes: CLUSTER_NOTES.md) -->"
CLUSTER_END = "<!-- cluster-benchmark:end -->"


# The restart-after-kill-9 section `python -m benchmarks.recovery` appends: kept at the very end too.
RECOVERY_BEGIN = "<!-- recovery-benchmark:start -->"
RECOVERY_END = "<!-- recovery-benchmark:end -->"


# The schema validation section `python -m benchmarks.schema_validation` writes, and the REST proxy's
# (`python -m benchmarks.rest_proxy`): kept too.
REST_BEGIN = "<!-- rest-proxy-benchmark:start -->"
REST_END = "<!-- rest-proxy-benchmark:end -->"
SHARE_BEGIN = "<!-- share-groups-benchmark:start -->"
SHARE_END = "<!-- share-groups-benchmark:end -->"
SCHEMA_BEGIN = "<!-- schema-validation-benchmark:start -->"
SCHEMA_END = "<!-- schema-validation-benchmark:end -->"


def schema_section(text: str) -> str:
    """The delimited schema validation section of a RESULTS.md, markers included, or ""."""
    return delimited_section(text, SCHEMA_BEGIN, SCHEMA_END)


def rest_section(text: str) -> str:
    """The delimited REST proxy section of a RESULTS.md, markers included, or ""."""
    return delimited_section(text, REST_BEGIN, REST_END)


def delimited_section(text: str, first: str, last: str) -> str:
    begin = text.find(first)
    end = text.find(last, begin)
    return text[begin:end + len(last)] if begin >= 0 and end > begin else ""


def replace_section(results: Path, text: str, begin: str, end: str) -> None:
    """Put ``text`` (a section delimited by ``begin`` and ``end``) at the end of ``results``, in place
    of an earlier run's."""
    current = results.read_text()
    if begin in current and end in current:
        head, rest = current.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        current = head.rstrip("\n") + "\n\n" + (tail + "\n" if tail else "")
    results.write_text(current.rstrip("\n") + "\n\n" + text)


def recovery_section(text: str) -> str:
    """The delimited recovery section of a RESULTS.md, markers included, or ""."""
    begin = text.find(RECOVERY_BEGIN)
    end = text.find(RECOVERY_END, begin)
    return text[begin:end + len(RECOVERY_END)] if begin >= 0 and end > begin else ""


def cluster_section(text: str) -> str:
    """The delimited cluster section of a RESULTS.md, markers included, or ""."""
    begin = text.find(CLUSTER_BEGIN)
    end = text.find(CLUSTER_END, begin)
    return text[begin:end + len(CLUSTER_END)] if begin >= 0 and end > begin else ""
