package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;

/**
 * A row-parallel product's share on one rank ({@link ParallelExecution#shareReduction}) is the linear layer that rank
 * computes: its rows split by context parallelism, its reduction by tensor parallelism, its output width whole.
 */
class RowParallelShareTest {
    /** A linear layer of {@code rows} tokens, {@code k} inputs, {@code n} outputs (FP32 bytes), written out. */
    private static LayerFeatures linear(double rows, long k, long n) {
        return new LayerFeatures(0, OpFamily.DENSE, 2 * rows * k * n, 4 * rows * k * n, 4 * (rows * k + k * n),
                4 * rows * n, 8 * (rows * k + k * n + rows * n), k * n, rows * n, 1, 1, 1, k, n);
    }

    /**
     * Against the slow reference, the linear layer of {@code rows/c} tokens, {@code k/t} inputs and {@code n}
     * outputs: every figure equal; against the column-parallel share of the same layer, the same work and weights
     * and {@code t} times the output.
     */
    @Property(tries = 300)
    void aRankComputesItsSliceOfTheReductionIntoTheWholeOutput(@ForAll @IntRange(min = 1, max = 64) int rowBlocks,
            @ForAll @IntRange(min = 1, max = 64) int kBlocks, @ForAll @IntRange(min = 1, max = 64) int nBlocks,
            @ForAll @IntRange(min = 0, max = 3) int tLog, @ForAll @IntRange(min = 0, max = 2) int cLog) {
        int t = 1 << tLog;
        int c = 1 << cLog;
        double rows = 128.0 * rowBlocks * c;
        long k = 64L * kBlocks * t;
        long n = 64L * nBlocks;
        LayerFeatures whole = linear(rows, k, n);
        LayerFeatures share = ParallelExecution.shareReduction(whole, t, c);
        LayerFeatures reference = linear(rows / c, k / t, n);
        double tol = 1e-9;
        assertEquals(reference.flopsFwd(), share.flopsFwd(), tol * reference.flopsFwd());
        assertEquals(reference.flopsBwd(), share.flopsBwd(), tol * reference.flopsBwd());
        assertEquals(reference.bytesRead(), share.bytesRead(), tol * reference.bytesRead());
        assertEquals(reference.bytesWritten(), share.bytesWritten(), tol * reference.bytesWritten());
        assertEquals(reference.bytesBwd(), share.bytesBwd(), tol * reference.bytesBwd());
        assertEquals(reference.params(), share.params(), tol * reference.params());
        assertEquals(reference.outputElements(), share.outputElements(), tol * reference.outputElements());
        assertEquals(reference.inChannels(), share.inChannels());
        assertEquals(reference.outChannels(), share.outChannels());
        LayerFeatures columns = ParallelExecution.share(whole, t * c, t, t);
        assertEquals(columns.flopsFwd(), share.flopsFwd(), tol * share.flopsFwd());
        assertEquals(columns.params(), share.params(), tol * share.params());
        assertEquals(t * columns.outputElements(), share.outputElements(), tol * share.outputElements());
    }
}
