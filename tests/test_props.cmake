# What each test needs beyond the common case, as one table (included by
# tests/CMakeLists.txt after the fake DLLs are defined). A row is
#
#   cdd_test_row(<kind>/<regex>  KEYWORD values...  KEYWORD values...)
#
# kind is unit (tests/unit/test_x.c, ctest unit.test_x), e2e
# (tests/e2e/test_x.py, every ctest entry e2e.test_x.<group> of it) or cli
# (tests/cli/x.t, ctest cli.x; cli/runner_selftest is the runner's own); the
# regex must match the whole name without its extension. A test gets every
# row that matches it, in table order: lists add up, single values (the last
# match) replace, and so does PLATFORMS. Adding a test needs no row unless it needs more than the
# defaults. Keywords (docs/testing.md):
#   PLATFORMS posix|windows...  where it is built and run
#   REQUIRES VAR...             only when each CMake variable VAR is true
#   INCLUDE dir...              include folders, relative to the source root
#   LINK lib...                 libraries linked before the core library
#   DEFINE NAME=VALUE...        compile definitions
#   DEPENDS target...           targets built before it
#   ENV NAME=VALUE...           environment of its ctest entries
#   TIMEOUT seconds             ctest timeout
#   SKIP_CODE n                 the exit code ctest reports as "Skipped"
#   RUN_SERIAL                  never alongside another test (flag)

set(CDD_TEST_ROWS 0)
function(cdd_test_row pattern)
  math(EXPR i "${CDD_TEST_ROWS}")
  set(CDD_TEST_ROW_${i}_PATTERN "${pattern}" PARENT_SCOPE)
  set(CDD_TEST_ROW_${i}_ARGS "${ARGN}" PARENT_SCOPE)
  math(EXPR n "${CDD_TEST_ROWS} + 1")
  set(CDD_TEST_ROWS ${n} PARENT_SCOPE)
endfunction()

# Sets T_SELECTED (built and run here?) and T_<KEYWORD> for key (kind/name).
function(cdd_test_props key)
  set(lists REQUIRES INCLUDE LINK DEFINE DEPENDS ENV)
  set(singles TIMEOUT SKIP_CODE)
  set(T_PLATFORMS)
  foreach(k ${lists} ${singles} RUN_SERIAL)
    set(T_${k})
  endforeach()
  set(i 0)
  while(i LESS CDD_TEST_ROWS)
    if(key MATCHES "^(${CDD_TEST_ROW_${i}_PATTERN})$")
      cmake_parse_arguments(R "RUN_SERIAL" "TIMEOUT;SKIP_CODE" "PLATFORMS;${lists}"
                            ${CDD_TEST_ROW_${i}_ARGS})
      if(R_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "tests/test_props.cmake: row '${CDD_TEST_ROW_${i}_PATTERN}': "
                            "unknown words ${R_UNPARSED_ARGUMENTS}")
      endif()
      foreach(k ${lists})
        list(APPEND T_${k} ${R_${k}})
      endforeach()
      foreach(k ${singles})
        if(DEFINED R_${k})
          set(T_${k} ${R_${k}})
        endif()
      endforeach()
      if(DEFINED R_PLATFORMS)
        set(T_PLATFORMS ${R_PLATFORMS})
      endif()
      if(R_RUN_SERIAL)
        set(T_RUN_SERIAL ON)
      endif()
    endif()
    math(EXPR i "${i} + 1")
  endwhile()
  if(WIN32)
    set(platform windows)
  else()
    set(platform posix)
  endif()
  set(selected OFF)
  if(platform IN_LIST T_PLATFORMS)
    set(selected ON)
  endif()
  foreach(var ${T_REQUIRES})
    if(NOT ${var})
      set(selected OFF)
    endif()
  endforeach()
  set(T_SELECTED ${selected} PARENT_SCOPE)
  foreach(k ${lists} ${singles} RUN_SERIAL)
    set(T_${k} "${T_${k}}" PARENT_SCOPE)
  endforeach()
endfunction()

# The ctest properties of the last cdd_test_props() for test, with extra_env
# (a list, optional) ahead of the table's ENV.
function(cdd_test_apply test)
  set(env ${ARGN} ${T_ENV})
  if(env)
    set_tests_properties(${test} PROPERTIES ENVIRONMENT "${env}")
  endif()
  if(T_TIMEOUT)
    set_tests_properties(${test} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
  if(T_SKIP_CODE)
    set_tests_properties(${test} PROPERTIES SKIP_RETURN_CODE ${T_SKIP_CODE})
  endif()
  if(T_RUN_SERIAL)
    set_tests_properties(${test} PROPERTIES RUN_SERIAL ON)
  endif()
endfunction()

# ---- the table ----------------------------------------------------------------
# Every unit test: both platforms, its own scratch root, 5 minutes.
cdd_test_row("unit/.*" PLATFORMS posix windows TIMEOUT 300
             ENV "CDD_TEST_TMP=${CMAKE_BINARY_DIR}/test-tmp")
# The Win32 layer's own tests, with the platform layer's private header.
cdd_test_row("unit/.*_win32" PLATFORMS windows INCLUDE src/core/platform)
# POSIX only: they fork, call setenv() or mkdir(path, mode), run shell
# commands, read Linux-only files (cache, gpu, layout_tree, ldcache, txn),
# make symlinks (tree, and install / uninstall, whose archives hold .so
# links), or take raw OFD locks (lock; lock_win32 is its counterpart).
cdd_test_row("unit/test_(cache|gpu|install|libtrust|layout_tree|ldcache|txn|tree|uninstall|shell_eval|cpucount|xzmt|lock)"
             PLATFORMS posix)
# test_txn drives the fault hook (cdd_fs_fault_set) directly.
cdd_test_row("unit/test_txn" REQUIRES CDD_FAULT_INJECTION)
# Tests of a stage's internals include that stage's internal header.
cdd_test_row("unit/test_doctor_check" INCLUDE src/core/doctor)
# Makes its deflate streams with zlib (and test_inflate_zlib, the same cases
# against the other backend).
cdd_test_row("unit/test_inflate(_zlib)?" INCLUDE src/core/archive LINK ZLIB::ZLIB)
# The threaded xz decoder's internal header; its cases skip without it.
cdd_test_row("unit/test_xzmt" INCLUDE src/core/archive
             DEFINE "CDD_TEST_XZMT=$<BOOL:${CDD_XZMT}>")
# The command line's option table and shell renderer live in the CLI library.
cdd_test_row("unit/test_(options|shell|shell_eval|cli_hints|report)" LINK cdd_cli)
# The fake cuDNN DLLs (Windows) and where they lie.
cdd_test_row("unit/test_loader_win32" DEPENDS ${CDD_FAKE_DLL_TARGETS}
             ENV "CDD_FAKE_DLLS=${CDD_FAKE_DLLS}"
                 "CDD_FAKE_DLLS_ELSEWHERE=${CDD_FAKE_DLLS_ELSEWHERE}")
# Every e2e script: POSIX trees (symlinks, modes, signals, the Linux .tar.xz
# fixtures); a ctest entry whose tests all skipped exits 77; 10 minutes.
cdd_test_row("e2e/.*" PLATFORMS posix SKIP_CODE 77 TIMEOUT 600
             ENV "CDD_TEST_TMP=${CMAKE_BINARY_DIR}/test-tmp" PYTHONDONTWRITEBYTECODE=1)
# The scripts written for Windows run there too (and skip elsewhere).
cdd_test_row("e2e/test_windows_.*" PLATFORMS posix windows)
# The command-line tables: POSIX (the e2e fixtures), skipped without the
# binary.
cdd_test_row("cli/.*" PLATFORMS posix SKIP_CODE 77 TIMEOUT 300
             ENV "CDD_TEST_TMP=${CMAKE_BINARY_DIR}/test-tmp" PYTHONDONTWRITEBYTECODE=1)
