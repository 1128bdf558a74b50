/* gw_seccomp: the system-call filter every sandboxed kernel runs under
 * (bubblewrap's --seccomp FD). It refuses, with EPERM, what a kernel never
 * needs and what kernel exploits start with: new namespaces of any kind
 * (user namespaces above all), mounts, ptrace and cross-process memory
 * access, keyrings, BPF, perf events, module and kexec loading,
 * userfaultfd, terminal input injection, and personality changes that
 * turn off address-space randomisation; clone3 answers ENOSYS so C
 * libraries fall back to clone, whose flags the filter can read. System
 * calls of another architecture (32-bit entry points) kill the process.
 *
 * Threads: gw_seccomp_program_fd runs once, in the thread that builds the
 * sandbox; the descriptor it returns is read-only afterwards. */
#ifndef GW_SECCOMP_H
#define GW_SECCOMP_H

#include <stddef.h>

/* Builds the filter and returns a memfd (close-on-exec) holding its BPF
 * program, ready for bubblewrap's --seccomp after it is reopened for each
 * child (see ks_spawn_extra_t.seccomp_fd). Returns -errno and says why in
 * err when libseccomp cannot build it. */
int gw_seccomp_program_fd (char *err, size_t err_len);

#endif
