# Install rules: the library, its headers, a CMake package (find_package(heist CONFIG)
# gives heist::heist) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS heist EXPORT heistTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/heist DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
if(HEIST_HAVE_MPI)
  # heist::mpi in its own export set: find_package(heist) only looks for MPI when it is there.
  install(TARGETS heist_mpi EXPORT heistMpiTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT heistMpiTargets NAMESPACE heist:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/heist)
endif()
install(EXPORT heistTargets
  NAMESPACE heist::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/heist)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/heistConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/heistConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/heist)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/heistConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/heistConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/heistConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/heist)

# The prefix as seen from LIBDIR/pkgconfig ("../.." for lib/pkgconfig).
file(RELATIVE_PATH HEIST_PC_RELATIVE_PREFIX
  /heist-prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /heist-prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/heist.pc.in ${CMAKE_CURRENT_BINARY_DIR}/heist.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/heist.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
