/* The raw tar header check (tarscan.c): tar streams built by hand at test
 * time, fed in one piece and byte by byte (the check must not depend on
 * where blocks end), and through cdd_archive_open on a file, where a
 * refused header must come out as the scanner's error, not libarchive's. */
#include "test.h"

#include <stdint.h>

#include "cdd/archive.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "tarscan.h"
#include "cdd/sys.h"

struct tbuf {
    unsigned char p[64 * 1024];
    size_t n;
};

/* A ustar header (magic "ustar\0" "00") for name, type t, size. */
static void header(struct tbuf *b, const char *name, size_t nlen, char t,
                   uint64_t size)
{
    unsigned char *h = b->p + b->n;
    unsigned sum = 0;
    memset(h, 0, 512);
    memcpy(h, name, nlen > 100 ? 100 : nlen);
    memcpy(h + 100, "0000644", 7);
    memcpy(h + 108, "0001750", 7);
    memcpy(h + 116, "0001750", 7);
    {
        char sz[32];
        snprintf(sz, sizeof sz, "%011llo", (unsigned long long)size);
        memcpy(h + 124, sz, 11);
    }
    memcpy(h + 136, "14264336200", 11);
    h[156] = (unsigned char)t;
    memcpy(h + 257, "ustar\0" "00", 8);
    memset(h + 148, ' ', 8);
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    b->n += 512;
}

static void body(struct tbuf *b, const void *p, size_t n)
{
    memcpy(b->p + b->n, p, n);
    memset(b->p + b->n + n, 0, (512 - n % 512) % 512);
    b->n += n + (512 - n % 512) % 512;
}

static void file(struct tbuf *b, const char *name, const char *data)
{
    header(b, name, strlen(name), '0', strlen(data));
    body(b, data, strlen(data));
}

static void end(struct tbuf *b)
{
    memset(b->p + b->n, 0, 1024);
    b->n += 1024;
}

static void pax(struct tbuf *b, const char *records, size_t n)
{
    header(b, "PaxHeaders/x", 12, 'x', n);
    body(b, records, n);
}

/* Feed whole and byte by byte: both give code. */
static void scan(const struct tbuf *b, int code, const char *word)
{
    for (int bytewise = 0; bytewise < 2; bytewise++) {
        struct cdd_tarscan *s = NULL;
        int r = 0;
        CHECK_INT(cdd_tarscan_new("t.tar", &s), 0);
        if (!s)
            return;
        if (bytewise)
            for (size_t i = 0; i < b->n && !r; i++)
                r = cdd_tarscan_feed(s, b->p + i, 1);
        else
            r = cdd_tarscan_feed(s, b->p, b->n);
        CHECK_MSG(r == code, "%s, expected %s: %s", cdd_err_name(r),
                  cdd_err_name(code), code ? cdd_last_error()->msg : "");
        if (code && word)
            CHECK_MSG(strstr(cdd_last_error()->msg, word) != NULL,
                      "no \"%s\" in: %s", word, cdd_last_error()->msg);
        if (!bytewise && r)
            fprintf(stderr, "    -> %s: %s\n", cdd_err_name(r),
                    cdd_last_error()->msg);
        /* After a failure every call fails, an empty one too (found by
         * fuzz_tarscan: a zero-length feed returned 0). */
        if (r) {
            CHECK_INT(cdd_tarscan_feed(s, "", 0), r);
            CHECK_INT(cdd_tarscan_feed(s, b->p, 1), r);
        }
        cdd_tarscan_free(s);
    }
}

static struct tbuf B;

static void test_good_stream(void)
{
    static const char rec[] = "28 path=top/include/cudnn.h\n";
    static const char lname[] = "top/include/a-long-name.h";
    B.n = 0;
    file(&B, "top/include/a.h", "alpha\n");
    pax(&B, rec, sizeof rec - 1);
    file(&B, "top/include/cudnn.h", "cudnn\n");
    header(&B, "././@LongLink", 13, 'L', sizeof lname);
    body(&B, lname, sizeof lname); /* with its NUL */
    file(&B, "top/include/a-long-na", "long\n");
    header(&B, "top/lib/l.so", 12, '2', 0);
    header(&B, "top/lib/", 8, '5', 0);
    end(&B);
    /* After the end, the tar reader reads nothing: neither do we. */
    memset(B.p + B.n, 'x', 512);
    B.n += 512;
    scan(&B, 0, NULL);
}

static void test_gnu_long_name_nul(void)
{
    static const char lname[] = "top/include/cudnn.h\0/../../../outside/x.h";
    B.n = 0;
    header(&B, "././@LongLink", 13, 'L', sizeof lname);
    body(&B, lname, sizeof lname);
    file(&B, "top/include/cudnn.h", "x");
    end(&B);
    scan(&B, CDD_E_UNSAFE, "after a NUL");
}

static void test_gnu_long_link_control(void)
{
    static const char lname[] = "libcudnn.so\x1b[2J";
    B.n = 0;
    header(&B, "././@LongLink", 13, 'K', sizeof lname);
    body(&B, lname, sizeof lname);
    header(&B, "top/lib/l.so", 12, '2', 0);
    end(&B);
    scan(&B, CDD_E_UNSAFE, "control character");
}

static void test_pax_path_nul(void)
{
    static const char rec[] = "39 path=top/include/cudnn.h\0/../../x.h\n";
    static const char link[] = "32 linkpath=libcudnn.so.8\0/../x\n";
    B.n = 0;
    pax(&B, rec, sizeof rec - 1);
    file(&B, "top/include/cudnn.h", "x");
    end(&B);
    scan(&B, CDD_E_UNSAFE, "NUL");
    B.n = 0;
    pax(&B, link, sizeof link - 1);
    header(&B, "top/lib/l.so", 12, '2', 0);
    end(&B);
    scan(&B, CDD_E_UNSAFE, "linkpath");
}

static void test_sparse_refused(void)
{
    static const char rec[] = "22 GNU.sparse.major=1\n";
    B.n = 0;
    header(&B, "top/lib/big.a", 13, 'S', 0);
    end(&B);
    scan(&B, CDD_E_UNSAFE, "sparse");
    B.n = 0;
    pax(&B, rec, sizeof rec - 1);
    file(&B, "top/lib/big.a", "");
    end(&B);
    scan(&B, CDD_E_UNSAFE, "sparse");
    /* A GNU header of a regular file with a real size (or a sparse map):
     * the tar reader reads them whatever the type. */
    for (int field = 0; field < 2; field++) {
        unsigned char *h;
        unsigned sum = 0;
        char num[16];
        B.n = 0;
        file(&B, "top/include/a.h", "a");
        h = B.p;
        memcpy(h + 257, "ustar  \0", 8);
        memcpy(h + (field ? 483 : 386), "07777777777", 11);
        memset(h + 148, ' ', 8);
        for (int i = 0; i < 512; i++)
            sum += h[i];
        snprintf(num, sizeof num, "%06o", sum);
        memcpy(h + 148, num, 7);
        end(&B);
        scan(&B, CDD_E_UNSAFE, "GNU sparse map or real size");
    }
    /* SCHILY.realsize: the tar reader pads the stored bytes with zeros to
     * it. */
    {
        static const char rs[] = "30 SCHILY.realsize=1073741824\n";
        B.n = 0;
        pax(&B, rs, sizeof rs - 1);
        file(&B, "top/include/a.h", "a");
        end(&B);
        scan(&B, CDD_E_UNSAFE, "SCHILY.realsize");
    }
    /* A pax header of 4 MiB (a sparse map of millions of entries) is
     * refused on its header, before a byte of it is kept. */
    B.n = 0;
    header(&B, "PaxHeaders/x", 12, 'x', 4u << 20);
    scan(&B, CDD_E_CORRUPT, "1 MiB");
}

static void test_desync_refused(void)
{
    static const char rec[] = "11 size=10\n";
    B.n = 0;
    header(&B, "top/lib/l.so", 12, '2', 512); /* a symlink with data */
    end(&B);
    scan(&B, CDD_E_CORRUPT, "carries no data");
    B.n = 0;
    pax(&B, rec, sizeof rec - 1);
    header(&B, "top/", 4, '5', 0); /* a folder given a size by pax */
    end(&B);
    scan(&B, CDD_E_CORRUPT, "carries no data");
    B.n = 0;
    file(&B, "top/a.h", "a");
    B.p[148] ^= 1; /* checksum */
    end(&B);
    scan(&B, CDD_E_CORRUPT, "checksum");
    B.n = 0;
    header(&B, "top/a.h\0../../x", 15, '0', 0); /* bytes after the NUL */
    end(&B);
    scan(&B, CDD_E_UNSAFE, "name field");
    B.n = 0;
    header(&B, "top/v", 5, 'V', 0);
    end(&B);
    scan(&B, CDD_E_CORRUPT, "type 'V'");
    /* A regular member named like a folder is a folder to the tar reader,
     * which skips none of its data: refused when it has any. */
    B.n = 0;
    file(&B, "top/include/", "hidden header");
    end(&B);
    scan(&B, CDD_E_CORRUPT, "folder");
    B.n = 0;
    {
        static const char dir_rec[] = "21 path=top/lib/dir/\n";
        pax(&B, dir_rec, sizeof dir_rec - 1);
        file(&B, "top/lib/a.so", "data");
        end(&B);
        scan(&B, CDD_E_CORRUPT, "folder");
    }
    /* Two pax headers or two long names for one member: the tar reader
     * picks one. */
    B.n = 0;
    {
        static const char size_rec[] = "11 size=10\n";
        pax(&B, size_rec, sizeof size_rec - 1);
        pax(&B, size_rec, sizeof size_rec - 1);
        file(&B, "top/lib/a.so", "data");
        end(&B);
        scan(&B, CDD_E_CORRUPT, "two pax headers");
    }
    B.n = 0;
    {
        static const char ln[] = "top/include/long-name.h";
        header(&B, "././@LongLink", 13, 'L', sizeof ln);
        body(&B, ln, sizeof ln);
        header(&B, "././@LongLink", 13, 'L', sizeof ln);
        body(&B, ln, sizeof ln);
        file(&B, "top/include/long-name.h", "x");
        end(&B);
        scan(&B, CDD_E_CORRUPT, "two GNU long names");
    }
    /* ustar: a prefix and an empty name make a name ending in '/'. */
    B.n = 0;
    header(&B, "", 0, '0', 5);
    memcpy(B.p + B.n - 512 + 345, "top/include", 11);
    {
        unsigned char *h = B.p + B.n - 512;
        unsigned sum = 0;
        char num[16];
        memset(h + 148, ' ', 8);
        for (int i = 0; i < 512; i++)
            sum += h[i];
        snprintf(num, sizeof num, "%06o", sum);
        memcpy(h + 148, num, 7);
    }
    body(&B, "hides", 5);
    end(&B);
    scan(&B, CDD_E_CORRUPT, "folder");
    /* A folder entry (empty) whose name ends in '/' is fine. */
    B.n = 0;
    header(&B, "top/include/", 12, '0', 0);
    end(&B);
    scan(&B, 0, NULL);
}

/* Through the reader: the scanner's error, on the right entry. */
static void test_through_archive(void)
{
    static const char lname[] = "top/include/cudnn.h\0/../../../outside/x.h";
    char path[600];
    const char *base = getenv("CDD_TEST_TMP");
    struct cdd_archive *a = NULL;
    struct cdd_archive_entry e;
    FILE *f;
    int r;
    snprintf(path, sizeof path, "%s/tarscan-%ld.tar",
             base && *base ? base : "/tmp", cdd_getpid());
    B.n = 0;
    file(&B, "top/include/a.h", "alpha\n");
    header(&B, "././@LongLink", 13, 'L', sizeof lname);
    body(&B, lname, sizeof lname);
    file(&B, "top/include/cudnn.h", "x");
    end(&B);
    cdd_fs_mkdirs(base && *base ? base : "/tmp", NULL);
    f = fopen(path, "wb");
    CHECK(f && fwrite(B.p, 1, B.n, f) == B.n);
    CHECK(f && fclose(f) == 0);
    r = cdd_archive_open(path, &a);
    /* The bad header lies in the first block the tar reader asks for. */
    if (r == 0) {
        r = cdd_archive_next(a, &e);
        while (r == 0)
            r = cdd_archive_next(a, &e);
    }
    CHECK_MSG(r == CDD_E_UNSAFE, "%s: %s", cdd_err_name(r),
              cdd_last_error()->msg);
    CHECK(strstr(cdd_last_error()->msg, "GNU long name") != NULL);
    cdd_archive_close(a);
    cdd_fs_unlink(path);
}

/* Every byte of a stream with long names, pax records and data changed in
 * turn, fed whole and in odd-sized pieces: the check accepts or refuses
 * with one of its codes, never more (ASan shows reads it should not do). */
static void test_mutations(void)
{
    static const char rec[] = "28 path=top/include/cudnn.h\n";
    static const char lname[] = "top/include/a-long-name.h";
    static struct tbuf good;
    good.n = 0;
    file(&good, "top/include/a.h", "alpha\n");
    pax(&good, rec, sizeof rec - 1);
    file(&good, "top/include/cudnn.h", "cudnn\n");
    header(&good, "././@LongLink", 13, 'L', sizeof lname);
    body(&good, lname, sizeof lname);
    file(&good, "top/include/a-long-na", "long\n");
    end(&good);
    for (size_t i = 0; i < good.n; i++) {
        for (int piece = 0; piece < 2; piece++) {
            struct cdd_tarscan *s = NULL;
            size_t step = piece ? 7 : good.n;
            int r = 0;
            memcpy(B.p, good.p, good.n);
            B.p[i] ^= (unsigned char)(0x80 | (i & 0x7F));
            CHECK_INT(cdd_tarscan_new("m.tar", &s), 0);
            if (!s)
                return;
            for (size_t o = 0; o < good.n && !r; o += step)
                r = cdd_tarscan_feed(s, B.p + o,
                                     good.n - o < step ? good.n - o : step);
            CHECK_MSG(r == 0 || r == CDD_E_CORRUPT || r == CDD_E_UNSAFE,
                      "byte %zu: %s", i, cdd_err_name(r));
            cdd_tarscan_free(s);
        }
    }
}

TEST_MAIN(TEST(test_good_stream), TEST(test_mutations), TEST(test_gnu_long_name_nul),
          TEST(test_gnu_long_link_control), TEST(test_pax_path_nul),
          TEST(test_sparse_refused), TEST(test_desync_refused),
          TEST(test_through_archive))
