"""Turning ids into prose a clinician reads naturally.

English mechanics live here (articles, lists, lower-casing names without breaking acronyms,
pronouns, number formatting); everything domain-specific (phrases for findings and outcomes,
sentence templates) is declared in the domain's scenarios.yaml and passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

PRONOUNS = {
    "female": {"Pronoun": "She", "pronoun": "she", "possessive": "her"},
    "male": {"Pronoun": "He", "pronoun": "he", "possessive": "his"},
}
# A patient whose sex the source does not state: a noun phrase, not "they", so the declared
# sentences ("{Pronoun} is pregnant.", "{Pronoun} has ...") keep their verb agreement.
NEUTRAL = {"Pronoun": "The patient", "pronoun": "the patient", "possessive": "the patient's"}
NEUTRAL_PERSON = "patient"  # the opening's noun when PersonWords declares no `neutral`


def lower_name(name: str) -> str:
    """'Essential hypertension' -> 'essential hypertension'; 'LDL cholesterol' stays as is.

    Only the first letter is lowered, and only when the first word is not an acronym (its
    second letter is lower case), so names like 'HDL cholesterol' or 'AF with ...' survive.
    """
    first = name.split(" ", 1)[0]
    if len(first) > 1 and first[1].isupper():
        return name
    if len(first) > 1 and not first[1].isalpha():
        return name
    return name[:1].lower() + name[1:]


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def article_for_number(n: int) -> str:
    """'An' before numbers spoken with a leading vowel sound (8, 11, 18, 80-89), else 'A'."""
    return "An" if n in (8, 11, 18) or 80 <= n <= 89 else "A"


def join_words(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def format_value(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}" if decimals else str(round(value))


def lab_text(lab: dict[str, Any], decimals: int) -> str:
    unit = lab["unit"]
    value = format_value(lab["value"], decimals)
    return f"{lab['name']} {value}{unit}" if unit == "%" else f"{lab['name']} {value} {unit}"


def fill(template: str, **fields: Any) -> str:
    return template.format(**fields)


class Wording:
    """How one domain names entities, from its declared profiles and templates."""

    def __init__(
        self,
        names: dict[str, str],
        profiles: dict[str, dict[str, Any]],
        populations: dict[str, dict[str, Any]],
        templates: dict[str, Any],
        background: Sequence[Any] = (),
    ) -> None:
        self.names = names
        self.profiles = profiles
        self.populations = populations
        self.templates = templates
        self.background = tuple(background)  # scenarios.yaml `stated_background` rules

    def stated_background(self, candidates: Sequence[str], findings: Sequence[str]) -> list[str]:
        """The findings an offered option's recommendation class depends on that the patient
        lacks, each once, in declaration order: the vignette states their absence (a finding
        she has is named with her other findings). Only declared rules add anything."""
        offered, present = set(candidates), set(findings)
        out: list[str] = []
        for rule in self.background:
            wanted = offered & set(rule.options) and rule.finding not in present
            if wanted and rule.absent not in out:
                out.append(rule.absent)
        return out

    def phrase(self, entity_id: str) -> str:
        """A finding as it reads after 'with' (declared phrase or the lower-cased name)."""
        return (self.profiles.get(entity_id) or {}).get("phrase") or lower_name(
            self.names[entity_id]
        )

    def outcome(self, entity_id: str) -> str:
        declared = (self.profiles.get(entity_id) or {}).get("target_phrase")
        if declared:
            return declared
        return fill(self.templates["outcome_phrase"], name=lower_name(self.names[entity_id]))

    def population(self, population_id: str) -> str:
        """How titles name a population (declared phrase or the lower-cased name)."""
        declared = (self.populations.get(population_id) or {}).get("phrase")
        return declared or lower_name(self.names[population_id])

    def narrative(
        self,
        age: int,
        sex: str | None,
        population: str | None,
        findings: Sequence[str],
        labs: Sequence[tuple[dict[str, Any], int]],
        pregnancy: str | None,
        notes: str | None = None,
        absent: Sequence[str] = (),
    ) -> str:
        """Opening sentence, finding sentences, the declared absences the options depend on
        (`absent`, from stated_background), results, pregnancy status, notes; a patient whose
        sex is not stated (`sex` None) is worded neutrally. A finding declared `stated_in`
        some populations is said only in those."""
        pron = PRONOUNS[sex] if sex else NEUTRAL
        descriptor = (self.populations.get(population) or {}).get("descriptor")
        words = self.templates["person"]
        person = words[sex] if sex else (words.get("neutral") or NEUTRAL_PERSON)
        if descriptor:
            person = f"{descriptor} {person}"
        phrases, sentences = [], []
        for f in findings:
            prof = self.profiles.get(f) or {}
            if prof.get("silent"):
                continue
            if prof.get("stated_in") and population not in prof["stated_in"]:
                continue  # a sign said only where it means what it says (heart failure)
            if prof.get("sentence"):
                sentences.append(fill(prof["sentence"], **pron))
            elif prof.get("pregnancy_status") and not prof.get("phrase"):
                continue  # said by the pregnancy sentence
            else:
                phrases.append(self.phrase(f))
        conditions = f" with {join_words(phrases)}" if phrases else ""
        parts = [
            fill(
                self.templates["opening"],
                Article=article_for_number(age),
                age=age,
                person=person,
                conditions=conditions,
            ),
            *sentences,
            *(fill(text, **pron) for text in absent),
        ]
        if labs:
            parts.append(
                fill(self.templates["labs"], labs=", ".join(lab_text(lab, d) for lab, d in labs))
            )
        if pregnancy == "pregnant":
            parts.append(fill(self.templates["pregnant"], **pron))
        elif pregnancy == "not_pregnant":
            parts.append(fill(self.templates["not_pregnant"], **pron))
        if notes:
            parts.append(notes)
        return " ".join(p.strip() for p in parts if p.strip())
