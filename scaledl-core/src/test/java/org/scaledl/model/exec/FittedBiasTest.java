package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.ModelGraph;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Workload;

/**
 * {@link FittedBias}: a fit's bias on its runs of one model on one GPU is kept only where it is clear (runs, jobs, size
 * and sign), is read back as written, refuses what a file should not hold, concerns the jobs of its architecture and
 * GPU whatever their sequence, and is not carried by a model whose coefficients changed.
 */
class FittedBiasTest {
    private static final Device H100 = DeviceCatalog.bundled().require("H100 SXM");
    private static final Device A100 = DeviceCatalog.bundled().require("A100-SXM4-80GB");

    private static ModelGraph graph(String name, int seq) {
        return HuggingFaceConfig.read(Path.of("src/test/resources/transformers/" + name + "/config.json")).graph(seq);
    }

    private static Workload job(String model, int seq, Device d, int batch) {
        return Workload.builder(graph(model, seq)).batch(batch).device(d).precision(Precision.BF16)
                .parallelism(Parallelism.of(8, 1, 1, 1)).build();
    }

    private static List<FittedBias> of(List<Workload> w, double[] errors, double[] weights) {
        return FittedBias.of(w, errors, weights, w.stream().map(Workload::identity).toList(),
                Collections.nCopies(w.size(), "Llama 3"));
    }

    @Test
    void onlyAClearBiasIsKept() {
        List<Workload> three = List.of(job("llama-3-8b", 4096, H100, 8), job("llama-3-8b", 4096, H100, 16),
                job("llama-3-8b", 8192, H100, 8));
        double fast = Math.log(0.85);
        List<FittedBias> kept = of(three, new double[] {fast, fast, fast}, new double[] {1, 1, 1});
        assertEquals(1, kept.size());
        FittedBias b = kept.get(0);
        assertEquals(3, b.runs());
        assertEquals(3, b.jobs());
        assertEquals(-0.15, b.meanError(), 1e-12);
        assertEquals("Llama 3", b.label());
        assertEquals(H100.name(), b.device());
        assertTrue(b.note().contains("predicted 15.0 % too fast on average (3 of the 3 too fast"), b.note());
        // too small, too few, one job, mixed signs, weightless
        assertTrue(of(three, new double[] {-0.05, -0.05, -0.05}, new double[] {1, 1, 1}).isEmpty());
        assertTrue(of(three.subList(0, 2), new double[] {fast, fast}, new double[] {1, 1}).isEmpty());
        Workload one = three.get(0);
        assertTrue(of(List.of(one, one, one), new double[] {fast, fast, fast}, new double[] {1, 1, 1}).isEmpty());
        assertTrue(of(three, new double[] {fast, fast, 0.2}, new double[] {1, 1, 1}).isEmpty());
        // a mean beyond 10 % that half the weight errs the other way is no clear bias (three quarters must agree)
        List<Workload> four = List.of(three.get(0), three.get(1), three.get(2), job("llama-3-8b", 2048, H100, 8));
        double[] split = {-0.5, -0.5, 0.1, 0.1};
        assertTrue(Math.abs(Math.expm1((split[0] + split[1] + split[2] + split[3]) / 4)) >= FittedBias.MIN_ERROR);
        assertTrue(of(four, split, new double[] {1, 1, 1, 1}).isEmpty());
        assertEquals(1, of(four, new double[] {-0.5, -0.5, -0.2, 0.1}, new double[] {1, 1, 1, 1}).size());
        // a run predicted exactly errs no way: it counts against
        assertTrue(of(four, new double[] {-0.5, -0.5, 0, 0}, new double[] {1, 1, 1, 1}).isEmpty());
        // inference runs are not a training bias, and a bias is not said of inference
        List<Workload> serving = three.stream().map(w -> w.toBuilder().phase(org.scaledl.workload.Phase.INFER)
                .parallelism(Parallelism.of(1, 1, 1, 1)).build()).toList();
        assertTrue(of(serving, new double[] {fast, fast, fast}, new double[] {1, 1, 1}).isEmpty());
        assertFalse(b.concerns(serving.get(0)));
        assertTrue(b.concerns(three.get(0)));
        assertTrue(of(three, new double[] {fast, fast, fast}, new double[] {1, 1, 0}).isEmpty());
        // weights: a light run of the other sign leaves the bias (weighed as the fit weighs it)
        assertEquals(-0.15, of(three, new double[] {fast, fast, 0.01}, new double[] {1, 1, 0.1}).get(0)
                .meanError(), 0.01);
        // two GPUs, two groups: each on its own
        List<Workload> mixed = List.of(three.get(0), three.get(1), three.get(2), job("llama-3-8b", 4096, A100, 8),
                job("llama-3-8b", 4096, A100, 16), job("llama-3-8b", 2048, A100, 8));
        List<FittedBias> two = of(mixed, new double[] {fast, fast, fast, 0.3, 0.3, 0.3},
                new double[] {1, 1, 1, 1, 1, 1});
        assertEquals(2, two.size());
        // the larger first
        assertEquals(A100.name(), two.get(0).device());
        assertTrue(two.get(0).note().contains("too slow"), two.get(0).note());
    }

    @Test
    void aFitsLabelIsOneAFileHolds() {
        List<Workload> three = List.of(job("llama-3-8b", 4096, H100, 8), job("llama-3-8b", 4096, H100, 16),
                job("llama-3-8b", 8192, H100, 8));
        double fast = Math.log(0.85);
        FittedBias b = FittedBias.of(three, new double[] {fast, fast, fast}, new double[] {1, 1, 1},
                three.stream().map(Workload::identity).toList(), Collections.nCopies(3, "bad\u0007" + "x".repeat(300)))
                .get(0);
        assertEquals(b, FittedBias.fromJson(b.toJson(), "x"));
        assertTrue(b.label().startsWith("bad\\u0007") && b.label().length() <= 110, b.label());
        MegatronModel m = MegatronModel.uncalibrated().withBiases(List.of(b));
        assertEquals(m, MegatronModel.fromJson(m.toJson()));
    }

    @Test
    void aBiasConcernsItsArchitectureOnItsGpuWhateverTheSequence() {
        FittedBias b = new FittedBias(FittedBias.architecture(graph("llama-3-8b", 4096).transformer().orElseThrow()),
                "Llama 3", "NVIDIA H100 80GB HBM3", 3, 2, -0.12, 3);
        assertTrue(b.concerns(job("llama-3-8b", 8192, H100, 4)));
        assertFalse(b.concerns(job("llama-3-8b", 8192, A100, 4)));
        assertFalse(b.concerns(job("llama-3-70b", 4096, H100, 4)));
    }

    @Test
    void aBiasIsReadBackAsWrittenAndABadOneIsRefused() throws Exception {
        FittedBias b = new FittedBias("[1, 2]", "Llama 3", "NVIDIA H100 80GB HBM3", 4, 2, 0.25, 4);
        assertEquals(b, FittedBias.fromJson(b.toJson(), "x"));
        MegatronModel m = MegatronModel.uncalibrated().with(ExecutionTerm.DENSE, 1.1).withBiases(List.of(b));
        MegatronModel back = MegatronModel.fromJson(m.toJson());
        assertEquals(m, back);
        assertEquals(List.of(b), back.biases());
        // one bias an architecture and GPU: a second is refused; one smaller than a fit keeps loads, and is not said
        com.fasterxml.jackson.databind.node.ObjectNode twice = m.toJson();
        twice.withArray("fitted_biases").add(b.toJson());
        InvalidInputException dup = assertThrows(InvalidInputException.class, () -> MegatronModel.fromJson(twice));
        assertTrue(dup.getMessage().contains("a second bias of Llama 3"), dup.getMessage());
        FittedBias small = new FittedBias(FittedBias.architecture(graph("llama-3-8b", 4096).transformer()
                .orElseThrow()), "Llama 3", H100.name(), 3, 2, 0.001, 3);
        assertTrue(small.concerns(job("llama-3-8b", 4096, H100, 8)));
        assertTrue(FittedBias.noteFor(List.of(small), job("llama-3-8b", 4096, H100, 8)).isEmpty());
        // a coefficient changed: the biases were the old coefficients'
        assertTrue(m.with(ExecutionTerm.DENSE, 1.2).biases().isEmpty());
        assertEquals(List.of(b), m.withInterval(-0.1, 0.1).withLevelPriorRuns(2).biases());
        // a bias below today's thresholds (another release's) loads: the thresholds are the fit's
        assertEquals(0.05, FittedBias.fromJson(new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                "{\"architecture\":\"a\",\"label\":\"l\",\"device\":\"d\",\"runs\":2,\"jobs\":1,"
                + "\"mean_error\":0.05,\"erring\":2}"), "x").meanError());
        for (String bad : new String[] {"{\"architecture\":\"a\",\"label\":\"l\",\"device\":\"d\",\"runs\":2,"
                + "\"jobs\":3,\"mean_error\":0.2,\"erring\":2}", "{\"architecture\":\"a\",\"label\":\"l\","
                + "\"device\":\"d\",\"runs\":3,\"jobs\":2,\"mean_error\":-1,\"erring\":3}",
            "{\"architecture\":\"a\",\"label\":\"\\u0007\",\"device\":\"d\",\"runs\":3,\"jobs\":2,\"mean_error\":0.2,"
                + "\"erring\":3}", "{\"architecture\":\"a\",\"label\":\"l\",\"device\":\"d\",\"runs\":3.5,"
                + "\"jobs\":2,\"mean_error\":0.2,\"erring\":3}", "[]"}) {
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> FittedBias.fromJson(
                    new com.fasterxml.jackson.databind.ObjectMapper().readTree(bad), "megatron.fitted_biases[0]"));
            assertTrue(e.getMessage().contains("megatron.fitted_biases[0]"), e.getMessage());
        }
    }
}
