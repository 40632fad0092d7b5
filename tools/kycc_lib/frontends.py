"""Which front end translates a preprocessed unit (kycc's driver asks here; docs/mpc.md).

  MpC    the unit includes mpc.h (its guard is in `mpicc -E -dD` output): mpc.py, SPMD, OpenMP left as is
  SMint  the unit has `#pragma smint` lines: smint.py rewrites them into OpenMP and Kyoyu calls, then the
         OpenMP translator (translate.py) runs as for any kycc program
  OpenMP anything else: translate.py
Returns (translated text, kind), kind "mpc" or "omp" (SMint units are OpenMP units once rewritten)."""


def translate_unit(path, text, rt_header, lib_dir):
    import os
    from mpc import is_mpc, translate_mpc
    from smint import has_smint, rewrite_smint
    from translate import translate
    if is_mpc(text):
        if has_smint(text):
            from translate import TranslateError
            raise TranslateError("%s: error: a unit is MpC (mpc.h) or SMint (#pragma smint), not both" % path)
        return translate_mpc(path, text), "mpc"
    if has_smint(text):
        text = rewrite_smint(path, text, os.path.join(lib_dir, "smint_rt.h"))
        return translate(path, text, rt_header), "omp"
    # an OpenMP unit's serial part may update global data in place on every rank: it keeps kycc's guard on
    # every home page (smint_rt.c's vote; SMint units whose serial part writes no global data vote for the
    # DSM's default)
    return translate(path, text, rt_header) + (
        "\nvoid smint_vote_(int);\nstatic void __attribute__((constructor)) __smint_vote_unit(void) "
        "{ smint_vote_(0); }\n"), "omp"
