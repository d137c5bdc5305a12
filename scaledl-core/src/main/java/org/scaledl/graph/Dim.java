package org.scaledl.graph;

import org.scaledl.Checks;


/**
 * One tensor dimension as an affine function of the batch size: {@code perBatch * batch + constant}. Static
 * dimensions have {@code perBatch == 0}; the usual batch dimension is {@code Dim.batch()} ({@code 1 * batch + 0});
 * a flattened {@code [batch * seq, hidden]} reshape gives {@code Dim(seq, 0)}.
 *
 * <pre>{@code
 * Dim d = new Dim(64, 0);   // 64 * batch
 * long n = d.at(8);         // 512
 * }</pre>
 *
 * @param perBatch coefficient of the batch size
 * @param constant constant term
 */
public record Dim(long perBatch, long constant) {

    private static final Dim BATCH = new Dim(1, 0);

    /** A static dimension. */
    public static Dim of(long value) {
        return new Dim(0, value);
    }

    /** The batch dimension itself. */
    public static Dim batch() {
        return BATCH;
    }

    /** True when the dimension does not depend on the batch size. */
    public boolean isStatic() {
        return perBatch == 0;
    }

    /**
     * The concrete size for a batch size.
     *
     * @throws ArithmeticException if the result overflows a {@code long}
     */
    public long at(long batch) {
        Checks.argument(batch > 0, "batch must be positive: %s", batch);
        return Math.addExact(Math.multiplyExact(perBatch, batch), constant);
    }

    @Override
    public String toString() {
        if (perBatch == 0) {
            return Long.toString(constant);
        }
        String b = perBatch == 1 ? "batch" : perBatch + "*batch";
        if (constant == 0) {
            return b;
        }
        return b + (constant > 0 ? "+" : "") + constant;
    }
}
