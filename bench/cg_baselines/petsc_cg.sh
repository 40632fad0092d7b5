#!/usr/bin/env bash
# PETSc KSPCG baseline on CPUs (not run yet): installs Debian's PETSc for the benchmark only
# (apt-get install petsc-dev, never a dependency of the build or of `make test`) and runs
# ex: -ksp_type cg -pc_type none -ksp_max_it 1000 -ksp_norm_type unpreconditioned on the same Matrix Market
# file with 1, 2 and 4 ranks, for comparison with `ky_cg --mem host`. Left for the CPU benchmark issue.
echo "petsc_cg.sh: not implemented yet (see docs/performance.md, CG: what is not measured)" >&2
exit 2
