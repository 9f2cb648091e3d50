# CMake toolchain for cross-building the Windows (x86-64) cudnn-deploy.exe and
# its dependencies with Debian's mingw-w64:
#   cmake -DCMAKE_TOOLCHAIN_FILE=scripts/mingw-toolchain.cmake ...
# Headers and libraries are looked up only in the mingw sysroot and in
# CDD_WIN_DEPS_PREFIX (the dependencies built by scripts/build-windows-deps.sh;
# a cache variable or the environment variable of that name), never in the
# build machine's /usr, so a Linux library cannot slip into the Windows link.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)

set(CDD_MINGW_TRIPLE x86_64-w64-mingw32 CACHE STRING "mingw-w64 target triple")
set(CMAKE_C_COMPILER ${CDD_MINGW_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${CDD_MINGW_TRIPLE}-g++)
set(CMAKE_RC_COMPILER ${CDD_MINGW_TRIPLE}-windres)
set(CMAKE_AR ${CDD_MINGW_TRIPLE}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${CDD_MINGW_TRIPLE}-ranlib CACHE FILEPATH "")

# Both go into the find root: with the ONLY modes below, CMake re-roots every
# search under these, so a CMAKE_PREFIX_PATH outside them would be ignored.
if(NOT DEFINED CDD_WIN_DEPS_PREFIX AND DEFINED ENV{CDD_WIN_DEPS_PREFIX})
  set(CDD_WIN_DEPS_PREFIX "$ENV{CDD_WIN_DEPS_PREFIX}")
endif()
set(CMAKE_FIND_ROOT_PATH /usr/${CDD_MINGW_TRIPLE} ${CDD_WIN_DEPS_PREFIX})
# try_compile() projects re-read this file: hand them the same prefix.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CDD_WIN_DEPS_PREFIX
     CDD_MINGW_TRIPLE)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
