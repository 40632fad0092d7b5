# ky_himeno's tests (included from apps/himeno/CMakeLists.txt). CPU (label cpu, himeno): every decomposition
# and rank count 1-4 against the serial original (--check: gosa and the field's sum within 1e-6 relative;
# exit 1 and "FAIL" otherwise), gosa by active messages and by ky_allreduce (both: checked equal), packed and
# strided faces, the MPI baseline, nonzero b (the diagonal terms need the edge ghosts), every rank its own
# node, no progress thread; and the bad arguments. Small grids: a second or two each on 2 cores.
# GPU (label gpu): the same checks with --mem gpu, ranks sharing one GPU where only one exists; exit 77 (skip)
# without a GPU.
if(NOT COMMAND ky_add_mpi_test)
    return()
endif()
set(_hg_env KY_TIMEOUT=60 OMP_NUM_THREADS=1)
set(_hg_fail "FAIL|ERROR")
set(_hg_grid --grid 13x12x17 --iters 6 --warmup 1 --check -q)
# decomposition name -> rank counts
set(_hg_cases "i:1,2,3,4" "j:2,3,4" "k:2,3,4" "ij:2,3,4" "3d:3,4")
foreach(c ${_hg_cases})
    string(REPLACE ":" ";" c "${c}")
    list(GET c 0 dec)
    list(GET c 1 ranks)
    string(REPLACE "," ";" ranks "${ranks}")
    foreach(n ${ranks})
        ky_add_mpi_test(NAME himeno.${dec}.n${n} COMMAND ky_himeno ${_hg_grid} --decomp ${dec} --gosa both
                        --variant ky,mpi RANKS ${n} ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}"
                        PASS_REGEX "check against the serial original[^\n]*OK")
    endforeach()
endforeach()
# converged to gosa = 0 exactly (3000 iterations of the small grid): the check compares 0 with 0
ky_add_mpi_test(NAME himeno.converged.n2 COMMAND ky_himeno --grid 13x12x17 --iters 3000 --warmup 0 --check -q
                RANKS 2 ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}"
                PASS_REGEX "check against the serial original[^\n]*gosa 0.000000000e\\+00[^\n]*OK")
# every factorisation of 4 ranks over three dimensions, strided (unpacked) and fully packed faces, b != 0
foreach(dims 4x1x1 1x4x1 1x1x4 2x2x1 2x1x2 1x2x2)
    ky_add_mpi_test(NAME himeno.dims${dims}.n4 COMMAND ky_himeno ${_hg_grid} --dims ${dims} --bcoef 0.05 --pack none
                    RANKS 4 ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}"
                    PASS_REGEX "check against the serial original[^\n]*OK")
endforeach()
ky_add_mpi_test(NAME himeno.pack_all.bcoef.n4 COMMAND ky_himeno ${_hg_grid} --dims 2x1x2 --bcoef 0.05 --pack all
                RANKS 4 ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}"
                PASS_REGEX "check against the serial original[^\n]*OK")
# faces of i and j packed, k strided (--pack takes any set of dimensions)
ky_add_mpi_test(NAME himeno.pack_ij.n4 COMMAND ky_himeno ${_hg_grid} --dims 2x2x1 --bcoef 0.05 --pack ij RANKS 4
                ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}"
                PASS_REGEX "check against the serial original[^\n]*OK")
ky_add_mpi_test(NAME himeno.3d.bcoef.n4.omp2 COMMAND ky_himeno --grid 20x18x24 --iters 5 --check --decomp 3d
                --bcoef 0.1 --variant ky,mpi RANKS 4 ENV KY_TIMEOUT=60 OMP_NUM_THREADS=2 LABELS himeno TIMEOUT 120
                FAIL_REGEX "${_hg_fail}" PASS_REGEX "check against the serial original[^\n]*OK")
# every remote access over MPI (KY_NODE_SPLIT=rank), and with no progress thread (the flags and the gosa
# messages advance in ky_poll)
ky_add_mpi_test(NAME himeno.ij.n4.split COMMAND ky_himeno ${_hg_grid} --decomp ij --gosa both --bcoef 0.05 RANKS 4
                ENV ${_hg_env} KY_NODE_SPLIT=rank LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}"
                PASS_REGEX "check against the serial original[^\n]*OK")
ky_add_mpi_test(NAME himeno.3d.n3.noprog_split COMMAND ky_himeno ${_hg_grid} --dims 1x3x1 --gosa both RANKS 3
                ENV ${_hg_env} KY_NODE_SPLIT=rank KY_PROGRESS_THREAD=0 LABELS himeno TIMEOUT 120
                FAIL_REGEX "${_hg_fail}" PASS_REGEX "check against the serial original[^\n]*OK")
# --overlap (the face slabs first, their halos sent before the interior is computed) and --gosa-defer (every
# iteration's gosa summed over the ranks after the loop): every decomposition, both gosa methods (checked
# equal), b != 0; each option alone; packed faces (each buffer's own receive slots: a neighbour may put the
# next iteration's faces before this rank has unpacked the last); blocks of 2 points (no interior); every
# rank its own node without progress thread. On CPUs the interior follows the exchange: the neighbours' puts
# of the next iteration then land while this rank computes its interior.
set(_hg_ovl ${_hg_grid} --gosa both --bcoef 0.05 --variant ky,mpi)
set(_hg_ovl_pass "overlapped[^$]*check against the serial original[^\n]*OK")
foreach(c "i:2" "j:3" "k:4" "ij:4" "3d:3")
    string(REPLACE ":" ";" c "${c}")
    list(GET c 0 dec)
    list(GET c 1 n)
    ky_add_mpi_test(NAME himeno.overlap.${dec}.n${n} COMMAND ky_himeno ${_hg_ovl} --decomp ${dec} --overlap 1 RANKS ${n}
                    ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}" PASS_REGEX "${_hg_ovl_pass}")
endforeach()
ky_add_mpi_test(NAME himeno.overlap.nodefer.3d.n4 COMMAND ky_himeno ${_hg_ovl} --decomp 3d --overlap 1 --gosa-defer 0
                RANKS 4 ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}" PASS_REGEX "${_hg_ovl_pass}")
ky_add_mpi_test(NAME himeno.defer.ij.n3 COMMAND ky_himeno ${_hg_ovl} --decomp ij --overlap 0 --gosa-defer 1 RANKS 3
                ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}|overlapped"
                PASS_REGEX "gosa of every iteration kept[^$]*check against the serial original[^\n]*OK")
ky_add_mpi_test(NAME himeno.overlap.pack_all.n4 COMMAND ky_himeno ${_hg_ovl} --dims 2x1x2 --pack all --overlap 1
                --iters 9 RANKS 4 ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}"
                PASS_REGEX "${_hg_ovl_pass}")
ky_add_mpi_test(NAME himeno.overlap.thin.n4 COMMAND ky_himeno ${_hg_ovl} --grid 8x12x17 --decomp i --overlap 1 RANKS 4
                ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}" PASS_REGEX "${_hg_ovl_pass}")
ky_add_mpi_test(NAME himeno.overlap.ij.n4.noprog_split COMMAND ky_himeno ${_hg_ovl} --decomp ij --overlap 1 RANKS 4
                ENV ${_hg_env} KY_NODE_SPLIT=rank KY_PROGRESS_THREAD=0 LABELS himeno TIMEOUT 120
                FAIL_REGEX "${_hg_fail}" PASS_REGEX "${_hg_ovl_pass}")
# weak scaling: the grid per rank, multiplied by the process grid
ky_add_mpi_test(NAME himeno.weak.n4 COMMAND ky_himeno --grid 10x12x14 --weak --decomp 3d --iters 4 --check -q RANKS 4
                ENV ${_hg_env} LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}"
                PASS_REGEX "mimax = 20 mjmax = 24 mkmax = 14[^$]*check against the serial original[^\n]*OK")
# size XS, the original's own grid, 2 ranks
ky_add_mpi_test(NAME himeno.XS.n2 COMMAND ky_himeno XS --iters 3 --warmup 0 --check RANKS 2 ENV ${_hg_env}
                LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}" PASS_REGEX "check against the serial original[^\n]*OK")
# the original program's own output: himenoBMTxps.c (RIKEN, C+MPI) on one rank, size S, prints gosa
# 3.288628e-03 after its 3 rehearsal iterations and 3.390654e-05 after 3 + 2700 (summed in float in its loop
# order; run on this project's CI machine, 2026-11-25, bench/himeno/baselines.sh). The serial reference, which
# the decompositions are checked against, must print the same digits for its float sum.
ky_add_mpi_test(NAME himeno.original_S.n1 COMMAND ky_himeno S --iters 3 --warmup 0 --check -q RANKS 1 ENV ${_hg_env}
                LABELS himeno TIMEOUT 120 FAIL_REGEX "${_hg_fail}"
                PASS_REGEX "float sum in the original's order: 3.288628e-03[^\n]*OK")
# bad arguments: a clear message, exit status 2
ky_add_mpi_test(NAME himeno.bad.dims_product COMMAND ky_himeno --dims 2x2x1 RANKS 3 ENV ${_hg_env}
                LABELS himeno TIMEOUT 60 PASS_REGEX "--dims 2x2x1: the factors must be >= 1 and multiply to the rank count 3")
ky_add_mpi_test(NAME himeno.bad.grid_too_small COMMAND ky_himeno --grid 5x40x40 --decomp i RANKS 4 ENV ${_hg_env}
                LABELS himeno TIMEOUT 60 PASS_REGEX "grid 5x40x40 is too small for 4x1x1 ranks")
ky_add_mpi_test(NAME himeno.bad.size COMMAND ky_himeno XXL RANKS 1 ENV ${_hg_env} LABELS himeno TIMEOUT 60
                PASS_REGEX "unknown size 'XXL'")
ky_add_mpi_test(NAME himeno.bad.grid_syntax COMMAND ky_himeno --grid 64x64 RANKS 1 ENV ${_hg_env} LABELS himeno
                TIMEOUT 60 PASS_REGEX "--grid 64x64: expected IxJxK")
ky_add_mpi_test(NAME himeno.bad.option COMMAND ky_himeno --frobnicate 1 RANKS 1 ENV ${_hg_env} LABELS himeno
                TIMEOUT 60 PASS_REGEX "unknown option --frobnicate")
ky_add_mpi_test(NAME himeno.bad.chain COMMAND ky_himeno --chain fast RANKS 1 ENV ${_hg_env} LABELS himeno TIMEOUT 60
                PASS_REGEX "--chain fast: expected sync, plain, pdl, graph or graph-pdl")
ky_add_mpi_test(NAME himeno.bad.tb_host COMMAND ky_himeno --tb 2 RANKS 1 ENV ${_hg_env} LABELS himeno TIMEOUT 60
                PASS_REGEX "--tb 2: one rank, --mem gpu, a chained loop")
ky_add_mpi_test(NAME himeno.bad.overlap COMMAND ky_himeno --overlap 2 RANKS 1 ENV ${_hg_env} LABELS himeno TIMEOUT 60
                PASS_REGEX "--overlap 2: expected 0 or 1")
ky_add_mpi_test(NAME himeno.help COMMAND ky_himeno --help RANKS 1 ENV ${_hg_env} LABELS himeno TIMEOUT 60
                PASS_REGEX "usage: kyrun -n R ky_himeno")
if(KY_HAVE_CUDA AND COMMAND ky_add_gpu_test)
    # the loop as before --overlap (gosa summed after every kernel); the overlapped loop, the default with
    # several ranks on GPUs, below
    set(_hg_gpu --mem gpu --grid 21x18x35 --iters 6 --warmup 1 --check -q --variant ky,mpi --gosa both --overlap 0
        --gosa-defer 0)
    foreach(c "i:1,2" "ij:4" "3d:4" "k:2")
        string(REPLACE ":" ";" c "${c}")
        list(GET c 0 dec)
        list(GET c 1 ranks)
        string(REPLACE "," ";" ranks "${ranks}")
        foreach(n ${ranks})
            ky_add_gpu_test(NAME gpu.himeno.${dec}.n${n} COMMAND ky_himeno ${_hg_gpu} --decomp ${dec} RANKS ${n}
                            ENV KY_TIMEOUT=120 LABELS himeno TIMEOUT 180 FAIL_REGEX "${_hg_fail}")
            set_tests_properties(gpu.himeno.${dec}.n${n} PROPERTIES SKIP_RETURN_CODE 77)
        endforeach()
    endforeach()
    ky_add_gpu_test(NAME gpu.himeno.3d.n4.split_bcoef COMMAND ky_himeno ${_hg_gpu} --decomp 3d --bcoef 0.05 --pack none
                    RANKS 4 ENV KY_TIMEOUT=120 KY_NODE_SPLIT=rank LABELS himeno TIMEOUT 180 FAIL_REGEX "${_hg_fail}")
    ky_add_gpu_test(NAME gpu.himeno.ij.n2.packall COMMAND ky_himeno ${_hg_gpu} --decomp ij --bcoef 0.05 --pack all
                    RANKS 2 ENV KY_TIMEOUT=120 LABELS himeno TIMEOUT 180 FAIL_REGEX "${_hg_fail}")
    # each kernel forced (the tuner also drops a shape whose field differs from the scalar kernel's by a bit)
    ky_add_gpu_test(NAME gpu.himeno.3d.n4.vec COMMAND ky_himeno ${_hg_gpu} --decomp 3d --bcoef 0.05 --block 32x4x1x4v
                    RANKS 4 ENV KY_TIMEOUT=120 LABELS himeno TIMEOUT 180 FAIL_REGEX "${_hg_fail}")
    ky_add_gpu_test(NAME gpu.himeno.k.n2.scalar COMMAND ky_himeno ${_hg_gpu} --decomp k --bcoef 0.05 --block 32x2x2x3
                    RANKS 2 ENV KY_TIMEOUT=120 LABELS himeno TIMEOUT 180 FAIL_REGEX "${_hg_fail}")
    set_tests_properties(gpu.himeno.3d.n4.split_bcoef gpu.himeno.ij.n2.packall gpu.himeno.3d.n4.vec
                         gpu.himeno.k.n2.scalar PROPERTIES SKIP_RETURN_CODE 77)
    # --overlap: the face slabs, then the interior on the GPU while the halos move; gosa of every iteration in
    # a vector on the GPU, summed after the loop. Every decomposition on 2, 3 and 4 ranks sharing the GPU,
    # both gosa methods, b != 0; 75 points along k so that a k slab starts beyond the first 32 (the kernels'
    # k offset); each kernel forced; packed faces; gosa summed every iteration; deferred alone; every rank its
    # own node; launches without Programmatic Dependent Launch and one sweep direction
    set(_hg_ovl_gpu --mem gpu --grid 21x18x75 --iters 6 --warmup 1 --check -q --variant ky,mpi --gosa both --bcoef 0.05)
    set(_hg_ovl_gpu_pass "overlapped[^$]*check against the serial original[^\n]*OK")
    foreach(c "i:2,3,4" "j:2,3,4" "k:2,3,4" "ij:2,3,4" "3d:3,4")
        string(REPLACE ":" ";" c "${c}")
        list(GET c 0 dec)
        list(GET c 1 ranks)
        string(REPLACE "," ";" ranks "${ranks}")
        foreach(n ${ranks})
            ky_add_gpu_test(NAME gpu.himeno.overlap.${dec}.n${n} COMMAND ky_himeno ${_hg_ovl_gpu} --decomp ${dec} --overlap 1
                            RANKS ${n} ENV KY_TIMEOUT=120 LABELS himeno TIMEOUT 180 FAIL_REGEX "${_hg_fail}"
                            PASS_REGEX "${_hg_ovl_gpu_pass}")
            set_tests_properties(gpu.himeno.overlap.${dec}.n${n} PROPERTIES SKIP_RETURN_CODE 77)
        endforeach()
    endforeach()
    foreach(c "k.n2.vec:2:--decomp;k;--block;32x4x1x4v" "ij.n4.scalar:4:--decomp;ij;--block;32x2x2x3"
              "3d.n4.packall:4:--decomp;3d;--pack;all;--iters;9" "ij.n4.nodefer:4:--decomp;ij;--gosa-defer;0"
              "3d.n4.split:4:--decomp;3d" "ij.n3.plain:3:--decomp;ij;--chain;plain;--sweep;fixed")
        string(REPLACE ":" ";" c "${c}")
        list(GET c 0 tag)
        list(GET c 1 n)
        list(SUBLIST c 2 -1 extra)
        set(env KY_TIMEOUT=120)
        if(tag MATCHES "split")
            list(APPEND env KY_NODE_SPLIT=rank)
        endif()
        ky_add_gpu_test(NAME gpu.himeno.overlap.${tag} COMMAND ky_himeno ${_hg_ovl_gpu} --overlap 1 ${extra} RANKS ${n}
                        ENV ${env} LABELS himeno TIMEOUT 180 FAIL_REGEX "${_hg_fail}" PASS_REGEX "${_hg_ovl_gpu_pass}")
        set_tests_properties(gpu.himeno.overlap.${tag} PROPERTIES SKIP_RETURN_CODE 77)
    endforeach()
    ky_add_gpu_test(NAME gpu.himeno.defer.ij.n4 COMMAND ky_himeno ${_hg_ovl_gpu} --decomp ij --overlap 0 --gosa-defer 1
                    RANKS 4 ENV KY_TIMEOUT=120 LABELS himeno TIMEOUT 180 FAIL_REGEX "${_hg_fail}|overlapped"
                    PASS_REGEX "gosa of every iteration kept[^$]*check against the serial original[^\n]*OK")
    set_tests_properties(gpu.himeno.defer.ij.n4 PROPERTIES SKIP_RETURN_CODE 77)
    # one rank: the iterations chained on the GPU (gosa in the ring, read after the loop), every launch mode,
    # both sweeps, each kernel; graphs hold 32 kernels, so 70 iterations are two graphs and 6 launches
    set(_hg_chain --mem gpu --grid 21x18x35 --warmup 3 --check -q --variant ky,mpi --bcoef 0.05)
    foreach(c "pdl:alternate:40:" "graph-pdl:alternate:70:" "graph:fixed:67:--block;32x4x1x4v" "plain:alternate:9:--block;64x4x1x4"
              "sync:fixed:5:")
        string(REPLACE ":" ";" c "${c}")
        list(GET c 0 mode)
        list(GET c 1 sweep)
        list(GET c 2 iters)
        list(LENGTH c nc)
        set(extra)
        if(nc GREATER 3)
            list(SUBLIST c 3 -1 extra)
        endif()
        ky_add_gpu_test(NAME gpu.himeno.n1.chain_${mode}_${sweep} COMMAND ky_himeno ${_hg_chain} --chain ${mode}
                        --sweep ${sweep} --iters ${iters} ${extra} RANKS 1 ENV KY_TIMEOUT=120 LABELS himeno TIMEOUT 180
                        FAIL_REGEX "${_hg_fail}")
        set_tests_properties(gpu.himeno.n1.chain_${mode}_${sweep} PROPERTIES SKIP_RETURN_CODE 77)
    endforeach()
    # the temporally blocked kernel (--tb): against the single-step kernel (the field bit for bit and gosa of
    # every iteration, chains of 1 .. 2 tb + 2) and the timed loop against the serial original; the original's
    # sizes, an odd grid with b != 0 and i chunks that do not divide the planes, both tiles, iteration counts
    # that leave a short last pass
    foreach(c "XS:2:7:" "S:2:9:--tb-chunk;7" "XS:3:8:--tb-tile;64x16" "S:3:10:--tb-chunk;13;--tb-tile;32x16x2"
              "grid:3:11:--grid;21x18x35;--bcoef;0.05;--tb-chunk;5;--variant;ky,mpi"
              "grid:2:6:--grid;21x18x35;--bcoef;0.05;--tb-tile;64x16")
        string(REPLACE ":" ";" c "${c}")
        list(GET c 0 size)
        list(GET c 1 tb)
        list(GET c 2 iters)
        list(SUBLIST c 3 -1 extra)
        set(sz ${size})
        if(size STREQUAL "grid")
            set(sz)
        endif()
        list(JOIN extra "" tag)
        string(REGEX REPLACE "[^A-Za-z0-9]+" "_" tag "${tag}")
        ky_add_gpu_test(NAME gpu.himeno.n1.tb${tb}_${size}${tag} COMMAND ky_himeno ${sz} --mem gpu --tb ${tb} --check
                        --iters ${iters} --warmup 1 -q ${extra} RANKS 1 ENV KY_TIMEOUT=120 LABELS himeno TIMEOUT 180
                        FAIL_REGEX "${_hg_fail}|DIFFERENT"
                        PASS_REGEX "--tb ${tb} check against the single-step kernel[^\n]*OK[^$]*check against the serial original[^\n]*OK")
        set_tests_properties(gpu.himeno.n1.tb${tb}_${size}${tag} PROPERTIES SKIP_RETURN_CODE 77)
    endforeach()
endif()
