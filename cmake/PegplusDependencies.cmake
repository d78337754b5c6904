# Dependencies, all from Debian packages (see README "Set up").
# ODE, libccd and Check ship pkg-config files; libccd's CMake config claims 2.0 for the 2.1
# package, so pkg-config is used for every dependency alike.
find_package(PkgConfig REQUIRED)
pkg_check_modules(ODE     REQUIRED IMPORTED_TARGET ode>=0.16)
pkg_check_modules(CCD     REQUIRED IMPORTED_TARGET ccd>=2.0)
pkg_check_modules(LAPACKE REQUIRED IMPORTED_TARGET lapacke)
pkg_check_modules(QHULL   REQUIRED IMPORTED_TARGET qhull_r)
find_library(PP_LIBM m)
# SuiteSparse's KLU (no pkg-config file in Debian 12): the sparse basis of large LCPs
# (contact/src/lcp_sparse.c)
find_path(PP_KLU_INCLUDE_DIR klu.h PATH_SUFFIXES suitesparse)
find_library(PP_KLU_LIBRARY klu)
if(NOT PP_KLU_INCLUDE_DIR OR NOT PP_KLU_LIBRARY)
  message(FATAL_ERROR "KLU not found: install libsuitesparse-dev (cmake/install-deps.sh)")
endif()
find_package(Threads REQUIRED)  # pp_config.threads: the islands of a step on a thread pool

# Everything the library uses internally; consumers of the static library need it too.
set(PP_PRIVATE_DEPS PkgConfig::CCD PkgConfig::LAPACKE PkgConfig::QHULL ${PP_KLU_LIBRARY} Threads::Threads)
if(PP_LIBM)
  list(APPEND PP_PRIVATE_DEPS ${PP_LIBM})
endif()

# dReal and ccd_real_t must be double: asserted at compile time (plugin/src/ode_bridge.c,
# contact/src/proximity.c), since ode/precision.h and ccd/config.h decide it, not the .pc files.

# ODE's joint rows (plugin/src/ode_joint_rows.c): libode exports the C++ members
# dxJoint<Type>::getInfo1/getInfo2 that dWorldStep calls; pegplus calls them through asm labels.
# They are a private ABI (ODE 0.15 .. 0.16.x, double precision, default visibility): check that
# they link. Without them pegplus refuses joints under its models (README "Joints").
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES ${ODE_LINK_LIBRARIES})
check_c_source_compiles("
typedef struct info1 { unsigned char m, nub; } info1;
extern void ball1(void *, info1 *) __asm__(\"_ZN11dxJointBall8getInfo1EPN7dxJoint5Info1E\");
extern void ball2(void *, double, double, int, double *, double *, int, double *, double *,
                  int *) __asm__(\"_ZN11dxJointBall8getInfo2EddiPdS0_iS0_S0_Pi\");
extern void gear2(void *, double, double, int, double *, double *, int, double *, double *,
                  int *) __asm__(\"_ZN19dxJointTransmission8getInfo2EddiPdS0_iS0_S0_Pi\");
int main(void) { return (ball1 == 0) + (ball2 == 0) + (gear2 == 0); }
" PP_HAVE_ODE_JOINT_ROWS)
unset(CMAKE_REQUIRED_LIBRARIES)
if(PP_HAVE_ODE_JOINT_ROWS)
  set(PP_ODE_JOINT_ROWS 1)
else()
  set(PP_ODE_JOINT_ROWS 0)
  message(WARNING "libode does not export dxJoint::getInfo1/getInfo2 (another ODE build?): "
                  "worlds with joints will run under PP_MODEL_ODE only")
endif()

# Trajectories (examples/scenes/trajectory.c, docs/trajectory.md): zlib for .pptraj.gz, json-c
# for the JSON records; json-c also reads the workbench's scene files (docs/scene-file.md) and
# writes its --json. Only the examples and tests use them, not the library.
find_package(ZLIB REQUIRED)
pkg_check_modules(JSONC REQUIRED IMPORTED_TARGET json-c)
