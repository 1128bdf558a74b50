/* gw_seccomp: the kernels' system-call filter, built with libseccomp (see
 * gw_seccomp.h). Threads: the thread that builds the sandbox. */
#include "gw_seccomp.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <unistd.h>

#include <seccomp.h>

/* Namespaces a kernel may not make: clone and unshare with any of these
 * flags fail with EPERM. */
#define S_NS_FLAGS                                                                          \
    (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC               \
     | CLONE_NEWUTS | CLONE_NEWCGROUP | 0x00000080 /* CLONE_NEWTIME */)

/* Calls refused outright, whatever their arguments. */
static const char *const s_denied[] = {
    /* mounts and root changes */
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    /* other namespaces */
    "setns",
    /* other processes' memory */
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    /* kernel keyrings */
    "keyctl", "add_key", "request_key",
    /* BPF, perf, userfaultfd, io_uring */
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register",
    /* the machine itself */
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "sethostname", "setdomainname", "syslog", "quotactl", "nfsservctl",
    "lookup_dcookie", "vhangup", "iopl", "ioperm", "name_to_handle_at", "open_by_handle_at",
    "uselib", "ustat", "sysfs", "_sysctl", "fanotify_init",
};

/* Adds one rule; a name this architecture lacks is skipped. */
static int
s_rule (scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n_args,
        const struct scmp_arg_cmp *args)
{
    int nr = seccomp_syscall_resolve_name (name);
    if (nr == __NR_SCMP_ERROR)
        return 0;
    return seccomp_rule_add_array (ctx, action, nr, n_args, args);
}

/* The rules that look at arguments. */
static int
s_argument_rules (scmp_filter_ctx ctx)
{
    uint32_t eperm = SCMP_ACT_ERRNO (EPERM);
    int rc = 0;
    /* clone(flags, ...) and unshare(flags): refused when any namespace flag
       is set (masked value != 0), i.e. allowed only when it is 0 */
    for (unsigned bit = 0; bit < 32 && !rc; bit++) {
        uint64_t flag = 1ull << bit;
        if (!(S_NS_FLAGS & flag))
            continue;
        struct scmp_arg_cmp has = SCMP_A0 (SCMP_CMP_MASKED_EQ, flag, flag);
        rc = s_rule (ctx, eperm, "clone", 1, &has);
        if (!rc)
            rc = s_rule (ctx, eperm, "unshare", 1, &has);
    }
    /* clone3 hides its flags in memory: ENOSYS makes libc use clone */
    if (!rc)
        rc = s_rule (ctx, SCMP_ACT_ERRNO (ENOSYS), "clone3", 0, NULL);
    /* no typing into the controlling terminal of someone else */
    struct scmp_arg_cmp sti = SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
    if (!rc)
        rc = s_rule (ctx, eperm, "ioctl", 1, &sti);
    /* personality: no turning off address-space randomisation, no
       executable reads; bit 31 (set only by the 0xffffffff query) keeps
       the query allowed */
    static const unsigned long risky[] = {ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC};
    for (size_t i = 0; !rc && i < 2; i++) {
        struct scmp_arg_cmp flag = SCMP_A0 (SCMP_CMP_MASKED_EQ, risky[i] | 0x80000000ul,
                                            risky[i]);
        rc = s_rule (ctx, eperm, "personality", 1, &flag);
    }
    return rc;
}

int
gw_seccomp_program_fd (char *err, size_t err_len)
{
    scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf (err, err_len, "libseccomp cannot make a filter");
        return -ENOMEM;
    }
    /* another architecture's entry points would bypass the rules */
    int rc = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    for (size_t i = 0; !rc && i < sizeof s_denied / sizeof s_denied[0]; i++)
        rc = s_rule (ctx, SCMP_ACT_ERRNO (EPERM), s_denied[i], 0, NULL);
    if (!rc)
        rc = s_argument_rules (ctx);
    int fd = -1;
    if (!rc) {
        fd = memfd_create ("codebox-seccomp", MFD_CLOEXEC);
        if (fd < 0)
            rc = -errno;
        else if ((rc = seccomp_export_bpf (ctx, fd)) == 0 && lseek (fd, 0, SEEK_SET) < 0)
            rc = -errno;
    }
    seccomp_release (ctx);
    if (rc) {
        snprintf (err, err_len, "cannot build the seccomp filter: %s", strerror (-rc));
        if (fd >= 0)
            close (fd);
        return rc < 0 ? rc : -EINVAL;
    }
    return fd;
}
