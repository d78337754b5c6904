# Dependencies, all from Debian packages (see README "Set up").
# ODE, libccd and Check ship pkg-config files; libccd's CMake config claims 2.0 for the 2.1
# package, so pkg-config is used for every dependency alike.
find_package(PkgConfig REQUIRED)
pkg_check_modules(ODE     REQUIRED IMPORTED_TARGET ode>=0.16)
pkg_check_modules(CCD     REQUIRED IMPORTED_TARGET ccd>=2.0)
pkg_check_modules(LAPACKE REQUIRED IMPORTED_TARGET lapacke)
pkg_check_modules(QHULL   REQUIRED IMPORTED_TARGET qhull_r)
find_library(PP_LIBM m)
find_package(Threads REQUIRED)  # pp_config.threads: the islands of a step on a thread pool

# Everything the library uses internally; consumers of the static library need it too.
set(PP_PRIVATE_DEPS PkgConfig::CCD PkgConfig::LAPACKE PkgConfig::QHULL Threads::Threads)
if(PP_LIBM)
  list(APPEND PP_PRIVATE_DEPS ${PP_LIBM})
endif()

# dReal and ccd_real_t must be double: asserted at compile time (plugin/src/ode_bridge.c,
# contact/src/proximity.c), since ode/precision.h and ccd/config.h decide it, not the .pc files.
