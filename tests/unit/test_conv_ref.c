/* The CPU reference convolution (conv_ref.h): output sizes, FLOP count,
 * hand-computed cases (identity 1x1 filter, 3x3 with padding, an asymmetric
 * filter that tells cross-correlation from convolution, stride 2), the fast
 * loop order against a naive loop on random shapes, the compare measure, and
 * cancellation. */
#include "test.h"

#include "cdd/conv_ref.h"
#include "cdd/error.h"

static struct cdd_conv_shape shape(int n, int c, int h, int w, int k, int r,
                                   int s, int pad, int stride)
{
    struct cdd_conv_shape sh = {n, c, h, w, k, r, s, pad, pad, stride, stride};
    return sh;
}

static void test_out_dims(void)
{
    int oh = 0, ow = 0;
    struct cdd_conv_shape s = shape(1, 3, 32, 32, 16, 3, 3, 1, 1);
    CHECK_INT(cdd_conv_out_dims(&s, &oh, &ow), 0);
    CHECK_INT(oh, 32);
    CHECK_INT(ow, 32);
    s = shape(8, 3, 224, 224, 64, 7, 7, 3, 2); /* ResNet-50 conv1 */
    CHECK_INT(cdd_conv_out_dims(&s, &oh, &ow), 0);
    CHECK_INT(oh, 112);
    CHECK_INT(ow, 112);
    CHECK_INT(cdd_conv_y_count(&s), 8 * 64 * 112 * 112);
    CHECK_INT(cdd_conv_x_count(&s), 8 * 3 * 224 * 224);
    CHECK_INT(cdd_conv_w_count(&s), 64 * 3 * 7 * 7);
    s = shape(1, 1, 5, 5, 1, 3, 3, 0, 2);
    CHECK_INT(cdd_conv_out_dims(&s, &oh, &ow), 0);
    CHECK_INT(oh, 2);
    CHECK_INT(ow, 2);
    /* Rectangular, different padding and stride per axis. */
    struct cdd_conv_shape r = {1, 1, 10, 7, 1, 3, 1, 2, 0, 3, 1};
    CHECK_INT(cdd_conv_out_dims(&r, &oh, &ow), 0);
    CHECK_INT(oh, (10 + 4 - 3) / 3 + 1);
    CHECK_INT(ow, 7);
}

static void test_invalid_shapes(void)
{
    int oh, ow;
    struct cdd_conv_shape bad[] = {
        shape(0, 3, 32, 32, 16, 3, 3, 1, 1),  /* no images */
        shape(1, 3, 32, 32, 0, 3, 3, 1, 1),   /* no filters */
        shape(1, 3, 2, 2, 1, 5, 5, 1, 1),     /* filter beyond padded input */
        shape(1, 3, 32, 32, 16, 3, 3, -1, 1), /* negative padding */
        shape(1, 3, 32, 32, 16, 3, 3, 1, 0),  /* stride 0 */
        shape(65536, 65536, 65536, 65536, 1, 1, 1, 0, 1), /* overflow */
        shape(1, 2147483647, 2, 2, 2147483647, 1, 1, 0, 1),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_INT(cdd_conv_out_dims(&bad[i], &oh, &ow), CDD_E_USAGE);
        CHECK_INT(cdd_conv_y_count(&bad[i]), 0);
        CHECK(cdd_conv_flops(&bad[i]) == 0);
        CHECK_INT(cdd_conv_ref_forward(&bad[i], NULL, NULL, NULL), CDD_E_USAGE);
    }
    CHECK_INT(cdd_conv_out_dims(NULL, &oh, &ow), CDD_E_USAGE);
}

static void test_flops(void)
{
    struct cdd_conv_shape s = shape(8, 3, 224, 224, 64, 7, 7, 3, 2);
    /* 2 * 8 * 64 * 112 * 112 * 3 * 7 * 7 */
    CHECK(cdd_conv_flops(&s) == 1888223232.0);
    s = shape(1, 3, 32, 32, 16, 3, 3, 1, 1);
    CHECK(cdd_conv_flops(&s) == 2.0 * 16 * 32 * 32 * 27);
}

static void test_identity_1x1(void)
{
    /* 2 images, 3 channels; the 1x1 filter is the 3x3 identity matrix. */
    struct cdd_conv_shape s = shape(2, 3, 4, 5, 3, 1, 1, 0, 1);
    float x[2 * 3 * 4 * 5], y[2 * 3 * 4 * 5], w[9] = {0};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        x[i] = (float)i * 0.5f - 7;
    for (int k = 0; k < 3; k++)
        w[k * 3 + k] = 1;
    CHECK_INT(cdd_conv_ref_forward(&s, x, w, y), 0);
    CHECK(memcmp(x, y, sizeof x) == 0);
    /* Swap channels 0 and 2. */
    memset(w, 0, sizeof w);
    w[0 * 3 + 2] = w[1 * 3 + 1] = w[2 * 3 + 0] = 1;
    CHECK_INT(cdd_conv_ref_forward(&s, x, w, y), 0);
    for (int n = 0; n < 2; n++)
        for (int k = 0; k < 3; k++)
            CHECK(memcmp(y + (n * 3 + k) * 20, x + (n * 3 + 2 - k) * 20,
                         20 * sizeof(float)) == 0);
}

static void test_3x3_padding(void)
{
    struct cdd_conv_shape s = shape(1, 1, 3, 3, 1, 3, 3, 1, 1);
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const float want[9] = {12, 21, 16, 27, 45, 33, 24, 39, 28};
    float y[9];
    CHECK_INT(cdd_conv_ref_forward(&s, x, ones, y), 0);
    for (int i = 0; i < 9; i++)
        CHECK_MSG(y[i] == want[i], "y[%d] = %g, want %g", i, y[i], want[i]);
}

static void test_cross_correlation(void)
{
    /* The filter's only 1 is right of centre: cross-correlation picks the
     * right neighbour (a true convolution would pick the left one). */
    struct cdd_conv_shape s = shape(1, 1, 3, 3, 1, 3, 3, 1, 1);
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float w[9] = {0, 0, 0, 0, 0, 1, 0, 0, 0};
    const float want[9] = {2, 3, 0, 5, 6, 0, 8, 9, 0};
    float y[9];
    CHECK_INT(cdd_conv_ref_forward(&s, x, w, y), 0);
    for (int i = 0; i < 9; i++)
        CHECK_MSG(y[i] == want[i], "y[%d] = %g, want %g", i, y[i], want[i]);
}

static void test_stride2(void)
{
    float x[25], y[9];
    for (int i = 0; i < 25; i++)
        x[i] = (float)i;
    struct cdd_conv_shape s = shape(1, 1, 5, 5, 1, 1, 1, 0, 2);
    const float one = 1;
    CHECK_INT(cdd_conv_ref_forward(&s, x, &one, y), 0);
    const float pick[9] = {0, 2, 4, 10, 12, 14, 20, 22, 24};
    for (int i = 0; i < 9; i++)
        CHECK_MSG(y[i] == pick[i], "y[%d] = %g, want %g", i, y[i], pick[i]);
    s = shape(1, 1, 5, 5, 1, 3, 3, 0, 2);
    const float ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const float want[4] = {54, 72, 144, 162};
    CHECK_INT(cdd_conv_ref_forward(&s, x, ones, y), 0);
    for (int i = 0; i < 4; i++)
        CHECK_MSG(y[i] == want[i], "y[%d] = %g, want %g", i, y[i], want[i]);
    /* Stride 2 with padding 1: the corner window covers x[0..1][0..1]. */
    s = shape(1, 1, 5, 5, 1, 3, 3, 1, 2);
    CHECK_INT(cdd_conv_ref_forward(&s, x, ones, y), 0);
    CHECK(y[0] == 0 + 1 + 5 + 6);
    CHECK(y[4] == 6 + 7 + 8 + 11 + 12 + 13 + 16 + 17 + 18);
    CHECK(y[8] == 18 + 19 + 23 + 24); /* bottom-right: half in padding */
}

/* The obvious loop, in double, straight from the definition. */
static void naive(const struct cdd_conv_shape *s, const float *x,
                  const float *w, double *y)
{
    int OH, OW;
    cdd_conv_out_dims(s, &OH, &OW);
    for (int n = 0; n < s->n; n++)
        for (int k = 0; k < s->k; k++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    double acc = 0;
                    for (int c = 0; c < s->c; c++)
                        for (int r = 0; r < s->r; r++)
                            for (int q = 0; q < s->s; q++) {
                                int ih = oh * s->stride_h - s->pad_h + r;
                                int iw = ow * s->stride_w - s->pad_w + q;
                                if (ih < 0 || ih >= s->h || iw < 0 ||
                                    iw >= s->w)
                                    continue;
                                acc += (double)x[((n * s->c + c) * s->h + ih) *
                                                     s->w +
                                                 iw] *
                                       w[((k * s->c + c) * s->r + r) * s->s +
                                         q];
                            }
                    y[((n * s->k + k) * OH + oh) * OW + ow] = acc;
                }
}

static uint64_t rng = 42;
static int rnd(int lo, int hi)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (int)((rng >> 33) % (uint64_t)(hi - lo + 1));
}

static void test_random_vs_naive(void)
{
    for (int t = 0; t < 200; t++) {
        struct cdd_conv_shape s = {
            rnd(1, 3), rnd(1, 4), rnd(1, 12), rnd(1, 12), rnd(1, 5),
            rnd(1, 5), rnd(1, 5), rnd(0, 3), rnd(0, 3), rnd(1, 3), rnd(1, 3),
        };
        int oh, ow;
        if (cdd_conv_out_dims(&s, &oh, &ow) != 0)
            continue;
        size_t nx = cdd_conv_x_count(&s), nw = cdd_conv_w_count(&s),
               ny = cdd_conv_y_count(&s);
        float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w),
              *y = malloc(ny * sizeof *y);
        double *ref = malloc(ny * sizeof *ref);
        for (size_t i = 0; i < nx; i++)
            x[i] = (float)rnd(-1000, 1000) / 997.0f;
        for (size_t i = 0; i < nw; i++)
            w[i] = (float)rnd(-1000, 1000) / 991.0f;
        CHECK_INT(cdd_conv_ref_forward(&s, x, w, y), 0);
        naive(&s, x, w, ref);
        for (size_t i = 0; i < ny; i++) {
            double d = y[i] - ref[i];
            d = d < 0 ? -d : d;
            double m = ref[i] < 0 ? -ref[i] : ref[i];
            if (d > 1e-6 * (m > 1 ? m : 1)) {
                CHECK_MSG(0, "shape %d: y[%zu] = %.9g, naive %.9g", t, i,
                          (double)y[i], ref[i]);
                break;
            }
        }
        free(x);
        free(w);
        free(y);
        free(ref);
    }
}

static void test_compare(void)
{
    const float ref[4] = {1, -2, 0, 4};
    float got[4] = {1, -2, 0, 4};
    const float scale[4] = {1, 2, 10, 4};
    double mr = -1, ma = -1;
    size_t worst = 99;
    cdd_conv_compare(got, ref, scale, 4, &mr, &ma, &worst);
    CHECK(mr == 0);
    CHECK(ma == 0);
    CHECK_INT(worst, 0);
    /* Near-zero result: scale, not |ref|, is the denominator. */
    got[2] = 0.001f;
    cdd_conv_compare(got, ref, scale, 4, &mr, &ma, &worst);
    CHECK(mr > 0.99e-4 && mr < 1.01e-4);
    CHECK_INT(worst, 2);
    /* Without a scale: plain relative error with a 1e-3 floor. */
    cdd_conv_compare(got, ref, NULL, 4, &mr, &ma, &worst);
    CHECK(mr > 0.99 && mr < 1.01);
    got[2] = 0;
    got[3] = 4.5f;
    cdd_conv_compare(got, ref, scale, 4, &mr, &ma, &worst);
    CHECK(mr == 0.125);
    CHECK(ma == 0.5);
    CHECK_INT(worst, 3);
    /* NaN and infinity count as failures, never as passes. */
    float nanv;
    memset(&nanv, 0xff, sizeof nanv);
    got[3] = nanv;
    cdd_conv_compare(got, ref, scale, 4, &mr, &ma, &worst);
    CHECK(mr >= 1e30);
    CHECK_INT(worst, 3);
    got[3] = 1e38f * 10;
    cdd_conv_compare(got, ref, scale, 4, &mr, &ma, &worst);
    CHECK(mr >= 1e30);
    /* A zero scale does not divide by zero. */
    const float zero[4] = {0, 0, 0, 0};
    float g2[4] = {0, 0, 1e-9f, 0};
    cdd_conv_compare(g2, zero, zero, 4, &mr, &ma, &worst);
    CHECK(mr < 1e-2);
}

static void test_cancel(void)
{
    struct cdd_conv_shape s = shape(2, 1, 4, 4, 1, 1, 1, 0, 1);
    float x[32] = {0}, y[32], w = 1;
    cdd_cancel_request();
    CHECK_INT(cdd_conv_ref_forward(&s, x, &w, y), CDD_E_INTERRUPTED);
    cdd_cancel_reset();
    CHECK_INT(cdd_conv_ref_forward(&s, x, &w, y), 0);
}

/* binary16: known encodings, ties to even, overflow, subnormals, and every
 * one of the 65536 values surviving the round trip through float. */
static void test_half(void)
{
    static const struct {
        float f;
        uint16_t h;
    } known[] = {
        {1.0f, 0x3c00},      {-2.0f, 0xc000},         {0.5f, 0x3800},
        {65504.0f, 0x7bff},  {65520.0f, 0x7c00},      {1e6f, 0x7c00},
        {-1e6f, 0xfc00},     {0.0f, 0x0000},          {-0.0f, 0x8000},
        {5.9604645e-08f, 0x0001}, /* 2^-24, the smallest subnormal */
        {2.9802322e-08f, 0x0000}, /* 2^-25: a tie, to even (zero) */
        {8.9406967e-08f, 0x0002}, /* 1.5 * 2^-24: a tie, to even (2) */
        {6.1035156e-05f, 0x0400}, /* 2^-14, the smallest normal */
        {1.00048828125f, 0x3c00}, /* 1 + 2^-11: a tie, to even */
        {1.00146484375f, 0x3c02}, /* 1 + 3 * 2^-11: a tie, to even */
        {1.0004883f + 1e-6f, 0x3c01},
        {0.1f, 0x2e66},      {3.14159265f, 0x4248},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        CHECK_MSG(cdd_half_from_float(known[i].f) == known[i].h,
                  "%.9g -> 0x%04x, expected 0x%04x", (double)known[i].f,
                  cdd_half_from_float(known[i].f), known[i].h);
    CHECK(cdd_half_to_float(0x3c00) == 1.0f);
    CHECK(cdd_half_to_float(0x0001) == 5.9604645e-08f);
    CHECK(cdd_half_to_float(0x7bff) == 65504.0f);
    float nan = cdd_half_to_float(0x7e00);
    CHECK(nan != nan);
    CHECK((cdd_half_from_float(nan) & 0x7c00) == 0x7c00 &&
          (cdd_half_from_float(nan) & 0x3ff) != 0);
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
            continue; /* NaN: stays NaN, payload not promised */
        uint16_t back = cdd_half_from_float(cdd_half_to_float((uint16_t)h));
        CHECK_MSG(back == h, "0x%04x -> %.9g -> 0x%04x", h,
                  (double)cdd_half_to_float((uint16_t)h), back);
        if (back != h)
            break;
    }
}

TEST_MAIN(TEST(test_out_dims), TEST(test_invalid_shapes), TEST(test_flops),
          TEST(test_identity_1x1), TEST(test_3x3_padding),
          TEST(test_cross_correlation), TEST(test_stride2),
          TEST(test_random_vs_naive), TEST(test_compare), TEST(test_cancel),
          TEST(test_half))
