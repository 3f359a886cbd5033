# The C++ examples of a Markdown file are tests: kiln_add_readme_tests(<file> [<prefix>])
# writes each ```cpp block that follows a line `<!-- <prefix>-test -->` to
# <build>/<prefix>/<prefix>_example_<n>.cpp at configure time, compiles it against kiln and
# runs it with ctest (it must exit 0). <prefix> defaults to `readme` (README.md:
# `<!-- readme-test -->`, tests readme_example_<n>); CONTRIBUTING.md uses `contributing`.
# Editing the file makes the next build reconfigure. A marker without a ```cpp block right
# after it is an error, and so is a file without any marker.
function(kiln_add_readme_tests readme)
  set(prefix readme)
  if(ARGC GREATER 1)
    set(prefix ${ARGV1})
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${readme})
  get_filename_component(readme_name ${readme} NAME)
  file(READ ${readme} text)
  set(marker "<!-- ${prefix}-test -->")
  set(out_dir ${CMAKE_BINARY_DIR}/${prefix})
  file(MAKE_DIRECTORY ${out_dir})
  set(n 0)
  while(TRUE)
    string(FIND "${text}" "${marker}" at)
    if(at EQUAL -1)
      break()
    endif()
    string(LENGTH "${marker}" marker_length)
    math(EXPR at "${at} + ${marker_length}")
    string(SUBSTRING "${text}" ${at} -1 text)
    # The block must start on the next non-blank line.
    string(REGEX MATCH "^[ \t\r\n]*```cpp[ \t]*\r?\n" fence "${text}")
    if(fence STREQUAL "")
      message(FATAL_ERROR "${readme}: \"${marker}\" must be followed by a ```cpp block")
    endif()
    string(LENGTH "${fence}" fence_length)
    string(SUBSTRING "${text}" ${fence_length} -1 text)
    string(FIND "${text}" "\n```" end)
    if(end EQUAL -1)
      message(FATAL_ERROR "${readme}: unterminated ```cpp block after \"${marker}\"")
    endif()
    string(SUBSTRING "${text}" 0 ${end} code)
    string(SUBSTRING "${text}" ${end} -1 text)
    math(EXPR n "${n} + 1")
    set(name ${prefix}_example_${n})
    # Rewritten only when the code changed, so an unrelated edit of the file rebuilds nothing.
    file(CONFIGURE OUTPUT ${out_dir}/${name}.cpp
         CONTENT "// Extracted from ${readme_name} by cmake/readme_tests.cmake: edit ${readme_name}.\n@code@\n"
         @ONLY)
    add_executable(${name} ${out_dir}/${name}.cpp)
    target_link_libraries(${name} PRIVATE kiln)
    # Examples may read the clone's fixtures: KILN_SOURCE_DIR "/tests/...". Only those that
    # name it get it: a definition holding the clone's path differs from clone to clone, so
    # ccache could never reuse that compilation in another clone (CI builds a fresh one).
    if(code MATCHES "KILN_SOURCE_DIR")
      target_compile_definitions(${name} PRIVATE KILN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    endif()
    set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${out_dir})
    add_test(NAME ${name} COMMAND ${name})
  endwhile()
  if(n EQUAL 0)
    message(FATAL_ERROR "${readme}: no \"${marker}\" block found")
  endif()
endfunction()
