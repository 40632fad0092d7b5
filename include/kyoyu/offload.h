/* Kyoyu: offload.h, one loop written once for every GPU and CPU compiler (seed 002's directive macros).
 *
 *     KY_OFFLOAD(KY_OPT_INDEPENDENT, KY_OPT_COLLAPSE(2), KY_OPT_REDUCTION(+ : sum), KY_OPT_NUM(128))
 *     for (int j = 1; j < ny - 1; j++)
 *         for (int i = 1; i < nx - 1; i++) ...
 *
 * expands, by the one compile definition KY_OFFLOAD_BACKEND, to an OpenACC `kernels loop` or `parallel
 * loop`, an OpenMP `target teams loop` or `target teams distribute parallel for`, a host OpenMP `parallel
 * for`, or nothing (serial). Each clause (KY_OPT_*) becomes what that back end calls it, or is dropped where
 * the back end has no such clause; the table per back end is below and in docs/offload.md. Data macros
 * (KY_DATA, KY_DATA_ENTER, KY_DATA_EXIT, KY_UPDATE_HOST/DEVICE, KY_USE_DEVICE_PTR), KY_OFFLOAD_SERIAL, the
 * atomics and KY_OFFLOAD_WAIT complete the set; KY_OFFLOAD_INNER, and KY_OFFLOAD_TEAMS with
 * KY_OFFLOAD_THREADS, give a loop nest two levels. Header only, C99 and C++11 (_Pragma), no library.
 *
 *   KY_OFFLOAD_BACKEND = acc_kernels | acc_parallel | omp_target_loop | omp_target_distribute | omp_host |
 *                        serial. Unset: acc_kernels under -fopenacc, else omp_host under -fopenmp,
 *                        else serial.
 *   KY_OFFLOAD_PRINT     each macro also prints its directive at compile time (#pragma message)
 *   KY_OFFLOAD_TEXT(M, args...)   the directive macro M(args...) expands to, as a string literal ("" where
 *                        M expands to nothing); at least a comma after M: KY_OFFLOAD_TEXT(KY_ATOMIC, )
 *   KY_OFFLOAD_SHORT_NAMES  also define the seed's spellings OFFLOAD(...) and OPT_* (OPT_SIMD, OPT_NUM(n)...)
 *
 * Only KY_OPT_* clauses go into the lists; the directive words and clause names (loop, data, copy, ...) are
 * macro-expanded with the rest of the line, so they must not be object-like macros where this is used. */
#ifndef KYOYU_OFFLOAD_H
#define KYOYU_OFFLOAD_H

/* clang-format off */

/* ---- preprocessor helpers --------------------------------------------------------------------------- */
#define KYI_CAT(a, ...) KYI_CAT_(a, __VA_ARGS__)
#define KYI_CAT_(a, ...) a##__VA_ARGS__
#define KYI_STR(...) KYI_STR_(__VA_ARGS__)
#define KYI_STR_(...) #__VA_ARGS__
#define KYI_SECOND(...) KYI_SECOND_(__VA_ARGS__)
#define KYI_SECOND_(a, b, ...) b
#define KYI_IF(c) KYI_CAT(KYI_IF_, c)
#define KYI_IF_0(t, f) f
#define KYI_IF_1(t, f) t
/* probes: pasting KYI_PROBE_OFF_ to the first token gives "~, 1" for KYI_OFF alone (any other token makes
 * one unknown name), so KYI_SECOND picks 1 there and the 0 behind it elsewhere; likewise for KYO_SIMD */
#define KYI_IS_OFF(...) KYI_SECOND(KYI_CAT(KYI_PROBE_OFF_, __VA_ARGS__), 0, ~)
#define KYI_PROBE_OFF_KYI_OFF ~, 1
#define KYI_IS_SIMD(...) KYI_SECOND(KYI_CAT(KYI_PROBE_SIMD_, __VA_ARGS__), 0, ~)
#define KYI_PROBE_SIMD_KYO_SIMD ~, 1

/* KYI_EACH(m, a, b, c) is m(a) m(b) m(c): the clause lists' commas go, one clause at a time (up to 24) */
#define KYI_NARGS(...) KYI_NARGS_(__VA_ARGS__, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, \
                                  9, 8, 7, 6, 5, 4, 3, 2, 1, ~)
#define KYI_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, \
                   a20, a21, a22, a23, a24, n, ...) n
#define KYI_EACH(m, ...) KYI_CAT(KYI_EACH_, KYI_NARGS(__VA_ARGS__))(m, __VA_ARGS__)
#define KYI_EACH_1(m, x) m(x)
#define KYI_EACH_2(m, x, ...) m(x) KYI_EACH_1(m, __VA_ARGS__)
#define KYI_EACH_3(m, x, ...) m(x) KYI_EACH_2(m, __VA_ARGS__)
#define KYI_EACH_4(m, x, ...) m(x) KYI_EACH_3(m, __VA_ARGS__)
#define KYI_EACH_5(m, x, ...) m(x) KYI_EACH_4(m, __VA_ARGS__)
#define KYI_EACH_6(m, x, ...) m(x) KYI_EACH_5(m, __VA_ARGS__)
#define KYI_EACH_7(m, x, ...) m(x) KYI_EACH_6(m, __VA_ARGS__)
#define KYI_EACH_8(m, x, ...) m(x) KYI_EACH_7(m, __VA_ARGS__)
#define KYI_EACH_9(m, x, ...) m(x) KYI_EACH_8(m, __VA_ARGS__)
#define KYI_EACH_10(m, x, ...) m(x) KYI_EACH_9(m, __VA_ARGS__)
#define KYI_EACH_11(m, x, ...) m(x) KYI_EACH_10(m, __VA_ARGS__)
#define KYI_EACH_12(m, x, ...) m(x) KYI_EACH_11(m, __VA_ARGS__)
#define KYI_EACH_13(m, x, ...) m(x) KYI_EACH_12(m, __VA_ARGS__)
#define KYI_EACH_14(m, x, ...) m(x) KYI_EACH_13(m, __VA_ARGS__)
#define KYI_EACH_15(m, x, ...) m(x) KYI_EACH_14(m, __VA_ARGS__)
#define KYI_EACH_16(m, x, ...) m(x) KYI_EACH_15(m, __VA_ARGS__)
#define KYI_EACH_17(m, x, ...) m(x) KYI_EACH_16(m, __VA_ARGS__)
#define KYI_EACH_18(m, x, ...) m(x) KYI_EACH_17(m, __VA_ARGS__)
#define KYI_EACH_19(m, x, ...) m(x) KYI_EACH_18(m, __VA_ARGS__)
#define KYI_EACH_20(m, x, ...) m(x) KYI_EACH_19(m, __VA_ARGS__)
#define KYI_EACH_21(m, x, ...) m(x) KYI_EACH_20(m, __VA_ARGS__)
#define KYI_EACH_22(m, x, ...) m(x) KYI_EACH_21(m, __VA_ARGS__)
#define KYI_EACH_23(m, x, ...) m(x) KYI_EACH_22(m, __VA_ARGS__)
#define KYI_EACH_24(m, x, ...) m(x) KYI_EACH_23(m, __VA_ARGS__)

/* ---- the back end ----------------------------------------------------------------------------------- */
#define KYI_BACKEND_ID_acc_kernels 1
#define KYI_BACKEND_ID_acc_parallel 2
#define KYI_BACKEND_ID_omp_target_loop 3
#define KYI_BACKEND_ID_omp_target_distribute 4
#define KYI_BACKEND_ID_omp_host 5
#define KYI_BACKEND_ID_serial 6

#ifndef KY_OFFLOAD_BACKEND
#if defined(_OPENACC)
#define KY_OFFLOAD_BACKEND acc_kernels
#elif defined(_OPENMP)
#define KY_OFFLOAD_BACKEND omp_host
#else
#define KY_OFFLOAD_BACKEND serial
#endif
#endif

/* 1..6 as above; KY_OFFLOAD_BACKEND_NAME is its spelling as a string; KY_OFFLOAD_ON_DEVICE is 1 for the
 * back ends that offload (where a device and an offloading compiler exist) */
#define KY_OFFLOAD_BACKEND_ID KYI_CAT(KYI_BACKEND_ID_, KY_OFFLOAD_BACKEND)
#define KY_OFFLOAD_BACKEND_NAME KYI_STR(KY_OFFLOAD_BACKEND)

#if KY_OFFLOAD_BACKEND_ID < 1 || KY_OFFLOAD_BACKEND_ID > 6
#error "KY_OFFLOAD_BACKEND must be acc_kernels, acc_parallel, omp_target_loop, omp_target_distribute, omp_host or serial"
#endif
/* A directive back end without its compiler flag would compile its pragmas away and run serially, silently */
#if KY_OFFLOAD_BACKEND_ID <= 2 && !defined(_OPENACC)
#error "KY_OFFLOAD_BACKEND=acc_*: compile with OpenACC on (gcc -fopenacc, nvc -acc)"
#endif
#if KY_OFFLOAD_BACKEND_ID >= 3 && KY_OFFLOAD_BACKEND_ID <= 5 && !defined(_OPENMP)
#error "KY_OFFLOAD_BACKEND=omp_*: compile with OpenMP on (gcc/clang -fopenmp, nvc -mp)"
#endif
#if KY_OFFLOAD_BACKEND_ID <= 4
#define KY_OFFLOAD_ON_DEVICE 1
#else
#define KY_OFFLOAD_ON_DEVICE 0
#endif

/* ---- clauses: what the user writes ------------------------------------------------------------------ */
#define KY_OPT_INDEPENDENT KYO_INDEPENDENT         /* iterations are independent (OpenACC independent) */
#define KY_OPT_SIMD KYO_SIMD                       /* vectorise the loop too (OpenMP ... for simd) */
#define KY_OPT_COLLAPSE(n) KYO_COLLAPSE(n)         /* parallelise n nested loops as one */
#define KY_OPT_REDUCTION(...) KYO_REDUCTION(__VA_ARGS__) /* KY_OPT_REDUCTION(+ : sum) */
#define KY_OPT_NUM(n) KYO_NUM(n)                   /* threads per block: vector_length / thread_limit */
/* OpenACC's levels, for a loop nest whose inner loop is KY_OFFLOAD_INNER (vector lanes): the outer loop's
 * iterations on gangs (KY_OPT_GANG: one block per iteration) or on gangs and workers (with KY_OPT_WORKER:
 * one warp or group of warps per iteration), KY_OPT_NUM_WORKERS(n) of them per gang. Dropped elsewhere:
 * OpenMP's teams distribute parallel for (+ simd inside) is that shape already. */
#define KY_OPT_GANG KYO_GANG
#define KY_OPT_WORKER KYO_WORKER
#define KY_OPT_NUM_WORKERS(n) KYO_NUM_WORKERS(n)
#define KY_OPT_ASYNC(q) KYO_ASYNC(q)               /* do not wait; KY_OFFLOAD_WAIT(q) waits */
#define KY_OPT_PRIVATE(...) KYO_PRIVATE(__VA_ARGS__)
#define KY_OPT_FIRSTPRIVATE(...) KYO_FIRSTPRIVATE(__VA_ARGS__)
#define KY_OPT_PRESENT(...) KYO_PRESENT(__VA_ARGS__) /* already on the device (KY_DATA_ENTER) */
#define KY_OPT_COPY(...) KYO_COPY(__VA_ARGS__)     /* to the device before, back after */
#define KY_OPT_COPYIN(...) KYO_COPYIN(__VA_ARGS__) /* to the device before */
#define KY_OPT_COPYOUT(...) KYO_COPYOUT(__VA_ARGS__) /* back to the host after */
#define KY_OPT_CREATE(...) KYO_CREATE(__VA_ARGS__) /* device memory, no copy */
#define KY_OPT_DELETE(...) KYO_DELETE(__VA_ARGS__) /* KY_DATA_EXIT: free without copying back */
#define KY_OPT_HOST(...) KYO_HOST(__VA_ARGS__)     /* KY_UPDATE: device -> host */
#define KY_OPT_DEVICE(...) KYO_DEVICE(__VA_ARGS__) /* KY_UPDATE: host -> device */

/* ---- clauses: what each back end makes of them -------------------------------------------------------
 * KYI_CL_KYO_<clause> is the clause's text, or nothing where the back end drops it. KYI_CL_ alone is an
 * empty list element (KY_OFFLOAD()). KYO_USE_DEVICE and KYO_QUEUE only come from KY_USE_DEVICE_PTR and
 * KY_OFFLOAD_WAIT. */
/* x arrives expanded (KYO_...); the direct paste keeps KYI_CL_, the empty element, from expanding first */
#define KYI_CL(x) KYI_CAT_(KYI_CL_, x)
#define KYI_CL_

#if KY_OFFLOAD_BACKEND_ID <= 2 /* OpenACC */
#define KYI_CL_KYO_INDEPENDENT independent
#define KYI_CL_KYO_SIMD
#define KYI_CL_KYO_COLLAPSE(n) collapse(n)
#define KYI_CL_KYO_REDUCTION(...) reduction(__VA_ARGS__)
#define KYI_CL_KYO_NUM(n) vector_length(n)
#define KYI_CL_KYO_GANG gang
#define KYI_CL_KYO_WORKER worker
#define KYI_CL_KYO_NUM_WORKERS(n) num_workers(n)
#define KYI_CL_KYO_ASYNC(q) async(q)
#define KYI_CL_KYO_PRIVATE(...) private(__VA_ARGS__)
#if KY_OFFLOAD_BACKEND_ID == 1 /* kernels takes no firstprivate: its scalars are copied in anyway */
#define KYI_CL_KYO_FIRSTPRIVATE(...)
#else
#define KYI_CL_KYO_FIRSTPRIVATE(...) firstprivate(__VA_ARGS__)
#endif
#define KYI_CL_KYO_PRESENT(...) present(__VA_ARGS__)
#define KYI_CL_KYO_COPY(...) copy(__VA_ARGS__)
#define KYI_CL_KYO_COPYIN(...) copyin(__VA_ARGS__)
#define KYI_CL_KYO_COPYOUT(...) copyout(__VA_ARGS__)
#define KYI_CL_KYO_CREATE(...) create(__VA_ARGS__)
#define KYI_CL_KYO_DELETE(...) delete(__VA_ARGS__)
#define KYI_CL_KYO_HOST(...) host(__VA_ARGS__)
#define KYI_CL_KYO_DEVICE(...) device(__VA_ARGS__)
#define KYI_CL_KYO_USE_DEVICE(...) use_device(__VA_ARGS__)
#define KYI_CL_KYO_QUEUE(q) (q)
#define KYI_SIMD_WORD

#elif KY_OFFLOAD_BACKEND_ID <= 4 /* OpenMP target */
#define KYI_CL_KYO_INDEPENDENT /* loop and distribute parallel for assert independence themselves */
#define KYI_CL_KYO_SIMD        /* not a clause: the word simd after the construct (KYI_SIMD_WORD) */
#define KYI_CL_KYO_COLLAPSE(n) collapse(n)
#define KYI_CL_KYO_REDUCTION(...) reduction(__VA_ARGS__)
#define KYI_CL_KYO_NUM(n) thread_limit(n)
#define KYI_CL_KYO_GANG /* teams distribute parallel for: teams and their threads take the iterations */
#define KYI_CL_KYO_WORKER
#define KYI_CL_KYO_NUM_WORKERS(n)
#define KYI_CL_KYO_ASYNC(q) nowait /* one queue: KY_OFFLOAD_WAIT waits for all (taskwait) */
#define KYI_CL_KYO_PRIVATE(...) private(__VA_ARGS__)
#define KYI_CL_KYO_FIRSTPRIVATE(...) firstprivate(__VA_ARGS__)
/* OpenMP 5.1's map(present, ...) is not in GCC 12; alloc finds mapped data the same way (by reference
 * count, no copy) but does not fail where it is missing */
#define KYI_CL_KYO_PRESENT(...) map(alloc: __VA_ARGS__)
#define KYI_CL_KYO_COPY(...) map(tofrom: __VA_ARGS__)
#define KYI_CL_KYO_COPYIN(...) map(to: __VA_ARGS__)
#define KYI_CL_KYO_COPYOUT(...) map(from: __VA_ARGS__)
#define KYI_CL_KYO_CREATE(...) map(alloc: __VA_ARGS__)
#define KYI_CL_KYO_DELETE(...) map(delete: __VA_ARGS__)
#define KYI_CL_KYO_HOST(...) from(__VA_ARGS__)
#define KYI_CL_KYO_DEVICE(...) to(__VA_ARGS__)
#define KYI_CL_KYO_USE_DEVICE(...) use_device_ptr(__VA_ARGS__)
#define KYI_CL_KYO_QUEUE(q)
#if KY_OFFLOAD_BACKEND_ID == 4
#define KYI_SIMD_WORD simd
#else
#define KYI_SIMD_WORD /* loop has no simd form */
#endif

#elif KY_OFFLOAD_BACKEND_ID == 5 /* host OpenMP: the loop clauses only; no device, so no data */
#define KYI_CL_KYO_INDEPENDENT
#define KYI_CL_KYO_SIMD
#define KYI_CL_KYO_COLLAPSE(n) collapse(n)
#define KYI_CL_KYO_REDUCTION(...) reduction(__VA_ARGS__)
#define KYI_CL_KYO_NUM(n) /* a GPU block size, not a number of CPU threads */
#define KYI_CL_KYO_GANG
#define KYI_CL_KYO_WORKER
#define KYI_CL_KYO_NUM_WORKERS(n)
#define KYI_CL_KYO_ASYNC(q)
#define KYI_CL_KYO_PRIVATE(...) private(__VA_ARGS__)
#define KYI_CL_KYO_FIRSTPRIVATE(...) firstprivate(__VA_ARGS__)
#define KYI_CL_KYO_PRESENT(...)
#define KYI_CL_KYO_COPY(...)
#define KYI_CL_KYO_COPYIN(...)
#define KYI_CL_KYO_COPYOUT(...)
#define KYI_CL_KYO_CREATE(...)
#define KYI_CL_KYO_DELETE(...)
#define KYI_CL_KYO_HOST(...)
#define KYI_CL_KYO_DEVICE(...)
#define KYI_CL_KYO_USE_DEVICE(...)
#define KYI_CL_KYO_QUEUE(q)
#define KYI_SIMD_WORD simd

#else /* serial: every clause goes with its directive */
#define KYI_CL_KYO_INDEPENDENT
#define KYI_CL_KYO_SIMD
#define KYI_CL_KYO_COLLAPSE(n)
#define KYI_CL_KYO_REDUCTION(...)
#define KYI_CL_KYO_NUM(n)
#define KYI_CL_KYO_GANG
#define KYI_CL_KYO_WORKER
#define KYI_CL_KYO_NUM_WORKERS(n)
#define KYI_CL_KYO_ASYNC(q)
#define KYI_CL_KYO_PRIVATE(...)
#define KYI_CL_KYO_FIRSTPRIVATE(...)
#define KYI_CL_KYO_PRESENT(...)
#define KYI_CL_KYO_COPY(...)
#define KYI_CL_KYO_COPYIN(...)
#define KYI_CL_KYO_COPYOUT(...)
#define KYI_CL_KYO_CREATE(...)
#define KYI_CL_KYO_DELETE(...)
#define KYI_CL_KYO_HOST(...)
#define KYI_CL_KYO_DEVICE(...)
#define KYI_CL_KYO_USE_DEVICE(...)
#define KYI_CL_KYO_QUEUE(q)
#define KYI_SIMD_WORD
#endif

/* ---- directives: the words each back end starts them with (KYI_OFF: the back end has none) ----------- */
#if KY_OFFLOAD_BACKEND_ID <= 2
#if KY_OFFLOAD_BACKEND_ID == 1
#define KYI_W_LOOP acc kernels loop
#else
#define KYI_W_LOOP acc parallel loop
#endif
/* independent as omp simd asserts it: in a kernels region GCC leaves an unmarked loop to parloops (seq) */
#define KYI_W_INNER acc loop independent vector
#if KY_OFFLOAD_BACKEND_ID == 1
#define KYI_W_TEAMS acc kernels loop gang
#else
#define KYI_W_TEAMS acc parallel loop gang
#endif
#define KYI_W_THREADS acc loop independent vector
#define KYI_W_SERIAL acc serial
#define KYI_W_DATA acc data
#define KYI_W_ENTER acc enter data
#define KYI_W_EXIT acc exit data
#define KYI_W_UPDATE acc update
#define KYI_W_HOST_DATA acc host_data
#define KYI_W_WAIT acc wait
#define KYI_W_ATOMIC acc atomic update
#define KYI_W_ATOMIC_READ acc atomic read
#define KYI_W_ATOMIC_WRITE acc atomic write
#define KYI_W_ATOMIC_CAPTURE acc atomic capture

#elif KY_OFFLOAD_BACKEND_ID <= 4
#if KY_OFFLOAD_BACKEND_ID == 3
#define KYI_W_LOOP omp target teams loop
#else
#define KYI_W_LOOP omp target teams distribute parallel for
#endif
#define KYI_W_INNER omp simd
/* both OpenMP target back ends: teams loop would leave the levels to the compiler, and GCC lowers it as
 * distribute parallel for, where the inner parallel would be nested and run by one thread */
#define KYI_W_TEAMS omp target teams distribute
/* Clang runs a simd loop on one GPU thread, so the team's threads split the loop (its device default
 * schedule is static, 1: neighbouring threads on neighbouring points); GCC's nvptx threads are warps and simd
 * its lanes, so each warp takes a block of the loop and its lanes split that */
#if defined(__clang__)
#define KYI_W_THREADS omp parallel for
#else
#define KYI_W_THREADS omp parallel for simd
#endif
#define KYI_W_SERIAL omp target
#define KYI_W_DATA omp target data
#define KYI_W_ENTER omp target enter data
#define KYI_W_EXIT omp target exit data
#define KYI_W_UPDATE omp target update
#define KYI_W_HOST_DATA omp target data
#define KYI_W_WAIT omp taskwait
#define KYI_W_ATOMIC omp atomic update
#define KYI_W_ATOMIC_READ omp atomic read
#define KYI_W_ATOMIC_WRITE omp atomic write
#define KYI_W_ATOMIC_CAPTURE omp atomic capture

#elif KY_OFFLOAD_BACKEND_ID == 5
#define KYI_W_LOOP omp parallel for
#define KYI_W_INNER omp simd
#define KYI_W_TEAMS omp parallel for /* the CPU's threads take the rows, its vector lanes the inner loop */
#define KYI_W_THREADS omp simd
#define KYI_W_SERIAL KYI_OFF /* the block runs on the calling thread */
#define KYI_W_DATA KYI_OFF
#define KYI_W_ENTER KYI_OFF
#define KYI_W_EXIT KYI_OFF
#define KYI_W_UPDATE KYI_OFF
#define KYI_W_HOST_DATA KYI_OFF
#define KYI_W_WAIT KYI_OFF
#define KYI_W_ATOMIC omp atomic update
#define KYI_W_ATOMIC_READ omp atomic read
#define KYI_W_ATOMIC_WRITE omp atomic write
#define KYI_W_ATOMIC_CAPTURE omp atomic capture

#else
#define KYI_W_LOOP KYI_OFF
#define KYI_W_INNER KYI_OFF
#define KYI_W_TEAMS KYI_OFF
#define KYI_W_THREADS KYI_OFF
#define KYI_W_SERIAL KYI_OFF
#define KYI_W_DATA KYI_OFF
#define KYI_W_ENTER KYI_OFF
#define KYI_W_EXIT KYI_OFF
#define KYI_W_UPDATE KYI_OFF
#define KYI_W_HOST_DATA KYI_OFF
#define KYI_W_WAIT KYI_OFF
#define KYI_W_ATOMIC KYI_OFF
#define KYI_W_ATOMIC_READ KYI_OFF
#define KYI_W_ATOMIC_WRITE KYI_OFF
#define KYI_W_ATOMIC_CAPTURE KYI_OFF
#endif

/* ---- assembling a directive ---------------------------------------------------------------------------
 * words, then simd where the clause list has KY_OPT_SIMD and the back end has a simd form, then the clauses
 * in the order given. */
#define KYI_MOD(x) KYI_IF(KYI_IS_SIMD(x))(KYI_SIMD_WORD, )
#define KYI_LINE(w, ...) w KYI_EACH(KYI_MOD, __VA_ARGS__) KYI_EACH(KYI_CL, __VA_ARGS__)

/* KYI_DIR(D, clauses) emits directive D or nothing; the choice is made before either is expanded, so no
 * _Pragma is ever an argument of another macro */
#define KYI_DIR(D, ...) KYI_DIR_W(KYI_CAT(KYI_W_, D), __VA_ARGS__)
#define KYI_DIR_W(w, ...) KYI_IF(KYI_IS_OFF(w))(KYI_DIR_OFF, KYI_DIR_ON)(w, __VA_ARGS__)
#define KYI_DIR_ON(w, ...) KYI_PRINT(KYI_LINE(w, __VA_ARGS__)) _Pragma(KYI_STR(KYI_LINE(w, __VA_ARGS__)))
#define KYI_DIR_OFF(w, ...) KYI_PRINT((none))

#define KYI_TEXT(D, ...) KYI_TEXT_W(KYI_CAT(KYI_W_, D), __VA_ARGS__)
#define KYI_TEXT_W(w, ...) KYI_IF(KYI_IS_OFF(w))(KYI_TEXT_OFF, KYI_TEXT_ON)(w, __VA_ARGS__)
#define KYI_TEXT_ON(w, ...) KYI_STR(KYI_LINE(w, __VA_ARGS__))
#define KYI_TEXT_OFF(w, ...) ""

#ifdef KY_OFFLOAD_PRINT
#define KYI_PRINT(...) _Pragma(KYI_STR(message(KYI_STR(ky_offload[KY_OFFLOAD_BACKEND]: __VA_ARGS__))))
#else
#define KYI_PRINT(...)
#endif

/* ---- the macros --------------------------------------------------------------------------------------
 * KYI_OF_<name>(args) is the directive and clause list behind each public macro: one table for both the
 * pragma (KYI_DIR) and its text (KY_OFFLOAD_TEXT). */
#define KYI_OF_KY_OFFLOAD(...) LOOP, __VA_ARGS__
#define KYI_OF_KY_OFFLOAD_INNER(...) INNER, __VA_ARGS__
#define KYI_OF_KY_OFFLOAD_TEAMS(...) TEAMS, __VA_ARGS__
#define KYI_OF_KY_OFFLOAD_THREADS(...) THREADS, __VA_ARGS__
#define KYI_OF_KY_OFFLOAD_SERIAL(...) SERIAL, __VA_ARGS__
#define KYI_OF_KY_DATA(...) DATA, __VA_ARGS__
#define KYI_OF_KY_DATA_ENTER(...) ENTER, __VA_ARGS__
#define KYI_OF_KY_DATA_EXIT(...) EXIT, __VA_ARGS__
#define KYI_OF_KY_UPDATE(...) UPDATE, __VA_ARGS__
#define KYI_OF_KY_UPDATE_HOST(...) UPDATE, KYO_HOST(__VA_ARGS__)
#define KYI_OF_KY_UPDATE_DEVICE(...) UPDATE, KYO_DEVICE(__VA_ARGS__)
#define KYI_OF_KY_USE_DEVICE_PTR(...) HOST_DATA, KYO_USE_DEVICE(__VA_ARGS__)
#define KYI_OF_KY_OFFLOAD_WAIT(q) WAIT, KYO_QUEUE(q)
#define KYI_OF_KY_OFFLOAD_WAIT_ALL(...) WAIT,
#define KYI_OF_KY_ATOMIC(...) ATOMIC,
#define KYI_OF_KY_ATOMIC_READ(...) ATOMIC_READ,
#define KYI_OF_KY_ATOMIC_WRITE(...) ATOMIC_WRITE,
#define KYI_OF_KY_ATOMIC_CAPTURE(...) ATOMIC_CAPTURE,

#define KYI_DIR_OF(...) KYI_DIR(__VA_ARGS__)
#define KYI_TEXT_OF(...) KYI_TEXT(__VA_ARGS__)
#define KY_OFFLOAD_TEXT(name, ...) KYI_TEXT_OF(KYI_OF_##name(__VA_ARGS__))
/* clang-format on */

/* The loop (or loop nest, with KY_OPT_COLLAPSE) that follows runs on the device, in parallel. */
#define KY_OFFLOAD(...) KYI_DIR_OF(KYI_OF_KY_OFFLOAD(__VA_ARGS__))
/* Inside a KY_OFFLOAD loop: the inner loop that follows runs on the lanes of each outer iteration (OpenACC
 * loop vector, OpenMP simd). KY_OFFLOAD(KY_OPT_COLLAPSE(2)) over z and y with KY_OFFLOAD_INNER() over x
 * gives the GPU whole rows per gang and no division of a flat index per point; clauses as KY_OFFLOAD's
 * (reduction, private), but not KY_OPT_SIMD or KY_OPT_COLLAPSE. */
#define KY_OFFLOAD_INNER(...) KYI_DIR_OF(KYI_OF_KY_OFFLOAD_INNER(__VA_ARGS__))
/* The other two-level nest: each iteration of the KY_OFFLOAD_TEAMS loop (nest) runs on one block, and the
 * KY_OFFLOAD_THREADS loop inside it on that block's threads: OpenACC parallel (kernels) loop gang with loop
 * vector inside; OpenMP target teams distribute with parallel for inside (GCC: parallel for simd, its threads
 * being warps); host OpenMP parallel for with simd inside; nothing on serial. On the GPU a z-y row per block
 * and its x on the threads, with no division of a flat index, whatever the compiler does with simd.
 * Clauses as KY_OFFLOAD's and KY_OFFLOAD_INNER's (KY_OPT_NUM is the block's threads), but not KY_OPT_GANG,
 * KY_OPT_WORKER or KY_OPT_SIMD; KY_OFFLOAD_THREADS only right inside KY_OFFLOAD_TEAMS (elsewhere its OpenMP
 * parallel would be nested in another). */
#define KY_OFFLOAD_TEAMS(...) KYI_DIR_OF(KYI_OF_KY_OFFLOAD_TEAMS(__VA_ARGS__))
#define KY_OFFLOAD_THREADS(...) KYI_DIR_OF(KYI_OF_KY_OFFLOAD_THREADS(__VA_ARGS__))
/* The block that follows runs on the device, once (a single thread): setting a value that stays there. */
#define KY_OFFLOAD_SERIAL(...) KYI_DIR_OF(KYI_OF_KY_OFFLOAD_SERIAL(__VA_ARGS__))
/* Data: a region around the block that follows (KY_OPT_COPY/COPYIN/COPYOUT/CREATE/PRESENT) ... */
#define KY_DATA(...) KYI_DIR_OF(KYI_OF_KY_DATA(__VA_ARGS__))
/* ... or unstructured: KY_DATA_ENTER(KY_OPT_COPYIN(a[0:n]), KY_OPT_CREATE(b[0:n])) up to
 * KY_DATA_EXIT(KY_OPT_COPYOUT(b[0:n]), KY_OPT_DELETE(a[0:n])) */
#define KY_DATA_ENTER(...) KYI_DIR_OF(KYI_OF_KY_DATA_ENTER(__VA_ARGS__))
#define KY_DATA_EXIT(...) KYI_DIR_OF(KYI_OF_KY_DATA_EXIT(__VA_ARGS__))
/* Copies between the host's and the device's copy of data that is present: KY_UPDATE_HOST(a[0:n]) */
#define KY_UPDATE(...) KYI_DIR_OF(KYI_OF_KY_UPDATE(__VA_ARGS__))
#define KY_UPDATE_HOST(...) KYI_DIR_OF(KYI_OF_KY_UPDATE_HOST(__VA_ARGS__))
#define KY_UPDATE_DEVICE(...) KYI_DIR_OF(KYI_OF_KY_UPDATE_DEVICE(__VA_ARGS__))
/* In the block that follows the named pointers hold their device addresses (for CUDA-aware MPI, Kyoyu's
 * GPU puts, cuBLAS); on host back ends they keep their host addresses. */
#define KY_USE_DEVICE_PTR(...) KYI_DIR_OF(KYI_OF_KY_USE_DEVICE_PTR(__VA_ARGS__))
/* Waits for the work started with KY_OPT_ASYNC(q) (OpenMP target: for all of it) */
#define KY_OFFLOAD_WAIT(q) KYI_DIR_OF(KYI_OF_KY_OFFLOAD_WAIT(q))
#define KY_OFFLOAD_WAIT_ALL KYI_DIR_OF(KYI_OF_KY_OFFLOAD_WAIT_ALL())
/* The statement that follows is atomic: x += v (KY_ATOMIC), v = x, x = v, v = x++ ... */
#define KY_ATOMIC KYI_DIR_OF(KYI_OF_KY_ATOMIC())
#define KY_ATOMIC_READ KYI_DIR_OF(KYI_OF_KY_ATOMIC_READ())
#define KY_ATOMIC_WRITE KYI_DIR_OF(KYI_OF_KY_ATOMIC_WRITE())
#define KY_ATOMIC_CAPTURE KYI_DIR_OF(KYI_OF_KY_ATOMIC_CAPTURE())

#ifdef KY_OFFLOAD_SHORT_NAMES /* the seed's spellings: OFFLOAD(OPT_SIMD, OPT_NUM(NTHREADS)) */
#define OFFLOAD(...) KY_OFFLOAD(__VA_ARGS__)
#define OFFLOAD_INNER(...) KY_OFFLOAD_INNER(__VA_ARGS__)
#define OFFLOAD_TEAMS(...) KY_OFFLOAD_TEAMS(__VA_ARGS__)
#define OFFLOAD_THREADS(...) KY_OFFLOAD_THREADS(__VA_ARGS__)
#define OPT_INDEPENDENT KY_OPT_INDEPENDENT
#define OPT_SIMD KY_OPT_SIMD
#define OPT_COLLAPSE(n) KY_OPT_COLLAPSE(n)
#define OPT_REDUCTION(...) KY_OPT_REDUCTION(__VA_ARGS__)
#define OPT_NUM(n) KY_OPT_NUM(n)
#define OPT_GANG KY_OPT_GANG
#define OPT_WORKER KY_OPT_WORKER
#define OPT_NUM_WORKERS(n) KY_OPT_NUM_WORKERS(n)
#define OPT_ASYNC(q) KY_OPT_ASYNC(q)
#define OPT_PRIVATE(...) KY_OPT_PRIVATE(__VA_ARGS__)
#define OPT_FIRSTPRIVATE(...) KY_OPT_FIRSTPRIVATE(__VA_ARGS__)
#define OPT_PRESENT(...) KY_OPT_PRESENT(__VA_ARGS__)
#define OPT_COPY(...) KY_OPT_COPY(__VA_ARGS__)
#define OPT_COPYIN(...) KY_OPT_COPYIN(__VA_ARGS__)
#define OPT_COPYOUT(...) KY_OPT_COPYOUT(__VA_ARGS__)
#define OPT_CREATE(...) KY_OPT_CREATE(__VA_ARGS__)
#define OPT_DELETE(...) KY_OPT_DELETE(__VA_ARGS__)
#endif

#endif /* KYOYU_OFFLOAD_H */
