"""The web console, server-rendered HTML on the HTTP listener (no build step, no scripts but the
search page's progress poll):

- ``/``: the cluster's brokers, their racks and leader counts, the controller;
- ``/topics`` and ``/topics/<name>``: partitions with leader, replicas and ISR (under-replicated
  ones marked), offsets and sizes, configs, and a records-per-second sparkline;
- ``/groups`` and ``/groups/<id>``: state, members and assignments, lag per partition and a lag
  history chart;
- ``/topics/<name>`` also lists the topic's subjects in the schema registry, with their versions;
- ``/browse``: a partition's records from an offset or a time, as text, JSON or hex, with headers,
  or decoded through the schema registry (Avro, JSON Schema, Protobuf) beside their raw bytes;
- ``/search``: "was this message there?", by key, header or value substring over an offset range,
  with a progress bar while it scans.

Each page reads the broker's state when asked, so it shows the data as it changes.
"""

from __future__ import annotations

import html
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pykafkad.config import parse_http_listener
from pykafkad.observability import admin_api
from pykafkad.observability.history import History
from pykafkad.observability.record_browser import FORMATS, BrowseError, read_page

if TYPE_CHECKING:
    from pykafkad.broker import Broker

_STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:.6rem 1.2rem;display:flex;gap:1.4rem;align-items:center}
header a{color:#cfd6e4;text-decoration:none}header a:hover{color:#fff}header b{font-size:1.1rem}
main{padding:1rem 1.4rem}h1{font-size:1.3rem;margin:.2rem 0 1rem}h2{font-size:1.05rem;margin:1.4rem 0 .5rem}
table{border-collapse:collapse;background:#fff;box-shadow:0 1px 2px #0001;min-width:30rem}
th,td{padding:.35rem .8rem;text-align:left;border-bottom:1px solid #e6e8ee;vertical-align:top}
th{font-size:.8rem;text-transform:uppercase;color:#5b6475}td.num{text-align:right;font-variant-numeric:tabular-nums}
.bad{color:#b3261e;font-weight:600}.ok{color:#1b7a3a}.muted{color:#7a8294}
pre{margin:0;white-space:pre-wrap;max-width:60rem;font-size:.85rem}
form{display:flex;gap:.6rem;flex-wrap:wrap;align-items:end;margin-bottom:1rem}
label{display:flex;flex-direction:column;font-size:.8rem;color:#5b6475}
input,select,button{font-size:.9rem;padding:.25rem .4rem}progress{width:30rem;height:1.1rem}
"""


def _e(value: Any) -> str:
    return html.escape("-" if value is None else str(value))


def _page(title: str, body: str, script: str = "") -> bytes:
    nav = "".join(f'<a href="{href}">{name}</a>' for href, name in (
        ("/", "Brokers"), ("/topics", "Topics"), ("/groups", "Groups"), ("/browse", "Messages"),
        ("/search", "Search")))
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{_e(title)} · pykafkad</title>"
            f"<style>{_STYLE}</style></head><body><header><b>pykafkad</b>{nav}</header>"
            f"<main><h1>{_e(title)}</h1>{body}</main>{script}</body></html>").encode()


def _table(columns: Sequence[str], rows: Iterable[Sequence[str]], table_id: str = "") -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>" for cell in row)
                   + "</tr>" for row in rows)
    return f'<table{f" id={table_id}" if table_id else ""}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _num(value: Any) -> str:
    return f'<td class=num>{_e(value)}</td>'


def _link(href: str, text: Any) -> str:
    return f'<a href="{html.escape(href)}">{_e(text)}</a>'


def sparkline(values: Sequence[float], width: int = 240, height: int = 40) -> str:
    """An inline SVG line of ``values`` (the newest on the right)."""
    if len(values) < 2:
        return '<span class=muted>collecting (a point every 5 s)</span>'
    top = max(values) or 1.0
    step = width / (len(values) - 1)
    points = " ".join(f"{i * step:.1f},{height - 2 - (v / top) * (height - 4):.1f}" for i, v in enumerate(values))
    return (f'<svg class=spark width={width} height={height} viewBox="0 0 {width} {height}">'
            f'<polyline fill=none stroke="#2f6fde" stroke-width=2 points="{points}"/></svg>'
            f' <span class=muted>max {top:,.1f}</span>')


def brokers_page(broker: Broker) -> bytes:
    c = admin_api.cluster(broker)
    rows = [[_num(b["id"]), _e(b["host"]), _num(b["port"]), _e(b["rack"]), _num(b["leaders"]),
             '<span class=ok>controller</span>' if b["is_controller"] else ""] for b in c["brokers"]]
    body = (f'<p>Cluster <code>{_e(c["cluster_id"])}</code>, controller broker {_e(c["controller_id"])}; '
            f'this console is broker {_e(c["this_broker"])}.</p>'
            + _table(["Broker", "Host", "Port", "Rack", "Leaders", ""], rows, "brokers"))
    return _page("Brokers", body)


def topics_page(broker: Broker, history: History) -> bytes:
    rows = []
    for t in admin_api.topics(broker):
        rates = [r for _, r in history.topic_rates.get(t["name"], [])]
        health = ('<span class=bad>' + f'{t["under_replicated"]} under-replicated</span>' if t["under_replicated"]
                  else '<span class=ok>in sync</span>')
        if t["offline"]:
            health = f'<span class=bad>{t["offline"]} offline</span>'
        rows.append([_link(f"/topics/{urllib.parse.quote(t['name'], safe='')}", t["name"]), _num(t["partitions"]),
                     _num(t["replication_factor"]), health, sparkline(rates, 160, 28)])
    return _page("Topics", _table(["Topic", "Partitions", "Replicas", "ISR", "Records/s"], rows, "topics"))


async def topic_page(broker: Broker, history: History, name: str) -> bytes:
    t = admin_api.topic(broker, name)
    rows = []
    for p in t["partitions"]:
        under = len(p["isr"]) < len(p["replicas"])
        rows.append([_num(p["partition"]), _num(p["leader"]), _e(",".join(map(str, p["replicas"]))),
                     f'<td class={"bad" if under else "ok"}>{_e(",".join(map(str, p["isr"])))}'
                     f'{" (under-replicated)" if under else ""}</td>',
                     _num(p["log_start_offset"]), _num(p["high_watermark"]), _num(p["size_bytes"]),
                     _link(f"/browse?topic={urllib.parse.quote(name)}&partition={p['partition']}", "browse")])
    configs = _table(["Config", "Value"], [[_e(k), _e(v)] for k, v in t["configs"].items()], "configs") \
        if t["configs"] else "<p class=muted>No configs set on the topic: the broker's defaults apply.</p>"
    rates = [r for _, r in history.topic_rates.get(name, [])]
    body = (f"<p>Records per second (led here): {sparkline(rates)}</p><h2>Partitions</h2>"
            + _table(["Partition", "Leader", "Replicas", "ISR", "Log start", "High watermark", "Bytes", ""], rows,
                     "partitions") + "<h2>Configs</h2>" + configs + "<h2>Schemas</h2>" + await _subjects(broker, name)
            + "<h2>Over HTTP</h2>" + _rest_links(broker, name))
    return _page(f"Topic {name}", body)


def _rest_links(broker: Broker, topic: str) -> str:
    """The topic's URLs in this broker's REST proxy (rest.listener), for HTTP clients."""
    listener = parse_http_listener(broker.config["rest.listener"])
    if listener is None:
        return "<p class=muted id=rest-none>The REST proxy is off here (rest.listener).</p>"
    tls, host, port = listener
    if host in ("", "0.0.0.0", "::"):
        host = broker.config.advertised_endpoint[0]
    base = f"{'https' if tls else 'http'}://{f'[{host}]' if ':' in host else host}:{port}"
    quoted = urllib.parse.quote(topic, safe="")
    v3 = f"{base}/v3/clusters/{urllib.parse.quote(broker.metadata.cluster_id, safe='')}/topics/{quoted}"
    rows = [["v3 topic", _link(v3, v3)], ["v3 records (POST)", _e(v3 + "/records")],
            ["v3 partitions", _link(v3 + "/partitions", v3 + "/partitions")],
            ["v2 topic", _link(f"{base}/topics/{quoted}", f"{base}/topics/{quoted}")]]
    return _table(["REST proxy", "URL"], rows, "rest-links")


async def _subjects(broker: Broker, topic: str) -> str:
    """The topic's subjects in the schema registry, with their versions and ids."""
    from pykafkad.observability import registry_decoding  # the schema libraries load only when asked

    try:
        state = await registry_decoding.registry_state(broker)
    except registry_decoding.RegistryUnavailable as e:
        return f"<p class=muted id=subjects-none>{_e(e)}</p>"
    subjects = registry_decoding.topic_subjects(state, topic)
    if not subjects:
        return (f"<p class=muted id=subjects-none>No subject of the schema registry is named for this topic "
                f"({_e(topic)}-key, {_e(topic)}-value).</p>")
    rows = [[_e(s["subject"]), _e(s["type"]), _e(s["level"]),
             _e(", ".join(f'v{v["version"]} (id {v["id"]})' for v in s["versions"])),
             _link(f"/browse?topic={urllib.parse.quote(topic)}&partition=0&format=schema", "decoded records")]
            for s in subjects]
    return _table(["Subject", "Type", "Compatibility", "Versions", ""], rows, "subjects")


async def groups_page(broker: Broker) -> bytes:
    rows = [[_link(f"/groups/{urllib.parse.quote(g['group_id'], safe='')}", g["group_id"]), _e(g["state"]),
             _e(g["protocol_type"]), _num(g["members"])] for g in await admin_api.groups(broker)]
    return _page("Groups", _table(["Group", "State", "Type", "Members"], rows, "groups")
                 + "<p class=muted>Groups coordinated by this broker.</p>")


async def group_page(broker: Broker, history: History, group_id: str) -> bytes:
    g = await admin_api.group(broker, group_id)
    def partitions(assignment: dict[str, list[int]]) -> str:
        return _e(", ".join(f"{t}-{p}" for t, ps in sorted(assignment.items()) for p in sorted(ps)))

    # KIP-848 and share groups have member epochs; only KIP-848 members move towards a target.
    epochs_kept = g["type"] in ("consumer", "share")
    targets = g["type"] == "consumer"
    members = [[_e(m["member_id"]), _e(m["client_id"]), _e(m["client_host"]), partitions(m["assignment"])]
               + ([_e(m["protocol"]), _num(m["member_epoch"])] if epochs_kept else [])
               + ([partitions(m["target_assignment"])] if targets else [])
               for m in g["members"]]
    member_columns = (["Member", "Client", "Host", "Partitions"] + (["Protocol", "Epoch"] if epochs_kept else [])
                      + (["Target"] if targets else []))
    epochs = (f', group epoch {_e(g["group_epoch"])}, assignment epoch {_e(g["assignment_epoch"])}'
              if epochs_kept else "")
    if g["type"] == "share":
        # Share groups have no committed offsets: where each share-partition starts, and its lag.
        offsets = [[_e(o["topic"]), _num(o["partition"]), _num(o["start_offset"]),
                    f'<td class="num {"bad" if o["lag"] else ""}">{_e(o["lag"])}</td>', _e(o["member_id"])]
                   for o in sorted(g["offsets"], key=lambda o: (o["topic"], o["partition"]))]
        offset_columns = ["Topic", "Partition", "Start offset", "Lag", "Members"]
    else:
        offsets = [[_e(o["topic"]), _num(o["partition"]), _num(o["committed_offset"]), _num(o["high_watermark"]),
                    f'<td class="num {"bad" if o["lag"] else ""}">{_e(o["lag"])}</td>', _e(o["member_id"])]
                   for o in sorted(g["offsets"], key=lambda o: (o["topic"], o["partition"]))]
        offset_columns = ["Topic", "Partition", "Committed", "High watermark", "Lag", "Member"]
    lags = [float(v) for _, v in history.group_lag.get(group_id, [])]
    body = (f'<p>State <b>{_e(g["state"])}</b>, {_e(g["type"])} protocol, assignor {_e(g["protocol"] or "-")}'
            f"{epochs}.</p>"
            f"<p>Total lag over time: {sparkline(lags)}</p><h2>Members</h2>"
            + _table(member_columns, members, "members") + "<h2>Lag</h2>"
            + _table(offset_columns, offsets, "lag"))
    return _page(f"Group {group_id}", body)


_FORMAT_NAMES = {"string": "text", "json": "JSON", "hex": "hex", "schema": "schema registry (decoded)"}


def _int(query: dict[str, list[str]], name: str) -> int | None:
    value = query.get(name, [""])[0].strip()
    try:
        return int(value) if value.isascii() else None
    except ValueError:
        return None


def _select_topic(broker: Broker, chosen: str) -> str:
    names = sorted(broker.metadata.topics)
    options = "".join(f'<option{" selected" if n == chosen else ""}>{_e(n)}</option>' for n in names)
    return f'<label>Topic<select name=topic>{options}</select></label>'


async def browse_page(broker: Broker, query_string: str) -> bytes:
    q = urllib.parse.parse_qs(query_string)
    topic = q.get("topic", [""])[0]
    partition = _int(q, "partition") or 0
    offset, timestamp = _int(q, "offset"), _int(q, "timestamp")
    fmt = q.get("format", ["string"])[0] if q.get("format", ["string"])[0] in FORMATS else "string"
    count = min(_int(q, "count") or 20, 500)
    form = ('<form method=get action="/browse">' + _select_topic(broker, topic)
            + f'<label>Partition<input name=partition value="{partition}" size=4></label>'
            f'<label>Offset<input name=offset value="{_e(offset) if offset is not None else ""}" size=10></label>'
            f'<label>or time (ms)<input name=timestamp value="{_e(timestamp) if timestamp is not None else ""}" '
            f'size=14></label><label>Show as<select name=format>'
            + "".join(f'<option value={f}{" selected" if f == fmt else ""}>{_FORMAT_NAMES[f]}</option>'
                      for f in FORMATS)
            + f'</select></label><label>Records<input name=count value="{count}" size=4></label>'
            '<button type=submit>Read</button></form>')
    if not topic:
        return _page("Messages", form + "<p class=muted>Choose a topic and a partition.</p>")
    try:
        page = await read_page(broker, topic, partition, offset, timestamp, count, fmt)
    except BrowseError as e:
        return _page("Messages", form + f"<p class=bad id=error>{_e(e)}</p>")
    def headers(r: dict[str, Any]) -> str:
        return f"<td><pre>{_e(chr(10).join(f'{k}: {v}' for k, v in r['headers']))}</pre></td>"

    if fmt == "schema":
        columns = ["Offset", "Timestamp", "Key", "Value (decoded)", "Schema", "Raw value", "Headers"]
        rows = [[_num(r["offset"]), _num(r["timestamp"]), f"<td><pre>{_e(r['key'])}</pre></td>",
                 f"<td><pre class=decoded>{_e(r['value'])}</pre></td>",
                 f'<td class="{"schema" if r["value"] is not None else "schema bad"}">{_e(r["value_schema"])}</td>',
                 f"<td><pre class=raw>{_e(r['value_raw'])}</pre></td>", headers(r)] for r in page["records"]]
    else:
        columns = ["Offset", "Timestamp", "Key", "Value", "Headers"]
        rows = [[_num(r["offset"]), _num(r["timestamp"]), f"<td><pre>{_e(r['key'])}</pre></td>",
                 f"<td><pre>{_e(r['value'])}</pre></td>", headers(r)] for r in page["records"]]
    more = (_link(f"/browse?topic={urllib.parse.quote(topic)}&partition={partition}&offset={page['next_offset']}"
                  f"&format={fmt}&count={count}", "next records") if page["next_offset"] < page["high_watermark"]
            else "<span class=muted>end of the partition</span>")
    body = (form + f'<p>{_e(topic)}-{partition}: offsets {page["log_start_offset"]} to {page["high_watermark"]}; '
            f'{len(rows)} record(s) from {page["start"]}. {more}</p>'
            + _table(columns, rows, "records"))
    return _page("Messages", body)


_SEARCH_SCRIPT = """<script>
const box = document.getElementById('search');
async function poll(){
  const r = await fetch('/api/search/' + box.dataset.id); const s = await r.json();
  document.getElementById('progress').value = s.percent;
  document.getElementById('status').textContent = s.done ? (s.error ? 'stopped: ' + s.error :
      `done: ${s.matches.length} match(es)`) : `scanned to offset ${s.scanned_to} of ${s.end} (${s.percent}%)`;
  document.getElementById('matches').innerHTML = s.matches.map(m =>
      `<tr><td class=num>${m.offset}</td><td class=num>${m.timestamp}</td><td><pre></pre></td><td><pre></pre></td></tr>`
  ).join('');
  const rows = document.getElementById('matches').rows;
  s.matches.forEach((m, i) => { rows[i].cells[2].firstChild.textContent = m.key ?? '-';
                                rows[i].cells[3].firstChild.textContent = m.value ?? '-'; });
  if (!s.done) setTimeout(poll, 200); else box.dataset.done = 'true';
}
if (box && box.dataset.id) poll();
</script>"""


def search_page(broker: Broker, query_string: str, searches: Any) -> bytes:
    q = urllib.parse.parse_qs(query_string)
    topic = q.get("topic", [""])[0]
    partition = _int(q, "partition") or 0
    fields = {name: q.get(name, [""])[0] for name in ("key", "value", "header")}
    start, end = _int(q, "start"), _int(q, "end")
    form = ('<form method=get action="/search">' + _select_topic(broker, topic)
            + f'<label>Partition<input name=partition value="{partition}" size=4></label>'
            + "".join(f'<label>{name.capitalize()} contains<input name={name} value="{_e(value) if value else ""}">'
                      f"</label>" for name, value in fields.items())
            + f'<label>From offset<input name=start value="{_e(start) if start is not None else ""}" size=10></label>'
            f'<label>To offset<input name=end value="{_e(end) if end is not None else ""}" size=10></label>'
            '<button type=submit>Search</button></form>')
    if not topic or not any(fields.values()):
        return _page("Search", form + "<p class=muted>Was this message there? Give a topic, a partition and "
                     "some text of its key, a header or its value.</p>")
    try:
        search = searches.start(topic, partition, start, end, fields["key"], fields["value"], fields["header"])
    except BrowseError as e:
        return _page("Search", form + f"<p class=bad id=error>{_e(e)}</p>")
    body = (form + f'<div id=search data-id="{search.id}"><p>Searching {_e(topic)}-{partition}, offsets '
            f'{search.start} to {search.end}: <span id=status>starting</span></p>'
            '<progress id=progress max=100 value=0></progress><h2>Matches</h2>'
            '<table><thead><tr><th>Offset</th><th>Timestamp</th><th>Key</th><th>Value</th></tr></thead>'
            '<tbody id=matches></tbody></table></div>')
    return _page("Search", body, _SEARCH_SCRIPT)


def not_found_page(message: str) -> bytes:
    return _page("Not found", f"<p class=bad id=error>{_e(message)}</p>")
