/* numaware/c/machine.h — the machine model from C.
 *
 * An nw_machine_t describes a NUMA machine: nodes (by OS index), their
 * memory and CPUs, and the SLIT distances. It is loaded from the same SPECs
 * as the C++ Machine::from_spec: "live", an hwloc .xml file, a .json file
 * written by nw_machine_to_json, "@file", or a synthetic description such as
 * "nodes=4 cpus-per-node=2 mem-per-node=512M distances=10,21,31,31/...".
 *
 * Nodes are addressed by OS index except in nw_machine_node_os_index, which
 * maps a position 0..count-1 to an OS index. Functions return -1 with errno
 * set on failure (EINVAL for a NULL argument or a node not in the machine);
 * see nw_error_message(). A machine is immutable, so it may be shared
 * between threads.
 *
 * Where a feature is missing. "live" asks hwloc, which answers on any Linux:
 *   no NUMA       a kernel without NUMA support, or a one-node machine,
 *                 gives one node holding every CPU and all the memory;
 *   no permission hwloc leaves out the CPUs and nodes that the process's
 *                 cpuset does not allow, so a live machine lists only what
 *                 this process may use (a machine from XML, JSON or a
 *                 synthetic description lists what it says);
 *   old kernel    nothing here depends on the kernel version.
 * Every other call only reads the loaded description: no system call.
 */
#ifndef NUMAWARE_C_MACHINE_H
#define NUMAWARE_C_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nw_machine nw_machine_t;

/* Loads the machine named by `spec` into *out. On failure *out is left
 * untouched and errno is EINVAL (malformed spec), ENOENT/EACCES (file), ... */
int nw_machine_load(const char* spec, nw_machine_t** out);
/* Frees a machine; NULL is ignored. */
void nw_machine_destroy(nw_machine_t* machine);

/* Number of NUMA nodes (>= 1). */
int nw_machine_node_count(const nw_machine_t* machine);
/* OS index of the node at `position` (0 .. count-1, ascending OS index). */
int nw_machine_node_os_index(const nw_machine_t* machine, unsigned position);
/* Memory of node `node` in bytes, stored in *bytes. */
int nw_machine_node_memory(const nw_machine_t* machine, unsigned node, uint64_t* bytes);
/* 1 when this process may place memory on node `node`, 0 when the node is
 * there only for its CPUs (its memory is outside the process's cpuset; the
 * JSON form's "left_out" says what else was left out, and by whom). */
int nw_machine_node_memory_allowed(const nw_machine_t* machine, unsigned node);
/* Number of CPUs of node `node`; 0 for a memory-only node. */
int nw_machine_node_cpu_count(const nw_machine_t* machine, unsigned node);
/* Copies up to `capacity` CPU OS indices of node `node` into `cpus`, in
 * ascending order; returns how many the node has (which may exceed
 * capacity). cpus may be NULL when capacity is 0. */
int nw_machine_node_cpus(const nw_machine_t* machine, unsigned node, unsigned* cpus, size_t capacity);
/* SLIT distance from node `from` to node `to` (10 = local). */
int nw_machine_distance(const nw_machine_t* machine, unsigned from, unsigned to);
/* The machine's JSON form, as a string the caller releases with free(). */
int nw_machine_to_json(const nw_machine_t* machine, char** json);

#ifdef __cplusplus
}
#endif

#endif
