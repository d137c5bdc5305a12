package org.scaledl.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.scaledl.InvalidInputException;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.ModelGraph;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.Phase;

/**
 * Transformers from their configurations: parameter counts equal to Hugging Face's for the published models, and the
 * contractions' FLOPs equal to the closed forms of Narayanan et al. (SC '21).
 */
class TransformerSpecTest {
    private static final Path DIR = Path.of("src/test/resources/transformers");

    /**
     * Parameter counts as Hugging Face reports them ({@code sum(p.numel() for p in model.parameters())} of
     * {@code *ForCausalLM}, {@code BertForMaskedLM}, {@code T5ForConditionalGeneration}; a tied weight once).
     */
    @ParameterizedTest
    @CsvSource({"gpt2, 124439808", "bert-large-uncased, 335174458", "llama-2-7b, 6738415616",
        "llama-2-70b, 68976648192", "mistral-7b, 7241732096", "mixtral-8x7b, 46702792704", "opt-1.3b, 1315758080",
        "t5-small, 60506624"})
    void parameterCountsAreExact(String model, long expected) {
        TransformerSpec spec = HuggingFaceConfig.read(DIR.resolve(model).resolve("config.json"));
        assertEquals(expected, spec.parameterCount(), spec.toString());
    }

    /**
     * GPT-3 175B (Brown et al., 2020: 96 layers, hidden 12,288, 96 heads, 2,048 positions, GPT-2's vocabulary):
     * {@code 12·L·h² + 13·L·h + V·h + S·h + 2h}, the "175B" of the paper.
     */
    @Test
    void gpt3CountsItsClosedForm() {
        TransformerSpec gpt3 = HuggingFaceConfig.read(DIR.resolve("gpt3-175b/config.json"));
        long h = 12288;
        long l = 96;
        long closed = 12 * l * h * h + 13 * l * h + 50257 * h + 2048 * h + 2 * h;
        assertEquals(closed, gpt3.parameterCount());
        assertEquals(175.0e9, gpt3.parameterCount(), 0.005 * 175e9);
    }

    /**
     * Per iteration with full recomputation, the contractions' FLOPs are {@code 96·B·s·L·h²·(1 + s/(6h) +
     * V/(16·L·h))} (Narayanan et al., Eq. 3); without recomputation three quarters of the layers' part.
     */
    @Property(tries = 30)
    void contractionFlopsAreNarayanansClosedForm(@ForAll @IntRange(min = 1, max = 8) int heads64,
            @ForAll @IntRange(min = 1, max = 48) int layers, @ForAll @IntRange(min = 1, max = 16) int seq128,
            @ForAll @IntRange(min = 1, max = 8) int batch) {
        long h = 64L * 2 * heads64;
        long s = 128L * seq128;
        long v = 50257;
        TransformerSpec spec = TransformerSpec.decoder("gpt", h, 2 * heads64, layers, v).maxPositions(s).build();
        ModelGraph g = spec.graph(s);
        double fwd = 0;
        double bwd = 0;
        double layerFwd = 0;
        for (LayerFeatures f : FeatureExtractor.of(g).extract(batch, Phase.TRAIN)) {
            if (f.family() == OpFamily.DENSE) {
                int r = g.repeats(f.layer());
                fwd += f.flopsFwd() * r;
                bwd += f.flopsBwd() * r;
                if (g.role(f.layer()).region() == org.scaledl.graph.LayerRole.Region.BLOCK) {
                    layerFwd += f.flopsFwd() * r;
                }
            }
        }
        double b = batch;
        // biases add one FLOP per output element of each projection, B·s·(3h + h + 4h + h) per layer, in each of the
        // forward, the two backward products and the recomputed forward
        double bias = b * s * 9 * h * layers;
        double withRecompute = fwd + bwd + layerFwd - bias * 4;
        double closed = 96 * b * s * layers * (double) h * h * (1 + s / (6.0 * h) + v / (16.0 * layers * h));
        assertEquals(closed, withRecompute, 1e-9 * closed);
        double without = fwd + bwd - bias * 3;
        double closedWithout = 72 * b * s * layers * (double) h * h * (1 + s / (6.0 * h)) + 6 * b * s * h * v;
        assertEquals(closedWithout, without, 1e-9 * closedWithout);
    }

    /** A model of many identical layers costs one layer's analysis: the graph holds one block. */
    @Test
    void identicalLayersAreAnalysedOnce() {
        ModelGraph small = TransformerSpec.decoder("a", 1024, 16, 2, 50257).maxPositions(1024).build().graph(1024);
        ModelGraph big = TransformerSpec.decoder("b", 1024, 16, 100, 50257).maxPositions(1024).build().graph(1024);
        assertEquals(small.size(), big.size());
        assertTrue(big.size() < 40, "layers in the graph: " + big.size());
        assertEquals(100, big.blocks().orElseThrow().copies());
        assertEquals(100, big.transformer().orElseThrow().layers());
    }

    @Test
    void configurationsReadTheirArchitectures() {
        TransformerSpec llama = HuggingFaceConfig.read(DIR.resolve("llama-2-70b/config.json"));
        assertEquals(TransformerSpec.FfnKind.SWIGLU, llama.ffnKind());
        assertEquals(8, llama.kvHeads());
        assertEquals(TransformerSpec.Norm.RMS_NORM, llama.norm());
        TransformerSpec t5 = HuggingFaceConfig.read(DIR.resolve("t5-small/config.json"));
        assertEquals(TransformerSpec.Architecture.ENCODER_DECODER, t5.architecture());
        assertEquals(12, t5.totalLayers());
        TransformerSpec bert = HuggingFaceConfig.read(DIR.resolve("bert-large-uncased/config.json"));
        assertEquals(TransformerSpec.Architecture.ENCODER, bert.architecture());
        TransformerSpec mixtral = HuggingFaceConfig.read(DIR.resolve("mixtral-8x7b/config.json"));
        assertEquals(8, mixtral.experts());
        assertEquals(2, mixtral.topK());
    }

    @Test
    void badConfigurationsNameTheFileAndKey(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("config.json");
        Files.writeString(f, "{\"model_type\": \"llama\", \"hidden_size\": -1}", StandardCharsets.UTF_8);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("config.json") && e.getMessage().contains("hidden_size"),
                e.getMessage());
        Files.writeString(f, "{\"model_type\": \"rwkv\"}", StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("rwkv") && e.getMessage().contains("supported"), e.getMessage());
        Files.writeString(f, "{not json", StandardCharsets.UTF_8);
        assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        Files.writeString(f, "{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_head\": 5, \"n_layer\": 2}",
                StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("multiple"), e.getMessage());
        assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(dir.resolve("missing.json")));
    }

    @Test
    void aSequenceBeyondTheLearnedPositionsIsRefused() {
        TransformerSpec gpt2 = HuggingFaceConfig.read(DIR.resolve("gpt2/config.json"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> gpt2.graph(2048));
        assertTrue(e.getMessage().contains("1024"), e.getMessage());
        List<Integer> fine = List.of(1, 512, 1024);
        fine.forEach(s -> assertTrue(gpt2.graph(s).coverage().isComplete()));
    }
}
