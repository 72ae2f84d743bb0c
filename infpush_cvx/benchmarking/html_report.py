"""The report of a benchmark run: one self-contained HTML file a person opens, beside its parts.

:func:`write_report` writes into a report folder (``infpush-cvx bench`` writes
``<run>_report/``; ``infpush-cvx report TABLE`` writes ``<table>_report/`` or ``--out``):

- ``comparison.csv``: one row per (problem, solver) (:func:`.reports.comparison_table`);
- ``profile_<metric>.png``: the performance profile (:mod:`.reports`);
- ``suboptimality_<problem>.png``: per problem with convergence curves, the relative
  suboptimality against time (:func:`.curves.suboptimality_figure`);
- ``report.html``: all of it in one file that needs nothing else (figures embedded as base64
  PNG, no script, no external style sheet or font): a summary (solves, agreements, what did not
  agree and why), the figures, the comparison table and the run's provenance (date, command,
  code version and commit, machine, thread settings, package versions).

Every solver has the same colour and marker in every figure (:func:`.reports.solver_styles`).
Without matplotlib (the ``plots`` extra) there is no figure: the HTML file still has every
table and says that figures are off. A file that cannot be written (a full disk) does not stop
the others: its error is returned, and the HTML file says which figure is missing.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..files import write_text_atomic
from . import reports
from .runner import save_results

#: Name of the HTML file in a report folder.
HTML_NAME = "report.html"
#: What the report says instead of its figures when matplotlib is missing.
FIGURES_OFF = ("Figures are off: matplotlib is not installed (install the 'plots' extra). "
               "The tables are complete.")
#: Said when the profile falls back from the problems every solver attempted to all of them.
NO_COMMON_PROBLEM = ("no problem was attempted by every solver: the profile shows every solver "
                     "on the problems it attempted")


@dataclass
class ReportFiles:
    """What :func:`write_report` did: the files ``written``, the ``errors`` of those that could
    not be (OSError naming the file) and the ``messages`` a command line shows (stderr)."""

    written: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    messages: list = field(default_factory=list)


def report_paths(out_dir, metric: str = "time") -> dict:
    """The fixed files of a report folder: ``comparison`` (CSV), ``profile`` (PNG of
    ``metric``) and ``html``; suboptimality figures are ``suboptimality_<problem>.png``."""
    out_dir = Path(out_dir)
    return {"comparison": out_dir / "comparison.csv",
            "profile": out_dir / f"profile_{metric}.png", "html": out_dir / HTML_NAME}


def write_report(results: pd.DataFrame, out_dir, *, curves: pd.DataFrame | None = None,
                 metadata: dict | None = None, metric: str = "time", problems: str = "common",
                 figures: bool | None = None, sources: dict | None = None) -> ReportFiles:
    """Write the report of ``results`` (a results table) into ``out_dir`` (created now).

    curves : the run's convergence curves (:mod:`.curves`), for the suboptimality figures.
    metadata : the run's provenance (:func:`.provenance.run_metadata`, the ``.json`` file);
        without it the provenance section gives what the table records (versions, hosts).
    metric, problems : of the performance profile (:mod:`.reports`); ``"common"`` with no
        problem every solver attempted falls back to ``"all"``, and says so.
    figures : draw the figures (default: when matplotlib is installed).
    sources : ``{"results": path, ...}``, the input files, named in the report.
    """
    figures = reports.matplotlib_available() if figures is None else figures
    out = ReportFiles()
    paths = report_paths(out_dir, metric)
    table = reports.comparison_table(results)
    _write(out, paths["comparison"],
           lambda: save_results(table, paths["comparison"], parquet=False))
    shown = []
    if figures:
        styles = reports.solver_styles(results)
        shown.append(_profile(results, paths["profile"], metric, problems, styles, out))
        shown.extend(_suboptimality(results, curves, Path(out_dir), styles, out))
    page = render_html(results, table, shown, metadata=metadata, metric=metric,
                       figures=figures, curves=curves, sources=sources)
    _write(out, paths["html"], lambda: write_text_atomic(paths["html"], page))
    return out


def _write(out: ReportFiles, path: Path, write) -> str:
    """``write()`` the file ``path``, recorded in ``out`` as written or as its OSError (which
    does not stop the other files); the text the page shows for it ("" when written)."""
    try:
        write()
    except OSError as exc:
        out.errors.append(exc)
        return f"Not written: {exc}"
    out.written.append(path)
    return ""


def _png(heading: str, fig, path: Path, out: ReportFiles) -> str:
    """The figure ``fig`` saved at ``path``, and its HTML (:func:`_figure_html`)."""
    error = _write(out, path, lambda: reports.save_figure(fig, path))
    return _figure_html(heading, None if error else path.read_bytes(), error)


def _profile(results, path, metric, problems, styles, out) -> str:
    try:
        fig = reports.performance_profile_figure(results, metric, problems, styles=styles)
    except ValueError:
        if problems != "common":
            raise
        # No problem was attempted by every solver (HiGHS runs LPs only, project solvers their
        # own problem class): profile every solver on the problems it attempted, so that every
        # solver stays in the figure (the legend gives each one's counts).
        out.messages.append(NO_COMMON_PROBLEM)
        fig = reports.performance_profile_figure(
            results, metric, "all", styles=styles,
            notes=[f"No problem was attempted by every solver "
                   f"({reports.dropped_reasons(results, metric)}): every solver is shown on "
                   f"the problems it attempted."])
    return _png(f"Performance profile ({metric})", fig, path, out)


def _suboptimality(results, curves, out_dir, styles, out) -> list:
    from .curves import stored_values, suboptimality_figure
    if curves is None or curves.empty:
        return []
    shown = []
    stored = stored_values(results)
    for problem in sorted(curves["problem"].astype(str).unique()):
        heading = f"Suboptimality against time: {problem}"
        if problem in stored.index:
            fig = suboptimality_figure(curves, results, problem, styles=styles)
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", problem)
            shown.append(_png(heading, fig, out_dir / f"suboptimality_{name}.png", out))
        else:
            shown.append(_figure_html(heading, None, "No stored value for this problem in the "
                                      "results table: no suboptimality to draw."))
    return shown


# -- HTML ---------------------------------------------------------------------------------------

_STYLE = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px;
       color: #222; max-width: 1150px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 28px;
border-bottom: 1px solid #ccc; } h3 { font-size: 15px; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: right; white-space: nowrap; }
th { background: #eef1f5; } td.text, th.text { text-align: left; }
tr.bad td { background: #fde8e8; }
img { max-width: 100%; border: 1px solid #ddd; } .wide { overflow-x: auto; }
.note { color: #555; font-size: 13px; } .off { background: #fff4d6; padding: 8px 12px;
border: 1px solid #e6c96b; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 14px; font-size: 13px; }
dt { font-weight: bold; } dd { margin: 0; } code { font-size: 12px; }
"""


def _e(value) -> str:
    return html.escape("" if value is None else str(value))


def html_table(df: pd.DataFrame, *, bad=None) -> str:
    """``df`` as an HTML table (text escaped, numbers formatted as in the text reports); rows
    where ``bad`` is True are marked."""
    kind = {c: "text" if df[c].dtype == object or df[c].dtype == bool
            or str(df[c].dtype) in ("string", "str") else "num" for c in df.columns}
    fmt = {c: reports.number_format(reports.FORMATS.get(c, "")) for c in df.columns}
    head = "".join(f'<th class="{kind[c]}">{_e(c)}</th>' for c in df.columns)
    rows = "".join(f'<tr{" class=bad" if flag else ""}>' + "".join(
        f'<td class="{kind[c]}">{_e(fmt[c](row[c]))}</td>' for c in df.columns) + "</tr>"
        for flag, (_, row) in zip([False] * len(df) if bad is None else bad, df.iterrows()))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _summary(results: pd.DataFrame, metric: str) -> str:
    agrees = results["agrees"].astype(bool)
    n_p, n_s = results["problem"].nunique(), results["solver"].nunique()
    parts = [f"<p>{len(results)} solves of {reports.plural(n_p, 'problem')} by "
             f"{reports.plural(n_s, 'solver')}: <b>{int(agrees.sum())}</b> succeeded and agree "
             f"with the stored optimal values, <b>{int((~agrees).sum())}</b> did not.</p>"]
    if (~agrees).any():
        cols = [c for c in ("problem", "solver", "repeat", "status", "objective", "reference",
                            "rel_error", "reference_note", "error") if c in results.columns]
        bad = results.loc[~agrees, cols]
        # the other columns only when they hold something (not only missing values or blanks)
        bad = bad.loc[:, [c for c in cols if c in ("problem", "solver", "status")
                          or (bad[c].notna() & (bad[c].astype(str).str.strip() != "")).any()]]
        parts.append("<h3>Solves that did not agree</h3>" + html_table(bad, bad=[True] * len(bad)))
    counts = reports.profile_counts(results, metric, "all").reset_index()
    parts.append(f"<h3>Per solver ({metric})</h3><p class=note>attempted: problems the solver "
                 f"ran; solved: succeeded and agree; failed: attempted, not solved.</p>"
                 + html_table(counts.drop(columns="problems")))
    return "".join(parts)


def _provenance(results: pd.DataFrame, metadata: dict | None, sources: dict | None) -> str:
    from .provenance import code_revision, iso, utc_now
    items = []
    if metadata:
        code, machine = metadata.get("code", {}), metadata.get("platform", {})
        execution = metadata.get("execution", {})
        items += [("run", metadata.get("run_id")),
                  ("date (UTC)", f"{metadata.get('date')} to {metadata.get('finished')} "
                                 f"({reports.number_format('.1f')(metadata.get('duration_s'))} s)"),
                  ("command", " ".join(map(str, metadata.get("command") or []))),
                  ("code", _code_text(code)),
                  ("machine", f"{machine.get('cpu_model')}, {machine.get('cpu_count')} logical "
                              f"cores ({machine.get('cpu_count_usable')} usable), "
                              f"{(machine.get('ram_bytes') or 0) / 2 ** 30:.1f} GiB RAM"),
                  ("system", f"{machine.get('os')}, {machine.get('python_implementation', '')} "
                             f"{machine.get('python')}"),
                  ("execution", f"{execution.get('executor')} executor, "
                                f"{execution.get('n_workers')} worker(s); worker threads: "
                                + ", ".join(f"{k}={v}" for k, v in
                                            (execution.get("worker_env") or {}).items())),
                  ("BLAS threads", ", ".join(
                      f"{p.get('internal_api')} {p.get('version')}: {p.get('num_threads')}"
                      for p in machine.get("threadpools") or []))]
        versions = metadata.get("versions") or {}
    else:
        items.append(("metadata", "no run metadata (.json) was found beside the table: the "
                                  "date, command and machine are unknown; the versions below "
                                  "are the table's"))
        if "run_id" in results.columns:
            items.append(("run", _listed(results, "run_id")))
        first = results.iloc[0]
        versions = {c: first[c] for c in results.columns if c.startswith("version_")}
    if "host" in results.columns:
        items.append(("hosts", _listed(results, "host")))
    items += [(f"{name} file", path) for name, path in (sources or {}).items()]
    items.append(("report written", f"{iso(utc_now())} by {_code_text(code_revision())}"))
    listed = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in items)
    version_rows = pd.DataFrame({"package": [k.removeprefix("version_") for k in versions],
                                 "version": [str(v) for v in versions.values()]})
    return f"<dl>{listed}</dl><h3>Versions</h3>" + html_table(version_rows)


def _listed(results: pd.DataFrame, column: str) -> str:
    """The distinct values of ``column`` of ``results`` (when it has one), comma-separated."""
    return ", ".join(map(str, results[column].dropna().unique())) if column in results else ""


def _code_text(code: dict) -> str:
    """``<package> <version>, commit <hash>`` (and whether the checkout had uncommitted
    changes) of a :func:`.provenance.code_revision` record."""
    commit, dirty = code.get("git_commit"), code.get("git_dirty")
    return f"{code.get('package')} {code.get('version')}" + (
        f", commit {commit}" + " (uncommitted changes)" * bool(dirty) if commit
        else " (no git checkout)")


def _figure_html(heading: str, png: bytes | None, text: str) -> str:
    """A figure of the report: its heading, the PNG embedded (none when ``png`` is None: it is
    missing) and ``text`` shown instead or under it."""
    body = "" if png is None else (f'<img alt="{_e(heading)}" src="data:image/png;base64,'
                                   f'{base64.b64encode(png).decode("ascii")}">')
    return f"<h3>{_e(heading)}</h3>{body}" + (f"<p class=note>{_e(text)}</p>" if text else "")


def render_html(results: pd.DataFrame, table: pd.DataFrame, shown: list, *,
                metadata: dict | None = None, metric: str = "time", figures: bool = True,
                curves: pd.DataFrame | None = None, sources: dict | None = None) -> str:
    """The report page (a string): summary, figures (``shown``: their HTML), the comparison
    ``table`` and the provenance."""
    run = (metadata or {}).get("run_id") or _listed(results, "run_id")
    if not figures:
        figure_part = f'<p class="off">{_e(FIGURES_OFF)}</p>'
    else:
        figure_part = "".join(shown)
        if curves is None or curves.empty:
            figure_part += ("<p class=note>No convergence curves: run <code>infpush-cvx bench "
                            "--curves</code> for the suboptimality figures.</p>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Benchmark report {_e(run)}</title><style>{_STYLE}</style></head>
<body>
<h1>Benchmark report</h1><p class=note>run {_e(run) or "(unknown)"}</p>
<h2>Summary</h2>{_summary(results, metric)}
<h2>Figures</h2>{figure_part}
<h2>Comparison</h2>
<p class=note>One row per problem and solver: medians over repeats; max_rel_error is the worst
relative error against the stored value; rows that did not agree are marked.</p>
<div class="wide">{html_table(table, bad=~table["agrees"].astype(bool))}</div>
<h2>Provenance</h2>{_provenance(results, metadata, sources)}
</body></html>
"""
