# Each public header must compile on its own, in C (c11) and C++ (c++17), with warnings as errors.
# For every header H this generates one .c and one .cpp file that include only H, builds them in ALL
# (object library ky_header_check) and registers CTest tests header_<H>_c / header_<H>_cxx that compile
# them again with the compiler alone (label "cpu").
include_guard(GLOBAL)

file(GLOB _ky_hc_headers CONFIGURE_DEPENDS
     "${PROJECT_SOURCE_DIR}/include/*.h" "${PROJECT_SOURCE_DIR}/include/kyoyu/*.h")
set(_ky_hc_dir "${PROJECT_BINARY_DIR}/header_check")
set(_ky_hc_sources "")
set(_ky_hc_flags -Wall -Wextra -Werror -pedantic)
foreach(_h ${_ky_hc_headers})
    file(RELATIVE_PATH _rel "${PROJECT_SOURCE_DIR}/include" "${_h}")
    string(MAKE_C_IDENTIFIER "${_rel}" _id)
    foreach(_lang c cpp)
        set(_src "${_ky_hc_dir}/${_id}.${_lang}")
        file(CONFIGURE OUTPUT "${_src}" CONTENT
             "/* generated: ${_rel} must compile alone */\n#include <${_rel}>\n#include <${_rel}> /* and twice */\nint ky_header_check_${_id}_${_lang}(void);\nint ky_header_check_${_id}_${_lang}(void) { return 0; }\n")
        list(APPEND _ky_hc_sources "${_src}")
    endforeach()
    add_test(NAME header_${_id}_c
             COMMAND "${CMAKE_C_COMPILER}" -std=c11 ${_ky_hc_flags} -I${PROJECT_SOURCE_DIR}/include
                     -fsyntax-only "${_ky_hc_dir}/${_id}.c")
    add_test(NAME header_${_id}_cxx
             COMMAND "${CMAKE_CXX_COMPILER}" -std=c++17 ${_ky_hc_flags} -I${PROJECT_SOURCE_DIR}/include
                     -fsyntax-only "${_ky_hc_dir}/${_id}.cpp")
    set_tests_properties(header_${_id}_c header_${_id}_cxx PROPERTIES LABELS "cpu;header" TIMEOUT 60)
endforeach()

add_library(ky_header_check OBJECT ${_ky_hc_sources})
target_include_directories(ky_header_check PRIVATE "${PROJECT_SOURCE_DIR}/include")
target_compile_options(ky_header_check PRIVATE ${_ky_hc_flags})
set_target_properties(ky_header_check PROPERTIES C_EXTENSIONS OFF CXX_EXTENSIONS OFF)

# Every KY_API function of the public headers is exported by libkyoyu.so.
add_test(NAME exported_symbols
         COMMAND sh "${PROJECT_SOURCE_DIR}/cmake/check_exports.sh" "$<TARGET_FILE:kyoyu>" ${_ky_hc_headers})
set_tests_properties(exported_symbols PROPERTIES LABELS "cpu;header" TIMEOUT 60)
