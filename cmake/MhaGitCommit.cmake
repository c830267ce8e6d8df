# mha_git_commit(OUT_VAR SOURCE_DIR): the commit the build reports. $ENV{MHA_GIT_COMMIT}, when
# set, wins: it names the tree's real commit where the tree is a copy (shipped to a GPU machine,
# unpacked inside some other repository) and `git rev-parse` would name an unrelated one. Else
# `git rev-parse --short HEAD` in SOURCE_DIR, with "-dirty" appended when a tracked file under
# SOURCE_DIR differs from HEAD (the binary was not built from that commit alone), else "unknown".
# Works in script mode too (cmake -P), which is how tests/test_build_info.py checks it.
function(mha_git_commit out_var source_dir)
  if(DEFINED ENV{MHA_GIT_COMMIT} AND NOT "$ENV{MHA_GIT_COMMIT}" STREQUAL "")
    set(${out_var} "$ENV{MHA_GIT_COMMIT}" PARENT_SCOPE)
    return()
  endif()
  set(_commit "unknown")
  if(NOT GIT_EXECUTABLE)
    find_program(GIT_EXECUTABLE git)
  endif()
  if(GIT_EXECUTABLE)
    execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short HEAD
                    WORKING_DIRECTORY "${source_dir}"
                    OUTPUT_VARIABLE _rev OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _rc ERROR_QUIET)
    if(_rc EQUAL 0 AND _rev)
      set(_commit "${_rev}")
      execute_process(COMMAND "${GIT_EXECUTABLE}" status --porcelain --untracked-files=no -- .
                      WORKING_DIRECTORY "${source_dir}"
                      OUTPUT_VARIABLE _changed OUTPUT_STRIP_TRAILING_WHITESPACE
                      RESULT_VARIABLE _status_rc ERROR_QUIET)
      if(NOT _status_rc EQUAL 0 OR _changed)
        string(APPEND _commit "-dirty")
      endif()
    endif()
  endif()
  set(${out_var} "${_commit}" PARENT_SCOPE)
endfunction()
