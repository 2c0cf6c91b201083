/* SPDX-License-Identifier: MIT */
/*
 * elfscan.h - finding the event description blobs (the "trail_meta" section
 * of trail/abi.h) in ELF files, without running anything: one file, a
 * program and the shared libraries the dynamic loader would give it, or the
 * objects mapped in a running process. `trail list` and `trail record` use
 * it to know which events exist before a session starts.
 *
 * Every file is treated as hostile: sizes and offsets come from libelf's
 * checked accessors only, blobs are validated by trail__meta_parse(), and a
 * garbage or truncated file gives an error or a short count, never a crash.
 *
 * Return values: the number of (distinct) blobs handed to the callback, or
 * -errno; when a callback returns non-zero the scan stops and that value is
 * returned as is. err (if errlen) always gets a NUL-terminated string:
 *   - on a negative return, a one-line reason ("./x: not an ELF file");
 *   - on a non-negative return, "" unless something was skipped that a user
 *     may want a warning about (a malformed blob, an unreadable mapped
 *     object of a process): then the first such reason.
 */
#ifndef TRAIL_TOOL_ELFSCAN_H
#define TRAIL_TOOL_ELFSCAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Called once per distinct blob (same bytes: reported once per call of a
 * scan function, even when several translation units or several objects
 * carry it). object is the path of the ELF file it came from ("lib.a(x.o)"
 * for an archive member); blob and object are valid during the call only.
 * size is the blob's own size (its header's), and the blob has passed
 * trail__meta_parse(). Return non-zero to stop the scan.
 */
typedef int (*elfscan_cb)(const char *object, const void *blob, size_t size,
			  void *arg);

/*
 * Scan one file's trail_meta section(s): an executable, a shared library, a
 * relocatable object, or a static archive (every ELF member). A file with
 * no such section returns 0. A malformed blob stops the walk of its section
 * (the blobs before it are reported) and is named in err; the count is still
 * returned. Errors: -ENOENT, -EACCES... (open), -EISDIR, -ENOEXEC (not an
 * ELF file, or not a regular file), -EINVAL (an ELF file libelf refuses,
 * e.g. truncated), -ENOMEM.
 */
int elfscan_file(const char *path, elfscan_cb cb, void *arg, char *err,
		 size_t errlen);

/*
 * Scan an executable and the closure of its DT_NEEDED libraries, found the
 * way the glibc loader finds them: already-loaded names (paths, DT_SONAME)
 * first; a name with a '/' as is; else DT_RPATH of the needing object and
 * then of its loaders up to the executable (unless the needing object has a
 * DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH of the needing object,
 * /etc/ld.so.cache, then /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu,
 * /lib64, /lib, /usr/lib (neither of the last two steps for an object with
 * DF_1_NODEFLIB). $ORIGIN, ${ORIGIN}, $PLATFORM and ${PLATFORM} are expanded
 * ($LIB is not). A candidate is accepted only if it is an ET_DYN of the
 * executable's ELF class, data encoding and machine. Each object is scanned
 * once, breadth first like the loader, the executable first. A library that
 * cannot be found, opened or parsed is skipped silently. Errors are about
 * the executable itself, as for elfscan_file() (an archive: -ENOEXEC).
 */
int elfscan_program(const char *exe, elfscan_cb cb, void *arg, char *err,
		    size_t errlen);

/*
 * Scan every distinct file (by device and inode) mapped executable or
 * read-only in a running process, from /proc/PID/maps. A file is opened
 * through /proc/PID/root/PATH (the process's own mount namespace), then
 * PATH, then /proc/PID/map_files/START-END (needed for a deleted file;
 * needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE); a file that is not ELF
 * (locale archive, fonts) is skipped silently, one that cannot be opened at
 * all is named in err. Errors: -ESRCH (no such process), -EACCES (maps not
 * readable: not our process, or ptrace restrictions), -ENOMEM.
 */
int elfscan_pid(pid_t pid, elfscan_cb cb, void *arg, char *err, size_t errlen);

/*
 * The same three with options. opts may be NULL; sz makes the struct
 * extensible (fields past sz are taken as zero).
 */
struct elfscan_opts {
	size_t sz; /* sizeof(struct elfscan_opts) */
	/*
	 * Called for each ELF object before its blobs, even when it has none
	 * (e.g. to list the libraries of a program); non-zero stops the scan
	 * and is returned.
	 */
	int (*object_cb)(const char *object, void *arg);
	/* If set, receives the number of malformed blobs met. */
	int *bad;
	/* elfscan_program: used instead of getenv("LD_LIBRARY_PATH") when not
	 * NULL ("" for none), e.g. the environment the program will get. */
	const char *ld_library_path;
	/* elfscan_program: the loader cache to read instead of
	 * /etc/ld.so.cache when not NULL ("" for none). */
	const char *ld_cache;
};

int elfscan_file_opts(const char *path, elfscan_cb cb, void *arg,
		      const struct elfscan_opts *opts, char *err,
		      size_t errlen);
int elfscan_program_opts(const char *exe, elfscan_cb cb, void *arg,
			 const struct elfscan_opts *opts, char *err,
			 size_t errlen);
int elfscan_pid_opts(pid_t pid, elfscan_cb cb, void *arg,
		     const struct elfscan_opts *opts, char *err, size_t errlen);

/* Does the ELF file hold what its header says (its program and section
 * header tables)? A truncated copy does not. NULL, or why not. */
struct Elf;
const char *elfscan_extent(struct Elf *elf, uint64_t file_size, char *buf, size_t n);

/* The n bytes at link-time address addr of elf (an Elf *), from the
 * section holding them (allocated, with bytes in the file): 0, or -1. For
 * src/arch's jump table reader (trail_arch_table_reader), ctx the Elf. */
int elfscan_vaddr_read(void *elf, uintptr_t addr, void *buf, size_t n);
/* The same, the section last read kept in ctx (a struct elfscan_vread
 * with elf set, zeroed otherwise, living no longer than the Elf): what a
 * walk over thousands of unwind entries reads through. */
struct elfscan_vread {
	void *elf;
	uint64_t lo, hi;
	const char *buf;
};
int elfscan_vaddr_read_cached(void *ctx, uintptr_t addr, void *buf, size_t n);

/* Is path a static program (an ELF executable without PT_INTERP: no
 * dynamic loader for LD_PRELOAD, no dlopen to call)? 1 or 0. */
int elfscan_is_static(const char *path);

#endif /* TRAIL_TOOL_ELFSCAN_H */
