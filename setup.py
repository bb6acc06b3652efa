"""Package layout that pyproject.toml cannot state alone (setuptools reads both files).

The Python packages are found under the repository root; spec/ and templates/, which the
design card keeps at the top of the repository, become the package-data folders
kgbench/spec and kgbench/templates of an installed kgbench (kgbench/locations.py finds them
there, and at the root of a clone).
"""

from setuptools import find_packages, setup

SHIPPED = {"kgbench.spec": "spec", "kgbench.templates": "templates"}

setup(
    packages=[*find_packages(include=["kgbench*", "compiler*", "harness*"]), *SHIPPED],
    package_dir=SHIPPED,
)
