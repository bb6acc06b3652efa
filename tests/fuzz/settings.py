"""How hard the fuzz targets push: a brief, reproducible pass in `make test`, a long random
one in `make fuzz`.

`KGBENCH_FUZZ_EXAMPLES` sets the examples per target (default 40). `make fuzz` raises it and
sets `KGBENCH_FUZZ_RANDOM=1`, so every run explores new inputs (failures are kept in
.hypothesis/ and replayed first next time); without it the examples are derandomized, so
`make test` is the same run every time.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("KGBENCH_FUZZ_EXAMPLES", "40"))
RANDOM = os.environ.get("KGBENCH_FUZZ_RANDOM", "") not in ("", "0")

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not RANDOM,
    database=None if not RANDOM else settings.default.database,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
    ],
)
