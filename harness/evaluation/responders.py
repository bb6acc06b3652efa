"""Reference responders: built-in, offline baselines that bracket what a model can score.

They are not models and say nothing about any model. They exist so the whole pipeline
(prompts, answers, scores, report) runs without a network, and so the panel has known anchors:

* `oracle` answers from the gold: it must score 1.0 on every defined metric. It names the
  preferred intervention by its candidate label (intervention metrics compare names), cites the
  gold ids (as its causal path, the gold path and then every other equal gold chain, whose
  sources the gold's evidence list holds), and states them as claims using the entity names it
  finds in its prompt.
  Its unsupported-claim rate is 0.0 wherever the gold path was retrieved; where the condition
  did not retrieve it (C2 carries no mechanistic chain) the cited path ids are, by the
  metric's definition, unsupported by the retrieved context.
* `context-reader` reads only its prompt text, deterministically: it picks the first candidate
  with outcome evidence for the target in the grounded context (a line on the target from the
  candidate, or from a class the line says applies to it, that is not marked weak), skipping a
  candidate whose contraindication the scenario text mentions or whose outcome line is a null
  result; it cites that candidate's chain to the target (or the outcome line), its evidence, the
  adverse effects it sees for its choice and the contraindications it sees for the other
  candidates (never those of a class that is no option, such as padding shows). When
  no candidate has outcome evidence it abstains (no recommendation, uncertainty flagged): a
  surrogate chain alone is not a reason to recommend. With no grounded context it behaves like
  `ungrounded`. It reads ids by where the templates put them, so a domain's own id schemes
  (`id_schemes`) read like the paper's; a grounded context none of whose assertion lines it
  can read is an error (UserError), never a silent abstention.
* `ungrounded` picks the first candidate and cites nothing.
* `first-option` always names the first listed option (a letter label stripped): the
  position-biased baseline of the order-sensitivity protocol (harness.evaluation.order).
* `noisy-oracle-<rate>` (e.g. `noisy-oracle-0.2`) is the oracle with a declared error rate: each
  (prompt, seed) draws a number in [0, 1) from a hash of the two, and where it falls below the
  rate the answer is a wrong one instead (a candidate outside the gold's acceptable list, or
  abstaining when every candidate is on it; no cited ids; the uncertainty flag inverted). The
  scorer may still credit such a pick when it is a member of an acceptable homogeneous class,
  so the scored error rate can fall a little below the declared one. The draw does not
  depend on the rate, so a higher rate errs on a superset of the items a lower one does; the
  request's seed (replicate r is sent seed + r) makes replicates differ, as sampling does. A
  stand-in model for studies with known differences between models (harness.study).

* `verifier` (a step responder, `STEP_RESPONDERS`) answers the generate and revise steps of
  verify-and-revise (C5): per candidate a declared mix of true, false and unlinkable triplets,
  and a declared share of the refuted ones fixed (harness.verify.responders holds it, since it
  needs the compiled graph). It answers no QA prompt: under `kgbench verify --model ref:<name>`
  it proposes and revises, and <name> (one of the above) answers from the verified triplets.

This module is the one registry of their names: `RESPONDERS` (the fixed ones) plus the
`noisy-oracle-<rate>` family, and `STEP_RESPONDERS` for steps that are not QA prompts; the
runner (`--model ref:<name>`), the local reference server, `kgbench verify`, the report's
provenance and the CLI ask it through `is_responder`, `needs_gold` and `responder_names`,
never a list of their own. `respond(name, prompt, gold)` returns a dict in the
response contract (response.schema.json); `kgbench run --model ref:<name>` (or
`harness.runner.api.answer_with_reference`) answers a whole run folder with one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from kgbench.errors import UserError

# One grounded-context line, as the compiled context templates write it:
# "[ASR_0019] Lisinopril -TARGETS-> Angiotensin-converting enzyme (direction: decrease) |
#  evidence: EV_0007, EV_0011 | provenance: ... | evidence level: high | validated | ..."
# Ids are read by where the template puts them (the bracketed head, the comma-separated
# evidence list), never by their format: a domain declares its own id schemes (`id_schemes`
# in domain.yaml: `[C-001] ... | evidence: SRC-1`), and the reader must see them all.
LINE = re.compile(
    r"\[(?P<id>[^\[\]\s]+)\] (?P<subject>.+?) -(?P<predicate>[A-Z][A-Z0-9_]*)-> "
    r"(?P<object>.+?)(?: \(direction: (?P<direction>[a-z_]+)\))?"
    r" \| evidence: (?P<evidence>[^|]*?)(?: \| (?P<rest>.*))?$"
)
# A line the templates begin as an assertion line ("[id] ..." or "2. [id] ...").
ASSERTION_HEAD = re.compile(r"^(?:\d+\.\s+)?\[[^\[\]\s]+\] ")
PATHWAY = re.compile(r"^Pathway from (?P<name>.+):$")
NUMBERED = re.compile(r"^\d+\.\s+")
# How the compiled templates mark weak evidence (C4 annotations, "evidence: none" elsewhere).
WEAK = re.compile(
    r"not validated|evidence level: (?:low|very_low)\b|unsupported hypothesis|no evidence"
    r"|evidence: none\b",
    re.I,
)
NO_EVIDENCE = "none"  # what the templates write for an assertion without a source
# A class-level claim names the member it applies to at the end of its line.
APPLIES_TO = re.compile(r"\| class-level claim for .+?, applies to (?P<member>.+?)\s*$")


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


@dataclass(frozen=True)
class ContextLine:
    """One assertion line of a grounded context block."""

    assertion_id: str
    subject: str
    predicate: str
    object: str
    evidence_ids: tuple[str, ...]
    weak: bool
    section: str = ""  # the title of the context section the line sits in
    applies_to: str = ""  # for a class-level claim, the member it is shown under

    def about(self, candidate: str) -> bool:
        return _same(self.subject, candidate) or (
            bool(self.applies_to) and _same(self.applies_to, candidate)
        )


@dataclass
class ParsedPrompt:
    """What the context-reader can see: the options, the target and the context lines."""

    candidates: list[str] = field(default_factory=list)
    target: str = ""
    scenario_text: str = ""
    lines: list[ContextLine] = field(default_factory=list)
    pathways: list[tuple[str, list[ContextLine]]] = field(default_factory=list)
    grounded: bool = False  # a "# Grounded context" block is present (it may be empty)
    unread: int = 0  # lines shaped as assertion lines that did not parse


def _context_line(text: str) -> ContextLine | None:
    m = LINE.search(text)
    if not m:
        return None
    evidence = tuple(
        e for e in (x.strip() for x in m["evidence"].split(",")) if e and e != NO_EVIDENCE
    )
    applies = APPLIES_TO.search(text)
    return ContextLine(
        assertion_id=m["id"],
        subject=m["subject"],
        predicate=m["predicate"],
        object=m["object"],
        evidence_ids=evidence,
        weak=bool(WEAK.search(text)) or not evidence,
        applies_to=applies["member"] if applies else "",
    )


def parse_prompt(prompt: str) -> ParsedPrompt:
    """Read a prompt rendered from the compiled frame; unknown text is ignored, never fatal."""
    parsed = ParsedPrompt()
    lines = prompt.splitlines()
    state = "head"
    scenario: list[str] = []
    pathway: list[ContextLine] | None = None
    section = ""
    for raw in lines:
        line = raw.strip()
        if line.startswith("# Answer format"):
            break
        if state == "head":
            if line.startswith("# Scenario"):
                state = "scenario"
            continue
        if state == "scenario":
            if line == "# Candidate options":
                state = "options"
                continue
            if line.startswith("Target outcome:") and not parsed.target:
                parsed.target = line.split(":", 1)[1].strip()
            scenario.append(line)
            continue
        if state == "options":
            if line.startswith("- "):
                parsed.candidates.append(line[2:].strip())
                continue
            state = "context"
        if state == "context":
            m = PATHWAY.match(line)
            if m:
                pathway = []
                parsed.pathways.append((m["name"], pathway))
                continue
            if line.startswith("#"):
                parsed.grounded |= line.startswith("# Grounded context")
                section = line.lstrip("#").strip()
                pathway = None
                continue
            item = _context_line(line)
            if item is None:
                parsed.unread += bool(ASSERTION_HEAD.match(line))
                continue
            item = replace(item, section=section)
            parsed.lines.append(item)
            if pathway is not None and NUMBERED.match(line):
                pathway.append(item)
            elif not NUMBERED.match(line):
                pathway = None
    parsed.scenario_text = "\n".join(scenario)
    return parsed


def _same(a: str, b: str) -> bool:
    ka, kb = _key(a), _key(b)
    return bool(ka) and (ka == kb or re.search(rf"\b{re.escape(ka)}\b", kb) is not None)


def _mentions(text_key: str, name: str) -> bool:
    """Whether the scenario text names something: the name, or the stem of a one-word name
    ("pregnancy" in "22 weeks pregnant")."""
    key = _key(name)
    if not key:
        return False
    if re.search(rf"\b{re.escape(key)}\b", text_key):
        return True
    return (
        " " not in key
        and len(key) >= 7
        and re.search(rf"\b{re.escape(key[:6])}", text_key) is not None
    )


def _contract(recommended: str | None, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "recommended_intervention": recommended,
        "causal_path_assertion_ids": [],
        "adverse_effect_assertion_ids": [],
        "contraindication_assertion_ids": [],
        "supporting_evidence_ids": [],
        "claims": [],
        "uncertainty_flag": False,
        "rationale": "",
    }
    out.update(fields)
    return out


def ungrounded(prompt: str, gold: dict[str, Any] | None = None) -> dict[str, Any]:
    """First candidate, no identifiers: the floor a guess reaches."""
    parsed = parse_prompt(prompt)
    first = parsed.candidates[0] if parsed.candidates else ""
    return _contract(first, rationale="Reference baseline: first listed option, no grounding.")


def _chains_to_target(parsed: ParsedPrompt, candidate: str) -> list[list[ContextLine]]:
    return [
        chain
        for name, chain in parsed.pathways
        if chain and _same(name, candidate) and _same(parsed.target, chain[-1].object)
    ]


def _outcome_lines(parsed: ParsedPrompt, candidate: str) -> list[ContextLine]:
    """Lines about the candidate (or its class) on the target outcome: outcome evidence."""
    return [
        ln
        for ln in parsed.lines
        if ln.about(candidate)
        and (_same(parsed.target, ln.object) or "outcome evidence" in ln.section.lower())
    ]


def context_reader(prompt: str, gold: dict[str, Any] | None = None) -> dict[str, Any]:
    """A deterministic reader of the grounded context; see the module docstring."""
    parsed = parse_prompt(prompt)
    if not parsed.grounded or not parsed.candidates:
        return ungrounded(prompt)
    if parsed.unread and not parsed.lines:
        raise UserError(
            f"the context-reader recognises none of the {parsed.unread} assertion line(s) of "
            "the grounded context it was given (expected '[<id>] <subject> -<PREDICATE>-> "
            "<object> | evidence: <ids>' as the compiled context templates write it); an "
            "answer would be a silent abstention, not a baseline"
        )
    scenario_key = _key(parsed.scenario_text)

    def ruled_out(candidate: str) -> bool:
        return any(
            "CONTRAINDICATED" in ln.predicate
            and ln.about(candidate)
            and _mentions(scenario_key, ln.object)
            for ln in parsed.lines
        )

    def supported(candidate: str) -> list[ContextLine]:
        lines = _outcome_lines(parsed, candidate)
        if any("NO_EFFECT" in ln.predicate or "INCREASE" in ln.predicate for ln in lines):
            return []  # a null or harm result on the target blocks it
        return [ln for ln in lines if "DECREASE" in ln.predicate and not ln.weak]

    choice = next((c for c in parsed.candidates if supported(c) and not ruled_out(c)), None)
    # Contraindications of the other candidates only: a context may show contraindications
    # of classes that are no option here (the volume-matched controls pad with them), and
    # those bear on no choice this patient faces.
    others = [c for c in parsed.candidates if c != choice]
    contra = [
        ln
        for ln in parsed.lines
        if "CONTRAINDICATED" in ln.predicate and any(ln.about(c) for c in others)
    ]
    if choice is None:
        return _contract(
            None,
            contraindication_assertion_ids=list(dict.fromkeys(ln.assertion_id for ln in contra)),
            supporting_evidence_ids=list(
                dict.fromkeys(ev for ln in contra for ev in ln.evidence_ids)
            ),
            uncertainty_flag=True,
            rationale="Reference baseline: no candidate has outcome evidence in the context.",
        )
    outcome = supported(choice)
    # The causal path is a mechanism (candidate -> target -> process -> ... -> outcome), as the
    # gold path is. Contexts list every validated chain, shortest first among equally strong
    # ones, one-step outcome claims included, so the reader takes the first chain of three or
    # more steps, then of two, then any chain, then the outcome line itself.
    strong = [ch for ch in _chains_to_target(parsed, choice) if not any(ln.weak for ln in ch)]
    chain = next(
        (ch for steps in (3, 2) for ch in strong if len(ch) >= steps),
        strong[0] if strong else outcome[:1],
    )
    adverse = [ln for ln in parsed.lines if "ADVERSE" in ln.predicate and ln.about(choice)]
    cited = [*chain, *outcome, *adverse, *contra]
    evidence = list(dict.fromkeys(ev for ln in cited for ev in ln.evidence_ids))
    return _contract(
        choice,
        causal_path_assertion_ids=list(dict.fromkeys(ln.assertion_id for ln in chain)),
        adverse_effect_assertion_ids=list(dict.fromkeys(ln.assertion_id for ln in adverse)),
        contraindication_assertion_ids=list(dict.fromkeys(ln.assertion_id for ln in contra)),
        supporting_evidence_ids=evidence,
        claims=[
            {"subject": ln.subject, "predicate": ln.predicate, "object": ln.object} for ln in chain
        ],
        uncertainty_flag=False,
        rationale=f"Reference baseline: {choice} has outcome evidence for {parsed.target}.",
    )


def _split_gold(gold: dict[str, Any] | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`gold` may be a scenario's gold object or the whole scenario (then labels are known)."""
    if not isinstance(gold, dict):
        raise UserError("the oracle responder needs the scenario's gold (pass gold=scenario)")
    if isinstance(gold.get("gold"), dict):
        candidates = gold.get("candidates") if isinstance(gold.get("candidates"), list) else []
        return gold["gold"], [c for c in candidates if isinstance(c, dict)]
    return gold, []


def oracle(prompt: str, gold: dict[str, Any] | None = None) -> dict[str, Any]:
    """The gold answer in the response contract; see the module docstring."""
    g, candidates = _split_gold(gold)
    preferred = g.get("preferred_intervention")
    label = next(
        (c.get("label") for c in candidates if c.get("intervention_id") == preferred), preferred
    )  # None when the gold is to abstain
    path = list(g.get("causal_path_assertion_ids") or [])
    # every equal gold chain is gold, and the gold's evidence list holds the sources of each:
    # the oracle cites them all (its path first), so each source it cites supports an edge it
    # cites
    chains = g.get("causal_paths") if isinstance(g.get("causal_paths"), list) else []
    path = list(dict.fromkeys([*path, *(a for c in chains if isinstance(c, list) for a in c)]))
    by_id = {ln.assertion_id: ln for ln in parse_prompt(prompt).lines}
    claims = [
        {"subject": by_id[a].subject, "predicate": by_id[a].predicate, "object": by_id[a].object}
        for a in path
        if a in by_id
    ]
    return _contract(
        label,
        causal_path_assertion_ids=path,
        adverse_effect_assertion_ids=list(g.get("adverse_effect_assertion_ids") or []),
        contraindication_assertion_ids=list(g.get("contraindication_assertion_ids") or []),
        supporting_evidence_ids=list(g.get("evidence_source_ids") or []),
        claims=claims,
        uncertainty_flag=bool(g.get("expects_uncertainty")),
        rationale="Reference oracle: the gold answer.",
    )


def noise_draw(prompt: str, seed: int | None) -> float:
    """A number in [0, 1) fixed by the prompt and the seed alone (not by the rate), so the
    noisy oracle is deterministic and a higher rate errs wherever a lower one does."""
    digest = hashlib.sha256(f"noisy-oracle|{seed or 0}|{prompt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def noisy_oracle(
    prompt: str, gold: dict[str, Any] | None, rate: float, seed: int | None = None
) -> dict[str, Any]:
    """The oracle, except on a `rate` share of (prompt, seed) draws; see the module docstring."""
    answer = oracle(prompt, gold)
    draw = noise_draw(prompt, seed)
    if draw >= rate:
        return answer
    g, candidates = _split_gold(gold)
    acceptable = set(g.get("acceptable_interventions") or [])
    if g.get("preferred_intervention") is None:
        acceptable = set()  # the gold abstains: any pick is wrong
    wrong = [c for c in candidates if c.get("intervention_id") not in acceptable]
    if wrong:  # which wrong candidate: the same draw, rescaled
        pick = wrong[min(len(wrong) - 1, int(draw / max(rate, 1e-12) * len(wrong)))]
        choice = pick.get("label") or pick.get("intervention_id")
    else:
        choice = None  # every option is acceptable: abstaining is the wrong answer
    return _contract(
        choice,
        uncertainty_flag=not bool(g.get("expects_uncertainty")),
        rationale=f"Reference noisy oracle: a wrong answer (error rate {rate:g}).",
    )


OPTION_LETTER = re.compile(r"^[A-Z]\. (?=\S)")


def first_option(prompt: str, gold: dict[str, Any] | None = None) -> dict[str, Any]:
    """Always the first listed option, by name (a letter label stripped): the position-biased
    baseline that checks the order-sensitivity metrics end to end (position bias 1 - 1/k,
    a flip wherever a presentation moves another option first)."""
    parsed = parse_prompt(prompt)
    first = OPTION_LETTER.sub("", parsed.candidates[0]) if parsed.candidates else ""
    return _contract(first, rationale="Reference baseline: always the first listed option.")


RESPONDERS: dict[str, Callable[[str, dict[str, Any] | None], dict[str, Any]]] = {
    "oracle": oracle,
    "context-reader": context_reader,
    "ungrounded": ungrounded,
    "first-option": first_option,
}
VERIFIER = "verifier"
STEP_RESPONDERS: dict[str, str] = {
    VERIFIER: "the C5 (verify-and-revise) reference generator and reviser "
    "(harness.verify.responders)",
}
"""Reference responders for the steps of a multi-step condition, by name: they answer those
steps' prompts only, never a QA prompt, so `kgbench run --model ref:<name>` refuses them."""
NOISY_ORACLE = "noisy-oracle"
NOISY_FAMILY = f"{NOISY_ORACLE}-<rate>"
_NOISY_NAME = re.compile(r"^noisy-oracle-(?P<rate>0(?:\.[0-9]{1,6})?|1(?:\.0{1,6})?)$")


def noisy_rate(name: str) -> float | None:
    """The error rate a `noisy-oracle-<rate>` name declares; None for any other name."""
    m = _NOISY_NAME.match(name)
    return float(m["rate"]) if m else None


def noisy_name(rate: float) -> str:
    """The responder name of a noisy oracle at `rate` (what a request's model names)."""
    return f"{NOISY_ORACLE}-{rate:g}"


def is_responder(name: str, steps: bool = False) -> bool:
    """A reference responder's name: a fixed one or `noisy-oracle-<rate>` (QA answerers);
    with `steps`, a step responder (`verifier`) counts too."""
    return name in RESPONDERS or noisy_rate(name) is not None or (steps and name in STEP_RESPONDERS)


def responder_names(steps: bool = False) -> list[str]:
    """Every responder name as a user may type it: the fixed ones, then the noisy family
    (with `steps`, then the step responders)."""
    return [*RESPONDERS, NOISY_FAMILY, *(STEP_RESPONDERS if steps else ())]


def needs_gold(name: str) -> bool:
    """Whether the responder answers from the gold (the oracle and its noisy variant); the
    step responders read only their prompt."""
    return name == "oracle" or noisy_rate(name) is not None


def respond(
    name: str, prompt: str, gold: dict[str, Any] | None = None, seed: int | None = None
) -> dict[str, Any]:
    """Answer one prompt with a reference responder, as a dict in the response contract.

    `gold` is needed by the oracles only: the scenario's gold object, or the whole scenario
    (preferred, since then the oracle can name its choice by the candidate label). `seed` (the
    request's) matters only to the noisy oracle.
    """
    rate = noisy_rate(name)
    if rate is not None:
        return noisy_oracle(prompt, gold, rate, seed)
    if name in STEP_RESPONDERS:
        raise UserError(
            f"reference responder '{name}' is {STEP_RESPONDERS[name]}: it answers those steps "
            "only, never a QA prompt; run `kgbench verify --model ref:<responder>` for C5"
        )
    try:
        responder = RESPONDERS[name]
    except KeyError:
        known = ", ".join(responder_names())
        raise UserError(f"unknown reference responder '{name}'; choose one of {known}") from None
    return responder(prompt, gold)
