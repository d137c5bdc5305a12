package org.scaledl.model.comm;

import org.scaledl.Checks;


/**
 * The functional forms of collective communication that every communication model shares, defined once. A ring
 * all-reduce of {@code S} bytes over {@code n} ranks moves {@code 2(n−1)/n · S} bytes through each rank's link in
 * {@code 2(n−1)} synchronous steps (reduce-scatter, then all-gather), so
 *
 * <pre>
 *   t(n, S) = 2(n−1) · α + 2(n−1)/n · S / B
 * </pre>
 *
 * which tends to {@code 2S/B} plus a latency linear in {@code n} as {@code n} grows: bandwidth cost saturates, latency
 * does not. PyTorch DDP reduces gradients in buckets of {@value #BUCKET_MIB} MiB, each a collective of its own.
 */
public final class Collectives {
    /** PyTorch DDP's default gradient bucket, MiB. */
    public static final int BUCKET_MIB = 25;
    /** PyTorch DDP's default gradient bucket, bytes. */
    public static final double BUCKET_BYTES = BUCKET_MIB * 1024.0 * 1024.0;

    private Collectives() {
    }

    /** Synchronous steps of a ring all-reduce over {@code n} ranks: {@code 2(n−1)}. */
    public static double ringSteps(int n) {
        Checks.argument(n > 0, "ranks must be positive: %s", n);
        return 2.0 * (n - 1);
    }

    /** Bytes each rank sends per byte reduced, in a ring over {@code n} ranks: {@code 2(n−1)/n} (below 2). */
    public static double ringVolume(int n) {
        Checks.argument(n > 0, "ranks must be positive: %s", n);
        return 2.0 * (n - 1) / n;
    }

    /** DDP buckets for {@code bytes} of gradients (at least one). */
    public static double buckets(double bytes) {
        return Math.max(1, Math.ceil(bytes / BUCKET_BYTES));
    }
}
