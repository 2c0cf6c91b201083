/* SPDX-License-Identifier: MIT */
/*
 * usdt.h - USDT / SystemTap SDT probes of an ELF object: the
 * .note.stapsdt notes (owner "stapsdt", type 3) that <sys/sdt.h>'s
 * DTRACE_PROBE / STAP_PROBE macros leave, one per probe site: its
 * address (a nop), the .stapsdt.base address it was linked against (a
 * prelinked object moved its code and sections together), its semaphore
 * (a u16 the program tests before preparing the arguments, 0 if none),
 * provider, name and argument specs ("-4@%eax 8@-16(%rbp) 8@$5").
 *
 * Each becomes the event sdt_PROVIDER:NAME (perf's names), a probe at
 * the nop's instruction with arguments arg1..argN converted to the
 * kernel's fetch-args: N@%REG -> %REG, N@OFF(%REG) -> +OFF(%REG),
 * N@$IMM -> \IMM, N@SYM(%rip) / N@SYM+OFF(%rip) -> @SYM[+OFF], typed by
 * N: a size in bytes, negative when signed (-4: s32, 8: u64).
 */
#ifndef TRAIL_TOOLS_USDT_H
#define TRAIL_TOOLS_USDT_H

#include <stddef.h>
#include <stdint.h>

struct usdt_probe {
	char *provider;
	char *name;
	char *args;       /* the note's argument specs, as written */
	uint64_t addr;    /* link-time address of the nop */
	uint64_t fileoff; /* its file offset */
	uint64_t sema;    /* link-time address of the semaphore, 0: none */
};

struct usdt_list {
	struct usdt_probe *v;
	size_t n;
};

/* The probes of path, in note order. 0 (n may be 0), or -errno with err
 * set (-ENOEXEC: not ELF). */
int usdt_read(const char *path, struct usdt_list *l, char *err, size_t errlen);
void usdt_free(struct usdt_list *l);

/* The kernel fetch-args of p's arguments ("arg1=%ax:s32 arg2=..."),
 * malloc'd; NULL with why set when one cannot be converted (an index
 * register, a high-byte register...). */
char *usdt_fetchargs(const struct usdt_probe *p, char *why, size_t whylen);

#endif /* TRAIL_TOOLS_USDT_H */
