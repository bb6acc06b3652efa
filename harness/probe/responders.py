"""Offline reference responders for the probe: an oracle and a noisy oracle.

They are baselines, not models: they make `kgbench probe` runnable without a network and
give the scores known anchors. Both read only the prompt text (the last user message), in
process or behind the local OpenAI-compatible server alike: `PromptReader` turns each
compiled template into a regular expression (rendered with sentinels in place of its
fields) and reads back which step a prompt is and about which concepts.

* `oracle` answers from the reference graph: the first `n` successors (what X causes) or
  predecessors (what causes X) by entity id, named by their entity names; the edge check
  from the direct edges between the two concepts; the mapping check says yes only when the
  name is the candidate's name, a synonym or an xref. Its graphs are made of reference edges
  only, so its precision is 1.0.
* `noisy` (or `noisy-<rate>`, e.g. `noisy-0.5`; default rate and seed from probe.json) is the
  oracle with noise: each true concept is dropped with probability `rate`, and each answer
  slot receives, with probability `rate`, a wrong concept: an entity more than k steps away in
  the declared path mode (a miss under the path rule) or, when there is none, an invented
  name (unmapped). Edge checks and mapping checks are flipped with probability `rate`. The
  draws depend on the seed, the step and the concept, never on the rate, so a higher rate
  drops and adds a superset of what a lower rate does.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from typing import Any

from kgbench.errors import UserError

from .compiled import CompiledProbe
from .distances import DistanceIndex
from .mapping import EXACT_METHODS, LabelIndex
from .names import name_key
from .reference import ReferenceGraph

RESPONDERS = ("oracle", "noisy")
_NOISY = re.compile(r"^noisy(?:-(?P<rate>0(?:\.\d+)?|1(?:\.0+)?))?$")
# The fields that vary between prompts of a step (the others are fixed per domain).
VARYING = {
    "expand_effects": ("root", "concept", "known_concepts"),
    "expand_causes": ("root", "concept", "known_concepts"),
    "edge_check": ("root", "concept_a", "concept_b"),
    "verify_mapping": ("name", "candidate"),
}
RELATIONS = ("a_causes_b", "b_causes_a", "both", "neither")


def is_probe_responder(name: str) -> bool:
    return name == "oracle" or _NOISY.match(name) is not None


def check_responder(name: str) -> str:
    if not is_probe_responder(name):
        raise UserError(
            f"unknown probe responder '{name}'; known: oracle, noisy, noisy-<rate> (e.g. noisy-0.5)"
        )
    return name


class PromptReader:
    """Which step a rendered prompt is, and its fields, read back through the templates."""

    def __init__(self, probe: CompiledProbe) -> None:
        self.patterns: list[tuple[str, re.Pattern[str]]] = []
        n = probe.settings["concepts_per_answer"]
        for step, varying in VARYING.items():
            sentinels = {f: f"\x00{f}\x00" for f in varying}
            rendered = probe.render(step, n=n, **sentinels)
            parts = re.split(r"\x00(\w+)\x00", rendered)
            regex, seen = "", set()
            for i, part in enumerate(parts):
                if i % 2 == 0:
                    regex += re.escape(part)
                elif part in seen:
                    regex += f"(?P={part})"
                else:
                    seen.add(part)
                    regex += f"(?P<{part}>.*?)"
            self.patterns.append((step, re.compile(f"^{regex}$", re.S)))

    def read(self, text: str) -> tuple[str, dict[str, str]] | None:
        text = text.strip()
        for step, pattern in self.patterns:
            match = pattern.match(text)
            if match:
                return step, match.groupdict()
        return None


@dataclass
class ProbeResponder:
    """Answers probe prompts from the reference graph (see the module docstring)."""

    probe: CompiledProbe
    reference: ReferenceGraph

    def __post_init__(self) -> None:
        settings = self.probe.settings
        self.reader = PromptReader(self.probe)
        self.labels = LabelIndex(self.reference)
        self.n = int(settings["concepts_per_answer"])
        self.k = int(settings["path_bound"])
        self.index = DistanceIndex(
            self.reference.node_ids,
            sorted(self.reference.edges),
            settings["path_mode"] == "directed",
        )
        self.seed = int(self.probe.noise["seed"])
        self.default_rate = float(self.probe.noise["rate"])

    def rate(self, name: str) -> float:
        match = _NOISY.match(name)
        if name == "oracle" or match is None:
            return 0.0
        return float(match.group("rate")) if match.group("rate") else self.default_rate

    def _entity(self, concept: str) -> str | None:
        key = name_key(concept)
        for method in EXACT_METHODS:
            ids = self.labels.by_tier[method].get(key)
            if ids and len(ids) == 1:
                return next(iter(ids))
        return None

    def _rng(self, *parts: str) -> random.Random:
        digest = hashlib.sha256("\x1f".join((str(self.seed), *parts)).encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def answer_text(self, name: str, text: str) -> dict[str, Any] | None:
        """The answer to a probe prompt, or None when the text is not one."""
        read = self.reader.read(text)
        if read is None:
            return None
        step, fields = read
        rate = self.rate(name)
        if step in ("expand_effects", "expand_causes"):
            return self._expand(step, fields["concept"], rate)
        if step == "edge_check":
            return self._edge(fields["concept_a"], fields["concept_b"], rate)
        return self._verify(fields["name"], fields["candidate"], rate)

    def answer_messages(self, name: str, messages: list[dict[str, Any]]) -> dict[str, Any] | None:
        from harness.runner.messages import last_user_text

        return self.answer_text(name, last_user_text(messages))

    def _expand(self, step: str, concept: str, rate: float) -> dict[str, Any]:
        entity = self._entity(concept)
        effects = step == "expand_effects"
        if entity is None:
            truth: list[str] = []
        else:
            side = self.reference.successors if effects else self.reference.predecessors
            truth = side[entity][: self.n]
        names = [self.reference.entities[e].name for e in truth]
        if rate <= 0:
            return {"reasoning": "Read from the reference graph.", "concepts": names}
        rng = self._rng(step, name_key(concept))
        drops = [rng.random() for _ in range(self.n)]
        adds = [rng.random() for _ in range(self.n)]
        picks = [rng.random() for _ in range(self.n)]
        kept = [n for n, u in zip(names, drops, strict=False) if u >= rate]
        wrong = self._far(entity, effects)
        out = list(kept)
        for slot in range(self.n):
            if adds[slot] < rate:
                if wrong:
                    choice = self.reference.entities[wrong[int(picks[slot] * len(wrong))]].name
                else:
                    choice = f"Unrelated finding {int(picks[slot] * 1e6)}"
                if name_key(choice) not in {name_key(x) for x in out}:
                    out.insert(min(slot, len(out)), choice)
        return {
            "reasoning": "Read from the reference graph, with noise.",
            "concepts": out[: self.n],
        }

    def _far(self, entity: str | None, effects: bool) -> list[str]:
        """Entities more than k steps from (or, for causes, to) the concept."""
        if entity is None:
            return []
        near = self.index.within(entity, self.k, reverse=not effects)
        return [e for e in self.reference.node_ids if e not in near]

    def _edge(self, a: str, b: str, rate: float) -> dict[str, Any]:
        ea, eb = self._entity(a), self._entity(b)
        ab = ea is not None and eb is not None and (ea, eb) in self.reference.edges
        ba = ea is not None and eb is not None and (eb, ea) in self.reference.edges
        relation = {(True, True): "both", (True, False): "a_causes_b"}.get((ab, ba))
        relation = relation or ("b_causes_a" if ba else "neither")
        if rate > 0:
            rng = self._rng("edge_check", name_key(a), name_key(b))
            if rng.random() < rate:
                others = [r for r in RELATIONS if r != relation]
                relation = others[int(rng.random() * len(others))]
        return {"reasoning": "Read from the reference graph.", "relation": relation}

    def _verify(self, name: str, candidate: str, rate: float) -> dict[str, Any]:
        entity = self._entity(candidate)
        same = entity is not None and self._entity(name) == entity
        if rate > 0 and self._rng("verify", name_key(name), name_key(candidate)).random() < rate:
            same = not same
        return {"reasoning": "Compared with the reference names.", "same_concept": same}
