"""The study file: validated like every declaration, then checked for what a schema cannot say.

`kgbench.cli.study.load_study(path, domain)` reads the file through the compiler's declaration
reader (bounded YAML, line numbers) against `StudyConfig` of spec/study/study.yaml (the LinkML
schema turned into JSON Schema); `study_from` here then checks, without the compiler: the domain and conditions exist, model names are unique, each
model's settings fit its kind and do not contradict each other, and the release verifies.
Any problem is one SpecError naming the file, the line and the field, raised before anything
is run or written, so a bad study costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.runner.plan import Settings
from kgbench.errors import SpecError, UserErrors
from kgbench.io import sha256_file
from kgbench.ranges import check

if TYPE_CHECKING:
    from harness.compiled import CompiledDomain

DEFAULT_BOOTSTRAP = 10_000
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_CONCURRENCY = 16

# What each kind of model takes; anything else given is a contradiction, named.
KIND_FIELDS = {
    "openai": {
        "requires": ("model",),
        "forbids": ("base_url", "responder", "error_rate", "transport"),
    },
    "compatible": {
        "requires": ("model", "base_url"),
        "forbids": ("responder", "error_rate", "transport"),
    },
    "reference": {"requires": ("responder",), "forbids": ("model", "base_url", "price")},
}
WHY_FORBIDDEN = {
    ("openai", "base_url"): "kind openai is api.openai.com; use kind compatible for another server",
    ("reference", "price"): "reference responders are free baselines",
    ("reference", "model"): "a reference model names its responder, not a model",
    ("reference", "base_url"): "the study serves reference responders itself",
}


@dataclass(frozen=True)
class StudyModel:
    """One model of the study, resolved to what the runner takes."""

    name: str
    kind: str  # openai | compatible | reference
    spec: str  # the runner's --model: openai:<name> or ref:<responder>
    base_url: str | None
    responder: str | None  # reference kind: the responder's full name (noisy-oracle-0.2)
    transport: str | None  # reference kind: server | in_process
    settings: Settings
    batch: bool = False
    concurrency: int = DEFAULT_CONCURRENCY
    price_in: float | None = None
    price_out: float | None = None
    line: int | None = None

    @property
    def via_study_server(self) -> bool:
        """A reference responder answered through the loopback server the study starts."""
        return self.kind == "reference" and self.transport == "server"

    def describe(self) -> dict[str, Any]:
        """What the provenance block and study.json record of this model (no secrets)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "spec": self.spec,
            "base_url": self.base_url,
            "responder": self.responder,
            "transport": self.transport,
            "temperature": self.settings.temperature,
            "seed": self.settings.seed,
            "max_tokens": self.settings.max_tokens,
            "structured": self.settings.structured,
            "replicates": self.settings.replicates,
            "batch": self.batch,
            "concurrency": self.concurrency,
            "price_in": self.price_in,
            "price_out": self.price_out,
        }


@dataclass(frozen=True)
class StudyConfig:
    path: Path
    sha256: str
    name: str
    description: str
    domain: str
    release_path: Path
    release_digest: str | None  # the digest pinned in the file, if any
    release_manifest: dict[str, Any]
    conditions: tuple[str, ...]
    replicates: int
    models: tuple[StudyModel, ...]
    excluded: tuple[str, ...] = ()  # declared conditions a study cannot run (verify: C5)
    bootstrap: int = DEFAULT_BOOTSTRAP
    permutations: int = DEFAULT_PERMUTATIONS
    seed: int = 0
    holm_family: str = "study"
    interaction_baseline: str = ""
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def release_version(self) -> str:
        return str(self.release_manifest.get("release_version"))

    def model(self, name: str) -> StudyModel:
        return next(m for m in self.models if m.name == name)


def study_from(doc: Any, path: Path, domain: str) -> StudyConfig:
    """The study of a study file that passed its schema (`doc`: the compiler's YamlDoc, from
    `compiler.declarations.load_study_file`; kgbench.cli.study composes the two); a SpecError
    (file, line, field) on the first problem the schema cannot see."""
    from harness.compiled import CompiledDomain

    data: dict[str, Any] = doc.data

    declared = data.get("domain")
    if declared is not None and declared != domain:
        raise SpecError(
            f"the study is declared for domain '{declared}', but --domain is '{domain}'",
            doc.location(["domain"], "domain"),
        )
    compiled = CompiledDomain.open(domain)
    conditions, verify = _conditions(doc, data, compiled, domain)
    stats = data.get("statistics") or {}
    baseline = stats.get("interaction_baseline") or conditions[0]
    if baseline not in conditions:
        raise SpecError(
            f"interaction_baseline '{baseline}' is not one of the study's conditions "
            f"({', '.join(conditions)})",
            doc.location(["statistics", "interaction_baseline"], "interaction_baseline"),
        )

    # numbers checked where they enter (kgbench.ranges): NaN passed the schema's [0, 1]
    check(
        "replicates",
        data.get("replicates"),
        "replicates",
        doc.location(["replicates"], "replicates"),
    )
    for key, kind in (("bootstrap", "bootstrap"), ("permutations", "bootstrap")):
        where_stat = doc.location(["statistics", key], key)
        check(f"statistics.{key}", stats.get(key), kind, where_stat)
    replicates = int(data.get("replicates") or 1)
    sampling = data.get("sampling") or {}
    check(
        "sampling.temperature",
        sampling.get("temperature"),
        "temperature",
        doc.location(["sampling", "temperature"], "temperature"),
    )
    models = _models(doc, data, sampling, replicates)
    release_path, manifest = _release(doc, data, domain, Path(path), compiled)
    sha = sha256_file(Path(path))
    return StudyConfig(
        path=Path(path),
        sha256=sha,
        name=str(data["name"]),
        description=str(data.get("description") or ""),
        domain=domain,
        release_path=release_path,
        release_digest=(data["release"].get("digest") or None),
        release_manifest=manifest,
        conditions=tuple(conditions),
        excluded=tuple(c for c in verify if not data.get("conditions")),
        replicates=replicates,
        models=tuple(models),
        bootstrap=int(stats.get("bootstrap") or DEFAULT_BOOTSTRAP),
        permutations=int(stats.get("permutations") or DEFAULT_PERMUTATIONS),
        seed=int(stats.get("seed") or 0),
        holm_family=str(stats.get("holm_family") or "study"),
        interaction_baseline=baseline,
        raw=data,
    )


def _conditions(
    doc: Any, data: dict[str, Any], compiled: CompiledDomain, domain: str
) -> tuple[list[str], list[str]]:
    """(the study's conditions, the domain's verify-and-revise ones): those listed, each
    known, once, and not C5; else every condition but C5 and the optional ones."""
    known = [c.id for c in compiled.conditions]
    # Verify-and-revise conditions (C5) are multi-step agents answered by `kgbench verify`,
    # not single prompts: a study leaves them out by default (StudyConfig.excluded says so)
    # and refuses them when listed, rather than counting them as never answered.
    verify = [c.id for c in compiled.conditions if c.verify is not None]
    # optional conditions (the volume-matched controls) run only when the study names them
    optional = {c.id for c in compiled.conditions if c.optional}
    conditions = list(
        data.get("conditions") or [c for c in known if c not in verify and c not in optional]
    )
    seen_conditions: dict[str, int] = {}
    for i, cond in enumerate(conditions):
        where = doc.location(["conditions", i], "conditions")
        if cond not in known:
            raise SpecError(
                f"unknown condition '{cond}'; domain {domain} declares {', '.join(known)}", where
            )
        if cond in verify:
            raise SpecError(
                f"condition '{cond}' is verify-and-revise (a multi-step agent): studies do not "
                "run it; leave it out of `conditions` and run `kgbench verify --run-dir "
                "<the study's run folder> --model ...` for it",
                where,
            )
        if cond in seen_conditions:
            raise SpecError(f"condition '{cond}' is listed twice", where)
        seen_conditions[cond] = i
    return conditions, verify


def _models(
    doc: Any, data: dict[str, Any], sampling: dict[str, Any], replicates: int
) -> list[StudyModel]:

    out: list[StudyModel] = []
    first: dict[str, int] = {}
    for i, m in enumerate(data["models"]):

        def where(key: str, i: int = i) -> Any:
            return doc.location(["models", i, key], key)

        name = str(m["name"])
        folded = name.casefold()
        if folded in first:
            line = doc.line_of(["models", first[folded], "name"])
            raise SpecError(
                f"duplicate model name '{name}' (first declared on line {line}); each model "
                "needs its own name (its responses log and scores are named after it)",
                where("name"),
            )
        first[folded] = i
        kind = m["kind"]
        rules = KIND_FIELDS[kind]
        for key in rules["requires"]:
            if m.get(key) in (None, ""):
                raise SpecError(f"a model of kind {kind} needs '{key}'", where("kind"))
        for key in rules["forbids"]:
            if m.get(key) is not None:
                why = WHY_FORBIDDEN.get((kind, key), f"it does not apply to kind {kind}")
                raise SpecError(
                    f"'{key}' conflicts with kind {kind} of model '{name}': {why}", where(key)
                )
        responder = transport = None
        base_url = m.get("base_url")
        if kind == "reference":
            spec, responder, transport = _reference(m, name, where)
        else:
            spec = f"openai:{str(m['model']).strip()}"
            base_url = str(base_url).rstrip("/") if base_url else None
        price = m.get("price") or {}
        check("temperature", m.get("temperature"), "temperature", where("temperature"))
        settings = Settings(
            temperature=_pick(m, sampling, "temperature"),
            seed=_pick(m, sampling, "seed"),
            max_tokens=_pick(m, sampling, "max_tokens"),
            structured=bool(_pick(m, sampling, "structured", True)),
            replicates=replicates,
        )
        out.append(
            StudyModel(
                name=name,
                kind=kind,
                spec=spec,
                base_url=base_url,
                responder=responder,
                transport=transport,
                settings=settings,
                batch=bool(m.get("batch") or False),
                concurrency=int(m.get("concurrency") or DEFAULT_CONCURRENCY),
                price_in=price.get("input"),
                price_out=price.get("output"),
                line=doc.line_of(["models", i]),
            )
        )
    return out


def _reference(m: dict[str, Any], name: str, where: Any) -> tuple[str, str, str]:
    """(spec, responder, transport) of a reference model: its responder (a noisy oracle
    named by its declared error rate) in process or behind the loopback server."""
    from harness.evaluation.responders import noisy_name

    responder = m["responder"]
    transport = m.get("transport") or "server"
    check("error_rate", m.get("error_rate"), "rate", where("error_rate"))
    if responder == "noisy-oracle":
        if m.get("error_rate") is None:
            raise SpecError(
                f"model '{name}': a noisy-oracle responder needs its declared "
                "error_rate (between 0 and 1)",
                where("responder"),
            )
        responder = noisy_name(float(m["error_rate"]))
    elif m.get("error_rate") is not None:
        raise SpecError(
            f"'error_rate' conflicts with responder {responder} of model '{name}': only "
            "a noisy-oracle has a declared error rate",
            where("error_rate"),
        )
    if m.get("batch") and transport == "in_process":
        raise SpecError(
            f"'batch' conflicts with transport in_process of model '{name}': the Batch "
            "API needs an endpoint (use transport server)",
            where("batch"),
        )
    spec = f"ref:{responder}" if transport == "in_process" else f"openai:{responder}"
    return spec, responder, transport


def _pick(model: dict[str, Any], sampling: dict[str, Any], key: str, default: Any = None) -> Any:
    """A model's own setting, else the study's sampling policy, else the default."""
    if model.get(key) is not None:
        return model[key]
    if sampling.get(key) is not None:
        return sampling[key]
    return default


def _release(
    doc: Any, data: dict[str, Any], domain: str, study_path: Path, compiled: Any
) -> tuple[Path, dict[str, Any]]:
    """The release folder, verified (hashes, records, index, pinned digest)."""
    from harness.gold_layout import Version
    from harness.release.verify import verify_or_raise

    ref = data["release"]
    version, folder = ref.get("version"), ref.get("path")
    if (version is None) == (folder is None):
        key = "path" if folder is not None else "release"
        raise SpecError(
            "give the release as exactly one of 'version' (a release of the domain) or 'path' "
            "(a release folder)",
            doc.location(["release", key] if folder is not None else ["release"], key),
        )
    if version is not None:
        Version.parse(str(version))  # the schema's pattern lets a trailing newline through
        path = compiled.gold_dir / str(version)
        where = doc.location(["release", "version"], "version")
        if not path.is_dir():
            from harness.gold_layout import releases

            have = ", ".join(str(v) for v in sorted(releases(compiled.gold_dir))) or "none"
            raise SpecError(
                f"domain {domain} has no release {version} under {path.parent} "
                f"(published: {have}); publish it with `kgbench publish` or give its 'path'",
                where,
            )
    else:
        path = Path(folder)
        if not path.is_absolute():
            path = (study_path.parent / path).resolve()
        where = doc.location(["release", "path"], "path")
    try:
        manifest = verify_or_raise(path, ref.get("digest"))
    except UserErrors as exc:
        shown = exc.problems[:5]
        more = f" (and {len(exc.problems) - 5} more)" if len(exc.problems) > 5 else ""
        raise SpecError(
            f"release {path} does not verify: " + "; ".join(shown) + more, where
        ) from None
    if manifest.get("domain") != domain:
        raise SpecError(
            f"release {path} is of domain '{manifest.get('domain')}', not '{domain}'", where
        )
    compiled_version = compiled.json("manifest.json").get("domain_version")
    if manifest.get("domain_version") != compiled_version:
        raise SpecError(
            f"release {manifest.get('release_version')} was published from {domain} "
            f"{manifest.get('domain_version')}, but the compiled domain is {compiled_version}: "
            "its items would be answered with contexts from another graph and scored against "
            "another panel; publish a release of the compiled domain, or compile the domain "
            "version the release was published from",
            where,
        )
    return path, manifest
