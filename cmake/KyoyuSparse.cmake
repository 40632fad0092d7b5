# The sparse layer (src/sparse: distributed CSR, Matrix Market, generators, CG) added to the library's object
# library: host kernels with OpenMP when the compiler has it, the CUDA back end (src/sparse/gpu/*.cu) in CUDA
# builds, its stub otherwise. Included by the top-level CMakeLists.txt right after kyoyu_obj is defined.
file(GLOB _ky_sparse_src CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/sparse/*.c")
if(KY_HAVE_CUDA)
    file(GLOB _ky_sparse_gpu CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/sparse/gpu/*.cu")
else()
    set(_ky_sparse_gpu "${CMAKE_CURRENT_SOURCE_DIR}/src/sparse/gpu/sp_gpu_none.c")
endif()
target_sources(kyoyu_obj PRIVATE ${_ky_sparse_src} ${_ky_sparse_gpu})
foreach(_t kyoyu kyoyu_static)
    target_link_libraries(${_t} PRIVATE m)  # sqrt, pow
endforeach()
find_package(OpenMP COMPONENTS C)
if(OpenMP_C_FOUND)
    # only the sparse files: the other layers stay free of OpenMP's runtime
    set_source_files_properties(${_ky_sparse_src} PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS}")
    target_link_libraries(kyoyu_obj PRIVATE OpenMP::OpenMP_C)
    foreach(_t kyoyu kyoyu_static)
        if(TARGET ${_t})
            target_link_libraries(${_t} PRIVATE OpenMP::OpenMP_C)
        endif()
    endforeach()
else()
    message(STATUS "Kyoyu: OpenMP not found; the sparse layer's host kernels run one thread per rank")
endif()
