"""kybench_lib: the code of tools/kybench (records and schema, suites and run, compare, report tables and
figures). Standard library only, except figures.py (matplotlib), which only `kybench report` imports."""
from . import productivity  # noqa: F401  (adds the productivity suite, schema and table)
