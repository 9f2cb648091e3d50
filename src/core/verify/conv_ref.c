/* CPU reference convolution (conv_ref.h).
 *
 * Loop order, chosen so ResNet-50's first layer (1.9 GFLOP) takes about a
 * second on one core without any intrinsics:
 *  1. per image, gather the input into "column planes"
 *     col[c][s][ih][o] = x[c][ih][o*stride_w - pad_w + s] (zero in the
 *     horizontal padding), so that for a fixed filter tap (c, r, s) the
 *     inputs of consecutive output columns are consecutive in memory;
 *  2. for each output row, take 16 output columns at a time, keep their 16
 *     double accumulators in registers, and sweep the C*R*S filter taps,
 *     each a unit-stride multiply-add of 16 floats (a fixed count the
 *     compiler vectorises at -O2); rows above or below the image (vertical
 *     padding) are skipped.
 * The gather costs S/stride_w times the input once per image; the sweep
 * touches only a few KiB per tile, so it runs from L1/L2. */
#include "cdd/conv_ref.h"

#include "cdd/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ELEMS ((uint64_t)1 << 31)

/* a * b * c * d when it stays within MAX_ELEMS, else 0; checked step by step
 * so that no product can wrap. */
static uint64_t count4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    const int64_t f[4] = {a, b, c, d};
    uint64_t p = 1;
    for (int i = 0; i < 4; i++) {
        if (f[i] <= 0 || (uint64_t)f[i] > MAX_ELEMS / p)
            return 0;
        p *= (uint64_t)f[i];
    }
    return p;
}

static int valid(const struct cdd_conv_shape *s, int *oh, int *ow)
{
    if (!s || s->n <= 0 || s->c <= 0 || s->h <= 0 || s->w <= 0 || s->k <= 0 ||
        s->r <= 0 || s->s <= 0 || s->pad_h < 0 || s->pad_w < 0 ||
        s->stride_h <= 0 || s->stride_w <= 0)
        return 0;
    int64_t ph = (int64_t)s->h + 2 * (int64_t)s->pad_h;
    int64_t pw = (int64_t)s->w + 2 * (int64_t)s->pad_w;
    if (s->r > ph || s->s > pw)
        return 0;
    int64_t h = (ph - s->r) / s->stride_h + 1;
    int64_t w = (pw - s->s) / s->stride_w + 1;
    if (!count4(s->n, s->c, s->h, s->w) || !count4(s->k, s->c, s->r, s->s) ||
        !count4(s->n, s->k, h, w))
        return 0;
    if (oh)
        *oh = (int)h;
    if (ow)
        *ow = (int)w;
    return 1;
}

int cdd_conv_out_dims(const struct cdd_conv_shape *s, int *oh, int *ow)
{
    if (!valid(s, oh, ow))
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "invalid convolution shape (input %dx%dx%dx%d, filter "
                        "%dx%dx%dx%d, pad %d,%d, stride %d,%d)",
                        s ? s->n : 0, s ? s->c : 0, s ? s->h : 0, s ? s->w : 0,
                        s ? s->k : 0, s ? s->c : 0, s ? s->r : 0, s ? s->s : 0,
                        s ? s->pad_h : 0, s ? s->pad_w : 0,
                        s ? s->stride_h : 0, s ? s->stride_w : 0);
    return 0;
}

size_t cdd_conv_x_count(const struct cdd_conv_shape *s)
{
    if (!valid(s, NULL, NULL))
        return 0;
    return (size_t)s->n * (size_t)s->c * (size_t)s->h * (size_t)s->w;
}

size_t cdd_conv_w_count(const struct cdd_conv_shape *s)
{
    if (!valid(s, NULL, NULL))
        return 0;
    return (size_t)s->k * (size_t)s->c * (size_t)s->r * (size_t)s->s;
}

size_t cdd_conv_y_count(const struct cdd_conv_shape *s)
{
    int oh, ow;
    if (!valid(s, &oh, &ow))
        return 0;
    return (size_t)s->n * (size_t)s->k * (size_t)oh * (size_t)ow;
}

double cdd_conv_flops(const struct cdd_conv_shape *s)
{
    int oh, ow;
    if (!valid(s, &oh, &ow))
        return 0;
    return 2.0 * s->n * s->k * (double)oh * ow * s->c * s->r * s->s;
}

/* Output columns computed together: their accumulators live in registers,
 * and a fixed count lets the compiler vectorise the update at -O2. */
#define TILE 16

int cdd_conv_ref_forward(const struct cdd_conv_shape *s, const float *x,
                         const float *w, float *y)
{
    int oh = 0, ow = 0, r;
    float *col = NULL;
    if ((r = cdd_conv_out_dims(s, &oh, &ow)) != 0)
        return r;
    const size_t H = (size_t)s->h, W = (size_t)s->w, OH = (size_t)oh,
                 OW = (size_t)ow, C = (size_t)s->c, K = (size_t)s->k,
                 R = (size_t)s->r, S = (size_t)s->s;
    /* One image's column planes: col[(c*S + fs)*H + ih][o] =
     * x[c][ih][o*stride_w - pad_w + fs], zero in the horizontal padding. */
    col = malloc(C * S * H * OW * sizeof *col);
    if (!col) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, "CPU reference convolution");
        goto out;
    }
    for (size_t n = 0; n < (size_t)s->n; n++) {
        if (cdd_cancelled()) {
            r = cdd_fail(CDD_E_INTERRUPTED, NULL, 0, NULL);
            goto out;
        }
        for (size_t c = 0; c < C; c++) {
            const float *xc = x + (n * C + c) * H * W;
            for (size_t fs = 0; fs < S; fs++) {
                float *cp = col + (c * S + fs) * H * OW;
                for (size_t o = 0; o < OW; o++) {
                    long iw = (long)o * s->stride_w - s->pad_w + (long)fs;
                    int inside = iw >= 0 && iw < (long)W;
                    for (size_t ih = 0; ih < H; ih++)
                        cp[ih * OW + o] = inside ? xc[ih * W + (size_t)iw] : 0;
                }
            }
        }
        for (size_t k = 0; k < K; k++) {
            const float *wk = w + k * C * R * S;
            float *yk = y + (n * K + k) * OH * OW;
            for (size_t o_h = 0; o_h < OH; o_h++) {
                for (size_t o0 = 0; o0 < OW; o0 += TILE) {
                    const size_t cnt = OW - o0 < TILE ? OW - o0 : TILE;
                    double acc[TILE] = {0};
                    for (size_t c = 0; c < C; c++) {
                        for (size_t fr = 0; fr < R; fr++) {
                            long ih = (long)o_h * s->stride_h - s->pad_h +
                                      (long)fr;
                            if (ih < 0 || ih >= (long)H)
                                continue; /* vertical padding: zeros */
                            const float *wr = wk + (c * R + fr) * S;
                            for (size_t fs = 0; fs < S; fs++) {
                                const double wv = wr[fs];
                                const float *row =
                                    col + ((c * S + fs) * H + (size_t)ih) * OW +
                                    o0;
                                if (cnt == TILE) {
                                    for (size_t j = 0; j < TILE; j++)
                                        acc[j] += wv * row[j];
                                } else {
                                    for (size_t j = 0; j < cnt; j++)
                                        acc[j] += wv * row[j];
                                }
                            }
                        }
                    }
                    for (size_t j = 0; j < cnt; j++)
                        yk[o_h * OW + o0 + j] = (float)acc[j];
                }
            }
        }
    }
    r = 0;
out:
    free(col);
    return r;
}

static double dabs(double v)
{
    return v < 0 ? -v : v;
}

void cdd_conv_compare(const float *got, const float *ref, const float *scale,
                      size_t count, double *max_rel, double *max_abs,
                      size_t *worst)
{
    double mr = 0, ma = 0;
    size_t wi = 0;
    for (size_t i = 0; i < count; i++) {
        double g = got[i], f = ref[i];
        double d = dabs(g - f), e;
        if (g != g || d > 1e300) { /* NaN or infinity */
            e = 1e30;
            d = 1e30;
        } else {
            /* Floors keep an all-zero window (scale 0) or a zero result
             * from turning rounding noise into a huge ratio. */
            double den = scale ? dabs(scale[i]) : dabs(f);
            double lo = scale ? 1e-6 : 1e-3;
            e = d / (den > lo ? den : lo);
        }
        if (e > mr) {
            mr = e;
            wi = i;
        }
        if (d > ma)
            ma = d;
    }
    if (max_rel)
        *max_rel = mr;
    if (max_abs)
        *max_abs = ma;
    if (worst)
        *worst = wi;
}

/* ---- binary16 ------------------------------------------------------------ */

uint16_t cdd_half_from_float(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    uint32_t sign = (u >> 16) & 0x8000u, exp = (u >> 23) & 0xffu,
             man = u & 0x7fffffu;
    if (exp == 0xff) /* infinity, NaN (kept quiet and non-zero) */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) { /* subnormal or zero in binary16 */
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        unsigned shift = (unsigned)(14 - e);
        uint32_t half = man >> shift, rest = man & ((1u << shift) - 1),
                 mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = (uint32_t)e << 10 | man >> 13, rest = man & 0x1fffu;
    /* A carry out of the mantissa bumps the exponent, up to infinity:
     * exactly what rounding should do. */
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
        half++;
    return (uint16_t)(sign | half);
}

float cdd_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu,
             man = h & 0x3ffu, u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000u | man << 13;
    } else if (exp == 0) {
        if (!man) {
            u = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400u));
            u = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
        }
    } else {
        u = sign | (exp - 15 + 127) << 23 | man << 13;
    }
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}
