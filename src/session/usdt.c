/* SPDX-License-Identifier: MIT */
/* usdt.c - USDT / SDT probes of an ELF object (usdt.h). */
#include "usdt.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NT_STAPSDT 3

static int add(struct usdt_list *l, const struct usdt_probe *p)
{
	struct usdt_probe *v = realloc(l->v, (l->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	l->v = v;
	v[l->n++] = *p;
	return 0;
}

/* the file offset of a link-time address (a PT_LOAD's), or -1 */
static int64_t file_off(Elf *e, uint64_t addr)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr - ph.p_vaddr < ph.p_filesz)
			return (int64_t)(addr - ph.p_vaddr + ph.p_offset);
	}
	return -1;
}

/* the address of a section by name, 0 if none */
static uint64_t section_addr(Elf *e, const char *name)
{
	size_t shstr;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstr))
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(e, shstr, sh.sh_name)) &&
		    !strcmp(nm, name))
			return sh.sh_addr;
	}
	return 0;
}

/* One note's descriptor: 3 addresses, then provider, name, args. */
static int one_note(Elf *e, const uint8_t *d, size_t n, uint64_t base_now, struct usdt_list *l)
{
	struct usdt_probe p = {0};
	uint64_t a[3];
	const char *s = (const char *)d + 24, *end = (const char *)d + n, *prov, *name, *args;
	int64_t off;

	if (n < 24 + 3)
		return 0;
	memcpy(a, d, 24);
	prov = s;
	if (!(s = memchr(s, 0, (size_t)(end - s))) || ++s >= end)
		return 0;
	name = s;
	if (!(s = memchr(s, 0, (size_t)(end - s))) || ++s > end)
		return 0;
	args = s < end ? s : "";
	if (s < end && !memchr(s, 0, (size_t)(end - s)))
		return 0;
	/* prelink moves code and .stapsdt.base together */
	p.addr = a[0];
	if (a[1] && base_now) {
		p.addr += base_now - a[1];
		if (a[2])
			a[2] += base_now - a[1];
	}
	if (!*prov || !*name || (off = file_off(e, p.addr)) < 0)
		return 0;
	p.fileoff = (uint64_t)off;
	p.sema = a[2];
	if (!(p.provider = strdup(prov)) || !(p.name = strdup(name)) || !(p.args = strdup(args)) ||
	    add(l, &p)) {
		free(p.provider);
		free(p.name);
		free(p.args);
		return -ENOMEM;
	}
	return 0;
}

int usdt_read(const char *path, struct usdt_list *l, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;
	Elf_Scn *scn = NULL;
	uint64_t base_now;
	Elf *e;

	l->v = NULL;
	l->n = 0;
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	elf_version(EV_CURRENT);
	if (!(e = elf_begin(fd, ELF_C_READ, NULL)) || elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		if (e)
			elf_end(e);
		close(fd);
		return -ENOEXEC;
	}
	base_now = section_addr(e, ".stapsdt.base");
	while (!r && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while (!r && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0)
			if (nh.n_type == NT_STAPSDT && nh.n_namesz == 8 &&
			    !memcmp((const char *)d->d_buf + noff, "stapsdt", 8))
				r = one_note(e, (const uint8_t *)d->d_buf + doff, nh.n_descsz, base_now, l);
	}
	elf_end(e);
	close(fd);
	if (r)
		snprintf(err, errlen, "%s", strerror(-r));
	return r;
}

void usdt_free(struct usdt_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].provider);
		free(l->v[i].name);
		free(l->v[i].args);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* an x86-64 register name of any width -> the kernel's 64-bit name */
static const char *reg64(const char *r, size_t n)
{
	static const struct {
		const char *k, *names[4];
	} regs[] = {
		{"ax", {"rax", "eax", "ax", "al"}}, {"bx", {"rbx", "ebx", "bx", "bl"}},
		{"cx", {"rcx", "ecx", "cx", "cl"}}, {"dx", {"rdx", "edx", "dx", "dl"}},
		{"si", {"rsi", "esi", "si", "sil"}}, {"di", {"rdi", "edi", "di", "dil"}},
		{"bp", {"rbp", "ebp", "bp", "bpl"}}, {"sp", {"rsp", "esp", "sp", "spl"}},
		{"ip", {"rip", "eip", "ip", NULL}},
	};
	static char rn[8];

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (int w = 0; w < 4; w++)
			if (regs[i].names[w] && strlen(regs[i].names[w]) == n &&
			    !memcmp(r, regs[i].names[w], n))
				return regs[i].k;
	/* r8..r15, r8d, r8w, r8b */
	if (n >= 2 && r[0] == 'r' && isdigit((unsigned char)r[1])) {
		size_t k = 1;
		int num = 0;

		while (k < n && isdigit((unsigned char)r[k]))
			num = num * 10 + (r[k++] - '0');
		if (num < 8 || num > 15 || (k < n && (k + 1 != n || !strchr("dwb", r[k]))))
			return NULL;
		snprintf(rn, sizeof(rn), "r%d", num);
		return rn;
	}
	return NULL;
}

/* one spec "N@OPERAND" as "argK=FETCHARG:TYPE" appended to out */
static int one_arg(const char *spec, size_t len, int k, char *out, size_t outlen, char *why,
		   size_t whylen)
{
	const char *at = memchr(spec, '@', len), *op;
	size_t oplen, used = strlen(out);
	char type[8], fetch[96];
	long size;
	char *endp;

	if (!at) {
		snprintf(why, whylen, "argument %d '%.*s': no size", k, (int)len, spec);
		return -1;
	}
	size = strtol(spec, &endp, 10);
	if (endp != at || !size || labs(size) > 8 || (labs(size) & (labs(size) - 1))) {
		snprintf(why, whylen, "argument %d '%.*s': bad size", k, (int)len, spec);
		return -1;
	}
	snprintf(type, sizeof(type), "%c%ld", size < 0 ? 's' : 'u', labs(size) * 8);
	op = at + 1;
	oplen = len - (size_t)(op - spec);
	if (oplen > 1 && op[0] == '%') { /* a register */
		const char *r = reg64(op + 1, oplen - 1);

		if (!r)
			goto bad;
		snprintf(fetch, sizeof(fetch), "%%%s", r);
	} else if (oplen > 1 && op[0] == '$') { /* an immediate */
		snprintf(fetch, sizeof(fetch), "\\%.*s", (int)(oplen - 1), op + 1);
	} else { /* memory: [DISP|SYM[+OFF]](%REG) */
		const char *lp = memchr(op, '(', oplen), *rp = op + oplen - 1;
		const char *r;

		if (!lp || *rp != ')' || lp[1] != '%' || memchr(lp, ',', (size_t)(rp - lp)))
			goto bad;
		if (!(r = reg64(lp + 2, (size_t)(rp - lp - 2))))
			goto bad;
		if (!strcmp(r, "ip")) { /* SYM(%rip), SYM+OFF(%rip) */
			if (lp == op || !(isalpha((unsigned char)op[0]) || op[0] == '_'))
				goto bad;
			snprintf(fetch, sizeof(fetch), "@%.*s", (int)(lp - op), op);
		} else {
			long disp = 0;

			if (lp != op) {
				disp = strtol(op, &endp, 0);
				if (endp != lp)
					goto bad;
			}
			snprintf(fetch, sizeof(fetch), "%+ld(%%%s)", disp, r);
		}
	}
	if ((size_t)snprintf(out + used, outlen - used, "%sarg%d=%s:%s", used ? " " : "", k, fetch,
			     type) >= outlen - used) {
		snprintf(why, whylen, "too many arguments");
		return -1;
	}
	return 0;
bad:
	snprintf(why, whylen, "argument %d '%.*s': an operand trail cannot read (index register?)",
		 k, (int)len, spec);
	return -1;
}

char *usdt_fetchargs(const struct usdt_probe *p, char *why, size_t whylen)
{
	size_t cap = 32 + strlen(p->args) * 4;
	char *out = calloc(1, cap);
	const char *s = p->args;
	int k = 0;

	if (!out) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	while (*s) {
		size_t len;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		len = strcspn(s, " ");
		if (one_arg(s, len, ++k, out, cap, why, whylen)) {
			free(out);
			return NULL;
		}
		s += len;
	}
	return out;
}
