/* The name validator against a large table of names: every unsafe form of
 * docs/design.md (Archive check) and issue 2, and the real names of cuDNN 8 and 9 archives (which
 * must all pass), plus the small path helpers of pathsafe.h. */
#include "test.h"

#include "casefold.h"
#include "cdd/pathsafe.h"

struct name_case {
    const char *name;
    int dir;  /* allow_trailing_slash */
    int safe; /* expected */
};

static const struct name_case names[] = {
    /* ---- real cuDNN names: safe --------------------------------------- */
    {"include/cudnn.h", 0, 1},
    {"include/cudnn_ops_infer.h", 0, 1},
    {"include/cudnn_ops_train.h", 0, 1},
    {"include/cudnn_cnn_infer.h", 0, 1},
    {"include/cudnn_cnn_train.h", 0, 1},
    {"include/cudnn_adv_infer.h", 0, 1},
    {"include/cudnn_adv_train.h", 0, 1},
    {"include/cudnn_backend.h", 0, 1},
    {"include/cudnn_version.h", 0, 1},
    {"include/cudnn_ops_infer_v8.h", 0, 1},
    {"include/cudnn_v8.h", 0, 1},
    {"include/cudnn_graph_v9.h", 0, 1},
    {"lib/libcudnn.so", 0, 1},
    {"lib/libcudnn.so.8", 0, 1},
    {"lib/libcudnn.so.8.5.0", 0, 1},
    {"lib/libcudnn_ops_infer.so.8.5.0", 0, 1},
    {"lib/libcudnn_cnn_train.so.8", 0, 1},
    {"lib/libcudnn_adv_train_static.a", 0, 1},
    {"lib/libcudnn_static_v8.a", 0, 1},
    {"lib/libcudnn_engines_precompiled.so.9.14.0", 0, 1},
    {"lib/x64/cudnn.lib", 0, 1},
    {"lib/x64/cudnn64_8.lib", 0, 1},
    {"lib/x64/cudnn_ops_infer64_8.lib", 0, 1},
    {"lib/x64/cudnn_adv_train.lib", 0, 1},
    {"bin/cudnn64_8.dll", 0, 1},
    {"bin/cudnn_ops_infer64_8.dll", 0, 1},
    {"bin/cudnn_adv_train64_8.dll", 0, 1},
    {"bin/cudnn_cnn_train64_8.dll", 0, 1},
    {"LICENSE", 0, 1},
    {"LICENSE.txt", 0, 1},
    {"cudnn-windows-x86_64-8.5.0.96_cuda11-archive/bin/cudnn64_8.dll", 0, 1},
    {"cudnn-linux-x86_64-8.5.0.96_cuda11-archive/lib/libcudnn.so.8.5.0", 0, 1},
    {"cudnn-linux-x86_64-8.5.0.96_cuda11-archive/", 1, 1},
    {"cudnn-linux-x86_64-8.5.0.96_cuda11-archive/lib/", 1, 1},
    {"cuda/include/cudnn.h", 0, 1},
    {"cuda/", 1, 1},
    {"a", 0, 1},
    {"a/b/c/d/e/f/g.h", 0, 1},
    {".hidden", 0, 1},
    {"lib/.keep", 0, 1},
    {"..foo", 0, 1},
    {"foo..bar", 0, 1},
    {"a.b.c", 0, 1},
    {"name with spaces/x.h", 0, 1},
    {" leading-space.h", 0, 1},
    {"con-figure.h", 0, 1},
    {"console.h", 0, 1},
    {"conin.h", 0, 1},
    {"nul_test.h", 0, 1},
    {"auxiliary/x.h", 0, 1},
    {"com10", 0, 1},
    {"lpt", 0, 1},
    {"COM", 0, 1},
    {"prnt.h", 0, 1},
    {"x~y.h", 0, 1},
    {"~tilde", 0, 1},
    {"a~", 0, 1},
    {"dollar$.h", 0, 1},
    {"percent%20.h", 0, 1},
    {"brackets[1]{2}(3).h", 0, 1},
    {"hash#and&amp;+plus=eq,comma;semi'quote'@at!bang.h", 0, 1},
    {"caf\xc3\xa9/r\xc3\xa9sum\xc3\xa9.h", 0, 1},                   /* café */
    {"\xd0\xb4\xd0\xbe\xd0\xbc/\xd1\x84\xd0\xb0\xd0\xb9\xd0\xbb.h", 0, 1}, /* дом */
    {"\xe6\x95\xb0\xe6\x8d\xae/\xe6\xa8\xa1\xe5\x9e\x8b.h", 0, 1},  /* 数据/模型 */
    {"\xf0\x9f\x98\x80/emoji.h", 0, 1},                            /* U+1F600 */
    {"\xf4\x8f\xbf\xbd", 0, 1},                                    /* U+10FFFD */
    {"\xc2\xa0nbsp", 0, 1},                                        /* U+00A0 */
    {"\xef\xbf\xbd", 0, 1}, /* U+FFFD replacement char */
    {"COM\xc2\xb9x", 0, 1}, /* not just COM¹ */
    {"dir/", 1, 1},
    /* 255-byte component: at the limit */
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     0, 1},

    /* ---- empty ---------------------------------------------------------- */
    {"", 0, 0},
    {"/", 0, 0},
    {"/", 1, 0},
    {"a//b", 0, 0},
    {"a/", 0, 0},
    {"a//", 1, 0},
    {"//", 1, 0},

    /* ---- traversal ------------------------------------------------------- */
    {"..", 0, 0},
    {"../", 1, 0},
    {"../etc/passwd", 0, 0},
    {"lib/../../evil", 0, 0},
    {"cudnn-x/lib/../../evil", 0, 0},
    {"a/..", 0, 0},
    {"a/../b", 0, 0},
    {"a/b/..", 0, 0},
    {"a/b/../", 1, 0},
    {".", 0, 0},
    {"./", 1, 0},
    {"./a", 0, 0},
    {"a/./b", 0, 0},
    {"a/.", 0, 0},
    {"...", 0, 0}, /* trailing dot: Windows makes it "" */
    {"a/.../b", 0, 0},

    /* ---- absolute, drive, UNC, device paths -------------------------------- */
    {"/etc/passwd", 0, 0},
    {"/a", 0, 0},
    {"/a/", 1, 0},
    {"\\windows\\system32", 0, 0},
    {"C:", 0, 0},
    {"C:/Windows/evil.dll", 0, 0},
    {"c:evil.dll", 0, 0},
    {"C:\\Windows\\evil.dll", 0, 0},
    {"z:x", 0, 0},
    {"\\\\server\\share\\x", 0, 0},
    {"//server/share/x", 0, 0},
    {"\\\\?\\C:\\x", 0, 0},
    {"\\\\.\\PhysicalDrive0", 0, 0},
    {"//?/C:/x", 0, 0},
    {"/\\server", 0, 0},

    /* ---- backslash anywhere ---------------------------------------------- */
    {"lib\\x64\\cudnn.lib", 0, 0},
    {"a\\..\\..\\evil", 0, 0},
    {"lib/..\\evil", 0, 0},
    {"a\\", 0, 0},
    {"evil\\", 1, 0},

    /* ---- ':' -- drive letters, NTFS alternate data streams ------------------ */
    {"lib/cudnn.dll:evil", 0, 0},
    {"lib/cudnn.dll::$DATA", 0, 0},
    {"a:b", 0, 0},
    {"dir/c:", 0, 0},
    {"file.txt:Zone.Identifier", 0, 0},

    /* ---- control characters and DEL ------------------------------------- */
    {"a\x01", 0, 0},
    {"a\tb", 0, 0},
    {"a\nb", 0, 0},
    {"a\rb", 0, 0},
    {"\x1b[31mred", 0, 0},
    {"a\x1f", 0, 0},
    {"a\x7f", 0, 0},
    {"lib/\x7f.so", 0, 0},
    {"a\xc2\x80", 0, 0},         /* U+0080, C1 */
    {"a\xc2\x9b" "31m", 0, 0},   /* U+009B CSI */

    /* ---- < > " | ? * ----------------------------------------------------- */
    {"a<b", 0, 0},
    {"a>b", 0, 0},
    {"a\"b", 0, 0},
    {"a|b", 0, 0},
    {"a?b", 0, 0},
    {"*.dll", 0, 0},
    {"lib/x64/cudnn?.lib", 0, 0},

    /* ---- reserved device names ------------------------------------------- */
    {"CON", 0, 0},
    {"con", 0, 0},
    {"Con", 0, 0},
    {"PRN", 0, 0},
    {"AUX", 0, 0},
    {"NUL", 0, 0},
    {"nul", 0, 0},
    {"nul.txt", 0, 0},
    {"NUL.tar.gz", 0, 0},
    {"lib/nul.h", 0, 0},
    {"aux.h", 0, 0},
    {"include/aux.h", 0, 0},
    {"con.", 0, 0},
    {"CON .txt", 0, 0},
    {"COM0", 0, 0},
    {"COM1", 0, 0},
    {"com9", 0, 0},
    {"COM5.dll", 0, 0},
    {"LPT0", 0, 0},
    {"LPT1", 0, 0},
    {"lpt9.txt", 0, 0},
    {"COM\xc2\xb9", 0, 0},       /* COM¹ */
    {"COM\xc2\xb2.txt", 0, 0},   /* COM² */
    {"lpt\xc2\xb3", 0, 0},       /* LPT³ */
    {"CONIN$", 0, 0},
    {"conout$", 0, 0},
    {"CONOUT$.txt", 0, 0},
    {"CLOCK$", 0, 0},
    {"NUL/", 1, 0},
    {"lib/COM1/x.so", 0, 0},
    {"PRN.h", 0, 0},

    /* ---- trailing dot or space ------------------------------------------- */
    {"a.", 0, 0},
    {"a ", 0, 0},
    {"lib./x", 0, 0},
    {"lib /x", 0, 0},
    {"bin/cudnn64_8.dll.", 0, 0},
    {"bin/cudnn64_8.dll ", 0, 0},
    {"dir./", 1, 0},
    {" ", 0, 0},

    /* ---- 8.3 short names ----------------------------------------------- */
    {"PROGRA~1", 0, 0},
    {"progra~1/x", 0, 0},
    {"CUDNN6~1.DLL", 0, 0},
    {"bin/CUDNN_~2.DLL", 0, 0},
    {"a~0", 0, 0},

    /* ---- invalid or overlong UTF-8, surrogates --------------------------- */
    {"\x80", 0, 0},                 /* stray continuation */
    {"a\xbf", 0, 0},
    {"\xc0\xaf", 0, 0},             /* overlong '/' */
    {"..\xc0\xaf" "evil", 0, 0},
    {"\xc1\x9c", 0, 0},             /* overlong '\' */
    {"\xe0\x80\xaf", 0, 0},         /* 3-byte overlong '/' */
    {"\xe0\x9f\xbf", 0, 0},         /* overlong U+07FF */
    {"\xf0\x80\x80\xaf", 0, 0},     /* 4-byte overlong '/' */
    {"\xf0\x8f\xbf\xbf", 0, 0},     /* overlong U+FFFF */
    {"\xed\xa0\x80", 0, 0},         /* U+D800 surrogate */
    {"\xed\xbf\xbf", 0, 0},         /* U+DFFF surrogate */
    {"\xed\xa0\xbd\xed\xb8\x80", 0, 0}, /* CESU-8 pair */
    {"\xf4\x90\x80\x80", 0, 0},     /* U+110000 */
    {"\xf5\x80\x80\x80", 0, 0},
    {"\xff", 0, 0},
    {"\xfe\xff", 0, 0},
    {"a\xc3", 0, 0},                /* truncated */
    {"a\xe6\x95", 0, 0},            /* truncated */
    {"\xc3(", 0, 0},
    {"lib/\xe9t\xe9.h", 0, 0},      /* Latin-1 bytes, not UTF-8 */

    /* ---- invisible, bidi, look-alikes ----------------------------------- */
    {"lib/cudnn\xe2\x80\x8b.dll", 0, 0},         /* zero-width space */
    {"lib/evil\xe2\x80\xaellb.so", 0, 0},        /* RLO */
    {"\xef\xbb\xbfLICENSE", 0, 0},               /* BOM */
    {"a\xe2\x81\xa6" "b", 0, 0},                 /* U+2066 isolate */
    {"a\xc2\xad" "b", 0, 0},                     /* soft hyphen */
    {"..\xef\xbc\x8f" "evil", 0, 0},             /* fullwidth solidus */
    {"..\xef\xbc\xbc" "evil", 0, 0},             /* fullwidth reverse solidus */
    {"C\xef\xbc\x9a" "evil", 0, 0},              /* fullwidth colon */
    {"a\xe2\x88\x95" "b", 0, 0},                 /* division slash */
    {"a\xe2\x81\x84" "b", 0, 0},                 /* fraction slash */
    {"a\xc2\xa5" "b", 0, 0},                     /* yen (cp932 '\') */
    {"\xef\xbc\xae\xef\xbc\xb5\xef\xbc\xac", 0, 0}, /* fullwidth NUL */
    {"a\xef\xbc\x8e", 0, 0},                     /* fullwidth full stop */

    /* ---- length ---------------------------------------------------------- */
    /* 256-byte component */
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     0, 0},
};

static void test_table(void)
{
    size_t n = sizeof names / sizeof names[0];
    size_t n_safe = 0, n_unsafe = 0;
    CHECK_MSG(n >= 150, "only %zu rows", n);
    for (size_t i = 0; i < n; i++) {
        const char *why = "unset";
        int got = cdd_path_is_safe(names[i].name, names[i].dir, &why);
        char shown[256];
        cdd_path_printable(names[i].name, shown, sizeof shown);
        CHECK_MSG(got == names[i].safe, "row %zu \"%s\" (dir=%d): got %s%s%s",
                  i, shown, names[i].dir, got ? "safe" : "unsafe: ",
                  got ? "" : (why ? why : "(no reason)"), "");
        if (got)
            CHECK(why == NULL);
        else
            CHECK(why != NULL && *why);
        if (names[i].safe)
            n_safe++;
        else
            n_unsafe++;
    }
    CHECK(n_safe >= 50);
    CHECK(n_unsafe >= 100);
}

/* Rows whose reasons should say what is wrong, in the words users see. */
static void test_reasons(void)
{
    const char *why = NULL;
    CHECK(!cdd_path_is_safe("cudnn-x/lib/../../evil", 0, &why));
    CHECK_STR(why, "contains '..'");
    CHECK(!cdd_path_is_safe("/etc/passwd", 0, &why));
    CHECK_STR(why, "absolute path");
    CHECK(!cdd_path_is_safe("C:/x", 0, &why));
    CHECK_STR(why, "drive letter");
    CHECK(!cdd_path_is_safe("\\\\srv\\x", 0, &why));
    CHECK(strstr(why, "UNC") != NULL);
    CHECK(!cdd_path_is_safe("a\\b", 0, &why));
    CHECK_STR(why, "contains a backslash");
    CHECK(!cdd_path_is_safe("nul.txt", 0, &why));
    CHECK_STR(why, "Windows reserved device name");
    CHECK(!cdd_path_is_safe("PROGRA~1", 0, &why));
    CHECK(strstr(why, "8.3") != NULL);
    CHECK(!cdd_path_is_safe("\xed\xa0\x80", 0, &why));
    CHECK(strstr(why, "surrogate") != NULL);
    CHECK(!cdd_path_is_safe("\xc0\xaf", 0, &why));
    CHECK(strstr(why, "overlong") != NULL);
    /* NULL why is allowed */
    CHECK(!cdd_path_is_safe("..", 0, NULL));
    CHECK(!cdd_path_is_safe(NULL, 0, &why));
}

static void test_too_long_path(void)
{
    /* Issue 18: 4095 bytes (CDD_PATH_MAX_POSIX) of "aaaaaaa/" is fine on
     * every OS; 4096 is refused, and the message says why. */
    char p[4200];
    const char *why = NULL;
    size_t i = 0;
    while (i < 4095) {
        p[i] = (i % 8 == 7) ? '/' : 'a';
        i++;
    }
    p[4094] = 'a';
    p[4095] = '\0';
    CHECK(cdd_path_is_safe(p, 0, &why));
    CHECK(why == NULL);
    p[4095] = 'a';
    p[4096] = '\0';
    CHECK(!cdd_path_is_safe(p, 0, &why));
    CHECK(why && strstr(why, "path longer than 4095 bytes") != NULL);
    /* The old bound of 1024 no longer applies. */
    p[1025] = '\0';
    CHECK(cdd_path_is_safe(p, 0, NULL));
}

static void test_link_targets(void)
{
    const char *why = NULL;
    CHECK(cdd_link_target_is_safe("libcudnn.so.8", &why));
    CHECK(cdd_link_target_is_safe("libcudnn.so.8.5.0", &why));
    CHECK(!cdd_link_target_is_safe("../libcudnn.so.8", &why));
    CHECK(!cdd_link_target_is_safe("/usr/lib/libcudnn.so.8", &why));
    CHECK(!cdd_link_target_is_safe("sub/libcudnn.so.8", &why));
    CHECK(strstr(why, "same folder") != NULL);
    CHECK(!cdd_link_target_is_safe("..", &why));
    CHECK(!cdd_link_target_is_safe(".", &why));
    CHECK(!cdd_link_target_is_safe("", &why));
    CHECK(!cdd_link_target_is_safe("x/", &why));
    CHECK(!cdd_link_target_is_safe("C:x", &why));
    CHECK(!cdd_link_target_is_safe("a\\b", &why));
}

static void test_strip(void)
{
    CHECK_STR(cdd_path_strip("top/lib/x.so", 1), "lib/x.so");
    CHECK_STR(cdd_path_strip("top/lib/x.so", 0), "top/lib/x.so");
    CHECK_STR(cdd_path_strip("top/lib/x.so", 2), "x.so");
    CHECK(cdd_path_strip("top/lib/x.so", 3) == NULL);
    CHECK(cdd_path_strip("top/", 1) == NULL);
    CHECK(cdd_path_strip("top", 1) == NULL);
    CHECK_STR(cdd_path_strip("top/lib/", 1), "lib/");
    CHECK(cdd_path_strip(NULL, 1) == NULL);
}

static void test_casecmp_fold(void)
{
    char *f;
    CHECK(cdd_path_casecmp("lib/X64/Cudnn.LIB", "lib/x64/cudnn.lib") == 0);
    CHECK(cdd_path_casecmp("a", "b") < 0);
    CHECK(cdd_path_casecmp("b", "a") > 0);
    CHECK(cdd_path_casecmp("a", "ab") < 0);
    CHECK(cdd_path_casecmp("ab", "a") > 0);
    CHECK(cdd_path_casecmp("", "") == 0);
    /* Latin-1, Latin Extended-A, Greek, Cyrillic */
    CHECK(cdd_path_casecmp("caf\xc3\x89", "caf\xc3\xa9") == 0); /* É é */
    CHECK(cdd_path_casecmp("\xc5\x81", "\xc5\x82") == 0);       /* Ł ł */
    CHECK(cdd_path_casecmp("\xce\xa3", "\xcf\x83") == 0);       /* Σ σ */
    CHECK(cdd_path_casecmp("\xd0\x94", "\xd0\xb4") == 0);       /* Д д */
    CHECK(cdd_path_casecmp("\xd0\x81", "\xd1\x91") == 0);       /* Ё ё */
    CHECK(cdd_path_casecmp("\xc3\x97", "\xc3\xb7") != 0);       /* × ÷ */
    /* invalid bytes compare as themselves */
    CHECK(cdd_path_casecmp("\xff", "\xff") == 0);
    CHECK(cdd_path_casecmp("\xfe", "\xff") != 0);

    f = cdd_path_fold("Lib/CUDNN\xc3\x89\xd0\x94.H");
    CHECK_STR(f, "lib/cudnn\xc3\xa9\xd0\xb4.h");
    free(f);
    f = cdd_path_fold("A\xffZ");
    CHECK_STR(f, "a\xffz");
    free(f);
}

/* Full simple case folding (casefold.h), beyond the scripts of real
 * archives: what NTFS takes for one name must be one name to us. */
static void test_casefold_unicode(void)
{
    char *f;
    CHECK(cdd_path_casecmp("\xd4\xb1", "\xd5\xa1") == 0);         /* Ա ա Armenian */
    CHECK(cdd_path_casecmp("\xc7\x8d", "\xc7\x8e") == 0);         /* Ǎ ǎ Latin Ext-B */
    CHECK(cdd_path_casecmp("\xce\x86", "\xce\xac") == 0);         /* Ά ά Greek tonos */
    CHECK(cdd_path_casecmp("\xe2\x85\xa0", "\xe2\x85\xb0") == 0); /* Ⅰ ⅰ roman numeral */
    CHECK(cdd_path_casecmp("\xe1\x82\xa0", "\xe2\xb4\x80") == 0); /* Ⴀ ⴀ Georgian */
    CHECK(cdd_path_casecmp("\xf0\x90\x90\x80", "\xf0\x90\x90\xa8") == 0); /* Deseret */
    CHECK(cdd_path_casecmp("\xef\xbc\xa1", "\xef\xbd\x81") == 0); /* Ａ ａ fullwidth */
    CHECK(cdd_path_casecmp("\xe2\x84\xaa", "k") == 0);             /* Kelvin sign, k */
    CHECK(cdd_path_casecmp("\xc5\xbf", "s") == 0);                  /* long s, s */
    /* no simple folding: dotted capital I (Turkic, status T/F only) and
     * sharp s (full folding only) stay themselves */
    CHECK(cdd_path_casecmp("\xc4\xb0", "i") != 0);
    CHECK(cdd_path_casecmp("\xc3\x9f", "ss") != 0);
    CHECK(cdd_casefold_cp(0xD7) == 0xD7); /* × */
    CHECK(cdd_casefold_cp(0x1E9E) == 0xDF); /* ẞ -> ß */
    CHECK(cdd_casefold_cp(0x10FFFF) == 0x10FFFF);
    CHECK_STR(cdd_casefold_version(), "15.0.0");

    /* Folding may lengthen a name: U+023A (2 bytes) -> U+2C65 (3 bytes). */
    f = cdd_path_fold("lib/\xc8\xba\xc8\xba\xc8\xba.dll");
    CHECK_STR(f, "lib/\xe2\xb1\xa5\xe2\xb1\xa5\xe2\xb1\xa5.dll");
    free(f);
    /* ... or shorten it: Kelvin sign (3 bytes) -> k */
    f = cdd_path_fold("\xe2\x84\xaa/X");
    CHECK_STR(f, "k/x");
    free(f);
}

static void test_printable(void)
{
    char b[64];
    CHECK_STR(cdd_path_printable("lib/x.so", b, sizeof b), "lib/x.so");
    CHECK_STR(cdd_path_printable("a\"b\\c", b, sizeof b), "a\\\"b\\\\c");
    CHECK_STR(cdd_path_printable("a\nb\x1b[0m", b, sizeof b),
              "a\\nb\\x1b[0m");
    CHECK_STR(cdd_path_printable("a\xff", b, sizeof b), "a\\xff");
    CHECK_STR(cdd_path_printable("a\xe2\x80\xae" "b", b, sizeof b),
              "a\\u{202e}b");
    CHECK_STR(cdd_path_printable("caf\xc3\xa9", b, sizeof b), "caf\xc3\xa9");
    CHECK_STR(cdd_path_printable(NULL, b, sizeof b), "(null)");
    char s[8];
    CHECK_STR(cdd_path_printable("abcdefghij", s, sizeof s), "abcd...");
    CHECK_STR(cdd_path_printable("abcdefg", s, sizeof s), "abcdefg");
    CHECK_STR(cdd_path_printable("\n\n\n\n", s, sizeof s), "\\n\\n...");
    char t[2];
    CHECK_STR(cdd_path_printable("abc", t, sizeof t), "a");
    /* a multi-byte character is never cut in half */
    char u[6];
    CHECK_STR(cdd_path_printable("ab\xe6\x95\xb0\xe6\x8d\xae", u, sizeof u),
              "ab...");
}

static void test_helpers(void)
{
    char *j;
    CHECK_STR(cdd_path_basename("lib/x64/cudnn.lib"), "cudnn.lib");
    CHECK_STR(cdd_path_basename("LICENSE"), "LICENSE");
    CHECK_STR(cdd_path_basename("lib/"), "");
    CHECK_STR(cdd_path_basename("Z:\\dl\\cudnn.zip"), "cudnn.zip");
    CHECK_STR(cdd_path_basename("C:\\Users/me\\x.tar.xz"), "x.tar.xz");
    j = cdd_path_join("a/b", "c.h");
    CHECK_STR(j, "a/b/c.h");
    free(j);
    j = cdd_path_join("a/b/", "c.h");
    CHECK_STR(j, "a/b/c.h");
    free(j);
    j = cdd_path_join("", "c.h");
    CHECK_STR(j, "c.h");
    free(j);
    CHECK(cdd_path_in_python_package("/usr/lib/python3/dist-packages/torch"));
    CHECK(cdd_path_in_python_package("C:\\Python39\\Lib\\Site-Packages\\torch"));
    CHECK(cdd_path_in_python_package("site-packages"));
    CHECK(!cdd_path_in_python_package("/usr/local/cuda-11.6"));
    CHECK(!cdd_path_in_python_package("/opt/site-packages-old/x"));
    CHECK(!cdd_path_in_python_package("/opt/my-site-packages/x"));
}

TEST_MAIN(TEST(test_table), TEST(test_reasons), TEST(test_too_long_path),
          TEST(test_link_targets), TEST(test_strip), TEST(test_casecmp_fold),
          TEST(test_casefold_unicode),
          TEST(test_printable), TEST(test_helpers))
