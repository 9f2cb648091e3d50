/* Unit tests of the report (src/cli/report.c) over the JSON writer: the
 * envelope first and in order, a member set twice replaced in place, the
 * checks of the CLI and of a core list in one array in the order reported
 * (with a fix as data), the error object with its hint, a member handed
 * over as a jsonw document (no text parsed back), measurements and counts,
 * and a member document that failed: no JSON printed at all, exit 4, rather
 * than a document with a part missing. stdout is sent to a file per case
 * (freopen) and read back with cJSON, an independent reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cdd/checks.h"
#include "cdd/error.h"
#include "cdd/fix.h"
#include "cdd/jsonw.h"
#include "report.h"
#include "test.h"

static char out_path[4096]; /* fixed: the test's own temporary name */
static int n_out;

/* stdout into a new file of the test's own. */
static void capture(void)
{
    const char *tmp = getenv("CDD_TEST_TMP");
    snprintf(out_path, sizeof out_path, "%s/test_report-%d.json",
             tmp && *tmp ? tmp : ".", n_out++);
    CHECK(freopen(out_path, "w", stdout) != NULL);
}

/* What went to stdout since capture(), malloc'd. */
static char *captured(void)
{
    fflush(stdout);
    FILE *f = fopen(out_path, "rb");
    CHECK(f != NULL);
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    /* stdout is a text stream: on Windows its newlines reach the file with
     * CRs added. The JSON itself holds no raw CR (strings are escaped), so
     * every CR in the file is the stream's and goes. */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (buf[i] != '\r')
            buf[k++] = buf[i];
    if (buf)
        buf[k] = '\0';
    fclose(f);
    remove(out_path);
    return buf;
}

/* The top-level keys of text in order, joined by ','. */
static void keys_of(const cJSON *o, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (const cJSON *c = o ? o->child : NULL; c; c = c->next) {
        if (buf[0])
            strncat(buf, ",", cap - strlen(buf) - 1);
        strncat(buf, c->string, cap - strlen(buf) - 1);
    }
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_envelope_and_members(void)
{
    capture();
    struct cdd_report *r = cdd_report_new("verify", 1, 1);
    CHECK(r != NULL);
    if (!r)
        return;
    cdd_report_str(r, "level", "files");
    cdd_report_target(r, "/opt/cuda-11.6");
    cdd_report_num(r, "bench_gpu_ms", 0.25);
    cdd_report_num(r, "cudnn_version", 8500);
    cdd_report_str(r, "level", "load"); /* replaced where it was */
    cdd_report_check(r, "archive", CDD_CHECK_PASS, "%d files", 31);
    struct cdd_checks c = {0};
    CHECK_INT(cdd_checks_add(&c, "load.search x", CDD_CHECK_WARN, "order"), 0);
    struct cdd_fixes fx = {0};
    CHECK_INT(cdd_fixes_prepend(&fx, CDD_FIX_SESSION, "LD_LIBRARY_PATH",
                                "/opt/cuda-11.6/lib64", ':'),
              0);
    cdd_checks_fix(&c, &fx);
    CHECK_INT(cdd_checks_add(&c, "gpu", CDD_CHECK_SKIP, "no driver"), 0);
    cdd_report_checks(r, &c);
    cdd_checks_clear(&c);
    cdd_report_check(r, "after", CDD_CHECK_FAIL, "last");
    CHECK_INT(cdd_report_finish(r), 1);

    char *t = captured();
    CHECK(t && strncmp(t, "{\n\t\"command\":\t\"verify\"", 22) == 0);
    CHECK(t && strlen(t) > 2 && strcmp(t + strlen(t) - 2, "}\n") == 0);
    cJSON *d = t ? cJSON_Parse(t) : NULL;
    CHECK(d != NULL);
    char keys[512]; /* fixed: the test's expectation */
    keys_of(d, keys, sizeof keys);
    CHECK_STR(keys, "command,ok,changed,exit_code,target,checks,level,"
                    "bench_gpu_ms,cudnn_version,shell");
    CHECK_STR(str_of(d, "level"), "load");
    CHECK_STR(str_of(d, "target"), "/opt/cuda-11.6");
    CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(d, "ok")));
    CHECK_INT(cJSON_GetObjectItemCaseSensitive(d, "exit_code")->valueint, 1);
    CHECK(cJSON_GetObjectItemCaseSensitive(d, "bench_gpu_ms")->valuedouble ==
          0.25);
    CHECK(t && strstr(t, "\"cudnn_version\":\t8500,") != NULL);
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(d, "checks");
    CHECK_INT(cJSON_GetArraySize(checks), 4);
    const char *names[] = {"archive", "load.search x", "gpu", "after"};
    const char *st[] = {"pass", "warn", "skip", "fail"};
    for (int i = 0; i < 4 && cJSON_GetArraySize(checks) == 4; i++) {
        const cJSON *k = cJSON_GetArrayItem(checks, i);
        CHECK_STR(str_of(k, "name"), names[i]);
        CHECK_STR(str_of(k, "status"), st[i]);
        keys_of(k, keys, sizeof keys);
        CHECK_STR(keys, i == 1 ? "name,status,detail,fixes"
                               : "name,status,detail");
    }
    const cJSON *fixes = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(checks, 1), "fixes");
    const cJSON *f0 = cJSON_GetArrayItem(fixes, 0);
    keys_of(f0, keys, sizeof keys);
    CHECK_STR(keys, "where,command,steps");
    const cJSON *step = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(f0, "steps"), 0);
    CHECK_STR(str_of(step, "variable"), "LD_LIBRARY_PATH");
    CHECK_STR(str_of(step, "separator"), ":");
    CHECK_STR(str_of(d, "shell"), "sh");
    cJSON_Delete(d);
    free(t);
}

static void test_error_and_hint(void)
{
    capture();
    struct cdd_report *r = cdd_report_new("status", 1, 1);
    CHECK(r != NULL);
    if (!r)
        return;
    cdd_fail(CDD_E_NOTFOUND, "/nope", 0, "target folder does not exist");
    cdd_report_error(r, CDD_E_NOTFOUND);
    cdd_report_hint(r, "check the folder's name");
    cdd_report_str(r, "after", "x");
    CHECK_INT(cdd_report_finish(r), 4);
    cdd_clear_error();
    char *t = captured();
    cJSON *d = t ? cJSON_Parse(t) : NULL;
    CHECK(d != NULL);
    char keys[512]; /* fixed: the test's expectation */
    keys_of(d, keys, sizeof keys);
    CHECK_STR(keys, "command,ok,changed,exit_code,target,checks,error,after");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(d, "error");
    keys_of(e, keys, sizeof keys);
    CHECK_STR(keys, "code,message,hint");
    CHECK_STR(str_of(e, "code"), "NOTFOUND");
    CHECK(str_of(e, "message") && strstr(str_of(e, "message"), "/nope"));
    CHECK_STR(str_of(e, "hint"), "check the folder's name");
    CHECK_INT(cJSON_GetObjectItemCaseSensitive(d, "exit_code")->valueint, 4);
    cJSON_Delete(d);
    free(t);
}

/* A member the core built is handed over as a document: the same values,
 * 64-bit integers exact (a parse-back through doubles would round). */
static void test_doc_member(void)
{
    capture();
    struct cdd_report *r = cdd_report_new("doctor", 1, 1);
    CHECK(r != NULL);
    if (!r)
        return;
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_object(w, NULL);
    cdd_jw_uint(w, "size", UINT64_C(18446744073709551615));
    cdd_jw_array(w, "names");
    cdd_jw_str(w, NULL, "a\"b");
    cdd_jw_end(w);
    cdd_jw_end(w);
    cdd_report_doc(r, "driver", w);
    CHECK_INT(cdd_report_finish(r), 0);
    char *t = captured();
    CHECK(t && strstr(t, "\"size\":\t18446744073709551615,") != NULL);
    cJSON *d = t ? cJSON_Parse(t) : NULL;
    const cJSON *drv = cJSON_GetObjectItemCaseSensitive(d, "driver");
    const cJSON *first = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(drv, "names"), 0);
    CHECK_STR(cJSON_IsString(first) ? first->valuestring : NULL, "a\"b");
    cJSON_Delete(d);
    free(t);
}

/* A member that failed (here a document misused: a value without its key,
 * which the writer keeps as its first failure, as it keeps running out of
 * memory) or none at all: nothing on stdout, exit 4. A part missing must
 * never read as a pass. */
static void test_failed_member_prints_nothing(void)
{
    for (int how = 0; how < 2; how++) {
        capture();
        struct cdd_report *r = cdd_report_new("verify", 1, 1);
        CHECK(r != NULL);
        if (!r)
            return;
        cdd_report_check(r, "files", CDD_CHECK_PASS, "ok");
        if (how == 0) {
            struct cdd_jw *w = cdd_jw_new();
            cdd_jw_object(w, NULL);
            cdd_jw_str(w, NULL, "no key");
            cdd_jw_end(w);
            cdd_report_doc(r, "toolkits", w);
        } else {
            cdd_report_doc(r, "toolkits", NULL);
        }
        CHECK_INT(cdd_report_finish(r), 4);
        cdd_clear_error();
        char *t = captured();
        CHECK_STR(t, "");
        free(t);
    }
}

/* Without --json nothing goes to stdout, whatever was reported. */
static void test_no_json_no_stdout(void)
{
    capture();
    struct cdd_report *r = cdd_report_new("status", 0, 1);
    CHECK(r != NULL);
    if (!r)
        return;
    cdd_report_str(r, "x", "y");
    cdd_report_check(r, "files", CDD_CHECK_PASS, "ok");
    CHECK_INT(cdd_report_finish(r), 0);
    char *t = captured();
    CHECK_STR(t, "");
    free(t);
}

TEST_MAIN(TEST(test_envelope_and_members), TEST(test_error_and_hint),
          TEST(test_doc_member), TEST(test_failed_member_prints_nothing),
          TEST(test_no_json_no_stdout))
