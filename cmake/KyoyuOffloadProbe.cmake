# ky_offload_links(LANG FAMILY OUTVAR FLAGS...): whether this compiler builds AND links a program with one
# offloaded loop of FAMILY (acc: an OpenACC parallel loop; omp_target: an OpenMP target teams loop) under
# FLAGS. A compiler may take the flag and still fail at the link: Ubuntu 24.04's GCC 13 without its offload
# packages stops with "ld: could not run lto-wrapper" on any object holding a target region, even with
# -foffload=disable. The offload tests and programs are then left out and their tests skip with the reason,
# instead of breaking the whole build. The answer is cached per language, family and flags.
include(CheckSourceCompiles)

function(ky_offload_links lang family outvar)
    string(MAKE_C_IDENTIFIER "KY_OFFLOAD_LINKS_${lang}_${family}_${ARGN}" _var)
    if(family STREQUAL "acc")
        set(_dir "#pragma acc parallel loop copyout(a)")
    else()
        set(_dir "#pragma omp target teams distribute parallel for map(from: a)")
    endif()
    set(_src "int main(void)\n{\n    double a[64];\n${_dir}\n    for (int i = 0; i < 64; i++) a[i] = i;\n    return (int)a[3] - 3;\n}\n")
    string(JOIN " " CMAKE_REQUIRED_FLAGS ${ARGN})
    set(CMAKE_REQUIRED_QUIET ON)
    check_source_compiles(${lang} "${_src}" ${_var})
    if(NOT ${_var})
        message(STATUS "offload: the ${lang} compiler takes '${CMAKE_REQUIRED_FLAGS}' but cannot link a ${family} "
                       "program (see CMakeFiles/CMakeConfigureLog.yaml): its offload tests skip")
    endif()
    set(${outvar} ${${_var}} PARENT_SCOPE)
endfunction()
