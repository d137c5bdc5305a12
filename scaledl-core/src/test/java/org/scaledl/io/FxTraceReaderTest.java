package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.TestData;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.Phase;

class FxTraceReaderTest {
    private static final Path GPT2 = TestData.gpu()
            .resolve("neusight/models/nodes/NVIDIA_L4/gpt2_large-inf-1024-4.csv");

    @Test
    void gpt2LargeHasHuggingFaceParameterCount() {
        FxTrace t = FxTraceReader.read(GPT2, 36);
        long h = 1280;
        long vocab = 50257;
        long block = 12 * h * h + 13 * h;
        // 36 blocks, token and position embeddings, final norm, and the LM head (tied to the token embedding in
        // HuggingFace, a separate weight here because the trace does not say it is shared).
        long expected = 36 * block + vocab * h + 1024 * h + 2 * h + vocab * h;
        assertEquals(expected, t.graph().parameterCount());
        assertEquals(36, t.blockCopies());
        assertEquals(1280, t.hiddenSize());
        assertEquals(Phase.INFER, t.phase());
        assertEquals(4, t.batch());
    }

    @Test
    void copiesAreChainedThroughTheResidualStream() {
        FxTrace t = FxTraceReader.read(GPT2, 3);
        ModelGraph g = t.graph();
        Layer ln1 = g.layer(g.indexOf("transformer_h_0_ln_1#1").orElseThrow());
        Layer ln0 = g.layer(g.indexOf("transformer_h_0_ln_1").orElseThrow());
        assertEquals("transformer_drop", ln0.input(0).orElseThrow());
        assertEquals("add_15", ln1.input(0).orElseThrow());
        Layer lnf = g.layer(g.indexOf("transformer_ln_f").orElseThrow());
        assertEquals("add_15#2", lnf.input(0).orElseThrow());
        assertEquals("layer", t.region("add_15#2"));
        assertEquals("epilogue", t.region("transformer_ln_f"));
    }

    @Test
    void featuresScaleWithTheBatch() {
        FxTrace t = FxTraceReader.read(GPT2, 2);
        FeatureExtractor fx = FeatureExtractor.of(t.graph());
        double at4 = sum(fx.extract(4, Phase.INFER));
        double at8 = sum(fx.extract(8, Phase.INFER));
        assertTrue(t.rescalable());
        assertEquals(2 * at4, at8, 1e-9 * at8);
        // Known cost: 2 FLOPs per multiply-accumulate of every linear layer, per token.
        assertTrue(at4 > 2.0 * 4 * 1024 * (2 * 12 * 1280 * 1280 + 50257 * 1280));
    }

    private static double sum(List<LayerFeatures> fs) {
        return fs.stream().mapToDouble(LayerFeatures::flopsFwd).sum();
    }

    @Test
    void measuredLatenciesAreKeptForTracedNodes() {
        FxTrace t = FxTraceReader.read(GPT2, 36);
        double[] ms = t.measuredMillis("lm_head").orElseThrow();
        assertTrue(ms[0] > 0);
        assertEquals(0, ms[1]);
        assertTrue(t.measuredMillis("transformer_h_0_ln_1#5").isEmpty(), "copies carry no measurement");
    }

    @Test
    void badInputNamesFileAndLine(@TempDir Path dir) throws IOException {
        List<String> lines = Files.readAllLines(GPT2);
        Path wrongName = dir.resolve("gpt2.csv");
        Files.write(wrongName, lines);
        assertTrue(assertThrows(InvalidInputException.class, () -> FxTraceReader.read(wrongName, 1)).getMessage()
                .contains("file name"));

        Path dangling = dir.resolve("m-inf-8-2.csv");
        List<String> bad = new java.util.ArrayList<>(lines);
        bad.set(7, bad.get(7).replace(",size,add", ",nosuchnode,add"));
        Files.write(dangling, bad);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> FxTraceReader.read(dangling, 1));
        assertTrue(e.getMessage().contains("m-inf-8-2.csv:8") && e.getMessage().contains("nosuchnode"),
                e.getMessage());

        Path shape = dir.resolve("m-inf-8-4.csv");
        List<String> bad2 = new java.util.ArrayList<>(lines);
        bad2.set(4, bad2.get(4).replace("\"(4, 1024)\"", "\"[4, 1024\""));
        Files.write(shape, bad2);
        e = assertThrows(InvalidInputException.class, () -> FxTraceReader.read(shape, 1));
        assertTrue(e.getMessage().contains("m-inf-8-4.csv:5") && e.getMessage().contains("output_shape"),
                e.getMessage());

        Path huge = dir.resolve("m-inf-8-8.csv");
        List<String> bad3 = new java.util.ArrayList<>(lines);
        bad3.set(4, bad3.get(4).replace("\"(4, 1024)\"", "\"(99999999999999999999, 1024)\""));
        Files.write(huge, bad3);
        e = assertThrows(InvalidInputException.class, () -> FxTraceReader.read(huge, 1));
        assertTrue(e.getMessage().contains("m-inf-8-8.csv:5") && e.getMessage().contains("out of range"),
                e.getMessage());
    }

    /** {@code torch.max(a, b)} is element-wise; {@code torch.max(a)} (or with a dim) a reduction. */
    @Test
    void maxOfTwoTensorsIsElementWise(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("m-inf-8-2.csv");
        Files.write(file, List.of(
                "idx,name,op,target,region,input_shapes,output_shape,dtype,fw_latency,bw_latency,acc_latency,"
                        + "latency,input_nodes,users",
                "0,x,placeholder,x,prologue,[],\"(2, 8, 4)\",torch.float32,0.0,0,0,0.0,,max_1;max_2",
                "1,t,call_function,<built-in method tensor of type object>,layer,\"[[1]]\",\"(1,)\",torch.float32,"
                        + "0.01,0,0,0.01,,max_1",
                "2,max_1,call_function,<built-in method max of type object>,layer,\"[[2, 8, 4], [1]]\",\"(2, 8, 4)\","
                        + "torch.float32,0.02,0,0,0.02,x;t,output",
                "3,max_2,call_function,<built-in method max of type object>,layer,\"[[2, 8, 4]]\",\"(1,)\","
                        + "torch.float32,0.02,0,0,0.02,x,output",
                "4,output,output,output,epilogue,\"[[2, 8, 4], [1]]\",\"(2, 8, 4)\",torch.float32,0.0,0,0,0.0,"
                        + "max_1;max_2,"));
        ModelGraph g = FxTraceReader.read(file, 1).graph();
        assertEquals("Max", g.layer(g.indexOf("max_1").orElseThrow()).opType());
        assertEquals("ReduceMax", g.layer(g.indexOf("max_2").orElseThrow()).opType());
    }
}
