/* Which of the kernel's other system call entries exist on this machine,
 * detected, never assumed: the i386 entry (int $0x80; gone with
 * ia32_emulation=0 or on some guest kernels, where it faults) and the x32
 * entry (CONFIG_X86_X32_ABI). Every cell's seccomp filter denies both; a
 * kernel without them makes those attacks impossible outright. */
#ifndef KERNEL_ABI_H
#define KERNEL_ABI_H

#include <jansson.h>

/* {"i386": "present" | "absent: ...", "x32": "present" | "absent: ..."};
 * the i386 probe runs in a forked child, so a fault ends only the child. */
json_t *kernel_abi_json(void);

#endif
