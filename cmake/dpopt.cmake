# dpopt.cmake: build a CMake target's CUDA sources through dpopt.
#
#   list(APPEND CMAKE_MODULE_PATH /path/to/dpopt/cmake)   # or include() the file
#   include(dpopt)
#   add_executable(app main.cu kernels.cu)
#   dpopt_target(app)
#
# dpopt_target(<target> [ARCHITECTURES <arch>...] [OPTIONS <dpopt option>...])
#
# For every `.cu` source of <target>, a custom command runs
# `dpopt transform SOURCE -o BUILD_DIR/dpopt/<target>/<path>/<name>.cu` (when the
# source, a header or child source it reads, or dpopt changes; CMake 3.21 and
# newer, through dpopt's --depfile) and the target compiles the generated file
# instead.
# The generated file keeps the source's name (nvcc's default object names stay
# the same) and `#line` markers (nvcc's messages name the source). dpopt gets
# the target's include directories (-I) and compile definitions (-D) and any
# OPTIONS (e.g. `--child-source other.cu`); the source's own directory is
# added to the target's include directories, so that its `#include "..."`
# headers are still found from the build directory. A source without
# `#pragma dp` comes out unchanged.
#
# The target also gets what CUDA dynamic parallelism needs:
#   CUDA_SEPARABLE_COMPILATION ON   (nvcc -rdc=true)
#   CUDA_RESOLVE_DEVICE_SYMBOLS ON  (device link into the target)
#   CUDA_ARCHITECTURES 90           unless ARCHITECTURES is given, the target
#                                   sets CUDA_ARCHITECTURES itself, or
#                                   CMAKE_CUDA_ARCHITECTURES was set (-D or set())
#   the device runtime: CUDA::cudadevrt when FindCUDAToolkit defines it,
#   else cudadevrt by name (CMake's implicit CUDA link libraries hold it too).
#
# dpopt itself: DPOPT_EXECUTABLE (cache), else `dpopt` on PATH, else the
# target/release or target/debug build next to this file.

include_guard(GLOBAL)

if(NOT DPOPT_EXECUTABLE)
  find_program(DPOPT_EXECUTABLE dpopt
    HINTS "${CMAKE_CURRENT_LIST_DIR}/../target/release" "${CMAKE_CURRENT_LIST_DIR}/../target/debug"
    DOC "the dpopt executable")
endif()
if(NOT DPOPT_EXECUTABLE)
  message(FATAL_ERROR "dpopt not found: build it (cargo build --release) or set -DDPOPT_EXECUTABLE=/path/to/dpopt")
endif()

# Was CMAKE_CUDA_ARCHITECTURES chosen by the user (not CMake's compiler default)?
function(_dpopt_user_architectures out)
  set(user FALSE)
  if(DEFINED CACHE{CMAKE_CUDA_ARCHITECTURES})
    get_property(help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
    if(NOT help STREQUAL "CUDA architectures")
      set(user TRUE)  # given on the command line or set(... CACHE ...)
    endif()
    if(NOT "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}")
      set(user TRUE)  # a normal variable set by the project
    endif()
  elseif(DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(user TRUE)
  endif()
  set(${out} ${user} PARENT_SCOPE)
endfunction()

function(dpopt_target target)
  cmake_parse_arguments(DPOPT "" "" "ARCHITECTURES;OPTIONS" ${ARGN})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "dpopt_target: `${target}` is not a target")
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/dpopt/${target}")
  set(includes "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(defines "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(new_sources "")
  set(source_dirs "")
  foreach(source IN LISTS sources)
    get_filename_component(ext "${source}" LAST_EXT)
    if(NOT ext STREQUAL ".cu" OR source MATCHES "^\\$<")
      list(APPEND new_sources "${source}")
      continue()
    endif()
    get_filename_component(absolute "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    file(RELATIVE_PATH relative "${source_dir}" "${absolute}")
    if(relative MATCHES "^\\.\\./")
      get_filename_component(name "${absolute}" NAME)
      string(MD5 tag "${absolute}")
      string(SUBSTRING "${tag}" 0 8 tag)
      set(relative "outside-${tag}/${name}")
    endif()
    set(generated "${out_dir}/${relative}")
    get_filename_component(generated_dir "${generated}" DIRECTORY)
    get_filename_component(original_dir "${absolute}" DIRECTORY)
    # The headers and child sources dpopt copies kernels from are listed in
    # a dependency file (DEPFILE), so that editing one transforms again.
    set(depfile_args "")
    set(depfile_option "")
    if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.21)
      set(depfile_args DEPFILE "${generated}.d")
      set(depfile_option --depfile "${generated}.d")
    endif()
    add_custom_command(
      OUTPUT "${generated}"
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${generated_dir}"
      COMMAND "${DPOPT_EXECUTABLE}" transform "${absolute}" -o "${generated}" ${depfile_option}
              "$<$<BOOL:${includes}>:-I$<JOIN:${includes},;-I>>"
              "$<$<BOOL:${defines}>:-D$<JOIN:${defines},;-D>>"
              ${DPOPT_OPTIONS}
      DEPENDS "${absolute}" "${DPOPT_EXECUTABLE}"
      ${depfile_args}
      COMMENT "dpopt transform ${source}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    list(APPEND new_sources "${generated}")
    list(APPEND source_dirs "${original_dir}")
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${new_sources})
  if(source_dirs)
    list(REMOVE_DUPLICATES source_dirs)
    target_include_directories(${target} PRIVATE ${source_dirs})
  endif()
  set_target_properties(${target} PROPERTIES
    CUDA_SEPARABLE_COMPILATION ON
    CUDA_RESOLVE_DEVICE_SYMBOLS ON)
  if(DPOPT_ARCHITECTURES)
    set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES ${DPOPT_ARCHITECTURES})
  else()
    get_target_property(arch ${target} CUDA_ARCHITECTURES)
    _dpopt_user_architectures(user)
    if(NOT arch OR (NOT user AND "${arch}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}"))
      set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES 90)
    endif()
  endif()
  if(NOT TARGET CUDA::cudadevrt)
    find_package(CUDAToolkit QUIET)
  endif()
  if(TARGET CUDA::cudadevrt)
    target_link_libraries(${target} PRIVATE CUDA::cudadevrt)
  else()
    target_link_libraries(${target} PRIVATE cudadevrt)
  endif()
endfunction()
