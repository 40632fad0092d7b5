/* tests/offload: the table of directive texts (probe.c) and what offload_test.c asks of it. */
#ifndef KYOYU_TESTS_OFFLOAD_PROBE_H
#define KYOYU_TESTS_OFFLOAD_PROBE_H

#ifdef __cplusplus
extern "C" {
#endif

/* back ends in KY_OFFLOAD_BACKEND_ID order: acc_kernels, acc_parallel, omp_target_loop,
 * omp_target_distribute, omp_host, serial */
#define OFL_NBACKENDS 6

typedef struct {
    const char *call;                /* the macro and its arguments, as written */
    const char *got;                 /* KY_OFFLOAD_TEXT of the same */
    const char *want[OFL_NBACKENDS]; /* what each back end must make of it ("": no directive) */
} ofl_row_t;

extern const ofl_row_t ofl_rows[];
extern const int ofl_nrows;

/* Runs every row's macro once, in the table's order, on arrays of n >= 4 elements; returns the number of
 * wrong results (printed). */
int ofl_probe_run(int n);

#ifdef __cplusplus
}
#endif
#endif
