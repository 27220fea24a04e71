# cmake -DSYSTEM_DIR=... -DTOOL=... -DOUT_DIR=... -P ValgrindLibDir.cmake
# Makes OUT_DIR a VALGRIND_LIB directory: a symbolic link to every file of
# the system's valgrind directory, and a copy of the tool.
file(MAKE_DIRECTORY ${OUT_DIR})
file(GLOB _old ${OUT_DIR}/*)
foreach(f IN LISTS _old)
  file(REMOVE ${f})
endforeach()
file(GLOB _files ${SYSTEM_DIR}/*)
foreach(f IN LISTS _files)
  get_filename_component(_name ${f} NAME)
  file(CREATE_LINK ${f} ${OUT_DIR}/${_name} SYMBOLIC)
endforeach()
get_filename_component(_tool ${TOOL} NAME)
file(COPY_FILE ${TOOL} ${OUT_DIR}/${_tool})
