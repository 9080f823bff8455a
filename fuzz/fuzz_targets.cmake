# libFuzzer targets: every fuzz/fuzz_<name>.cpp becomes the program build-fuzz/fuzz/fuzz_<name>
# (clang, -fsanitize=fuzzer,address,undefined). Included from CMakeLists.txt when KVBENCH_FUZZ is
# ON; scripts/fuzz.sh configures, builds and runs them. A target says what it links in comment
# lines at its top:
#   // fuzz-sources: datasets/json_parse.cpp ...   project sources compiled into it, instrumented
#   // fuzz-torch                                  links libtorch (uninstrumented)
#   // fuzz-prebuilt                               links the libraries of the normal g++ build
#                                                  (KVBENCH_FUZZ_PREBUILT_DIR, uninstrumented):
#                                                  the task/policy registries, libtorch
# A target with no "fuzz-sources" line links the project libraries themselves, instrumented
# (every library is compiled with the sanitizers in this mode: slow the first time).
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "KVBENCH_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
endif()

set(KVBENCH_FUZZ_PREBUILT_DIR "${CMAKE_SOURCE_DIR}/build" CACHE PATH
    "the normal (g++) build whose static libraries fuzz-prebuilt targets link")
set(KVBENCH_FUZZ_COMPILE_FLAGS -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer -g -O1)

# One object library per instrumented source, shared by every target that lists it.
function(kvbench_fuzz_object file out)
  string(MAKE_C_IDENTIFIER "${file}" id)
  set(target fuzzobj_${id})
  if(NOT TARGET ${target})
    if(NOT EXISTS "${CMAKE_SOURCE_DIR}/${file}")
      message(FATAL_ERROR "fuzz: ${file} (named in a fuzz-sources line) does not exist")
    endif()
    add_library(${target} OBJECT "${CMAKE_SOURCE_DIR}/${file}")
    target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR})
    target_compile_options(${target} PRIVATE ${KVBENCH_FUZZ_COMPILE_FLAGS})
    target_link_libraries(${target} PRIVATE nlohmann_json::nlohmann_json ZLIB::ZLIB PkgConfig::UTF8PROC PkgConfig::ONIGURUMA)
    if(NOT file MATCHES "^(datasets|metrics|tokenizers)/")  # these rooms build without libtorch
      target_link_libraries(${target} PRIVATE ${TORCH_LIBRARIES} CLI11::CLI11)
    endif()
  endif()
  set(${out} ${target} PARENT_SCOPE)
endfunction()

file(GLOB kvbench_fuzz_sources CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/fuzz/fuzz_*.cpp")
set(kvbench_fuzz_all)
foreach(src ${kvbench_fuzz_sources})
  get_filename_component(name ${src} NAME_WE)
  file(STRINGS ${src} annotations REGEX "^// fuzz-")
  set(objects)
  set(annotated OFF)
  set(uses_torch OFF)
  set(prebuilt OFF)
  foreach(line ${annotations})
    if(line MATCHES "^// fuzz-sources:(.*)$")
      set(annotated ON)
      separate_arguments(files UNIX_COMMAND "${CMAKE_MATCH_1}")
      foreach(f ${files})
        kvbench_fuzz_object(${f} obj)
        list(APPEND objects $<TARGET_OBJECTS:${obj}>)
      endforeach()
    elseif(line MATCHES "^// fuzz-torch")
      set(uses_torch ON)
    elseif(line MATCHES "^// fuzz-prebuilt")
      set(prebuilt ON)
      set(uses_torch ON)
    endif()
  endforeach()

  add_executable(${name} ${src} ${objects})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
                         -fno-omit-frame-pointer -g -O1)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/fuzz")
  target_link_libraries(${name} PRIVATE nlohmann_json::nlohmann_json ZLIB::ZLIB Threads::Threads PkgConfig::UTF8PROC
                        PkgConfig::ONIGURUMA)
  if(prebuilt)
    file(GLOB prebuilt_libs "${KVBENCH_FUZZ_PREBUILT_DIR}/libkvb_*.a")
    if(NOT prebuilt_libs)
      message(FATAL_ERROR "fuzz: ${name} links the normal build's libraries, but ${KVBENCH_FUZZ_PREBUILT_DIR} has none "
                          "(build it first: cmake --build build)")
    endif()
    set(whole)
    set(rest)
    foreach(lib ${prebuilt_libs})
      get_filename_component(lib_name ${lib} NAME_WE)
      if(lib_name MATCHES "^libkvb_(policies|tasks)$")  # registries: objects nothing names
        list(APPEND whole ${lib})
      elseif(NOT lib_name STREQUAL "libkvb_harness")    # harness sources are compiled in instead
        list(APPEND rest ${lib})
      endif()
    endforeach()
    target_link_libraries(${name} PRIVATE "-Wl,--whole-archive" ${whole} "-Wl,--no-whole-archive"
                          "-Wl,--start-group" ${rest} "-Wl,--end-group" PkgConfig::UTF8PROC ${CMAKE_DL_LIBS})
  endif()
  if(uses_torch)
    target_link_libraries(${name} PRIVATE ${TORCH_LIBRARIES})
  endif()
  if(NOT annotated)
    kvbench_link_registries(${name})
  endif()
  list(APPEND kvbench_fuzz_all ${name})
endforeach()
add_custom_target(fuzz_targets DEPENDS ${kvbench_fuzz_all})
