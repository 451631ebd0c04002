# tile_add_kernels: a kernel of a .tl file built into a target at build time, through tilec pack's
# bundle and generated launcher (docs/abi.md, section 12).  Once per kernel:
#
#   tile_add_kernels(my_program
#     KERNEL add_kernel SOURCE kernels/vector_add.tl
#     SIGNATURES "*fp32:16,*fp32:16,*fp32:16,i32" "*fp32,*fp32,*fp32,i32"
#     ARCHS sm_80 sm_90a
#     DEFINES BLOCK_SIZE=1024
#     GRID "(triton.cdiv(n_elements, meta['BLOCK_SIZE']),)")
#
# adds add_kernel.c to my_program, puts add_kernel.h on its include path, and reruns tilec when the
# .tl file (or tilec) changes.  CONFIG N or all (default all) picks the bundled autotune configs.
function(tile_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 TK "" "KERNEL;SOURCE;GRID;CONFIG" "SIGNATURES;ARCHS;DEFINES")
  foreach(required KERNEL SOURCE SIGNATURES ARCHS)
    if(NOT TK_${required})
      message(FATAL_ERROR "tile_add_kernels(${target}): ${required} is required")
    endif()
  endforeach()
  if(TK_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tile_add_kernels(${target}): unknown arguments ${TK_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(source "${TK_SOURCE}" ABSOLUTE)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/tile_kernels")
  set(stem "${dir}/${TK_KERNEL}")
  set(args pack "${source}" --kernel "${TK_KERNEL}" -o "${stem}.tlk" --launcher "${stem}")
  foreach(signature IN LISTS TK_SIGNATURES)
    list(APPEND args --signature "${signature}")
  endforeach()
  list(JOIN TK_ARCHS "," archs)
  list(APPEND args --arch "${archs}")
  foreach(define IN LISTS TK_DEFINES)
    list(APPEND args -D "${define}")
  endforeach()
  if(TK_GRID)
    list(APPEND args --grid "${TK_GRID}")
  endif()
  if(TK_CONFIG)
    list(APPEND args --config "${TK_CONFIG}")
  endif()
  add_custom_command(OUTPUT "${stem}.c" "${stem}.h" "${stem}.tlk"
                     COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}"
                     COMMAND tile::tilec ${args}
                     DEPENDS "${source}" tile::tilec
                     COMMENT "tilec pack ${TK_KERNEL} (${TK_SOURCE})" VERBATIM)
  target_sources(${target} PRIVATE "${stem}.c")
  target_include_directories(${target} PRIVATE "${dir}")
endfunction()
