/* Unit tests of the JSON writer (jsonw.c) and of the deploy log's lines
 * (receipt.c) written through it: strings with quotes, backslashes,
 * newlines, control characters and non-ASCII text come out escaped and
 * read back equal (parsed by cJSON, an independent reader of the text);
 * the three layouts; 64-bit integers exact; every misuse an error rather
 * than a truncated text. Runs on every platform (under Wine too). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/jsonw.h"
#include "cdd/receipt.h"
#include "cdd/tree.h"
#include "cdd/sys.h"
#include "test.h"

/* A quote, a backslash, a newline, a tab, a control character, a carriage
 * return, UTF-8 (é, 中) and a slash. */
#define NASTY "dir \"q\"\\back\nline\t\x01\r/\xc3\xa9\xe4\xb8\xad.so"

static char *finish(struct cdd_jw *w, enum cdd_jw_style st)
{
    char *t = NULL;
    int r = cdd_jw_finish(w, st, &t);
    CHECK_MSG(r == 0, "finish: %s", cdd_err_name(r));
    return t;
}

static void test_escapes_round_trip(void)
{
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, NASTY, NASTY);
    cdd_jw_end(w);
    char *t = finish(w, CDD_JW_LINE);
    if (!t)
        return;
    CHECK_STR(t, "{\"dir \\\"q\\\"\\\\back\\nline\\t\\u0001\\r/\xc3\xa9\xe4\xb8\xad"
                 ".so\":\"dir \\\"q\\\"\\\\back\\nline\\t\\u0001\\r/\xc3\xa9\xe4"
                 "\xb8\xad.so\"}");
    CHECK(strchr(t, '\n') == NULL);
    cJSON *o = cJSON_Parse(t);
    CHECK(o != NULL);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, NASTY);
    CHECK(cJSON_IsString(v) && strcmp(v->valuestring, NASTY) == 0);
    cJSON_Delete(o);
    free(t);
}

static void test_layouts(void)
{
    static const char manifest[] =
        "{\n"
        "  \"n\": 1,\n"
        "  \"empty\": [],\n"
        "  \"none\": {},\n"
        "  \"urls\": [\n"
        "    \"a\",\n"
        "    \"b\"\n"
        "  ],\n"
        "  \"files\": [\n"
        "    {\"path\": \"x\", \"size\": null, \"ok\": true},\n"
        "    {\"path\": \"y\", \"list\": [1, 2]}\n"
        "  ]\n"
        "}\n";
    char *t[3];
    for (int s = 0; s < 3; s++) {
        struct cdd_jw *w = cdd_jw_new();
        cdd_jw_object(w, NULL);
        cdd_jw_int(w, "n", 1);
        cdd_jw_array(w, "empty");
        cdd_jw_end(w);
        cdd_jw_object(w, "none");
        cdd_jw_end(w);
        cdd_jw_array(w, "urls");
        cdd_jw_str(w, NULL, "a");
        cdd_jw_str(w, NULL, "b");
        cdd_jw_end(w);
        cdd_jw_array(w, "files");
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "path", "x");
        cdd_jw_null(w, "size");
        cdd_jw_bool(w, "ok", 1);
        cdd_jw_end(w);
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "path", "y");
        cdd_jw_array(w, "list");
        cdd_jw_int(w, NULL, 1);
        cdd_jw_int(w, NULL, 2);
        cdd_jw_end(w);
        cdd_jw_end(w);
        cdd_jw_end(w);
        cdd_jw_end(w);
        t[s] = finish(w, (enum cdd_jw_style)s);
    }
    if (!t[0] || !t[1] || !t[2])
        goto out;
    CHECK_STR(t[CDD_JW_LINE],
              "{\"n\":1,\"empty\":[],\"none\":{},\"urls\":[\"a\",\"b\"],"
              "\"files\":[{\"path\":\"x\",\"size\":null,\"ok\":true},"
              "{\"path\":\"y\",\"list\":[1,2]}]}");
    CHECK_STR(t[CDD_JW_MANIFEST], manifest);
    /* The pretty layout is cJSON's own, plus the final newline. */
    cJSON *o = cJSON_Parse(t[CDD_JW_LINE]);
    char *p = o ? cJSON_Print(o) : NULL;
    CHECK(p && strncmp(t[CDD_JW_PRETTY], p, strlen(p)) == 0 &&
          strcmp(t[CDD_JW_PRETTY] + strlen(p), "\n") == 0);
    cJSON_free(p);
    cJSON_Delete(o);
out:
    for (int s = 0; s < 3; s++)
        free(t[s]);
}

static void test_integers_exact(void)
{
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_array(w, NULL);
    cdd_jw_uint(w, NULL, UINT64_MAX);
    cdd_jw_uint(w, NULL, (UINT64_C(1) << 53) + 1);
    cdd_jw_int(w, NULL, -42);
    cdd_jw_uint(w, NULL, 0);
    cdd_jw_end(w);
    char *t = finish(w, CDD_JW_LINE);
    if (t)
        CHECK_STR(t, "[18446744073709551615,9007199254740993,-42,0]");
    free(t);
}

/* Documents nested by cdd_jw_doc: the log's detail. */
/* Measurements (the report's milliseconds and ratios): cJSON's own text
 * for a double, integral ones without a fraction, NaN and infinities as
 * null (JSON has neither); the text reads back to the same double. */
static void test_doubles(void)
{
    const double v[] = {0.0, 3.0, -2.0, 0.25, 1.0 / 3.0, 12.5e-9, 4.0e9};
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_array(w, NULL);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cdd_jw_num(w, NULL, v[i]);
    cdd_jw_num(w, NULL, 0.0 / 0.0);
    cdd_jw_num(w, NULL, 1.0 / 0.0);
    cdd_jw_end(w);
    char *t = finish(w, CDD_JW_LINE);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_MSG(strncmp(t, "[0,3,-2,0.25,", 13) == 0, "%s", t);
    CHECK_MSG(strstr(t, ",null,null]") != NULL, "%s", t);
    cJSON *a = cJSON_Parse(t);
    CHECK(cJSON_IsArray(a));
    CHECK_INT(cJSON_GetArraySize(a), 9);
    for (size_t i = 0; a && i < sizeof v / sizeof v[0]; i++) {
        cJSON *x = cJSON_GetArrayItem(a, (int)i);
        CHECK(cJSON_IsNumber(x) && x->valuedouble == v[i]);
    }
    CHECK(cJSON_IsNull(cJSON_GetArrayItem(a, 7)));
    cJSON_Delete(a);
    free(t);
}

static void test_doc_member(void)
{
    struct cdd_jw *d = cdd_jw_new(), *w = cdd_jw_new();
    cdd_jw_object(d, NULL);
    cdd_jw_str(d, "k", "v");
    cdd_jw_end(d);
    cdd_jw_object(w, NULL);
    cdd_jw_doc(w, "detail", d);
    cdd_jw_doc(w, "none", NULL);
    cdd_jw_end(w);
    char *t = finish(w, CDD_JW_LINE);
    if (t)
        CHECK_STR(t, "{\"detail\":{\"k\":\"v\"}}");
    free(t);
}

/* Each misuse fails the document (CDD_E_IO), never a partial text. */
static void test_misuse_is_an_error(void)
{
    for (int c = 0; c < 7; c++) {
        struct cdd_jw *w = cdd_jw_new(), *d = NULL;
        char *t = NULL;
        switch (c) {
        case 0: /* a member without a key */
            cdd_jw_object(w, NULL);
            cdd_jw_str(w, NULL, "v");
            cdd_jw_end(w);
            break;
        case 1: /* a key in a list */
            cdd_jw_array(w, NULL);
            cdd_jw_str(w, "k", "v");
            cdd_jw_end(w);
            break;
        case 2: /* left open */
            cdd_jw_object(w, NULL);
            cdd_jw_array(w, "a");
            cdd_jw_end(w);
            break;
        case 3: /* one end too many */
            cdd_jw_array(w, NULL);
            cdd_jw_end(w);
            cdd_jw_end(w);
            break;
        case 4: /* two roots */
            cdd_jw_array(w, NULL);
            cdd_jw_end(w);
            cdd_jw_array(w, NULL);
            cdd_jw_end(w);
            break;
        case 5: /* an unfinished document as a member */
            d = cdd_jw_new();
            cdd_jw_object(d, NULL);
            cdd_jw_object(w, NULL);
            cdd_jw_doc(w, "d", d);
            cdd_jw_end(w);
            break;
        case 6: /* nothing at all */
            break;
        }
        int r = cdd_jw_finish(w, CDD_JW_LINE, &t);
        CHECK_MSG(r == CDD_E_IO && t == NULL, "case %d: %s", c,
                  cdd_err_name(r));
        free(t);
    }
    char *t = NULL;
    CHECK_INT(cdd_jw_finish(NULL, CDD_JW_LINE, &t), CDD_E_NOMEM);
    /* Calls on a writer that could not be made are harmless. */
    cdd_jw_object(NULL, NULL);
    cdd_jw_str(NULL, "k", "v");
    cdd_jw_end(NULL);
    cdd_jw_free(NULL);
}

/* The deploy log: every line is one JSON object that reads back as
 * written, whatever the strings hold. */
static void test_log_lines_round_trip(void)
{
    const char *base = getenv("CDD_TEST_TMP");
    char root[1024], *text = NULL, *path = NULL;
    size_t len = 0;
    struct cdd_tree *t = NULL;
    int created = 0;
    snprintf(root, sizeof root, "%s/jsonw-log-%ld",
             base && *base ? base : "/tmp", cdd_getpid());
    cdd_fs_remove_tree(root);
    CHECK_INT(cdd_fs_mkdirs(root, NULL), 0);
    CHECK_INT(cdd_tree_open(root, &t), 0);
    if (!t)
        goto out;
    CHECK_INT(cdd_tree_lock_state(t, 0, 1, &created), 0);
    for (int i = 0; i < 2; i++) {
        struct cdd_jw *d = cdd_jw_new();
        cdd_jw_object(d, NULL);
        cdd_jw_str(d, "path", NASTY);
        cdd_jw_str(d, "version", i ? "9\"" : "8\\");
        cdd_jw_uint(d, "new", (uint64_t)i);
        cdd_jw_end(d);
        CHECK_INT(cdd_log_append(t, i ? "uninstall" : "install", NASTY, d), 0);
    }
    CHECK_INT(cdd_log_append(t, "recover", NULL, NULL), 0);
    path = cdd_tree_abs(t, CDD_LOG_FILE);
    CHECK_INT(cdd_fs_read_all(path, 1 << 20, &text, &len), 0);
    if (!text)
        goto out;
    char *line = text;
    int n = 0;
    for (char *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1, n++) {
        *nl = '\0';
        cJSON *o = cJSON_Parse(line);
        CHECK_MSG(o != NULL, "line %d is not JSON: %s", n + 1, line);
        if (!o)
            continue;
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "op");
        const cJSON *tx = cJSON_GetObjectItemCaseSensitive(o, "transaction");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "detail");
        const cJSON *pid = cJSON_GetObjectItemCaseSensitive(o, "pid");
        CHECK(cJSON_IsNumber(pid) && pid->valuedouble == (double)cdd_getpid());
        CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "time")));
        if (n < 2) {
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(d, "path");
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, "version");
            CHECK_STR(cJSON_IsString(op) ? op->valuestring : "",
                      n ? "uninstall" : "install");
            CHECK(cJSON_IsString(tx) && strcmp(tx->valuestring, NASTY) == 0);
            CHECK(cJSON_IsString(p) && strcmp(p->valuestring, NASTY) == 0);
            CHECK_STR(cJSON_IsString(v) ? v->valuestring : "",
                      n ? "9\"" : "8\\");
        } else {
            CHECK_STR(cJSON_IsString(op) ? op->valuestring : "", "recover");
            CHECK(cJSON_IsNull(tx));
            CHECK(d == NULL);
        }
        cJSON_Delete(o);
    }
    CHECK_INT(n, 3);
    CHECK(*line == '\0');
out:
    free(text);
    free(path);
    cdd_tree_close(t);
    cdd_fs_remove_tree(root);
}

TEST_MAIN(TEST(test_escapes_round_trip), TEST(test_layouts),
          TEST(test_integers_exact), TEST(test_doubles),
          TEST(test_doc_member),
          TEST(test_misuse_is_an_error), TEST(test_log_lines_round_trip))
