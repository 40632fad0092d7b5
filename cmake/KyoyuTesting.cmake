# Kyoyu testing helpers: register multi-rank MPI programs with CTest.
#
#   ky_add_mpi_test(NAME name COMMAND exe [args...] RANKS n
#                   [ENV k=v ...] [LABELS l ...] [TIMEOUT s] [WILL_FAIL] [PASS_REGEX re]
#                   [FAIL_REGEX re] [WORKING_DIRECTORY dir])
#   ky_add_gpu_test(...)   same arguments; labelled "gpu" instead of "cpu".
#
# The test runs  ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} n [--oversubscribe --allow-run-as-root]
#                ${MPIEXEC_PREFLAGS} exe ${MPIEXEC_POSTFLAGS} args
# `exe` may be a target name (its file is used) or a path. Every test gets the NVLink-multicast-off
# variables and Open MPI's oversubscription switch in its environment; PROCESSORS is set to the rank
# count so `ctest -j` does not pile up more ranks than cores.
include_guard(GLOBAL)

if(NOT MPIEXEC_EXECUTABLE)
    find_package(MPI REQUIRED COMPONENTS C)
endif()

# Which MPI launches: Open MPI needs --oversubscribe / --allow-run-as-root; MPICH's hydra does not know them.
if(NOT DEFINED KY_MPIEXEC_IS_OPENMPI)
    execute_process(COMMAND "${MPIEXEC_EXECUTABLE}" --version
                    OUTPUT_VARIABLE _ky_mpiexec_version ERROR_VARIABLE _ky_mpiexec_version
                    RESULT_VARIABLE _ky_mpiexec_rc TIMEOUT 30)
    if(_ky_mpiexec_version MATCHES "Open MPI|OpenRTE|open-mpi")
        set(KY_MPIEXEC_IS_OPENMPI ON CACHE INTERNAL "mpiexec is Open MPI's")
    else()
        set(KY_MPIEXEC_IS_OPENMPI OFF CACHE INTERNAL "mpiexec is Open MPI's")
    endif()
endif()

set(KY_MPIEXEC_EXTRA_FLAGS "")
if(KY_MPIEXEC_IS_OPENMPI)
    list(APPEND KY_MPIEXEC_EXTRA_FLAGS --oversubscribe --allow-run-as-root)
endif()
set(KY_MPIEXEC_EXTRA_FLAGS "${KY_MPIEXEC_EXTRA_FLAGS}" CACHE STRING
    "Flags ky_add_mpi_test puts after the rank count (Open MPI: --oversubscribe --allow-run-as-root)")

# Environment every multi-rank test runs with.
set(KY_TEST_ENVIRONMENT
    OMPI_MCA_rmaps_base_oversubscribe=1
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    NCCL_NVLS_ENABLE=0
    NVSHMEM_DISABLE_NVLS=1
    TORCH_SYMM_MEM_DISABLE_MULTICAST=1)

set(KY_TEST_DEFAULT_TIMEOUT 300 CACHE STRING "Default timeout (s) of a ky_add_mpi_test test")

function(_ky_add_mpi_test_impl kind)
    cmake_parse_arguments(PARSE_ARGV 1 KT "WILL_FAIL" "NAME;RANKS;TIMEOUT;PASS_REGEX;FAIL_REGEX;WORKING_DIRECTORY"
                          "COMMAND;ENV;LABELS")
    if(NOT KT_NAME)
        message(FATAL_ERROR "ky_add_mpi_test: NAME is required")
    endif()
    if(NOT KT_COMMAND)
        message(FATAL_ERROR "ky_add_mpi_test(${KT_NAME}): COMMAND is required")
    endif()
    if(NOT KT_RANKS)
        set(KT_RANKS 1)
    endif()
    if(KT_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "ky_add_mpi_test(${KT_NAME}): unknown arguments ${KT_UNPARSED_ARGUMENTS}")
    endif()

    list(POP_FRONT KT_COMMAND exe)
    if(TARGET ${exe})
        set(exe "$<TARGET_FILE:${exe}>")
    endif()

    set(wd "")
    if(KT_WORKING_DIRECTORY)
        set(wd WORKING_DIRECTORY "${KT_WORKING_DIRECTORY}")
    endif()
    add_test(NAME ${KT_NAME}
             COMMAND "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} ${KT_RANKS} ${KY_MPIEXEC_EXTRA_FLAGS}
                     ${MPIEXEC_PREFLAGS} "${exe}" ${MPIEXEC_POSTFLAGS} ${KT_COMMAND}
             ${wd})

    set(labels ${kind} ${KT_LABELS})
    list(REMOVE_DUPLICATES labels)
    if(NOT KT_TIMEOUT)
        set(KT_TIMEOUT ${KY_TEST_DEFAULT_TIMEOUT})
    endif()
    set(env ${KY_TEST_ENVIRONMENT} ${KT_ENV})
    set_tests_properties(${KT_NAME} PROPERTIES
                         LABELS "${labels}"
                         TIMEOUT ${KT_TIMEOUT}
                         PROCESSORS ${KT_RANKS}
                         ENVIRONMENT "${env}")
    if(KT_WILL_FAIL)
        set_tests_properties(${KT_NAME} PROPERTIES WILL_FAIL TRUE)
    endif()
    if(DEFINED KT_PASS_REGEX)
        set_tests_properties(${KT_NAME} PROPERTIES PASS_REGULAR_EXPRESSION "${KT_PASS_REGEX}")
    endif()
    if(DEFINED KT_FAIL_REGEX)
        set_tests_properties(${KT_NAME} PROPERTIES FAIL_REGULAR_EXPRESSION "${KT_FAIL_REGEX}")
    endif()
endfunction()

# CPU test (label "cpu" plus LABELS).
function(ky_add_mpi_test)
    _ky_add_mpi_test_impl(cpu ${ARGN})
endfunction()

# GPU test (label "gpu" plus LABELS); run by `make test-gpu` (ctest -L gpu) on a machine with GPUs.
function(ky_add_gpu_test)
    _ky_add_mpi_test_impl(gpu ${ARGN})
endfunction()
