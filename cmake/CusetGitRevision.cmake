# Records the git revision of the source tree into a generated .cpp at build time (not only at
# configure time), so run.json names the code that actually produced a result.
set(CUSET_GIT_REVISION_CPP "${CMAKE_BINARY_DIR}/generated/git_revision.cpp")
add_custom_target(cuset_git_revision
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${CUSET_GIT_REVISION_CPP}
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteGitRevision.cmake
  BYPRODUCTS ${CUSET_GIT_REVISION_CPP}
  COMMENT "Recording git revision")
