package org.scaledl.gnn;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The gather and segment-sum kernels the network is made of. Segment sums are a plain loop over the row-major
 * buffer: ND4J 1.0.0-M2.1's {@code unsorted_segment_sum} misplaces rows for some inputs (a single row into several
 * segments lands in the wrong cell; see {@code Nd4jSmokeTest}), and the loop is {@code O(rows · columns)} anyway.
 */
final class Tensors {
    private Tensors() {
    }

    /** {@code out[s] = Σ rows[r] over r with ids[r] = s}, for s in [0, segments); a new row-major array. */
    static INDArray segmentSum(INDArray rows, int[] ids, int segments) {
        int cols = (int) rows.columns();
        double[] out = new double[segments * cols];
        if (rows.rows() > 0) {
            double[] in = rows.dup('c').data().asDouble();
            for (int r = 0; r < ids.length; r++) {
                int base = ids[r] * cols;
                int from = r * cols;
                for (int c = 0; c < cols; c++) {
                    out[base + c] += in[from + c];
                }
            }
        }
        return Nd4j.create(out, new long[] {segments, cols}, DataType.DOUBLE);
    }

    /** {@code out[r] = m[idx[r]]}; a new row-major array (a plain copy loop: ND4J's getRows is ~50× slower). */
    static INDArray gather(INDArray m, int[] idx) {
        int cols = (int) m.columns();
        if (idx.length == 0) {
            return Nd4j.zeros(DataType.DOUBLE, 0, cols);
        }
        double[] in = m.dup('c').data().asDouble();
        double[] out = new double[idx.length * cols];
        for (int r = 0; r < idx.length; r++) {
            System.arraycopy(in, idx[r] * cols, out, r * cols, cols);
        }
        return Nd4j.create(out, new long[] {idx.length, cols}, DataType.DOUBLE);
    }

    /** Element-wise {@code 1 where z > 0, else 0}. */
    static INDArray reluMask(INDArray z) {
        return z.gt(0).castTo(z.dataType());
    }
}
