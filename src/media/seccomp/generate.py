"""FFmpeg's seccomp filters and the worker container's seccomp profile (issue 50), made with
libseccomp's own Python binding.

Usage: /usr/bin/python3 src/media/seccomp/generate.py [output directory] [profile file]
Needs Debian's `python3-seccomp` (`apt-get install python3-seccomp`). Writes ffmpeg-x86_64.bpf and
ffmpeg-aarch64.bpf: classic BPF programs that bubblewrap installs (`--seccomp FD`) before FFmpeg
starts; and deploy/seccomp/worker.json, the worker container's profile in Docker's format (Compose's
`security_opt: seccomp=...`): the same refusals except what bubblewrap itself needs to build the
sandbox (namespaces, mounts). They are committed; test/unit/media/seccomp-filters checks them
against this script.

What FFmpeg never needs is refused (EPERM), in the spirit of Docker's default profile: namespaces
(unshare, setns, clone with a CLONE_NEW* flag; clone3 is ENOSYS, so the C library falls back to
clone, which can be checked), ptrace and other processes' memory, mounts, kernel modules and kexec,
BPF, keyrings, userfaultfd, perf events, io_uring, clocks, swap, reboot and the like, sockets of
families it never opens (netlink, packet, AF_ALG, vsock...) and the TIOCSTI and TIOCLINUX ioctls.
Everything else
is allowed: this narrows what a decoder bug can reach from inside bubblewrap's namespaces, it does
not replace them.
"""
import errno
import json
import os
import sys

import seccomp

DENIED = [
    # namespaces and privileges
    "unshare", "setns", "pivot_root", "chroot",
    "mount", "umount2", "mount_setattr", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
    # other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # the kernel
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "bpf", "perf_event_open",
    "userfaultfd", "keyctl", "add_key", "request_key", "syslog", "acct", "quotactl", "lookup_dcookie",
    "open_by_handle_at", "name_to_handle_at", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "swapon", "swapoff", "reboot", "vhangup", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "iopl", "ioperm", "uselib",
]
# clone's namespace flags (linux/sched.h): any of them is refused, threads and forks are not.
CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000, "CLONE_NEWTIME": 0x00000080,
}
# Socket families FFmpeg never opens, whose kernel code is reachable from any process: netlink, packet,
# the kernel crypto API (AF_ALG), vsock and other rarely used ones (linux/socket.h).
SOCKET_FAMILIES_DENIED = {
    "AF_KEY": 15, "AF_NETLINK": 16, "AF_PACKET": 17, "AF_RDS": 21, "AF_LLC": 26, "AF_CAN": 29,
    "AF_TIPC": 30, "AF_BLUETOOTH": 31, "AF_ALG": 38, "AF_VSOCK": 40, "AF_XDP": 44,
}
# Terminal ioctls that type into or reach the console (asm-generic/ioctls.h).
IOCTLS_DENIED = {"TIOCSTI": 0x5412, "TIOCLINUX": 0x541C}
ARCHES = {"x86_64": seccomp.Arch.X86_64, "aarch64": seccomp.Arch.AARCH64}


def build(arch) -> seccomp.SyscallFilter:
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    # A new filter holds the machine's own architecture only: swap it for the one asked for.
    if (arch & 0xFFFFFFFF) != seccomp.system_arch():
        f.add_arch(arch)
        f.remove_arch(seccomp.Arch.NATIVE)
    for call in DENIED:
        try:
            f.add_rule(seccomp.ERRNO(errno.EPERM), call)
        except (RuntimeError, ValueError):
            pass  # not a system call of this architecture (iopl on aarch64)
    for flag in CLONE_NEW.values():
        f.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for family in SOCKET_FAMILIES_DENIED.values():
        f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, family))
    for request in IOCTLS_DENIED.values():
        f.add_rule(seccomp.ERRNO(errno.EPERM), "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    return f


# What bubblewrap does to build FFmpeg's sandbox, inside the worker's container.
SANDBOX_BUILDING = {
    "unshare", "setns", "pivot_root", "mount", "umount2", "mount_setattr", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "chroot",
}


def worker_profile() -> dict:
    denied = sorted(call for call in DENIED if call not in SANDBOX_BUILDING)
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"],
        "syscalls": [
            {"names": denied, "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM},
            {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS},
        ],
    }


def main(out: str, profile: str) -> None:
    for name, arch in ARCHES.items():
        with open(os.path.join(out, f"ffmpeg-{name}.bpf"), "wb") as fh:
            build(arch).export_bpf(fh)
    with open(profile, "w") as fh:
        json.dump(worker_profile(), fh, indent=2)
        fh.write("\n")


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    main(
        sys.argv[1] if len(sys.argv) > 1 else here,
        sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "..", "deploy", "seccomp", "worker.json"),
    )
