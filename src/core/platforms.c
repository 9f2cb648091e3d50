/* NVIDIA's platforms and the machines their libraries are built for
 * (include/cdd/platform.h): names, the host's, and each machine's ELF and
 * PE header values. Below every stage: the manifest names a platform, the
 * binary-format readers (binfmt/) check a library's machine against it. */
#include "cdd/platform.h"

#include <string.h>

#include "cdd/compat.h"

static const char *const platform_names[CDD_PLATFORM_COUNT] = {
    "windows-x86_64", "linux-x86_64", "linux-sbsa", "linux-aarch64",
    "windows-arm64",
};

static const struct {
    const char *name;
    int elf, pe;
} machines[CDD_MACHINE_COUNT] = {
    [CDD_MACHINE_X86_64] = {"x86-64", 62, 0x8664},
    [CDD_MACHINE_AARCH64] = {"AArch64", 183, 0xaa64},
};

/* ---- names and machines ------------------------------------------------ */

const char *cdd_platform_name(enum cdd_platform p)
{
    return (unsigned)p < CDD_PLATFORM_COUNT ? platform_names[p] : NULL;
}

int cdd_platform_parse(const char *s, enum cdd_platform *out)
{
    for (int i = 0; s && i < CDD_PLATFORM_COUNT; i++) {
        if (strcmp(s, platform_names[i]) == 0) {
            *out = (enum cdd_platform)i;
            return 0;
        }
    }
    return -1;
}

enum cdd_platform cdd_platform_host(void)
{
    if (CDD_HOST_AARCH64)
        return CDD_HOST_WINDOWS ? CDD_PLATFORM_WINDOWS_ARM64
                                : CDD_PLATFORM_LINUX_SBSA;
    return CDD_HOST_WINDOWS ? CDD_PLATFORM_WINDOWS_X86_64
                            : CDD_PLATFORM_LINUX_X86_64;
}

int cdd_platform_is_windows(enum cdd_platform p)
{
    return p == CDD_PLATFORM_WINDOWS_X86_64 || p == CDD_PLATFORM_WINDOWS_ARM64;
}

enum cdd_machine cdd_platform_machine(enum cdd_platform p)
{
    return p == CDD_PLATFORM_LINUX_SBSA || p == CDD_PLATFORM_LINUX_AARCH64 ||
                   p == CDD_PLATFORM_WINDOWS_ARM64
               ? CDD_MACHINE_AARCH64
               : CDD_MACHINE_X86_64;
}

enum cdd_machine cdd_host_machine(void)
{
    return CDD_HOST_AARCH64 ? CDD_MACHINE_AARCH64 : CDD_MACHINE_X86_64;
}

const char *cdd_machine_name(enum cdd_machine m)
{
    return (unsigned)m < CDD_MACHINE_COUNT ? machines[m].name : "unknown";
}

int cdd_machine_elf(enum cdd_machine m)
{
    return (unsigned)m < CDD_MACHINE_COUNT ? machines[m].elf : -1;
}

int cdd_machine_pe(enum cdd_machine m)
{
    return (unsigned)m < CDD_MACHINE_COUNT ? machines[m].pe : -1;
}

const char *cdd_platform_names(void)
{
    return "windows-x86_64, linux-x86_64, linux-sbsa, linux-aarch64, "
           "windows-arm64";
}

int cdd_platform_from_name(const char *file_name, enum cdd_platform *out)
{
    int found = -1;
    for (int i = 0; file_name && i < CDD_PLATFORM_COUNT; i++) {
        /* "-linux-sbsa-" or a leading "linux-sbsa-": a whole dash-separated
         * part of the name, never a piece of a longer word. */
        const char *n = platform_names[i], *p = file_name;
        size_t k = strlen(n);
        while ((p = strstr(p, n)) != NULL) {
            int starts = p == file_name || p[-1] == '-' || p[-1] == '_';
            int ends = p[k] == '-' || p[k] == '_' || p[k] == '.' || !p[k];
            if (starts && ends)
                break;
            p++;
        }
        if (!p)
            continue;
        if (found >= 0)
            return -1;
        found = i;
    }
    if (found < 0)
        return -1;
    *out = (enum cdd_platform)found;
    return 0;
}
