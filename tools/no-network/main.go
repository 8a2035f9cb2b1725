// haptic-no-network runs a command that cannot reach the network: a seccomp filter, inherited
// by everything the command starts, fails every system call that sends or receives over a
// socket (connect, bind, listen, accept, sendto, sendmsg, sendmmsg; io_uring, which could do
// the same) before the command is executed. Sockets can still be created (HAProxy makes them
// while it parses its configuration), but nothing can be sent from them: no DNS query, no
// connection. It needs no privilege (no_new_privs, then seccomp), so it works under a
// container's default seccomp profile without capabilities, where a network namespace of its
// own (unshare) is refused.
//
// The check sandbox (src/sandbox/haproxy-check-run.ts) runs `haproxy -c` through it:
//
//	haptic-no-network [--] COMMAND [ARG...]
//
// Exit status: the command's; 126 when the filter cannot be installed or does not hold, 127
// when the command cannot be executed (messages start with "haptic-no-network:").
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system calls refused, and the error each returns: "network is unreachable" for those
// that would send, as in a network namespace without interfaces.
var refused = []struct {
	nr    uint32
	errno unix.Errno
}{
	{unix.SYS_CONNECT, unix.ENETUNREACH},
	{unix.SYS_SENDTO, unix.ENETUNREACH},
	{unix.SYS_SENDMSG, unix.ENETUNREACH},
	{unix.SYS_SENDMMSG, unix.ENETUNREACH},
	{unix.SYS_BIND, unix.EACCES},
	{unix.SYS_LISTEN, unix.EACCES},
	{unix.SYS_ACCEPT, unix.EACCES},
	{unix.SYS_ACCEPT4, unix.EACCES},
	{unix.SYS_IO_URING_SETUP, unix.ENOSYS},
	{unix.SYS_IO_URING_ENTER, unix.ENOSYS},
	{unix.SYS_IO_URING_REGISTER, unix.ENOSYS},
}

// Offsets in struct seccomp_data.
const (
	offsetNr   = 0
	offsetArch = 4
)

// x32 system calls (amd64 only) carry this bit; they are refused as a whole.
const x32SyscallBit = 0x40000000

func stmt(code uint16, k uint32) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k}
}

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// filter is the seccomp program: another architecture's calling convention kills the process
// (its numbers differ), a refused call returns its error, everything else is allowed.
func filter() ([]unix.SockFilter, error) {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil, fmt.Errorf("%s is not supported (amd64 and arm64 are)", runtime.GOARCH)
	}
	const (
		load = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	program := []unix.SockFilter{
		stmt(load, offsetArch),
		jump(jeq, arch, 1, 0),
		stmt(ret, unix.SECCOMP_RET_KILL_PROCESS),
		stmt(load, offsetNr),
	}
	if runtime.GOARCH == "amd64" {
		program = append(program,
			jump(jge, x32SyscallBit, 0, 1),
			stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS)),
		)
	}
	for _, call := range refused {
		program = append(program,
			jump(jeq, call.nr, 0, 1),
			stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(call.errno)),
		)
	}
	return append(program, stmt(ret, unix.SECCOMP_RET_ALLOW)), nil
}

// install applies the filter to every thread of this process (and so to what it executes).
func install() error {
	program, err := filter()
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(program)), Filter: &program[0]}
	thread, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(program)
	if errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	}
	if thread != 0 {
		return fmt.Errorf("seccomp(SECCOMP_FILTER_FLAG_TSYNC): thread %d could not take the filter", thread)
	}
	return nil
}

// verify proves the filter holds: a UDP socket can be made, but neither connected nor sent
// from.
func verify() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	target := &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Connect(fd, target); !errors.Is(err, unix.ENETUNREACH) {
		return fmt.Errorf("connect was not refused (%v)", err)
	}
	if err := unix.Sendto(fd, []byte{0}, 0, target); !errors.Is(err, unix.ENETUNREACH) {
		return fmt.Errorf("sendto was not refused (%v)", err)
	}
	return nil
}

func fail(status int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "haptic-no-network: "+format+"\n", args...)
	os.Exit(status)
}

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fail(2, "usage: haptic-no-network [--] COMMAND [ARG...]")
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		fail(127, "failed to execute %s: %v", args[0], err)
	}
	if err := install(); err != nil {
		fail(126, "cannot cut the command off the network: %v", err)
	}
	if err := verify(); err != nil {
		fail(126, "the network filter does not hold: %v", err)
	}
	err = unix.Exec(path, args, os.Environ())
	fail(127, "failed to execute %s: %v", args[0], err)
}
