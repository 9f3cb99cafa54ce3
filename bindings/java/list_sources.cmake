# Writes the .java files of DIR that SWIG wrote in its last run, one quoted path a line, to
# OUTPUT (a javac @file). SWIG writes every class in one run, close in time to its
# wrapper WRAP; a class from an earlier run (of a struct the interface no longer wraps)
# is older and is deleted, or an incremental build would compile it against the new
# native methods. The margin is a minute, not seconds: on a loaded machine one SWIG run
# has taken more than 2 s between its first and last file, and a fresh class must never
# be dropped.
file(GLOB sources ${DIR}/*.java)
list(SORT sources)
file(TIMESTAMP ${WRAP} wrap_time "%s" UTC)
set(text "")
foreach(s IN LISTS sources)
  file(TIMESTAMP ${s} source_time "%s" UTC)
  math(EXPR age "${wrap_time} - ${source_time}")
  if(age GREATER 60)
    file(REMOVE ${s})
  else()
    string(APPEND text "\"${s}\"\n")
  endif()
endforeach()
file(WRITE ${OUTPUT} "${text}")
