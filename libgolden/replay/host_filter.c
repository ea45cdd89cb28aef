/* The backend host's system-call filter (host_priv.h replay_host_filter): a seccomp program,
 * raw BPF, installed between fork and exec, so the host and everything it starts run under it.
 * A host that signals any process but itself or its own process group (kill, tkill, tgkill,
 * rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_send_signal), traces or reads or writes another
 * process (ptrace, process_vm_readv/writev, pidfd_getfd), or points SIGIO at another process
 * (fcntl F_SETOWN, F_SETOWN_EX, F_SETSIG; ioctl FIOSETOWN, SIOCSPGRP) is killed on the spot
 * (SIGSYS, which it cannot catch), and the harness reports the crash. Everything else is
 * allowed: the filter is about the harness, not about what a runtime may do to itself. */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "replay/host_priv.h"

#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef F_SETOWN_EX
#define F_SETOWN_EX 15
#endif
#ifndef F_SETSIG
#define F_SETSIG 10
#endif
#ifndef FIOSETOWN
#define FIOSETOWN 0x8901
#endif
#ifndef SIOCSPGRP
#define SIOCSPGRP 0x8902
#endif

/* the low 32 bits of argument i (the kernel reads a pid or a command as an int) */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

#define LD(off) (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v) (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (v))
/* if A == k, jump t instructions ahead, else f */
#define JEQ(k, t, f) (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))

#ifdef FILTER_ARCH
int replay_host_filter(pid_t self)
{
    __u32 me = (__u32)self, group = (__u32)-self;
    /* Layout: arch, number (x32 numbers refused), per-call jumps (forward only, as BPF has
     * it) to the shared tails PID (argument 0 must be 0, self or -self), FCNTL, IOCTL, KILL. */
    enum { N_SIG = 6, N_DENY = 4 };
    struct sock_filter f[64];
    int k = 0;
#define AT(x) do { f[k] = (x); k++; } while (0) /* x may use k, the index of this instruction */
    AT(LD(offsetof(struct seccomp_data, arch)));
    AT(JEQ(FILTER_ARCH, 1, 0));
    AT(RET(SECCOMP_RET_KILL_PROCESS));
    AT(LD(offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1); /* __X32_SYSCALL_BIT */
    AT(RET(SECCOMP_RET_KILL_PROCESS));
#endif
    const __u32 sig[N_SIG] = {
        __NR_kill, __NR_tkill, __NR_tgkill, __NR_rt_sigqueueinfo, __NR_rt_tgsigqueueinfo,
#ifdef __NR_pidfd_send_signal
        __NR_pidfd_send_signal,
#else
        __NR_kill,
#endif
    };
    const __u32 deny[N_DENY] = {
        __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev,
#ifdef __NR_pidfd_getfd
        __NR_pidfd_getfd,
#else
        __NR_ptrace,
#endif
    };
    /* the jumps: N_SIG + N_DENY + 2 tests, then RET ALLOW, then the tails */
    int tests = N_SIG + N_DENY + 2;
    int pid = k + tests + 1, fcntl_t = pid + 6, ioctl_t = fcntl_t + 5,
        kill_t = ioctl_t + 4;
    for (int i = 0; i < N_SIG; i++, k++) /* pidfd_send_signal: a pidfd is no pid: never */
        f[k] = JEQ(sig[i], (__u8)((i == 5 ? kill_t : pid) - k - 1), 0);
    for (int i = 0; i < N_DENY; i++, k++)
        f[k] = JEQ(deny[i], (__u8)(kill_t - k - 1), 0);
    AT(JEQ(__NR_fcntl, (__u8)(fcntl_t - k - 1), 0));
    AT(JEQ(__NR_ioctl, (__u8)(ioctl_t - k - 1), 0));
    f[k++] = RET(SECCOMP_RET_ALLOW); /* none of those */
    /* PID: argument 0 is 0 (own group), self or -self (own group: the host leads a session) */
    AT(LD(ARG_LO(0)));
    AT(JEQ(0, 3, 0)); /* BPF jumps forward only: to the RET ALLOW of this tail */
    AT(JEQ(me, 2, 0));
    AT(JEQ(group, 1, 0));
    AT(RET(SECCOMP_RET_KILL_PROCESS));
    AT(RET(SECCOMP_RET_ALLOW));
    /* FCNTL: F_SETOWN, F_SETOWN_EX, F_SETSIG (SIGIO's target and signal) */
    AT(LD(ARG_LO(1)));
    AT(JEQ(F_SETOWN, (__u8)(kill_t - k - 1), 0));
    AT(JEQ(F_SETOWN_EX, (__u8)(kill_t - k - 1), 0));
    AT(JEQ(F_SETSIG, (__u8)(kill_t - k - 1), 0));
    AT(RET(SECCOMP_RET_ALLOW));
    /* IOCTL: FIOSETOWN, SIOCSPGRP */
    AT(LD(ARG_LO(1)));
    AT(JEQ(FIOSETOWN, (__u8)(kill_t - k - 1), 0));
    AT(JEQ(SIOCSPGRP, (__u8)(kill_t - k - 1), 0));
    AT(RET(SECCOMP_RET_ALLOW));
    f[k++] = RET(SECCOMP_RET_KILL_PROCESS); /* == kill_t */
#undef AT
    if (k != kill_t + 1 || k > (int)(sizeof f / sizeof f[0]))
        return errno = EINVAL, -1; /* the layout above is wrong: no filter rather than a bad one */
    struct sock_fprog prog = {(unsigned short)k, f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0 ? 0 : -1;
}
#else
int replay_host_filter(pid_t self)
{
    (void)self;
    errno = ENOSYS;
    return -1; /* no filter for this architecture: the harness's own checks remain */
}
#endif
