# The rapid-llm-out-of-tree test (CTest): a user's view of the installed module.
#  1. installs the build into a scratch prefix (cmake --install --prefix);
#  2. configures, builds and runs examples/out-of-tree against it: a scenario found through
#     find_package(rapid-llm), a routing-policy plugin, a program built with rapid-llm.pc;
#  3. checks the scenario's report against the installed command's for the same job, and the
#     plugin through the installed command's --load (byte-identical to the built-in policy it
#     follows).
# Run by CTest as: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DCXX_COMPILER=...
#                  [-DCXX_LAUNCHER=...] -P test/out-of-tree-test.cmake
cmake_minimum_required(VERSION 3.14)

foreach(var BUILD_DIR SOURCE_DIR WORK_DIR CXX_COMPILER)
  if(NOT ${var})
    message(FATAL_ERROR "out-of-tree test: -D${var}=... is required")
  endif()
endforeach()

# Runs a command; fails the test, with its output, unless it exits 0. Its stdout is in
# step_output.
function(step what)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE status
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "out-of-tree test: ${what} failed (${status}):\n${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(oot ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(file include/ns3/rapid-llm-helper.h include/ns3/job-options.h bin/rapid-llm)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "out-of-tree test: the install has no ${file}")
  endif()
endforeach()
file(GLOB_RECURSE config ${prefix}/*/rapid-llm-config.cmake)
file(GLOB_RECURSE pc ${prefix}/*/rapid-llm.pc)
file(GLOB_RECURSE tables ${prefix}/share/rapid-llm/validation/*.csv)
if(NOT config OR NOT pc OR NOT tables)
  message(FATAL_ERROR "out-of-tree test: no package config (${config}), .pc (${pc}) or tables")
endif()

set(configure_args -S ${SOURCE_DIR}/examples/out-of-tree -B ${oot} -DCMAKE_PREFIX_PATH=${prefix}
                   -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release)
if(CXX_LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()
step("configure examples/out-of-tree" ${CMAKE_COMMAND} ${configure_args})
step("build examples/out-of-tree" ${CMAKE_COMMAND} --build ${oot} -j2)

# The installed command uses the installed library, not the build tree's.
step("ldd" ldd ${prefix}/bin/rapid-llm)
string(REGEX MATCH "libns3-rapid-llm[^\n]*" linked "${step_output}")
string(FIND "${linked}" "${prefix}/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "out-of-tree test: the installed rapid-llm links '${linked}'")
endif()

step("pkg-config program" ${oot}/oot-pkg-config)

# The scenario's report is the installed command's for the same job, byte for byte.
set(job --model=gpt-1.7b --tp=2 --dp=4 --layers=4 --gbs=32 --seq=512)
step("scenario" ${oot}/oot-scenario ${job})
set(scenario "${step_output}")
step("installed rapid-llm run" ${prefix}/bin/rapid-llm run ${job} --json)
set(command "${step_output}")
if(NOT scenario STREQUAL command OR NOT scenario MATCHES "\"step_time_s\"")
  message(FATAL_ERROR "out-of-tree test: the scenario's report\n${scenario}\ndiffers from "
                      "rapid-llm run's\n${command}")
endif()

# A job file's backend and routing are the scenario's too, and its echo names them (it echoed
# "flow" and the hardware's routing while the helper ran the job file's).
foreach(jobfile "backend: packet" "routing: ecmp")
  string(REPLACE ": " "-" name "${jobfile}")
  file(WRITE ${WORK_DIR}/${name}.yaml "model: gpt-1.7b\nhardware: a100-sxm-80gb\ngpus: 4\n"
       "${jobfile}\nparallel:\n  tp: 2\nset: [model.layers=1]\nsequence: 128\nglobal_batch: 2\n")
  step("scenario --run=${name}.yaml" ${oot}/oot-scenario --run=${WORK_DIR}/${name}.yaml)
  set(scenario "${step_output}")
  step("installed rapid-llm run --run=${name}.yaml" ${prefix}/bin/rapid-llm run
       --run=${WORK_DIR}/${name}.yaml --json)
  if(NOT scenario STREQUAL step_output)
    message(FATAL_ERROR "out-of-tree test: with the job file '${jobfile}' the scenario's report\n"
                        "${scenario}\ndiffers from rapid-llm run's\n${step_output}")
  endif()
endforeach()

# The plugin, loaded by the installed command, routes as the built-in policy it follows (the
# preset's own, dimension-order).
file(GLOB plugin ${oot}/liboot-routing.so)
step("installed rapid-llm run --load" ${prefix}/bin/rapid-llm run ${job} --json --load=${plugin}
     --routing=oot-dimension-order)
# The echoed input names the policy given; the prediction itself must be the same.
string(JSON routed REMOVE "${step_output}" input)
string(JSON builtin REMOVE "${command}" input)
if(NOT routed STREQUAL builtin)
  message(FATAL_ERROR "out-of-tree test: with the plugin's policy\n${step_output}\ninstead of\n"
                      "${command}")
endif()
message(STATUS "out-of-tree test: passed")
