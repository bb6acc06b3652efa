"""Whether a study covers an intervention: the one rule the compiler and the harness share.

A trial or meta-analysis speaks for what it randomised or analysed (`studied_interventions`):
the intervention itself; a member of a class it names, if the domain declares that class
homogeneous; or, for a homogeneous class, the class when it studied one of the members. The
compiler refuses support outside this rule; the harness applies it again when it chooses the
sources of a gold answer (a domain may have downgraded the compiler's check to a warning).
"""

from __future__ import annotations

from collections.abc import Collection


def study_covers(
    studied: Collection[str],
    subject: str,
    *,
    homogeneous: Collection[str],
    classes_of_subject: Collection[str] = (),
    members_of_subject: Collection[str] = (),
) -> bool:
    """`members_of_subject` is non-empty when the subject is itself an intervention class."""
    if subject in studied:
        return True
    if members_of_subject:
        return subject in homogeneous and any(m in studied for m in members_of_subject)
    return any(c in studied and c in homogeneous for c in classes_of_subject)
