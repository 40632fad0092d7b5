# Install rules: public headers only (include/kyoyu.h, include/kyoyu/*.h; never src/), the shared and
# static libraries, kyinfo, kyrun and kybench (its Python package in share/kyoyu), a CMake package
# (find_package(Kyoyu) -> Kyoyu::kyoyu) and kyoyu.pc.
include_guard(GLOBAL)

install(FILES "${PROJECT_SOURCE_DIR}/include/kyoyu.h" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
file(GLOB _ky_public_headers CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/kyoyu/*.h")
install(FILES ${_ky_public_headers} DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/kyoyu")
if(EXISTS "${PROJECT_SOURCE_DIR}/include/sms.h")
    install(FILES "${PROJECT_SOURCE_DIR}/include/sms.h" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
endif()

install(TARGETS kyoyu kyoyu_static EXPORT KyoyuTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(TARGETS kyinfo RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(PROGRAMS "${PROJECT_SOURCE_DIR}/tools/kyrun" "${PROJECT_SOURCE_DIR}/tools/kybench"
        DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/tools/kybench_lib" DESTINATION "${CMAKE_INSTALL_DATADIR}/kyoyu"
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
# OpenSHMEM: include/shmem.h and the kyshcc compiler wrapper (docs/shmem.md)
install(FILES "${PROJECT_SOURCE_DIR}/include/shmem.h" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(PROGRAMS "${PROJECT_SOURCE_DIR}/tools/kyshcc" DESTINATION "${CMAKE_INSTALL_BINDIR}")
# kycc: the driver in bin, its translator and run-time in share/kyoyu/kycc_lib (docs/kycc.md)
install(PROGRAMS "${PROJECT_SOURCE_DIR}/tools/kycc" DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/tools/kycc_lib" DESTINATION "${CMAKE_INSTALL_DATADIR}/kyoyu"
        FILES_MATCHING PATTERN "*.py" PATTERN "*.c" PATTERN "*.h" PATTERN "__pycache__" EXCLUDE)

# CMake package.
set(KY_PACKAGE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Kyoyu")
install(EXPORT KyoyuTargets NAMESPACE Kyoyu:: DESTINATION "${KY_PACKAGE_DIR}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/KyoyuConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/KyoyuConfig.cmake"
                              INSTALL_DESTINATION "${KY_PACKAGE_DIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/KyoyuConfigVersion.cmake"
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/KyoyuConfig.cmake" "${PROJECT_BINARY_DIR}/KyoyuConfigVersion.cmake"
        DESTINATION "${KY_PACKAGE_DIR}")

# pkg-config. The shared library records its own MPI/CUDA dependencies; static linking (--static) needs
# them listed: MPI through its own .pc file when there is one, the rest in Libs.private.
set(KY_PC_REQUIRES_PRIVATE "")
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
    foreach(_mod ompi-c mpich mpi)
        execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --exists ${_mod} RESULT_VARIABLE _rc)
        if(_rc EQUAL 0)
            set(KY_PC_REQUIRES_PRIVATE "${_mod}")
            break()
        endif()
    endforeach()
endif()
set(KY_PC_LIBS_PRIVATE "-lpthread -lrt -ldl")
if(KY_HAVE_HDF5)
    # the io layer's parallel HDF5 (cmake/KyoyuIO.cmake), by path: a static consumer of ky_io_* needs it
    foreach(_lib ${_ky_hdf5_libs})
        string(APPEND KY_PC_LIBS_PRIVATE " ${_lib}")
    endforeach()
    if(KY_HAVE_CUFILE)
        string(APPEND KY_PC_LIBS_PRIVATE " ${KY_CUFILE_LIBRARY}") # its cuFile path
    endif()
endif()
if(KY_HAVE_UCX)
    # the UCX transport (src/comm/ucx), by path like HDF5
    foreach(_lib ${UCX_LINK_LIBRARIES})
        string(APPEND KY_PC_LIBS_PRIVATE " ${_lib}")
    endforeach()
endif()
if(KY_HAVE_CUDA)
    set(KY_PC_LIBS_PRIVATE "-L${CUDAToolkit_LIBRARY_DIR} -lcudart ${KY_PC_LIBS_PRIVATE} -lstdc++")
endif()
if(NOT KY_PC_REQUIRES_PRIVATE)
    # No MPI .pc file: name the MPI libraries themselves.
    foreach(_lib ${MPI_C_LIBRARIES})
        string(APPEND KY_PC_LIBS_PRIVATE " ${_lib}")
    endforeach()
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(KY_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
    set(KY_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(KY_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
    set(KY_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# The prefix is written at install time (cmake --install --prefix P gives P), not at configure time.
set(KY_PC_PREFIX "@KY_PC_PREFIX@")
configure_file("${PROJECT_SOURCE_DIR}/cmake/kyoyu.pc.in" "${PROJECT_BINARY_DIR}/kyoyu.pc.in.configured" @ONLY)
install(CODE "
    file(READ \"${PROJECT_BINARY_DIR}/kyoyu.pc.in.configured\" _pc)
    string(REPLACE \"@KY_PC_PREFIX@\" \"\${CMAKE_INSTALL_PREFIX}\" _pc \"\${_pc}\")
    file(WRITE \"${PROJECT_BINARY_DIR}/kyoyu.pc\" \"\${_pc}\")
")
install(FILES "${PROJECT_BINARY_DIR}/kyoyu.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

# Examples as sources, for users to copy (they build against the installed package).
if(EXISTS "${PROJECT_SOURCE_DIR}/examples/CMakeLists.txt")
    install(DIRECTORY "${PROJECT_SOURCE_DIR}/examples/" DESTINATION "${CMAKE_INSTALL_DATADIR}/kyoyu/examples"
            FILES_MATCHING PATTERN "*.c" PATTERN "*.cpp" PATTERN "*.cu" PATTERN "CMakeLists.txt")
endif()
