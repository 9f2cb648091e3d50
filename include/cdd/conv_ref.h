/* The tool's own CPU convolution: the reference that cuDNN's results are
 * compared with in verify's gpu and bench layers, and the CPU side of the
 * benchmark's speed-up. NCHW float tensors, KCRS filters, cross-correlation
 * (cuDNN's CUDNN_CROSS_CORRELATION: the filter is not flipped), zero
 * padding, stride; accumulation in double. Single-threaded. */
#ifndef CDD_CONV_REF_H
#define CDD_CONV_REF_H

#include <stddef.h>
#include <stdint.h>

/* Input n x c x h x w, filter k x c x r x s, symmetric padding per axis. */
struct cdd_conv_shape {
    int n, c, h, w; /* input */
    int k, r, s;    /* output channels, filter height and width */
    int pad_h, pad_w;
    int stride_h, stride_w;
};

/* Output height and width. Errors: CDD_E_USAGE for a shape that is not a
 * valid convolution (non-positive sizes, negative padding, a filter larger
 * than the padded input, or tensors of more than 2^31 elements). */
int cdd_conv_out_dims(const struct cdd_conv_shape *s, int *oh, int *ow);

/* Element counts of input, filter and output (0 for an invalid shape). */
size_t cdd_conv_x_count(const struct cdd_conv_shape *s);
size_t cdd_conv_w_count(const struct cdd_conv_shape *s);
size_t cdd_conv_y_count(const struct cdd_conv_shape *s);

/* Floating-point operations of one forward pass, counting a multiply-add as
 * two: 2 * n * k * oh * ow * c * r * s (0 for an invalid shape). */
double cdd_conv_flops(const struct cdd_conv_shape *s);

/* y = conv(x, w). Polls cdd_cancelled() between images.
 * Errors: CDD_E_USAGE, CDD_E_NOMEM, CDD_E_INTERRUPTED. */
int cdd_conv_ref_forward(const struct cdd_conv_shape *s, const float *x,
                         const float *w, float *y);

/* Compare a result with the reference. The error of element i is
 *     |got[i] - ref[i]| / max(scale[i], 1e-6)
 * where scale[i] = sum over the filter window of |x| * |w|: the reference
 * convolution of |x| with |w| (compute it with cdd_conv_ref_forward on the
 * absolute values). Why not |ref[i]|: where terms cancel, ref[i] is near
 * zero and a plain relative error measures only rounding noise, so it fails
 * correct results. Floating-point summation error is bounded by
 * (number of terms) * eps * scale[i], so with this measure a correct FP32
 * result stays near 1e-7 (TF32 near 1e-4) and a wrong one comes out near 1,
 * whatever the data. Where nothing cancels, scale[i] == |ref[i]| and the
 * measure is the plain relative error. With scale NULL, the plain relative
 * error |got - ref| / max(|ref|, 1e-3) is used. A NaN or infinity in got
 * counts as 1e30. Reports the largest error, the largest absolute
 * difference and the index of the worst element. */
void cdd_conv_compare(const float *got, const float *ref, const float *scale,
                      size_t count, double *max_rel, double *max_abs,
                      size_t *worst);

/* IEEE 754 binary16 (cuDNN's CUDNN_DATA_HALF) to and from float: round to
 * nearest even, overflow to infinity, subnormals kept, NaN kept NaN. */
uint16_t cdd_half_from_float(float v);
float cdd_half_to_float(uint16_t h);

#endif
