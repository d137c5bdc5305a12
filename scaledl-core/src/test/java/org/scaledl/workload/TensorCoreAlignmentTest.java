package org.scaledl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.scaledl.TestData;
import org.scaledl.io.DeviceCatalog;

class TensorCoreAlignmentTest {
    private static final DeviceCatalog CATALOG = DeviceCatalog.bundled();
    private static final Device H200 = CATALOG.require("NVIDIA H200");
    private static final Device A100 = CATALOG.require("NVIDIA A100-SXM4-80GB");

    @Test
    void rowsAreAlignedByTheLargestPowerOfTwoOfTheirBytesUpTo16() {
        assertEquals(16, TensorCoreAlignment.alignmentBytes(4096, 4096, 2));
        assertEquals(2, TensorCoreAlignment.alignmentBytes(4097, 4096, 2));
        assertEquals(4, TensorCoreAlignment.alignmentBytes(4096, 4098, 2));
        assertEquals(8, TensorCoreAlignment.alignmentBytes(4100, 4096, 2));
        assertEquals(4, TensorCoreAlignment.alignmentBytes(4097, 0, 4), "a TF32 row of odd length: 4 bytes");
        assertEquals(16, TensorCoreAlignment.alignmentBytes(0, 0, 2), "no row: nothing to align");
    }

    @Test
    void onlyGpusWithATensorMemoryAcceleratorPayAndOnlyOnTheirMatrixUnits() {
        assertTrue(H200.tensorMemoryAccelerator());
        assertTrue(CATALOG.require("NVIDIA B200").tensorMemoryAccelerator());
        assertTrue(CATALOG.require("VR200").tensorMemoryAccelerator(), "Rubin, compute capability above 9.0");
        assertTrue(!A100.tensorMemoryAccelerator() && !CATALOG.require("NVIDIA L4").tensorMemoryAccelerator());
        assertTrue(CATALOG.require("NVIDIA GB300").tensorMemoryAccelerator(), "Blackwell Ultra");
        // a user's own catalog row, written by hand
        for (String written : new String[] {"hopper", " Hopper ", "BLACKWELL"}) {
            assertTrue(withArchitecture(A100, written).tensorMemoryAccelerator(), written);
        }
        assertTrue(!withArchitecture(A100, "").tensorMemoryAccelerator()
                && !withArchitecture(A100, "Ada Lovelace").tensorMemoryAccelerator());
        assertEquals(TensorCoreAlignment.ELEMENT_ALIGNED_SLOWDOWN,
                TensorCoreAlignment.slowdown(1024, 50257, Precision.BF16, H200));
        assertEquals(TensorCoreAlignment.WORD_ALIGNED_SLOWDOWN,
                TensorCoreAlignment.slowdown(1024, 30522, Precision.FP16, H200));
        assertEquals(TensorCoreAlignment.WORD_ALIGNED_SLOWDOWN,
                TensorCoreAlignment.slowdown(1024, 50257, Precision.TF32, H200));
        assertEquals(1, TensorCoreAlignment.slowdown(1024, 50304, Precision.BF16, H200));
        assertEquals(1, TensorCoreAlignment.slowdown(1024, 50257, Precision.FP32, H200), "no matrix units");
        assertEquals(1, TensorCoreAlignment.slowdown(1024, 50257, Precision.BF16, A100), "no accelerator");
        assertEquals(1, TensorCoreAlignment.slowdown(1024, 50257, Precision.FP8, H200), "FP8: not covered");
    }

    /** Only a row's length modulo 8 elements decides, K and N alike, and the factor is one of the three measured. */
    @Property
    void theFactorDependsOnTheRowsModulo8(@ForAll @IntRange(min = 1, max = 1 << 20) int k,
            @ForAll @IntRange(min = 1, max = 1 << 20) int n, @ForAll @IntRange(min = 0, max = 1000) int shift) {
        double s = TensorCoreAlignment.slowdown(k, n, Precision.BF16, H200);
        assertEquals(s, TensorCoreAlignment.slowdown(k + 8L * shift, n + 8L * shift, Precision.BF16, H200));
        assertEquals(s, TensorCoreAlignment.slowdown(n, k, Precision.BF16, H200));
        assertTrue(s == 1 || s == TensorCoreAlignment.WORD_ALIGNED_SLOWDOWN
                || s == TensorCoreAlignment.ELEMENT_ALIGNED_SLOWDOWN, "factor " + s);
        assertEquals(s == 1, k % 8 == 0 && n % 8 == 0);
    }

    /**
     * The constants are the medians of what the repository's H200 measurement gives (datasets/h200/large_batch):
     * aligned over misaligned time of the same products, by the misaligned rows' alignment; the side M never moves it.
     */
    @Test
    void theConstantsAreTheMeasuredMedians() throws IOException {
        JsonNode root = new ObjectMapper().readTree(TestData.cpuDdp().getParent()
                .resolve("h200/large_batch/large_batch.json").toFile());
        Map<String, Double> aligned = new HashMap<>();
        for (JsonNode a : root.get("align")) {
            if (a.get("d").asInt() == 0) {
                aligned.put(a.get("precision").asText() + a.get("op").asText() + a.get("side").asText(),
                        a.get("ms").asDouble());
            }
        }
        List<Double> word = new ArrayList<>();
        List<Double> element = new ArrayList<>();
        List<Double> rows = new ArrayList<>();
        for (JsonNode a : root.get("align")) {
            int d = a.get("d").asInt();
            if (d == 0) {
                continue;
            }
            String key = a.get("precision").asText() + a.get("op").asText() + a.get("side").asText();
            double ratio = a.get("ms").asDouble() / aligned.get(key);
            if (a.get("side").asText().equals("M")) {
                rows.add(ratio);
                continue;
            }
            int bytes = a.get("precision").asText().equals("tf32") ? 4 : 2;
            int alignment = TensorCoreAlignment.alignmentBytes(a.get("K").asLong(), a.get("N").asLong(), bytes);
            if (alignment >= 4 && alignment < 16) {
                word.add(ratio);
            } else if (alignment < 4) {
                element.add(ratio);
            }
        }
        assertEquals(24, word.size());
        assertEquals(8, element.size());
        assertEquals(TensorCoreAlignment.WORD_ALIGNED_SLOWDOWN, median(word), 0.05 * median(word));
        assertEquals(TensorCoreAlignment.ELEMENT_ALIGNED_SLOWDOWN, median(element), 0.05 * median(element));
        assertTrue(median(rows) < 1.2, "M is no row's length: " + median(rows));
    }

    private static Device withArchitecture(Device d, String architecture) {
        return new Device(d.name(), d.memoryGB(), d.memoryBandwidthGBps(), d.computeUnits(), d.clockMHz(),
                d.peakMatrixGflops(), d.peakVectorGflops(), d.l2MB(), d.linkGBps(), d.kind(), d.simdBits(),
                d.matrixPeaks(), d.formFactor(), d.pcieGBps(), d.platform(), d.sfuPerClock(), d.boardPowerW(),
                architecture);
    }

    private static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(null);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }
}
