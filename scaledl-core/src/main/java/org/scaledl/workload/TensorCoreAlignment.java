package org.scaledl.workload;

/**
 * What a matrix product pays on a GPU with a tensor memory accelerator ({@link Device#tensorMemoryAccelerator()})
 * when a row of one of its operands does not start on a 16-byte boundary.
 *
 * <p>A product {@code C[M, N] = A[M, K] · B[K, N]} of row-major operands has rows of {@code K} elements (A) and
 * {@code N} elements (B and C); its backward products read and write the same rows. Hopper's and Blackwell's fast
 * kernels copy tiles with the tensor memory accelerator, whose copies need those rows to be multiples of 16 bytes;
 * otherwise cuBLAS runs the previous generation's kernels, with narrower loads. Measured on one H200 (cuBLAS 13,
 * PyTorch 2.11; {@code datasets/h200/large_batch}: products of 4,096³ with one side 4,096 + 1, 2, 4 or 8, in BF16,
 * FP16 and TF32, as {@code torch.mm} and {@code F.linear}): a product whose rows are multiples of 4 or 8 bytes but
 * not 16 takes {@value #WORD_ALIGNED_SLOWDOWN}× as long (median of 24 pairs, 2.2–3.0), one whose rows are 2 bytes
 * (an odd width in 16 bits) {@value #ELEMENT_ALIGNED_SLOWDOWN}× (8 pairs, 5.2–7.5); M never matters (it is no row's
 * length). The language-model heads of BERT (30,522 words) and GPT-2 (50,257) alone, forward and backward, took
 * 2.5–2.8× and 4.9–5.8× their padded vocabularies' time in 16 bits, with or without a bias. DeepBench's V100 and T4
 * runs (cuBLAS 10) of the same kind of shapes show none of it, so the rule is not applied to older GPUs (the A100 is
 * not measured here: it gets none). FP8 and FP4 products are not covered (not measured; their recipes pad to 16 or
 * 32 elements).
 */
public final class TensorCoreAlignment {
    /** The row alignment the accelerator's copies need, bytes. */
    public static final int BYTES = 16;
    /** A product's time over its aligned time when its rows are multiples of 4 or 8 bytes, not 16. */
    public static final double WORD_ALIGNED_SLOWDOWN = 2.65;
    /** A product's time over its aligned time when its rows are multiples of 2 bytes only. */
    public static final double ELEMENT_ALIGNED_SLOWDOWN = 5.8;

    private TensorCoreAlignment() {
    }

    /**
     * The largest power of two, at most {@value #BYTES}, that divides the byte length of a row of {@code k} and of
     * {@code n} elements of {@code elementBytes} each ({@code n <= 0}: K alone).
     */
    public static int alignmentBytes(long k, long n, int elementBytes) {
        int a = rowAlignment(k * elementBytes);
        return n > 0 ? Math.min(a, rowAlignment(n * elementBytes)) : a;
    }

    private static int rowAlignment(long bytes) {
        if (bytes <= 0) {
            return BYTES;
        }
        return (int) Math.min(BYTES, Long.lowestOneBit(bytes));
    }

    /**
     * A layer's factor ({@link #slowdown(long, long, Precision, Device)} of its K and N): 1 for a layer that is not a
     * product, and for a batched product ({@link LayerFeatures#groups()} above 1: an attention core's, which PyTorch 2
     * runs fused through {@code scaled_dot_product_attention}, whose kernels pad; ViT's 197 tokens would otherwise be
     * charged).
     */
    public static double slowdown(LayerFeatures f, Precision precision, Device device) {
        return f.family() == OpFamily.DENSE && f.groups() <= 1
                ? slowdown(f.inChannels(), f.outChannels(), precision, device) : 1;
    }

    /**
     * The factor on a product's time with reduction length {@code k} and output width {@code n} in a precision on a
     * device: 1 where the device has no tensor memory accelerator, the precision no matrix units on it, or is
     * not 16 or 32 bits wide, and where the rows are aligned; else {@link #WORD_ALIGNED_SLOWDOWN} or
     * {@link #ELEMENT_ALIGNED_SLOWDOWN}.
     */
    public static double slowdown(long k, long n, Precision precision, Device device) {
        // the rows first: most products are aligned, and the device's tests are the dearer ones
        int a = alignmentBytes(k, n, precision.activationBytes());
        if (a >= BYTES || precision.lowPrecisionLinear() || !device.tensorMemoryAccelerator()
                || !device.matrixUnits(precision)) {
            return 1;
        }
        return a >= 4 ? WORD_ALIGNED_SLOWDOWN : ELEMENT_ALIGNED_SLOWDOWN;
    }
}
