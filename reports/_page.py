"""The page around the sections: head, inline style and script, title block, contents.

Everything is inline, and nothing names a remote resource, so the file opens offline and can be
mailed or archived with the run. The script only sorts tables; the page is complete without it.
"""

from __future__ import annotations

from forge_eval.reports._format import esc
from forge_eval.reports._sections import Section
from forge_eval.rundir import RunResults

_CSS = """
:root { --fg: #1f2328; --muted: #656d76; --line: #d0d7de; --bg-soft: #f6f8fa; --warn: #9a6700;
  --warn-bg: #fff8c5; --bad: #b42318; --bad-bg: #ffebe9; --ok: #1a7f37; --ok-bg: #dafbe1; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1100px; padding: 1.5rem; color: var(--fg); line-height: 1.45;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 1.6rem; margin: 0 0 .2rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .6rem; padding-bottom: .3rem; border-bottom: 1px solid var(--line); }
.subtitle { color: var(--muted); margin: 0 0 1rem; }
nav ul { display: flex; flex-wrap: wrap; gap: .4rem 1rem; list-style: none; padding: 0; margin: 0 0 1rem; }
nav a { color: #0969da; text-decoration: none; } nav a:hover { text-decoration: underline; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: .3rem .6rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { background: var(--bg-soft); font-weight: 600; }
td.num { text-align: right; white-space: nowrap; }
table.headline td.estimate { font-weight: 600; }
table.meta th { white-space: nowrap; color: var(--muted); font-weight: 500; }
table.sortable thead th { cursor: pointer; user-select: none; white-space: nowrap; }
table.sortable thead th[aria-sort=ascending]::after { content: " ▲"; }
table.sortable thead th[aria-sort=descending]::after { content: " ▼"; }
th.task { font-weight: 500; word-break: break-all; }
.scroll { overflow-x: auto; }
.err { color: var(--bad); font-size: .85em; }
.missing, .muted { color: var(--muted); }
abbr[title] { text-decoration: none; cursor: help; }
ol.footnotes { color: var(--muted); font-size: .85rem; list-style: none; padding-left: 0; }
ul.plain { list-style: none; padding: 0; margin: 0; }
pre { background: var(--bg-soft); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .7rem;
  overflow-x: auto; white-space: pre-wrap; word-break: break-all; margin: .3rem 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 1rem; font-size: .8rem;
  font-weight: 600; }
.badge.complete { color: var(--ok); background: var(--ok-bg); }
.badge.partial { color: var(--bad); background: var(--bad-bg); }
.banner { border: 2px solid var(--bad); background: var(--bad-bg); color: var(--bad); border-radius: 6px;
  padding: .7rem 1rem; margin: 1rem 0; }
.banner strong { font-size: 1.05rem; }
.warning { color: var(--warn); background: var(--warn-bg); padding: .4rem .7rem; border-radius: 6px; }
.ok { color: var(--ok); background: var(--ok-bg); padding: .4rem .7rem; border-radius: 6px; }
div.warning p, div.warning ul { margin: .2rem 0; }
svg.chart { max-width: 100%; height: auto; display: block; margin: .5rem 0; }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .8rem; }
"""

# Sorts a table.sortable by the clicked column: numeric on data-sort when every row has one,
# text otherwise. Hand-written because the page must not load any library.
_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var headers = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(headers, function (th, col) {
    function sort() {
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col], v = cell.getAttribute("data-sort");
        return v === null ? cell.textContent.trim().toLowerCase() : parseFloat(v);
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        return (x < y ? -1 : x > y ? 1 : 0) * dir;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
  });
});
"""


def _banner(results: RunResults) -> str:
    if not results.partial:
        return ""
    resume = (
        f"<br>Re-run the same command to resume:<pre><code>{esc(results.command)}</code></pre>"
        if results.command
        else ""
    )
    return (
        '<div class="banner" role="alert" id="partial-banner"><strong>⚠ Partial run.</strong> '
        "Not every planned trial finished, so the estimates below cover only the trials recorded "
        f"so far and may be biased.{resume}</div>"
    )


def document(title: str, header: str, sections: list[Section], generator: str, banner: str = "") -> str:
    """One self-contained HTML page: `header` (HTML) on top, then contents and `sections`.

    The one page shell of every forge-eval report (run, comparison, ablation): same style, same
    table sorting, nothing remote.
    """
    contents = "".join(f'<li><a href="#{esc(s.id)}">{esc(s.title)}</a></li>' for s in sections)
    body = "".join(f'<section id="{esc(s.id)}"><h2>{esc(s.title)}</h2>{s.html}</section>' for s in sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} — forge-eval report</title>"
        f"<style>{_CSS}</style></head><body>"
        f"<header>{header}</header>"
        f"{banner}"
        f'<nav aria-label="Contents"><ul>{contents}</ul></nav>'
        f"<main>{body}</main>"
        f"<footer>Generated by {esc(generator)}.</footer>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


def page(results: RunResults, sections: list[Section], generator: str) -> str:
    """Assemble the whole document of a run."""
    title = f"{results.benchmark} · {results.model} · {results.harness}"
    status = "partial" if results.partial else "complete"
    header = (
        f'<h1>{esc(results.benchmark)}</h1><p class="subtitle">model <strong>{esc(results.model)}'
        f"</strong> · harness <strong>{esc(results.harness)}</strong> · {len(results.seeds)} seeds × "
        f'{results.epochs} epochs · <span class="badge {status}">{status}</span></p>'
    )
    return document(title, header, sections, generator, _banner(results))
