"""Clinical review of a scenario set: explanations, the review sheet and signed verdicts."""
