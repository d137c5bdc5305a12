package org.scaledl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.io.DeviceCatalog;

class MemoryFormatTest {
    private static final DeviceCatalog CATALOG = DeviceCatalog.bundled();
    private static final Device H200 = CATALOG.require("NVIDIA H200");
    private static final Device A100 = CATALOG.require("NVIDIA A100-SXM4-80GB");

    private static LayerFeatures conv(long groups) {
        return new LayerFeatures(0, OpFamily.CONV, 1e9, 2e9, 1e6, 1e6, 2e6, 9408, 8e5, 49, 2, groups, 64, 64);
    }

    private static LayerFeatures of(OpFamily family) {
        return new LayerFeatures(0, family, 1e9, 2e9, 1e6, 1e6, 2e6, 0, 8e5, 0, 0, 1, 64, 64);
    }

    @Test
    void parsesPyTorchsAndOnnxsNamesAndNamesWhatItAccepts() {
        for (String t : new String[] {"nchw", "NCHW", "channels_first", "channels-first", "contiguous",
            "contiguous_format", "", " nchw "}) {
            assertEquals(MemoryFormat.NCHW, MemoryFormat.parse(t), t);
        }
        for (String t : new String[] {"channels_last", "Channels-Last", "nhwc", "NHWC"}) {
            assertEquals(MemoryFormat.CHANNELS_LAST, MemoryFormat.parse(t), t);
        }
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> MemoryFormat.parse("nhcw"));
        assertTrue(e.getMessage().contains("'nhcw'") && e.getMessage().contains("nchw or channels_last"),
                e.getMessage());
        for (MemoryFormat f : MemoryFormat.values()) {
            assertEquals(f, MemoryFormat.parse(f.label()), "the label parses back");
        }
    }

    @Test
    void onlyDenseConvolutionsOnMatrixUnitsOfHopperOrBlackwellInNchwPay() {
        MemoryFormat nchw = MemoryFormat.NCHW;
        assertEquals(MemoryFormat.HALF_FORWARD, nchw.slowdown(conv(1), Precision.BF16, H200, false));
        assertEquals(MemoryFormat.HALF_BACKWARD, nchw.slowdown(conv(1), Precision.FP16, H200, true));
        assertEquals(MemoryFormat.TF32_FORWARD, nchw.slowdown(conv(1), Precision.TF32, H200, false));
        assertEquals(MemoryFormat.TF32_BACKWARD, nchw.slowdown(conv(1), Precision.TF32, H200, true));
        assertEquals(MemoryFormat.HALF_BACKWARD, nchw.slowdown(conv(1), Precision.BF16,
                CATALOG.require("NVIDIA B200"), true), "Blackwell: the successor, charged as Hopper");
        assertEquals(1, nchw.slowdown(conv(1), Precision.FP32, H200, true), "FP32: CUDA cores read NCHW");
        assertEquals(1, nchw.slowdown(conv(1), Precision.BF16, A100, true), "an older GPU: not measured");
        assertEquals(1, nchw.slowdown(conv(64), Precision.BF16, H200, true), "depthwise: memory-bound");
        assertEquals(1, nchw.slowdown(conv(1), Precision.FP8, H200, true), "not a convolution's precision");
        assertEquals(1, nchw.slowdown(of(OpFamily.DENSE), Precision.BF16, H200, true), "not a convolution");
        assertEquals(1, nchw.slowdown(of(OpFamily.NORM), Precision.BF16, H200, false), "not a convolution");
        assertEquals(1, MemoryFormat.CHANNELS_LAST.slowdown(conv(1), Precision.BF16, H200, true));
        assertTrue(MemoryFormat.HALF_BACKWARD > MemoryFormat.HALF_FORWARD
                && MemoryFormat.HALF_FORWARD > MemoryFormat.TF32_FORWARD && MemoryFormat.TF32_FORWARD > 1,
                "16 bits pay more than TF32, the backward pass more than the forward");
    }

    /** The factor never speeds a layer up, and channels-last is never charged. */
    @Property
    void theFactorIsAtLeastOneAndOnlyForNchw(@ForAll OpFamily family, @ForAll Precision precision,
            @ForAll @IntRange(min = 1, max = 512) int groups, @ForAll boolean backward) {
        LayerFeatures f = new LayerFeatures(0, family, 1e9, 2e9, 1e6, 1e6, 2e6, 0, 8e5, 9, 1, groups, 64, 64);
        double s = MemoryFormat.NCHW.slowdown(f, precision, H200, backward);
        assertTrue(s >= 1, "factor " + s);
        assertEquals(s > 1, family == OpFamily.CONV && groups == 1 && (precision == Precision.BF16
                || precision == Precision.FP16 || precision == Precision.TF32));
        assertEquals(1, MemoryFormat.CHANNELS_LAST.slowdown(f, precision, H200, backward));
    }

    @Test
    void aWorkloadIsNchwUnlessToldAndKeepsItsFormat() {
        org.scaledl.graph.ModelGraph g = org.scaledl.onnx.OnnxImporter.read(org.scaledl.TestData.graph("resnet18_r64"));
        Workload w = Workload.builder(g).build();
        assertEquals(MemoryFormat.NCHW, w.memoryFormat());
        Workload last = w.toBuilder().memoryFormat(MemoryFormat.CHANNELS_LAST).build();
        assertEquals(MemoryFormat.CHANNELS_LAST, last.toBuilder().batch(4).build().memoryFormat());
        assertTrue(last.toString().contains("memory-format=channels_last") && !w.toString().contains("memory-format"),
                last.toString());
    }
}
