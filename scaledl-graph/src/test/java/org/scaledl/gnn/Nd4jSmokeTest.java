package org.scaledl.gnn;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

class Nd4jSmokeTest {
    @Test
    void cpuBackendMultiplies() {
        INDArray a = Nd4j.create(new double[][] {{1, 2}, {3, 4}});
        INDArray b = a.mmul(a);
        assertEquals(DataType.DOUBLE, a.dataType());
        assertEquals(22.0, b.getDouble(1, 1), 1e-12);
        INDArray rows = a.getRows(1, 1, 0);
        assertEquals(3.0, rows.getDouble(1, 0), 1e-12);
    }

    @Test
    void segmentSumAddsRowsBySegment() {
        INDArray rows = Nd4j.create(new double[][] {{1, 2}, {3, 4}, {5, 6}});
        INDArray out = Tensors.segmentSum(rows, new int[] {1, 0, 1}, 3);
        assertEquals(3.0, out.getDouble(0, 0), 1e-12);
        assertEquals(6.0, out.getDouble(1, 0), 1e-12);
        assertEquals(8.0, out.getDouble(1, 1), 1e-12);
        assertEquals(0.0, out.getDouble(2, 1), 1e-12);
        INDArray again = Tensors.segmentSum(rows.mul(2), new int[] {0, 0, 0}, 1);
        assertEquals(18.0, again.getDouble(0, 0), 1e-12);
        assertEquals(24.0, again.getDouble(0, 1), 1e-12);
    }

    @Test
    void kernelsWorkOnColumnMajorArrays() {
        INDArray c = Nd4j.create(new double[][] {{1, 2}, {3, 4}, {5, 6}});
        INDArray f = c.dup('f');
        INDArray g = Tensors.gather(f, new int[] {2, 0});
        assertEquals(5.0, g.getDouble(0, 0), 1e-12);
        assertEquals(2.0, g.getDouble(1, 1), 1e-12);
        INDArray s = Tensors.segmentSum(f, new int[] {1, 0, 1}, 2);
        assertEquals(6.0, s.getDouble(1, 0), 1e-12);
        assertEquals(8.0, s.getDouble(1, 1), 1e-12);
        assertEquals(3.0, s.getDouble(0, 0), 1e-12);
    }

    @Test
    void singleRowLandsInItsSegment() {
        INDArray h = Nd4j.create(new double[][] {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}});
        INDArray out = Tensors.segmentSum(Tensors.gather(h, new int[] {1}), new int[] {3}, 5);
        assertEquals(3.0, out.getDouble(3, 0), 1e-12);
        assertEquals(4.0, out.getDouble(3, 1), 1e-12);
        assertEquals(0.0, out.sumNumber().doubleValue() - 7.0, 1e-12);
    }
}
