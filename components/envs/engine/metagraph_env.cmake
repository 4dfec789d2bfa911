# metagraph_add_env_module(TARGET MODULE_NAME SOURCE [INCLUDE_DIRS ...] [LINK ...])
#
# Builds a family of environments (one module.cpp over task headers, engine/module.h) as a
# Python extension module named MODULE_NAME, against the engine's headers (the folder above
# this file), nanobind, NumPy's C API and the XLA FFI headers of the installed jaxlib.
# The caller has found Python (Interpreter Development.Module) and nanobind first, e.g.:
#
#   find_package(Python 3.11 COMPONENTS Interpreter Development.Module REQUIRED)
#   execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
#                   OUTPUT_STRIP_TRAILING_WHITESPACE OUTPUT_VARIABLE nanobind_ROOT)
#   find_package(nanobind CONFIG REQUIRED)
#   execute_process(COMMAND "${Python_EXECUTABLE}" -c
#                   "import components.envs.engine as e; print(e.cmake_file())"
#                   OUTPUT_STRIP_TRAILING_WHITESPACE OUTPUT_VARIABLE METAGRAPH_ENV_CMAKE)
#   include("${METAGRAPH_ENV_CMAKE}")
#   metagraph_add_env_module(catch_env _catch catch_module.cpp)
set(METAGRAPH_ENGINE_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/..")

# metagraph_mirror(SOURCE DESTINATION): every file of the folder SOURCE copied into DESTINATION,
# each only where its content changed (a file that is the same keeps its time stamp). Headers
# and sources of the build environment are compiled from such a mirror in the build tree:
# pip builds each install in a fresh environment under a new /tmp path, and compiling from
# that path would rebuild everything on every later `pip install -e ".[extra]"`.
function(metagraph_mirror source destination)
  file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${source}" "${source}/*")
  foreach(file IN LISTS files)
    if(NOT file MATCHES "__pycache__")
      get_filename_component(folder "${destination}/${file}" DIRECTORY)
      file(MAKE_DIRECTORY "${folder}")
      file(COPY_FILE "${source}/${file}" "${destination}/${file}" ONLY_IF_DIFFERENT)
    endif()
  endforeach()
endfunction()

function(metagraph_add_env_module target module_name source)
  cmake_parse_arguments(ARG "" "" "INCLUDE_DIRS;LINK" ${ARGN})
  if(NOT METAGRAPH_FFI_HEADERS)  # once per configure: mirrored (see above)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c "import jax; print(jax.ffi.include_dir())"
      OUTPUT_STRIP_TRAILING_WHITESPACE OUTPUT_VARIABLE ffi_dir RESULT_VARIABLE ffi_result)
    if(NOT ffi_result EQUAL 0 OR NOT EXISTS "${ffi_dir}/xla/ffi/api/ffi.h")
      message(FATAL_ERROR "metagraph: cannot find the XLA FFI headers (jax.ffi.include_dir()); is jaxlib installed in the build environment?")
    endif()
    metagraph_mirror("${ffi_dir}" "${CMAKE_BINARY_DIR}/deps/xla_ffi")
    set(METAGRAPH_FFI_HEADERS "${CMAKE_BINARY_DIR}/deps/xla_ffi" PARENT_SCOPE)
    set(METAGRAPH_FFI_HEADERS "${CMAKE_BINARY_DIR}/deps/xla_ffi")
  endif()
  if(NOT METAGRAPH_NUMPY_HEADERS)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c "import numpy; print(numpy.get_include())"
      OUTPUT_STRIP_TRAILING_WHITESPACE OUTPUT_VARIABLE numpy_dir RESULT_VARIABLE numpy_result)
    if(NOT numpy_result EQUAL 0)
      message(FATAL_ERROR "metagraph: cannot find NumPy's headers (numpy.get_include())")
    endif()
    metagraph_mirror("${numpy_dir}" "${CMAKE_BINARY_DIR}/deps/numpy")
    set(METAGRAPH_NUMPY_HEADERS "${CMAKE_BINARY_DIR}/deps/numpy" PARENT_SCOPE)
    set(METAGRAPH_NUMPY_HEADERS "${CMAKE_BINARY_DIR}/deps/numpy")
  endif()
  find_package(Threads REQUIRED)
  # NOMINSIZE: nanobind builds for size (-Os) by default, which turns off loop vectorization.
  nanobind_add_module(${target} NB_STATIC NOMINSIZE ${source})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${module_name} CXX_STANDARD 17
                        CXX_STANDARD_REQUIRED ON)
  target_include_directories(${target} PRIVATE "${METAGRAPH_ENGINE_INCLUDE_DIR}"
    "${METAGRAPH_FFI_HEADERS}" "${METAGRAPH_NUMPY_HEADERS}" ${ARG_INCLUDE_DIRS})
  target_link_libraries(${target} PRIVATE Threads::Threads ${CMAKE_DL_LIBS} ${ARG_LINK})
  # errno and floating-point traps are never read: without them GCC inlines sqrt, fuses sin/cos
  # and turns comparisons into SIMD masks (same IEEE results). No contraction into fused
  # multiply-adds: the dynamics round as the reference's float64 NumPy does.
  target_compile_options(${target} PRIVATE -fno-math-errno -fno-trapping-math -ffp-contract=off)
  if(METAGRAPH_ARCH)
    include(CheckCXXCompilerFlag)
    check_cxx_compiler_flag("-march=${METAGRAPH_ARCH}" METAGRAPH_HAS_MARCH)
    if(METAGRAPH_HAS_MARCH)
      target_compile_options(${target} PRIVATE "-march=${METAGRAPH_ARCH}")
    endif()
  endif()
endfunction()
