/* NVIDIA's platforms (the keys of redistrib_<v>.json) and the machines
 * their libraries are built for: a base-level fact the manifest, the
 * binary-format readers and the layouts all name (src/core/platforms.c). */
#ifndef CDD_PLATFORM_H
#define CDD_PLATFORM_H

/* NVIDIA's platform names (the keys of redistrib_<v>.json). linux-sbsa is
 * the server AArch64 build (Grace, GH200), linux-aarch64 the Jetson (L4T)
 * one: the same machine, different builds, so a name, never the ELF header,
 * tells them apart. */
enum cdd_platform {
    CDD_PLATFORM_WINDOWS_X86_64 = 0,
    CDD_PLATFORM_LINUX_X86_64,
    CDD_PLATFORM_LINUX_SBSA,
    CDD_PLATFORM_LINUX_AARCH64,
    CDD_PLATFORM_WINDOWS_ARM64,
    CDD_PLATFORM_COUNT
};

/* The instruction set a platform's libraries are built for. */
enum cdd_machine {
    CDD_MACHINE_X86_64 = 0,
    CDD_MACHINE_AARCH64,
    CDD_MACHINE_COUNT
};

const char *cdd_platform_name(enum cdd_platform p);
int cdd_platform_parse(const char *s, enum cdd_platform *out);
/* The platform this executable runs on (an AArch64 Linux host counts as
 * linux-sbsa: the two AArch64 builds share the machine). */
enum cdd_platform cdd_platform_host(void);
/* Windows platform (DLLs, import libraries, no symlinks)? */
int cdd_platform_is_windows(enum cdd_platform p);
/* The machine of a platform's libraries, and of this host. */
enum cdd_machine cdd_platform_machine(enum cdd_platform p);
enum cdd_machine cdd_host_machine(void);
/* "x86-64", "AArch64" (messages); the ELF e_machine (62, 183) and PE
 * machine (0x8664, 0xAA64) of a machine's libraries. */
const char *cdd_machine_name(enum cdd_machine m);
int cdd_machine_elf(enum cdd_machine m);
int cdd_machine_pe(enum cdd_machine m);
/* The names cdd_platform_parse() accepts, comma-separated, for messages. */
const char *cdd_platform_names(void);
/* The platform a file name of NVIDIA's names ("cudnn-linux-sbsa-9.8.0.87_
 * cuda12-archive.tar.xz"): 0 and *out, -1 when it names none or two. */
int cdd_platform_from_name(const char *file_name, enum cdd_platform *out);

#endif
