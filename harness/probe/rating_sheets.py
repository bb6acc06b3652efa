"""The probe-review command's work: find the probed models of a run, write their sheets, and
turn a ratings CSV into probe/<slug>/ratings.json (read by the report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgbench.errors import UserError
from kgbench.io import atomic_write_json
from kgbench.untrusted import load_json_object

from ..runfolder import RunFolder
from .ratings import aggregate, graph_digest, load_graphs, read_ratings, write_sheets


def probed_models(run_dir: Path, model: str | None = None) -> dict[str, Path]:
    """slug -> probe folder, for every model with generated graphs (or the one asked for)."""
    folder = RunFolder(run_dir)
    found = {k: v for k, v in folder.probed(model).items() if (v / "graphs").is_dir()}
    if not found:
        what = f"model '{model}'" if model else "any model"
        raise UserError(
            f"no probe results for {what} under {folder.path / 'probe'}; run `kgbench probe` first"
        )
    return found


def _model_text(folder: Path) -> str:
    meta = folder / "probe.json"
    if meta.exists():
        return str(load_json_object(meta, "probe description").get("model", folder.name))
    return folder.name


def write_review(run_dir: Path, model: str | None = None) -> list[Path]:
    written: list[Path] = []
    for slug, folder in probed_models(run_dir, model).items():
        written += write_sheets(folder, _model_text(folder), slug)
    return written


def aggregate_ratings(
    run_dir: Path, ratings: Path, model: str | None, bootstrap: int, seed: int
) -> list[tuple[Path, dict[str, Any]]]:
    folders = probed_models(run_dir, model)
    digests = {
        (slug, g["root_id"]): graph_digest(g)
        for slug, folder in folders.items()
        for g in load_graphs(folder)
    }
    rows = read_ratings(ratings, digests)
    if not rows:
        raise UserError(
            f"{ratings} holds no ratings (fill in reviewer, accuracy, comprehensiveness)"
        )
    out = []
    for slug, folder in folders.items():
        mine = [r for r in rows if r["model"] == slug]
        if not mine:
            continue
        summary = aggregate(mine, bootstrap, seed)
        summary["source"] = str(ratings)
        path = folder / "ratings.json"
        atomic_write_json(path, summary)
        out.append((path, summary))
    return out
