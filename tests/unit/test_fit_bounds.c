/* GPU fit's list of GPUs (src/core/verify/fit.c) is bounded: up to its
 * maximum (fit.c's FIT_GPUS_MAX, 4096) every --gpu-cc value is kept, one
 * more is refused with CDD_E_TOOLONG naming the GPUs, and what was kept
 * stays as it was. */
#include "cdd/error.h"
#include "cdd/fit.h"

#include <stdlib.h>
#include <string.h>

#include "test.h"

#define GPUS_MAX 4096

static void test_gpus_bound(void)
{
    struct cdd_fit_gpus g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < GPUS_MAX; i++)
        CHECK_INT(cdd_fit_gpus_add_cc(&g, i % 2 ? "8.6" : "9.0"), 0);
    CHECK_INT(g.n, GPUS_MAX);
    CHECK_INT(g.given, 1);
    cdd_clear_error();
    CHECK_INT(cdd_fit_gpus_add_cc(&g, "8.0"), CDD_E_TOOLONG);
    CHECK(strstr(cdd_last_error()->msg, "GPUs") != NULL);
    CHECK_INT(g.n, GPUS_MAX);
    CHECK_INT(g.v[0].cc, 90);
    CHECK_INT(g.v[GPUS_MAX - 1].cc, 86);
    cdd_clear_error();
    cdd_fit_gpus_clear(&g);
}

TEST_MAIN(TEST(test_gpus_bound))
