"""Kernel features detected by trying them, outside any sandbox: one place
for the tests and ci/prove_hazard_fixes.py."""
import subprocess
import sys


def i386_entry_faults():
    """Whether this kernel has no i386 system call entry: int $0x80
    (getpid), run from executable memory in a child Python, faults instead
    of answering (a KVM/PVM guest kernel, or ia32_emulation=0)."""
    code = ("import ctypes, mmap\n"
            "m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
            "m.write(bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3]))  # mov eax, 20; int 0x80; ret\n"
            "ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode < 0
