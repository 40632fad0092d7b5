# CTest install_consumer: `cmake --install` into a prefix under the build tree, build examples/ standalone
# against it (find_package) and with mpicc + pkg-config, run hello_put on 2 ranks (cmake/install_consumer.sh).
include_guard(GLOBAL)
include(cmake/KyoyuTesting.cmake)

add_test(NAME install_consumer
         COMMAND sh "${PROJECT_SOURCE_DIR}/cmake/install_consumer.sh" "${PROJECT_BINARY_DIR}" "${PROJECT_SOURCE_DIR}"
                 "${CMAKE_GENERATOR}" "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} 2 ${KY_MPIEXEC_EXTRA_FLAGS})
set_tests_properties(install_consumer PROPERTIES
                     LABELS "cpu;install" TIMEOUT 600 PROCESSORS 2
                     ENVIRONMENT "${KY_TEST_ENVIRONMENT}")

# The launcher: dry-run command lines (Open MPI and a fake MPICH), errors, --info, a real 2-rank run.
add_test(NAME kyrun COMMAND sh "${PROJECT_SOURCE_DIR}/cmake/check_kyrun.sh" "${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
set_tests_properties(kyrun PROPERTIES LABELS "cpu;tools" TIMEOUT 180 PROCESSORS 2)
# More ranks than cores with OMP_NUM_THREADS set higher still: kyrun must still oversubscribe.
add_test(NAME kyrun.omp_threads
         COMMAND sh "${PROJECT_SOURCE_DIR}/cmake/check_kyrun_omp.sh" "${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
set_tests_properties(kyrun.omp_threads PROPERTIES LABELS "cpu;tools" TIMEOUT 120 PROCESSORS 2)

# The settings tables in docs/api.md and docs/dsm.md against the one in src/runtime/config.c (through
# kyinfo's output), so the copies cannot drift from the table.
find_program(KY_PYTHON3 python3)
if(KY_PYTHON3)
    add_test(NAME settings.docs
             COMMAND "${KY_PYTHON3}" "${PROJECT_SOURCE_DIR}/cmake/check_settings_docs.py" "$<TARGET_FILE:kyinfo>"
                     "${PROJECT_SOURCE_DIR}")
    set_tests_properties(settings.docs PROPERTIES LABELS "cpu;tools" TIMEOUT 60)
endif()

# Every program under apps/ and tools/ (and kyinfo) answers --help with usage and exit status 0.
set(_ky_help_programs "$<TARGET_FILE:kyinfo>" "${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/kyrun"
    "${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/kybench" "${PROJECT_SOURCE_DIR}/tools/device-run"
    "${PROJECT_SOURCE_DIR}/tools/kycc"
    "${PROJECT_SOURCE_DIR}/tools/fetch-npb" "${PROJECT_SOURCE_DIR}/tools/fetch-himeno-baselines"
    "${PROJECT_SOURCE_DIR}/tools/fetch-shmem-tests" "${PROJECT_SOURCE_DIR}/tools/fetch-hdf5-serial"
    "${PROJECT_SOURCE_DIR}/tools/fetch-offload-debs-ubuntu"
    "${PROJECT_SOURCE_DIR}/tools/kyshcc" "${PROJECT_SOURCE_DIR}/tools/offload-check")
foreach(_t ky_stencil ky_stencil_gpu ky_cg ky_himeno)
    if(TARGET ${_t})
        list(APPEND _ky_help_programs "$<TARGET_FILE:${_t}>")
    endif()
endforeach()
add_test(NAME tools.help COMMAND sh "${PROJECT_SOURCE_DIR}/cmake/check_help.sh" ${_ky_help_programs})
set_tests_properties(tools.help PROPERTIES LABELS "cpu;tools" TIMEOUT 240 ENVIRONMENT "${KY_TEST_ENVIRONMENT}")

# make deps where nothing can be installed (apt-get a failing stand-in): optional packages a warning, required
# ones an error; the machines without a package registry (the GPU machine) depend on it.
add_test(NAME tools.make_deps COMMAND sh "${PROJECT_SOURCE_DIR}/cmake/check_make_deps.sh" "${PROJECT_SOURCE_DIR}")
set_tests_properties(tools.make_deps PROPERTIES LABELS "cpu;tools" TIMEOUT 120)

# Every C, C++ and CUDA source as the pinned .clang-format (clang-format 14) writes it; skips with a message
# without clang-format 14 (`make format` rewrites the files).
add_test(NAME format.check COMMAND sh "${PROJECT_SOURCE_DIR}/cmake/check_format.sh" "${PROJECT_SOURCE_DIR}")
set_tests_properties(format.check PROPERTIES LABELS "cpu;tools" TIMEOUT 300 SKIP_RETURN_CODE 77)

# The boundary above comm: coll, dsm, array, io, sparse and shmem make no MPI call and read nothing of comm's
# internals beyond its channel, except what the script lists with its reason.
add_test(NAME layers.check COMMAND sh "${PROJECT_SOURCE_DIR}/cmake/check_layers.sh" "${PROJECT_SOURCE_DIR}")
set_tests_properties(layers.check PROPERTIES LABELS "cpu;tools" TIMEOUT 60)

# Values a setting does not allow are ignored with rank 0's warning at ky_init, naming the setting and what
# it allows (the settings table checks them; kyinfo --machine starts Kyoyu, so the warning shows). The
# regex has "." for the ";" in the messages (a ";" would split the argument list). The warnings (stderr, in
# order) and the machine report (stdout: the program went on) are checked by two runs: the launcher
# interleaves the two streams in either order, so one regex over both failed now and then.
set(_ky_bad_env KY_DEBUG=1 KY_DEBUG_SUBSYS=comm,bogus KY_GPUS_PER_RANK=-3)
ky_add_mpi_test(NAME settings.bad_values COMMAND kyinfo --machine RANKS 1 ENV ${_ky_bad_env} LABELS tools TIMEOUT 60
                PASS_REGEX "KY_DEBUG=1 is not one of none, warn, info or trace. using the default warn.*KY_DEBUG_SUBSYS=comm,bogus is not a comma list of all, runtime, comm, coll, dsm, array, io or gpu. using the default all.*KY_GPUS_PER_RANK=-3 is not an integer from 0 to 16. using the default 1")
ky_add_mpi_test(NAME settings.bad_values.runs COMMAND kyinfo --machine RANKS 1 ENV ${_ky_bad_env} LABELS tools
                TIMEOUT 60 PASS_REGEX "machine: 1 rank")
