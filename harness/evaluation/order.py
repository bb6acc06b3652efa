"""Order sensitivity (issue 14 item 4): the same scenarios with their options reordered or
relabelled, and what that does to each condition's answers.

The presentations are declared (spec/declarations/conditions.yaml `presentations`) and
compiled into conditions.json. `kgbench prompts --order-variants` renders, beside every
(scenario, condition) prompt, one prompt per presentation: the same scenario id and the same
gold (the gold names interventions by id, so it is order-free), only the listed options
permuted and, where declared, labelled with letters. Their prompt ids are
`<scenario>/<condition>@<presentation>`; the runner answers them like any prompt (cache,
resume, batch). C5 has no single prompt: `kgbench verify --order-variants` reruns its whole
agent per presentation (harness.verify.agent) and writes its answer prompts under the same
ids (`<scenario>/C5@<presentation>`, prompts/verify.jsonl), so they are read here alike. A
presentation that lists the options exactly as an earlier one does (a reversal of two
options is their cyclic shift) gets no prompt of its own: it reuses that presentation's
answer, so no request is sent twice.

`kgbench score` leaves these prompts out of the panel and writes `scores/<slug>/order.json`:
per condition and presentation (the original included) the accuracy, the position bias (the
share of answers choosing the first-listed option, against chance 1/k) and, paired with the
original order within scenario, the accuracy delta and the flip rate (the share of scenarios
whose chosen option changed), each with a percentile bootstrap interval over scenarios
(harness.evaluation.stats). Replicate 0 is analysed: a flip compares like with like.

Reading an answer's choice: the answer is read by the one judge (harness.evaluation.judge),
as the scorer reads it, never parsed here: the choice is made from the judge's well-typed
fields, so a fenced or prose-wrapped answer the scorer credits is the same choice here. The
recommendation is matched to the options by normalised name; under a lettered presentation a
bare letter ("B"), or a letter before the name ("B. Name", "(B) Name"), is read as that
option. A recommendation that is null is `abstain`; anything else that names no option is
`other`: a name that is no option, a recommendation of the wrong type, an answer without one
(a whole JSON answer lacking `recommended_intervention` says nothing, which is not an
abstention), and an answer the judge could not read. Both count as choices in the flip rate;
position bias is over answers that chose an option.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.evaluation.lexicon import norm
from kgbench.contract import Presentation

from .judge import Judgement

ORIGINAL = "original"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ACCURACY = "intervention_accuracy"
_LABELLED = re.compile(r"^\(?([A-Z])(?:[).:]\s*|\s+|$)(.*)$")


@dataclass(frozen=True)
class Arrangement:
    """How one presentation lists one scenario's options: intervention ids in listed order,
    the letter before each (empty when unlabelled), and the prompt it is answered by."""

    presentation: str
    ids: tuple[str, ...]
    labels: tuple[str, ...]
    answered_by: str  # the presentation whose prompt answers it (itself unless a duplicate)

    @property
    def k(self) -> int:
        return len(self.ids)


def arrange(candidates: Sequence[dict[str, Any]], p: Presentation) -> list[dict[str, Any]]:
    """The candidates as presentation `p` lists them, labels applied to the shown label."""
    items = list(candidates)
    k = len(items)
    if p.order == "reverse":
        items = items[::-1]
    elif p.order == "cyclic_shift" and k:
        s = p.shift % k
        items = items[k - s :] + items[: k - s]
    out = []
    for i, c in enumerate(items):
        letter = _letter(p.labels, i, k)
        label = f"{letter}. {c['label']}" if letter else c["label"]
        out.append({**c, "label": label, "option_label": letter})
    return out


def _letter(labels: str, i: int, k: int) -> str:
    if labels == "letters":
        return LETTERS[i % 26]
    if labels == "letters_reversed":
        return LETTERS[(k - 1 - i) % 26]
    return ""


def arrangements(
    scenario: dict[str, Any], presentations: Sequence[Presentation]
) -> dict[str, Arrangement]:
    """The original and every declared presentation of one scenario, in declared order; a
    presentation that lists the options as an earlier one does is answered by that one."""
    original = Arrangement(
        ORIGINAL,
        tuple(c["intervention_id"] for c in scenario["candidates"]),
        ("",) * len(scenario["candidates"]),
        ORIGINAL,
    )
    out = {ORIGINAL: original}
    for p in presentations:
        shown = arrange(scenario["candidates"], p)
        ids = tuple(c["intervention_id"] for c in shown)
        labels = tuple(c["option_label"] for c in shown)
        same = next(
            (a.answered_by for a in out.values() if (a.ids, a.labels) == (ids, labels)), None
        )
        out[p.id] = Arrangement(p.id, ids, labels, same or p.id)
    return out


def presented(scenario: dict[str, Any], p: Presentation) -> dict[str, Any]:
    """The scenario as presentation `p` shows it (what the frame renders)."""
    shown = [
        {k: v for k, v in c.items() if k != "option_label"}
        for c in arrange(scenario["candidates"], p)
    ]
    return {**scenario, "candidates": shown}


def prompt_id(scenario_id: str, condition: str, presentation: str) -> str:
    base = f"{scenario_id}/{condition}"
    return base if presentation == ORIGINAL else f"{base}@{presentation}"


# --- reading a choice -------------------------------------------------------------------


def choice(
    verdict: Judgement, arrangement: Arrangement, names: dict[str, str], lexicon: Any = None
) -> str:
    """The intervention id an answer chose, `abstain`, or `other` (see the module docstring).

    `verdict` is the one judge's verdict on the answer (`judge`, or the scorer's
    `judgement_of` a record): its well-typed fields are what is read, so this reads the
    answer exactly as the scorer does. With the scorer's `lexicon`
    (harness.evaluation.lexicon.Lexicon), a recommendation that is not an option's exact name
    is read as the scorer reads it (synonyms, "lisinopril 10 mg daily", "ACE inhibitor
    (lisinopril)"): the one listed option it names, so an answer the scorer credits under two
    orders is the same choice under both, never a flip."""
    fields = verdict.response
    if "recommended_intervention" not in fields:
        return "other"  # unreadable, mistyped, or no recommendation at all: not an abstention
    rec = fields["recommended_intervention"]
    if rec is None:
        return "abstain"
    if not isinstance(rec, str):
        return "other"
    text = rec.strip()[:4096]
    by_name = {norm(names.get(i, i)): i for i in arrangement.ids}
    by_letter = {lab: i for lab, i in zip(arrangement.labels, arrangement.ids, strict=True) if lab}

    def named(raw: str) -> str | None:
        key = norm(raw)
        if key in by_name:
            return by_name[key]
        if lexicon is None or not key:
            return None
        chosen = lexicon.choice_of(raw)
        hits = [i for i in arrangement.ids if i in chosen]
        return hits[0] if len(hits) == 1 else None

    m = _LABELLED.match(text)
    if m and m[1] in by_letter and norm(text) not in by_name:
        rest = m[2]
        if not norm(rest) or named(rest) == by_letter[m[1]]:
            return by_letter[m[1]]
        return named(rest) or "other"
    return named(text) or "other"


def as_named(verdict: Judgement, chosen: str, names: dict[str, str]) -> Judgement:
    """The verdict with its recommendation spelled as the option's name, so the scorer (which
    matches names) credits a choice made by letter under a lettered presentation."""
    if chosen in names:
        return verdict._replace(
            response={**verdict.response, "recommended_intervention": names[chosen]}
        )
    return verdict


# --- the arithmetic ---------------------------------------------------------------------


def flip_rate(a: Sequence[str], b: Sequence[str]) -> list[float]:
    """Per scenario, 1.0 where the two presentations' choices differ (the flip indicators)."""
    return [0.0 if x == y else 1.0 for x, y in zip(a, b, strict=True)]


def first_position(
    chosen: Sequence[str], firsts: Sequence[str], ks: Sequence[int]
) -> tuple[list[float], list[float]]:
    """Position bias over answers that chose a listed option: per such answer, 1.0 where it
    chose the first-listed option, and the chance of that, 1/k."""
    hits, chance = [], []
    for c, first, k in zip(chosen, firsts, ks, strict=True):
        if c in ("abstain", "other") or k == 0:
            continue
        hits.append(1.0 if c == first else 0.0)
        chance.append(1.0 / k)
    return hits, chance


def interval(values: Sequence[float], resamples: int, seed: str) -> dict[str, Any]:
    """Mean, n and a 95% percentile bootstrap interval over scenarios (harness.evaluation.stats)."""
    from .stats import bootstrap_ci

    if not values:
        return {"mean": None, "n": 0, "ci_low": None, "ci_high": None}
    ci = bootstrap_ci(values, resamples, seed, "order")
    assert ci is not None
    return {
        "mean": math.fsum(values) / len(values),
        "n": len(values),
        "ci_low": ci[0],
        "ci_high": ci[1],
    }


def analyse(
    rows: dict[str, dict[str, dict[str, Any]]],
    presentations: Sequence[str],
    resamples: int,
    seed: str,
) -> dict[str, Any]:
    """The order-sensitivity figures of one condition (`seed` seeds its resampling).

    `rows[scenario][presentation]`: {"choice", "first", "k", "accuracy"} (accuracy may be
    None when undefined). Only scenarios with every presentation answered are paired."""
    out: dict[str, Any] = {}
    complete = sorted(s for s, by in rows.items() if all(p in by for p in presentations))
    for p in presentations:
        at = [rows[s][p] for s in complete]
        acc = [r["accuracy"] for r in at if r["accuracy"] is not None]
        hits, chance = first_position(
            [r["choice"] for r in at], [r["first"] for r in at], [r["k"] for r in at]
        )
        figures: dict[str, Any] = {
            "accuracy": interval(acc, resamples, f"{seed}:{p}:accuracy"),
            "first_option_share": interval(hits, resamples, f"{seed}:{p}:first"),
            "first_option_chance": math.fsum(chance) / len(chance) if chance else None,
            "position_bias": interval(
                [h - c for h, c in zip(hits, chance, strict=True)], resamples, f"{seed}:{p}:bias"
            ),
        }
        if p != ORIGINAL:
            base = [rows[s][ORIGINAL] for s in complete]
            deltas = [
                r["accuracy"] - b["accuracy"]
                for r, b in zip(at, base, strict=True)
                if r["accuracy"] is not None and b["accuracy"] is not None
            ]
            figures["accuracy_delta"] = interval(deltas, resamples, f"{seed}:{p}:delta")
            figures["flip_rate"] = interval(
                flip_rate([r["choice"] for r in at], [b["choice"] for b in base]),
                resamples,
                f"{seed}:{p}:flip",
            )
        out[p] = figures
    return {"scenarios": len(complete), "presentations": out}
