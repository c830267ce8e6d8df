# Script mode (cmake -DSOURCE_DIR=... -DOUTPUT=... -P MhaCommitHeader.cmake), run at every build
# by the mha_commit_header target: writes OUTPUT, defining MHA_GIT_COMMIT as mha_git_commit
# resolves it now: resolved at configure time, it missed every edit made after configuring.
# The file is replaced only when the text changes, so an unchanged commit recompiles nothing.
include("${CMAKE_CURRENT_LIST_DIR}/MhaGitCommit.cmake")
mha_git_commit(_commit "${SOURCE_DIR}")
set(_text "// Written at build time by cmake/MhaCommitHeader.cmake.\n#define MHA_GIT_COMMIT \"${_commit}\"\n")
set(_old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" _old)
endif()
if(NOT _old STREQUAL _text)
  file(WRITE "${OUTPUT}" "${_text}")
endif()
