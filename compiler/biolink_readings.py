"""Which Biolink edge states one kgbench assertion: the predicate's declared readings.

A kgbench predicate does not always mean one Biolink predicate. "Lisinopril CAUSES_DECREASE_IN
blood pressure" is an effect on an existing quantity (`affects`, direction decreased), while
"lisinopril CAUSES_DECREASE_IN stroke" lowers the chance of a future event
(`preventative_for_condition`); TARGETS with direction decrease is an inhibition, and
MODIFIES_EFFECT_OF with direction decrease is a *smaller* benefit. So a predicate declares, besides
its default `meaning` and `biolink_qualifier`, conditional readings as annotations, each
`biolink:<predicate>` optionally followed by `; <qualifier>: <value>` pairs:

- `biolink_if_event`: the object is an event (its class is annotated `event: true`, or the
  domain says so for the entity) and the subject is an intervention;
- `biolink_if_risk_event`: the object is an event and the subject is not an intervention
  (a risk factor, process, disease or outcome changing the chance of an event);
- `biolink_if_increase` / `biolink_if_decrease`: the assertion's direction.

The first that applies wins, in that order; otherwise the default reading. The compiler checks
every reading against the Biolink Model (compiler/biolink.py): the predicate and qualifiers
exist and are canonical, the classes the reading can meet lie in the predicate's domain and
range, and no term of the reading says the opposite sign of the assertions it is used for
(SIGNS below: a `decrease` reading that says `therapeutic_response` or `increased` is an error).
"""

from __future__ import annotations

from dataclasses import dataclass

# Annotation -> the condition it reads under; the order is the order of precedence.
CONDITIONS = (
    ("biolink_if_event", "event"),
    ("biolink_if_risk_event", "risk_event"),
    ("biolink_if_increase", "increase"),
    ("biolink_if_decrease", "decrease"),
)
DEFAULT = "default"

# The sign each Biolink term states, from its definition in the Biolink Model (4.4.6):
# +1 "more" (raises, activates, increases the chance, a larger or positive response),
# -1 "less". A reading for an `increase` assertion may not carry a -1 term and vice versa.
SIGNS: dict[str, int] = {
    # DirectionQualifierEnum
    "object_direction_qualifier=increased": 1,
    "object_direction_qualifier=upregulated": 1,
    "object_direction_qualifier=decreased": -1,
    "object_direction_qualifier=downregulated": -1,
    # "...able to prevent it manifesting in the first place"
    "predicate=biolink:preventative_for_condition": -1,
    # "...the presence or application of one increases the chance that the other will come to be"
    "predicate=biolink:predisposes_to_condition": 1,
    "predicate=biolink:associated_with_increased_likelihood_of": 1,
    "predicate=biolink:associated_with_decreased_likelihood_of": -1,
    # "...associated with the degree of sensitivity / resistance to treatment by the chemical"
    "predicate=biolink:associated_with_sensitivity_to": 1,
    "predicate=biolink:associated_with_resistance_to": -1,
    # ResponseEnum: therapeutic_response "A response that is beneficial ... a positive response"
    "response_context_qualifier=therapeutic_response": 1,
}


@dataclass(frozen=True)
class Reading:
    """One Biolink reading of a kgbench predicate."""

    condition: str  # event | risk_event | increase | decrease | default
    predicate: str  # biolink:...
    qualifiers: tuple[tuple[str, str], ...] = ()


def parse_qualifiers(text: str | None) -> list[tuple[str, str]]:
    """'object_direction_qualifier: increased; ...' -> [(slot, value), ...]."""
    out = []
    for part in (text or "").split(";"):
        if not part.strip():
            continue
        slot, _, value = part.partition(":")
        out.append((slot.strip(), value.strip()))
    return out


def parse_reading(condition: str, text: str) -> Reading:
    """'biolink:affects; object_aspect_qualifier: activity' -> Reading."""
    head, _, rest = text.partition(";")
    return Reading(condition, head.strip(), tuple(parse_qualifiers(rest)))


def readings_of(default_predicate: str, default_qualifier: str | None, declared: dict[str, str]):
    """A predicate's readings, conditional first (in precedence order), the default last."""
    out = [parse_reading(cond, declared[ann]) for ann, cond in CONDITIONS if declared.get(ann)]
    out.append(Reading(DEFAULT, default_predicate, tuple(parse_qualifiers(default_qualifier))))
    return tuple(out)


def choose(
    readings: tuple[Reading, ...],
    direction: str | None,
    subject_is_intervention: bool,
    object_is_event: bool,
) -> Reading:
    """The reading that states one assertion (the first whose condition holds)."""
    for r in readings:
        if r.condition == "event" and object_is_event and subject_is_intervention:
            return r
        if r.condition == "risk_event" and object_is_event and not subject_is_intervention:
            return r
        if r.condition in ("increase", "decrease") and direction == r.condition:
            return r
        if r.condition == DEFAULT:
            return r
    raise ValueError("a predicate's readings end with its default")  # readings_of guarantees it


def sign_conflicts(reading: Reading, direction: str | None) -> list[str]:
    """The terms of a reading that state the opposite of `direction` (increase/decrease)."""
    want = {"increase": 1, "decrease": -1}.get(direction or "")
    if want is None:
        return []
    terms = [f"predicate={reading.predicate}"]
    terms += [f"{slot}={value}" for slot, value in reading.qualifiers]
    return [t.replace("=", " ") for t in terms if SIGNS.get(t) == -want]
