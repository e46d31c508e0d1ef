# version.cmake: writes kr_version.h with the version and the git revision, at build time, so
# the binary names the commit it was built from. Only touches the file when it changes.
# Run as: cmake -DOUT=kr_version.h -DSRC=<source dir> -DVERSION=x.y.z -P version.cmake
execute_process(COMMAND git describe --always --dirty --tags WORKING_DIRECTORY "${SRC}"
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR rev STREQUAL "")
  set(rev "unknown")
endif()
file(WRITE "${OUT}.tmp" "#define KREACH_VERSION_STRING \"${VERSION} (${rev})\"\n#define KREACH_GIT_REVISION \"${rev}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
