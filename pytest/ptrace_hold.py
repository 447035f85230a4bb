"""Holding a real bwrap at one instant of its setup, for tests only: right
after it cloned its sandbox and before it reports the sandbox's init on
--info-fd and lets it go on. A window of microseconds, which a loaded
machine sometimes stretches; ptrace makes it last as long as a test needs,
with the real bwrap and no change to the host.

The tracer is this thread: seize a bwrap that has not cloned yet, wait for
its fork event, let the new sandbox side go (it runs on and blocks, waiting
for bwrap's go-ahead), and keep bwrap stopped. Whoever ends bwrap ends it
in that window; `reap` takes the tracer's share of its exit."""
import ctypes
import os
import time

PTRACE_CONT = 7
PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_GETEVENTMSG = 0x4201
PTRACE_O_TRACEFORK, PTRACE_O_TRACEVFORK, PTRACE_O_TRACECLONE = 2, 4, 8
PTRACE_EVENT_FORK, PTRACE_EVENT_VFORK, PTRACE_EVENT_CLONE = 1, 2, 3
WALL = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
_libc.ptrace.restype = ctypes.c_long


def _ptrace(request, pid, addr=None, data=None):
    if _libc.ptrace(request, pid, addr, data) == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"ptrace({request:#x}, {pid}): {os.strerror(err)}")


def ptrace_unavailable():
    """Why this host cannot seize its own children's processes, or None."""
    try:
        scope = open("/proc/sys/kernel/yama/ptrace_scope").read().strip()
    except OSError:
        return None
    return "Yama ptrace_scope=3 forbids ptrace" if scope == "3" else None


def has_children(pid):
    try:
        return any(open(f"/proc/{pid}/task/{t}/children").read().split()
                   for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return True


def _event(status):
    return (status >> 16) & 0xff if os.WIFSTOPPED(status) else None


def hold_after_clone(pid, timeout_s=5.0):
    """Seizes bwrap `pid` (which must not have cloned yet) and returns the
    pid of the sandbox side once bwrap stopped right after cloning it; None
    if bwrap exited or cloned before the seize (then it is left alone)."""
    try:
        _ptrace(PTRACE_SEIZE, pid, None,
                PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE)
    except OSError:
        return None
    if has_children(pid):  # it cloned before the seize: not this one
        _release(pid)
        return None
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        got, status = os.waitpid(pid, WALL | os.WNOHANG)
        if got == 0:
            time.sleep(0.0005)
            continue
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            return None
        if _event(status) in (PTRACE_EVENT_FORK, PTRACE_EVENT_VFORK, PTRACE_EVENT_CLONE):
            msg = ctypes.c_ulong()
            _ptrace(PTRACE_GETEVENTMSG, pid, None, ctypes.byref(msg))
            child = msg.value
            os.waitpid(child, WALL)  # its first stop, as a new tracee
            _ptrace(PTRACE_DETACH, child)
            return child  # bwrap itself stays stopped in its fork event
        # Any other stop (a signal bwrap receives): deliver it and go on.
        sig = os.WSTOPSIG(status) if _event(status) == 0 else 0
        _ptrace(PTRACE_CONT, pid, None, sig)
    _release(pid)
    return None


def detach(pid):
    """Lets a bwrap held in its fork event run on untraced."""
    try:
        _ptrace(PTRACE_DETACH, pid)
    except OSError:
        pass


def _release(pid):
    """Lets a seized bwrap run on untraced."""
    try:
        os.kill(pid, 0)
        _ptrace(PTRACE_INTERRUPT, pid)  # detaching needs a stop
        os.waitpid(pid, WALL)
        _ptrace(PTRACE_DETACH, pid)
    except OSError:
        pass


def reap(pid, timeout_s=10.0):
    """The tracer's share of a held bwrap's end: its exit reaches its real
    parent only once the tracer has seen it. True if it ended in time."""
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        try:
            got, status = os.waitpid(pid, WALL | os.WNOHANG)
        except ChildProcessError:
            return True
        if got and (os.WIFEXITED(status) or os.WIFSIGNALED(status)):
            return True
        time.sleep(0.005)
    return False
