package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.ToDoubleFunction;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;

/**
 * A product with weights is never less efficient than its rows cut in pieces ({@link MegatronExecution#pieceMillis}),
 * whatever the layer model says of its size.
 */
class ProductPiecesTest {
    /** A linear layer of {@code rows} tokens, {@code k} inputs, {@code n} outputs (FP32 bytes). */
    private static LayerFeatures linear(double rows, long k, long n) {
        return new LayerFeatures(0, OpFamily.DENSE, 2 * rows * k * n, 4 * rows * k * n, 4 * (rows * k + k * n),
                4 * rows * n, 8 * (rows * k + k * n + rows * n), k * n, rows * n, 1, 1, 1, k, n);
    }

    private static double rows(LayerFeatures f) {
        return f.outputElements() / f.outChannels();
    }

    /** A cost that droops past 4,096 rows: its efficiency halves with every doubling beyond (the trees' failing). */
    private static final ToDoubleFunction<LayerFeatures> DROOP = f -> f.flopsFwd() * 1e-12
            * Math.max(1, rows(f) / 4096);

    @Test
    void aDroopingLargeProductCostsItsPieces() {
        LayerFeatures big = linear(65536, 8192, 8192);
        // cut down to pieces of 4,096 rows (no cheaper per row below), 16 of them
        double piece = DROOP.applyAsDouble(linear(4096, 8192, 8192));
        assertEquals(16 * piece, MegatronExecution.pieceMillis(big, DROOP), 1e-9 * piece);
        // an efficient cost is left as it is, and so is a product too small to cut or one without weights
        ToDoubleFunction<LayerFeatures> linearCost = f -> f.flopsFwd() * 1e-12;
        assertEquals(linearCost.applyAsDouble(big), MegatronExecution.pieceMillis(big, linearCost), 0);
        LayerFeatures small = linear(3000, 8192, 8192);
        assertEquals(DROOP.applyAsDouble(small), MegatronExecution.pieceMillis(small, DROOP), 0);
        LayerFeatures scores = new LayerFeatures(0, OpFamily.DENSE, 1e12, 2e12, 1e9, 1e9, 2e9, 0, 1e8, 1, 1, 1, 128,
                8192);
        assertEquals(DROOP.applyAsDouble(scores), MegatronExecution.pieceMillis(scores, DROOP), 0);
    }

    /**
     * Whatever the cost: never above the layer's own time, never above any allowed cut's pieces (the slow reference,
     * every power of two down to {@link MegatronExecution#MIN_PIECE_ROWS} rows), and per row no dearer for a larger
     * product than for its half.
     */
    @Property(tries = 300)
    void neverDearerThanItsPieces(@ForAll @IntRange(min = 1, max = 64) int blocks,
            @ForAll @DoubleRange(min = -1, max = 1) double slope,
            @ForAll @DoubleRange(min = 0, max = 6) double wiggle) {
        ToDoubleFunction<LayerFeatures> cost = f -> f.flopsFwd() * 1e-12 * Math.pow(rows(f) / 2048, slope)
                * (1 + 0.3 * Math.sin(wiggle * Math.log(rows(f))));
        LayerFeatures f = linear(1024.0 * blocks, 4096, 14336);
        double t = MegatronExecution.pieceMillis(f, cost);
        // (a product of at most MIN_PIECE_ROWS rows is never faster than its rows halved, down to one)
        double fewer = 0;
        if (rows(f) <= MegatronExecution.MIN_PIECE_ROWS) {
            for (int k = 2; rows(f) / k >= 1; k *= 2) {
                double half = cost.applyAsDouble(org.scaledl.model.exec.ParallelExecution.share(f, k, 1, 1));
                assertTrue(t >= half * (1 - 1e-12), "rows / " + k);
                fewer = Math.max(fewer, half);
            }
        }
        assertTrue(t <= Math.max(cost.applyAsDouble(f), fewer) * (1 + 1e-12));
        for (int k = 2; rows(f) / k >= MegatronExecution.MIN_PIECE_ROWS; k *= 2) {
            LayerFeatures piece = org.scaledl.model.exec.ParallelExecution.share(f, k, 1, 1);
            assertTrue(t <= k * cost.applyAsDouble(piece) * (1 + 1e-12), "k " + k);
        }
        if (rows(f) / 2 >= MegatronExecution.MIN_PIECE_ROWS) {
            LayerFeatures half = linear(rows(f) / 2, 4096, 14336);
            assertTrue(t <= 2 * MegatronExecution.pieceMillis(half, cost) * (1 + 1e-9));
        }
    }
}
