"""Tables and figures a paper can use: the panel, the paired deltas and the per-category panel
as CSV (numbers at full precision, one value per cell) or LaTeX (booktabs, the report's
rounded cells), and every plot of report.html as a standalone SVG file.

    report/tables/<model>/panel.{csv,tex}
    report/tables/<model>/paired.{csv,tex}       (LaTeX: one tabular per contrast)
    report/tables/<model>/categories.{csv,tex}   (LaTeX: one tabular per category)
    report/figures/<model>/heatmap.svg, forest-<A>-<B>.svg, category-<metric>.svg

The LaTeX and the HTML/Markdown are rendered from the same `Table` rows (tables.py), so a
paper's table says what the report says; the CSV carries the unrounded values behind them.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kgbench.errors import UserError
from kgbench.io import atomic_write_text

from . import svg
from .tables import Table, category_tables, overall_table, paired_tables

TABLE_FORMATS = ("csv", "latex")
SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def check_formats(formats: Iterable[str]) -> tuple[str, ...]:
    """The requested table formats, each once, in a stable order; an unknown one is refused."""
    wanted = set(formats)
    unknown = sorted(wanted - set(TABLE_FORMATS))
    if unknown:
        raise UserError(
            f"unknown report format {', '.join(map(repr, unknown))}; expected "
            f"{' or '.join(TABLE_FORMATS)} (report.md and report.html are always written)"
        )
    return tuple(f for f in TABLE_FORMATS if f in wanted)


def file_safe(name: str) -> str:
    """A model slug, condition or metric name as a file name part (never a path)."""
    return SAFE.sub("_", name).strip("._") or "_"


# --- CSV ------------------------------------------------------------------------------------


def _csv(header: list[str], rows: Iterable[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    return out.getvalue()


CELL_COLUMNS = ["mean", "se", "interval", "ci_low", "ci_high", "n"]


def _cell_rows(panel: dict[str, Any], table: dict[str, Any], prefix: list[Any]) -> list[list[Any]]:
    rows = []
    for metric in panel["metrics"]:
        for cond in panel["conditions"]:
            cell = table.get(cond, {}).get(metric["name"]) or {}
            rows.append([*prefix, metric["name"], cond, *(cell.get(k) for k in CELL_COLUMNS)])
    return rows


def panel_csv(panel: dict[str, Any]) -> str:
    """One row per (metric, condition): mean, SE, the Wilson interval where binary, n."""
    return _csv(["metric", "condition", *CELL_COLUMNS], _cell_rows(panel, panel["overall"], []))


def categories_csv(panel: dict[str, Any]) -> str:
    rows: list[list[Any]] = []
    for category, table in sorted(panel.get("by_category", {}).items()):
        rows += _cell_rows(panel, table, [category])
    return _csv(["category", "metric", "condition", *CELL_COLUMNS], rows)


PAIRED_COLUMNS = [
    "mean_a",
    "mean_b",
    "delta",
    "ci_low",
    "ci_high",
    "test",
    "p",
    "p_holm",
    "correlation",
    "n",
    "direction",
    "favorable",
]


def paired_csv(panel: dict[str, Any]) -> str:
    """One row per (contrast, metric); delta = a - b, favorable after Holm (harness.evaluation.stats)."""
    rows = []
    for contrast in panel.get("paired", []):
        for metric in panel["metrics"]:
            r = contrast["metrics"].get(metric["name"], {})
            rows.append(
                [contrast["a"], contrast["b"], metric["name"], *(r.get(k) for k in PAIRED_COLUMNS)]
            )
    return _csv(["a", "b", "metric", *PAIRED_COLUMNS], rows)


# --- LaTeX ----------------------------------------------------------------------------------

LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\u00b1": r"$\pm$",
    "\u2212": r"$-$",
    "\u0394": r"$\Delta$",
    "\u2193": r"$\downarrow$",
}


def latex_escape(text: str) -> str:
    """Text (model names, categories, titles come from input files) as LaTeX source."""
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in text)


def table_latex(table: Table, label: str) -> str:
    """A booktabs table environment (needs \\usepackage{booktabs})."""
    numeric = table.numeric or [False] * len(table.header)
    spec = "".join("r" if n else "l" for n in numeric)
    lines = [
        "\\begin{table}[htbp]",
        "\\centering",
        f"\\caption{{{latex_escape(table.caption)}}}",
        f"\\label{{{label}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(latex_escape(h) for h in table.header) + r" \\",
        "\\midrule",
        *(" & ".join(latex_escape(c) for c in row) + r" \\" for row in table.rows),
        "\\bottomrule",
        "\\end{tabular}",
    ]
    if table.note:
        lines.append(f"\\par\\smallskip{{\\footnotesize {latex_escape(table.note)}}}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


def _latex_tables(tables: list[Table], label: str) -> str:
    return "\n".join(table_latex(t, f"{label}-{i + 1}") for i, t in enumerate(tables))


# --- writing --------------------------------------------------------------------------------


def write_tables(out: Path, panels: list[dict[str, Any]], formats: Iterable[str]) -> list[Path]:
    """report/tables/<model>/... in each requested format; returns the files written."""
    written: list[Path] = []
    for panel in panels:
        slug = file_safe(str(panel.get("slug", "model")))
        folder = out / "tables" / slug
        files: dict[str, str] = {}
        if "csv" in formats:
            files["panel.csv"] = panel_csv(panel)
            files["paired.csv"] = paired_csv(panel)
            files["categories.csv"] = categories_csv(panel)
        if "latex" in formats:
            files["panel.tex"] = table_latex(overall_table(panel), f"tab:{slug}-panel")
            files["paired.tex"] = _latex_tables(paired_tables(panel), f"tab:{slug}-paired")
            files["categories.tex"] = _latex_tables(category_tables(panel), f"tab:{slug}-category")
        for name, text in files.items():
            atomic_write_text(folder / name, text)
            written.append(folder / name)
    return written


def standalone(svg_element: str) -> str:
    """An inline <svg> element (it carries its namespace) as a file of its own."""
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + svg_element + "\n"


def write_svgs(folder: Path, figures: dict[str, str]) -> list[Path]:
    """Each inline <svg> element as folder/<name> (a standalone SVG file)."""
    written = []
    for name, element in figures.items():
        atomic_write_text(folder / name, standalone(element))
        written.append(folder / name)
    return written


def write_figures(
    out: Path, panels: list[dict[str, Any]], probes: list[dict[str, Any]] | None = None
) -> list[Path]:
    """Every plot of report.html as report/figures/<model>/<plot>.svg (a probe's curve as
    report/figures/probe-<model>/curve.svg)."""
    from .probe import curve_svg

    written: list[Path] = []
    for panel in panels:
        figures = {"heatmap.svg": svg.heatmap(panel)}
        for contrast in panel.get("paired", []):
            name = f"forest-{file_safe(contrast['a'])}-{file_safe(contrast['b'])}.svg"
            figures[name] = svg.forest(panel, contrast)
        for metric in panel["metrics"]:
            figures[f"category-{file_safe(metric['name'])}.svg"] = svg.category_bars(panel, metric)
        folder = out / "figures" / file_safe(str(panel.get("slug", "model")))
        written += write_svgs(folder, figures)
    for probe in probes or []:
        folder = out / "figures" / f"probe-{file_safe(str(probe.get('slug', 'model')))}"
        written += write_svgs(folder, {"curve.svg": curve_svg(probe)})
    return written
