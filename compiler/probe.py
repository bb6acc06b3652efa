"""Cross-checks of a domain's graph-generation probe (MedG-KRP) against its validated graph.

`load_declaration` proves the shape of spec/declarations/probe.yaml (ProbeDeclaration) and of the domain's
probe.yaml (DomainProbe): types, ranges (k >= 1, thresholds in range), enum values. This
module proves the meaning: every root is an entity of the domain (or the root rule names real
classes and selects at least one), no root is listed twice, every prompt template parses and
uses only the fields its step provides (and the fields the reference responders need to read
it back), and the declared reference roles select at least one predicate. Problems are
collected and reported together, each with its file, line and field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import ir
from .declarations import load_declaration
from .paths import repo_relative
from .schema import suggest
from .tables import ErrorList
from .yamlfile import YamlDoc

# Fields each prompt step is rendered with (harness.probe.prompts fills exactly these).
PROMPT_FIELDS: dict[str, tuple[str, ...]] = {
    "system": ("domain_phrase",),
    "expand_effects": ("domain_phrase", "root", "concept", "n", "known_concepts"),
    "expand_causes": ("domain_phrase", "root", "concept", "n", "known_concepts"),
    "edge_check": ("domain_phrase", "root", "concept_a", "concept_b"),
    "verify_mapping": ("domain_phrase", "name", "candidate"),
}
# Fields a step's template must show: the answer is about them, and the reference responders
# read them back from the prompt text.
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "expand_effects": ("concept",),
    "expand_causes": ("concept",),
    "edge_check": ("concept_a", "concept_b"),
    "verify_mapping": ("name", "candidate"),
}
SETTING_FIELDS = tuple(f for f in ir.ProbeSettings.__dataclass_fields__)


class _Checker:
    def __init__(self) -> None:
        self.errors = ErrorList()

    def add(self, doc: YamlDoc, path: Sequence[str | int], message: str) -> None:
        field = next((p for p in reversed(path) if isinstance(p, str)), None)
        self.errors.add(message, doc.location(list(path), field))


def _template_fields(text: str) -> tuple[set[str] | None, str | None]:
    """The variables a Jinja2 template uses, or (None, why) when it does not parse."""
    import jinja2
    from jinja2 import meta

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    try:
        return set(meta.find_undeclared_variables(env.parse(text))), None
    except jinja2.TemplateSyntaxError as exc:
        return None, f"malformed template (line {exc.lineno} of the template): {exc.message}"


def _settings(check: _Checker, spec_doc: YamlDoc, domain_doc: YamlDoc) -> ir.ProbeSettings | None:
    merged: dict[str, Any] = dict(spec_doc.data.get("settings") or {})
    merged.update(domain_doc.data.get("settings") or {})
    missing = [f for f in SETTING_FIELDS if merged.get(f) is None]
    if missing:
        check.add(
            spec_doc,
            ["settings"],
            f"setting '{missing[0]}' is required (in spec/declarations/probe.yaml or the domain's probe.yaml)",
        )
        return None
    return ir.ProbeSettings(
        max_depth=int(merged["max_depth"]),
        concepts_per_answer=int(merged["concepts_per_answer"]),
        path_bound=int(merged["path_bound"]),
        curve_max_k=int(merged["curve_max_k"]),
        path_mode=str(merged["path_mode"]),
        edge_checks_per_root=int(merged["edge_checks_per_root"]),
        fuzzy_threshold=float(merged["fuzzy_threshold"]),
        embedding_threshold=float(merged["embedding_threshold"]),
        max_name_length=int(merged["max_name_length"]),
    )


def _roots(
    check: _Checker, doc: YamlDoc, entities: Mapping[str, str], classes: set[str]
) -> tuple[str, ...]:
    data = doc.data
    has_list, rule = data.get("roots") is not None, data.get("root_rule")
    if has_list == (rule is not None):
        check.add(doc, [], "declare the root concepts with exactly one of 'roots' or 'root_rule'")
        return ()
    roots: list[str] = []
    if has_list:
        listed = data["roots"]
        if not listed:
            check.add(doc, ["roots"], "expected at least one root concept (an entity id)")
        seen: dict[str, int] = {}
        for i, root in enumerate(listed):
            root = str(root)
            if root not in entities:
                check.add(
                    doc,
                    ["roots", i],
                    f"unknown entity '{root}'" + suggest(root, entities) + "; expected an "
                    "entity id of this domain",
                )
            elif root in seen:
                check.add(
                    doc, ["roots", i], f"root '{root}' is listed twice (first at {seen[root]})"
                )
            else:
                seen[root] = i
                roots.append(root)
        return tuple(roots)
    for i, cls in enumerate(rule["classes"]):
        if cls not in classes:
            check.add(
                doc,
                ["root_rule", "classes", i],
                f"unknown class '{cls}'"
                + suggest(str(cls), classes)
                + "; expected one of "
                + ", ".join(sorted(classes)),
            )
            continue
        members = sorted(e for e, c in entities.items() if c == cls)
        roots.extend(m for m in members[: rule["per_class"]] if m not in roots)
    if not roots and not check.errors.errors:
        check.add(doc, ["root_rule"], "the rule selects no entity; expected at least one root")
    return tuple(roots)


def _prompts(check: _Checker, doc: YamlDoc) -> tuple[tuple[str, str], ...]:
    prompts = doc.data["prompts"]
    out = []
    for step, allowed in PROMPT_FIELDS.items():
        text = str(prompts[step])
        used, why = _template_fields(text)
        if used is None:
            check.add(doc, ["prompts", step], str(why))
            continue
        unknown = sorted(used - set(allowed))
        if unknown:
            check.add(
                doc,
                ["prompts", step],
                f"unknown template field '{unknown[0]}'"
                + suggest(unknown[0], allowed)
                + "; expected fields among "
                + ", ".join(allowed),
            )
        for name in REQUIRED_FIELDS.get(step, ()):
            if name not in used:
                check.add(doc, ["prompts", step], f"the template must show {{{{ {name} }}}}")
        out.append((step, text))
    if prompts["expand_effects"] == prompts["expand_causes"]:
        check.add(
            doc,
            ["prompts", "expand_causes"],
            "expand_causes must differ from expand_effects (they ask opposite questions)",
        )
    return tuple(out)


def check_probe(
    probe_path: Path,
    spec_path: Path,
    category_of: Mapping[str, str],
    classes: Iterable[str],
    predicates: Iterable[ir.Predicate],
) -> ir.ProbeSpec:
    """Validate the probe declarations of a domain against its entities (id -> class), class
    names and predicates; raise SpecError(s), or return the IR."""
    spec_doc = load_declaration(spec_path, "ProbeDeclaration")
    doc = load_declaration(probe_path, "DomainProbe")
    check = _Checker()
    settings = _settings(check, spec_doc, doc)
    roots = _roots(check, doc, category_of, set(classes))
    prompts = _prompts(check, spec_doc)
    roles = set(spec_doc.data["reference_roles"])
    chosen = tuple(sorted(p.name for p in predicates if p.role in roles))
    if not chosen:
        check.add(
            spec_doc,
            ["reference_roles"],
            "no predicate of this domain has one of these roles; expected at least one",
        )
    check.errors.raise_if_any()
    assert settings is not None  # a missing setting was reported above
    noise = spec_doc.data["noise"]
    return ir.ProbeSpec(
        source=repo_relative(probe_path),
        settings=settings,
        roots=roots,
        prompts=prompts,
        reference_predicates=chosen,
        noise_rate=float(noise["rate"]),
        noise_seed=int(noise["seed"]),
        reference_excluded_directions=tuple(
            sorted(spec_doc.data.get("reference_excluded_directions") or ())
        ),
    )
