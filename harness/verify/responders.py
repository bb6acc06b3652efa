"""Reference responders for C5, so every branch of verify-and-revise runs offline.

Baselines, not models; they read only the prompt text, in process (through
`StageConfig.respond`) or behind the loopback OpenAI-compatible server alike. Their name,
`verifier`, is registered with the other reference responders in harness.evaluation.responders (the one
registry, `STEP_RESPONDERS`); this module holds the behaviour, which needs the compiled graph.

* generate: per candidate, a declared mix (`MIX`) of triplets: `true` ones (the candidate's
  own assertions, by entity names), `false` ones (a true signed assertion with the opposite
  sign, or one written backwards) and `unlinkable` ones (an object no entity is named like).
* revise: fixes a declared share (`FIX_SHARE`) of the refuted triplets, chosen by a hash of
  the scenario and the index, by restating the first assertion the graph's correction cites
  (the informed reviser) or, told only that the triplet is false (KGARevion's reviser, the
  default), the first assertion it knows between the two named ends (its own knowledge: the
  graph); the rest are repeated unchanged (so they stay refuted).
* answer: the reference responder the run names (`ref:oracle`, `ref:context-reader`, ...,
  or the loopback server's model name), so C5 pairs with the same responder's C1-C4 answers:
  the context reader reads the verified block as it reads C2-C4 contexts, the oracle answers
  from the gold. Only the generate and revise steps are this module's, whatever the name,
  since no other reference responder can propose or revise triplets.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from harness.compiled import CompiledDomain
from harness.evaluation.responders import VERIFIER, is_responder, needs_gold
from harness.evaluation.responders import respond as reference
from harness.probe.names import name_key
from harness.runner.messages import last_user_text
from kgbench.errors import UserError

from .steps import STEP_MARK

MIX = {"true": 2, "false": 1, "unlinkable": 1}
FIX_SHARE = 0.5
_SCENARIO = re.compile(r"^# Scenario (\S+)", re.M)
_LETTER = re.compile(r"^[A-Z]\. ")  # an option label under a lettered presentation
# A bracketed id as the templates cite one; which are assertions the compiled graph says (any
# id scheme the domain declares), never a format written here.
_CITED = re.compile(r"\[([^\[\]\s]+)\]")
_ITEM = re.compile(r"^(\d+)\. (.+?) -([A-Z_]+)-> (.+)$")
OPPOSITE = {"CAUSES_DECREASE_IN": "CAUSES_INCREASE_IN", "CAUSES_INCREASE_IN": "CAUSES_DECREASE_IN"}


def _share(*parts: str) -> float:
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class VerifyResponder:
    """The `verifier` step responder of harness.evaluation.responders: generate and revise answers."""

    name_in_registry = VERIFIER

    def __init__(self, compiled: CompiledDomain) -> None:
        self.compiled = compiled
        self.by_name = {name_key(e["name"]): e["id"] for e in compiled.graph["entities"]}
        self.assertions = sorted(compiled.graph["assertions"], key=lambda a: a["assertion_id"])
        self.by_id = {a["assertion_id"]: a for a in self.assertions}

    def name(self, eid: str) -> str:
        return str(self.compiled.entities[eid]["name"])

    def answer_text(self, prompt: str) -> dict[str, Any] | None:
        """The answer to a generate or revise step prompt; None for any other prompt (the
        answer step included: the named reference responder answers it)."""
        if prompt.startswith(STEP_MARK + "generate"):
            return self.generate(prompt)
        if prompt.startswith(STEP_MARK + "revise"):
            return self.revise(prompt)
        return None

    def _section(self, prompt: str, title: str) -> list[str]:
        lines = prompt.splitlines()
        try:
            start = lines.index(title) + 1
        except ValueError:
            return []
        out = []
        for line in lines[start:]:
            if line.startswith("#"):
                break
            out.append(line)
        return out

    def generate(self, prompt: str) -> dict[str, Any]:
        vocabulary = [
            ln[2:].split(":", 1)[0]
            for ln in self._section(prompt, "# Predicates")
            if ln.startswith("- ")
        ]
        sid = (_SCENARIO.search(prompt) or [None, ""])[1]
        triplets = []
        for label in (
            ln[2:] for ln in self._section(prompt, "# Candidate options") if ln.startswith("- ")
        ):
            cid = self.by_name.get(name_key(label)) or self.by_name.get(
                name_key(_LETTER.sub("", label))
            )
            own = [
                a
                for a in self.assertions
                if a["subject_id"] == cid and a["predicate"] in vocabulary
            ]
            for a in own[: MIX["true"]]:
                triplets.append(self._t(label, a["subject_id"], a["predicate"], a["object_id"]))
            signed = [
                a
                for a in own
                if a["predicate"] in OPPOSITE and OPPOSITE[a["predicate"]] in vocabulary
            ]
            for a in (signed or own)[: MIX["false"]]:
                if a["predicate"] in OPPOSITE:
                    triplets.append(
                        self._t(label, a["subject_id"], OPPOSITE[a["predicate"]], a["object_id"])
                    )
                else:
                    triplets.append(self._t(label, a["object_id"], a["predicate"], a["subject_id"]))
            for k in range(MIX["unlinkable"]):
                tag = hashlib.sha256(f"{sid}/{label}/{k}".encode()).hexdigest()[:6]
                triplets.append(
                    {
                        "candidate": label,
                        "subject": label,
                        "predicate": vocabulary[0],
                        "object": f"Qzx factor {tag}",
                    }
                )
        return {"triplets": triplets}

    def _t(self, label: str, s: str, p: str, o: str) -> dict[str, str]:
        return {"candidate": label, "subject": self.name(s), "predicate": p, "object": self.name(o)}

    def known_between(self, subject: str, obj: str) -> list[str]:
        """Assertion ids between two named entities, either way (the reviser's knowledge)."""
        ends = {self.by_name.get(name_key(subject)), self.by_name.get(name_key(obj))}
        if None in ends or len(ends) != 2:
            return []
        return [
            a["assertion_id"] for a in self.assertions if {a["subject_id"], a["object_id"]} == ends
        ]

    def revise(self, prompt: str) -> dict[str, Any]:
        sid = (_SCENARIO.search(prompt) or [None, ""])[1]
        lines = self._section(prompt, "# Refuted triplets")
        revisions = []
        for i, line in enumerate(lines):
            m = _ITEM.match(line)
            if not m:
                continue
            index = int(m[1])
            graph = lines[i + 1] if i + 1 < len(lines) else ""
            cited = (
                [c for c in _CITED.findall(graph) if c in self.by_id]
                if graph.strip().startswith("Graph:")
                else []
            )
            if not cited:  # uninformed: what it knows between the two ends itself
                cited = self.known_between(m[2], m[4])
            if cited and _share(sid, str(index)) < FIX_SHARE:
                a = self.by_id[cited[0]]
                fix = {
                    "subject": self.name(a["subject_id"]),
                    "predicate": a["predicate"],
                    "object": self.name(a["object_id"]),
                }
            else:
                fix = {"subject": m[2], "predicate": m[3], "object": m[4]}
            revisions.append({"index": index, **fix})
        return {"revisions": revisions}


def stage_respond(
    compiled: CompiledDomain, scenarios: list[dict[str, Any]]
) -> Callable[[str, Any], dict[str, Any]]:
    """`StageConfig.respond` for `ref:<name>`: generate and revise by the reference verifier,
    the answer step by the named reference responder (the oracles get the scenario's gold)."""
    responder = VerifyResponder(compiled)
    by_id = {s["scenario_id"]: s for s in scenarios}

    def respond(name: str, request: Any) -> dict[str, Any]:
        prompt = last_user_text(request.messages)
        answer = responder.answer_text(prompt)
        if answer is not None:
            return answer
        if not is_responder(name):
            raise UserError(f"unknown reference responder '{name}' for the answer step")
        found = _SCENARIO.search(prompt)
        gold = by_id.get(found[1]) if found and needs_gold(name) else None
        return reference(name, prompt, gold)

    return respond
