# Writes the .java files of DIR, one quoted path a line, to OUTPUT (a javac @file).
file(GLOB sources ${DIR}/*.java)
list(SORT sources)
set(text "")
foreach(s IN LISTS sources)
  string(APPEND text "\"${s}\"\n")
endforeach()
file(WRITE ${OUTPUT} "${text}")
