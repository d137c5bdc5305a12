package org.scaledl.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import org.scaledl.transformer.TransformerSpec.Block;
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
        "t5-small, 60506624", "llama-3-8b, 8030261248", "llama-3-70b, 70553706496",
        "llama-3.1-405b, 405853388800", "qwen3-8b, 8190735360", "qwen3-30b-a3b, 30532122624",
        "qwen3-235b-a22b, 235093634560", "gpt-oss-20b, 20914757184", "gpt-oss-120b, 116829156672",
        "nemotron-3-nano-30b-a3b, 31577940288", "deepseek-v3, 671026419200", "gemma-7b, 8537680896",
        "gemma-2-9b, 9241705984", "phi-3-mini-4k, 3821079552", "gpt-neox-20b, 20554567680",
        "gemma-4-26b-a4b, 25233141760", "gemma-4-31b, 30697345280", "olmo-2-1124-7b, 7298617344"})
    void parameterCountsAreExact(String model, long expected) {
        TransformerSpec spec = HuggingFaceConfig.read(DIR.resolve(model).resolve("config.json"));
        assertEquals(expected, spec.parameterCount(), spec.toString());
    }

    /**
     * Counts no exact figure is published for, derived from the configuration by hand (see each folder's
     * {@code PARAMS.md}): the text models of Llama 4 (the published totals add the vision encoder: 108,641,793,536
     * and 401,583,781,376 less its 871,932,416), Minitron-8B ({@code nemotron}) and Nemotron-H-8B; each agrees with
     * its published rounded size.
     */
    @ParameterizedTest
    @CsvSource({"llama-4-scout-17b-16e, 107769861120", "llama-4-maverick-17b-128e, 400711848960",
        "minitron-8b-base, 8271699968", "nemotron-h-8b-base-8k, 8100852736", "glm-4.5-air, 106852251264",
        "deepseek-v3.2-exp, 671877944064", "gemma-3-12b, 11766034176", "starcoder2-15b, 15957889024",
        "qwen1.5-moe-a2.7b, 14315735040", "glm-4-9b-0414, 9400279040"})
    void derivedCountsOfModelsWithoutAnExactPublishedOne(String model, long expected) {
        assertEquals(expected, HuggingFaceConfig.read(DIR.resolve(model).resolve("config.json")).parameterCount());
    }

    /**
     * Qwen3-Next-80B-A3B (written from models.csv's sizes, see its {@code PARAMS.md}): 79,674,391,296 parameters by
     * hand from the Hugging Face module shapes; the graph describes each of the 36 Gated DeltaNet layers as a Mamba-2
     * mixer of the same projections (two scalars a head) with the delta rule's products, which counts 32 more per-head
     * scalars and a gated norm over 4,096 channels instead of 128, and leaves out the shared expert's sigmoid gate
     * (2,048 a layer).
     */
    @Test
    void qwen3NextIsGatedAttentionEveryFourthLayerAndDeltaNetBetween() {
        TransformerSpec spec = HuggingFaceConfig.read(DIR.resolve("qwen3-next-80b-a3b/config.json"));
        long handDerived = 79_674_391_296L;
        assertEquals(handDerived + 36L * (32 + 4_096 - 128) - 48L * 2_048, spec.parameterCount());
        assertEquals(12, spec.blocks().stream().filter(b -> b.mixer() == Block.Mixer.ATTENTION).count());
        assertEquals(36, spec.blocks().stream().filter(b -> b.mixer() == Block.Mixer.MAMBA).count());
        assertTrue(spec.blocks().stream().allMatch(b -> b.ffn() == Block.Ffn.MOE));
        for (int i = 0; i < 48; i++) {
            assertEquals((i + 1) % 4 == 0, spec.blocks().get(i).mixer() == Block.Mixer.ATTENTION, "layer " + i);
        }
        // the output gate: one projected value per head and channel, a sigmoid and a product before the output
        TransformerSpec ungated = spec.toBuilder().outputGate(false).build();
        assertEquals(12L * 2_048 * 16 * 256, spec.parameterCount() - ungated.parameterCount());
        assertTrue(spec.graph(4096).layers().stream().anyMatch(l -> l.name().endsWith("/output_gate")));
        assertTrue(ungated.graph(4096).layers().stream().noneMatch(l -> l.name().endsWith("/output_gate")));
        // the gate's sigmoid reads the gate's own columns (16 heads of 256), not the whole projection
        ModelGraph g = spec.graph(4096);
        org.scaledl.graph.Layer act = g.layers().stream().filter(l -> l.name().endsWith("/output_gate_act"))
                .findFirst().orElseThrow();
        assertEquals(4096L * 16 * 256, g.tensors().get(act.inputs().get(0)).shape().orElseThrow().elements(1));
    }

    /**
     * A chunked scan does the work of its kernels, not only its masked product: per chunk of {@code L} tokens and head
     * (state {@code N}, head dimension {@code P}), Gated DeltaNet's delta rule {@code 2L²N} twice (keys by keys, queries
     * by keys), {@code 2L²(N + P)} (the solved system on keys and values), {@code 2L²P} (the masked product) and
     * {@code 6LNP} (the state's three products), about 24 GFLOP a layer of Qwen3-Next at 4,096 tokens where the masked
     * product alone is 2.1; Mamba-2's {@code 2L²N} a group, {@code 2L²P} and {@code 4LNP} a head. The products after the
     * first are recomputed backward and kept on chip: no bytes of their own.
     */
    @Test
    void aChunkedScanCountsItsKernelsProducts() {
        ModelGraph next = HuggingFaceConfig.read(DIR.resolve("qwen3-next-80b-a3b/config.json")).graph(4096);
        double l = 64;
        double chunks = 4096 / l;
        double expected = chunks * 32 * (2 * l * l * 128 * 2 + 2 * l * l * 256 + 2 * l * l * 128 + 6 * l * 128 * 128);
        assertEquals(expected, scanFlops(next, "layers/block0/deltanet/scan"), 1e-6 * expected);
        assertEquals(23.6e9, expected, 0.1e9);
        for (LayerFeatures f : FeatureExtractor.of(next).extract(1, Phase.TRAIN)) {
            String name = next.layer(f.layer()).name();
            if (name.startsWith("layers/block0/deltanet/scan/") && next.layer(f.layer()).opType().equals("MatMul")) {
                assertEquals(0, f.bytesRead() + f.bytesWritten(), name);
                assertEquals(3 * f.flopsFwd(), f.flopsBwd(), 1e-6 * f.flopsFwd(), name + ": two operands and again");
            }
        }
        ModelGraph nano = HuggingFaceConfig.read(DIR.resolve("nemotron-3-nano-30b-a3b/config.json")).graph(4096);
        TransformerSpec.Mamba mb = HuggingFaceConfig.read(DIR.resolve("nemotron-3-nano-30b-a3b/config.json")).mamba()
                .orElseThrow();
        double c = mb.chunk();
        double mamba = 4096 / c * (mb.groups() * 2 * c * c * mb.stateSize() + mb.heads() * (2 * c * c * mb.headDim()
                + 4 * c * mb.stateSize() * mb.headDim()));
        String block = nano.layers().stream().map(org.scaledl.graph.Layer::name).filter(n -> n.endsWith("/mamba/scan"))
                .findFirst().orElseThrow();
        assertEquals(mamba, scanFlops(nano, block), 1e-6 * mamba);
    }

    private static double scanFlops(ModelGraph g, String scan) {
        double flops = 0;
        for (LayerFeatures f : FeatureExtractor.of(g).extract(1, Phase.TRAIN)) {
            String name = g.layer(f.layer()).name();
            if ((name.equals(scan) || name.startsWith(scan + "/")) && g.layer(f.layer()).opType().equals("MatMul")) {
                flops += f.flopsFwd();
            }
        }
        return flops;
    }

    /**
     * Qwen3.5's configuration nests the text model ({@code text_config}) as Llama 4's does; a layer type that is
     * neither attention is refused naming the layer.
     */
    @Test
    void qwen35ReadsItsTextConfigAndRefusesUnknownLayerTypes(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("config.json");
        Files.writeString(f, "{\"model_type\": \"qwen3_5_moe\", \"text_config\": {\"model_type\": "
                + "\"qwen3_5_moe_text\", \"hidden_size\": 2048, \"num_hidden_layers\": 8, \"num_experts\": 256, "
                + "\"num_experts_per_tok\": 8, \"vocab_size\": 248320}}", StandardCharsets.UTF_8);
        TransformerSpec spec = HuggingFaceConfig.read(f);
        assertEquals(2, spec.blocks().stream().filter(b -> b.mixer() == Block.Mixer.ATTENTION).count());
        assertEquals(248_320, spec.vocab());
        assertEquals(256, spec.experts());
        // a key the text model leaves out is read from the outer configuration
        Files.writeString(f, "{\"model_type\": \"qwen3_5\", \"tie_word_embeddings\": true, \"text_config\": "
                + "{\"model_type\": \"qwen3_5_text\", \"num_hidden_layers\": 4}}", StandardCharsets.UTF_8);
        TransformerSpec tied = HuggingFaceConfig.read(f);
        Files.writeString(f, "{\"model_type\": \"qwen3_5\", \"text_config\": {\"model_type\": \"qwen3_5_text\", "
                + "\"num_hidden_layers\": 4}}", StandardCharsets.UTF_8);
        assertEquals(248_320L * 4_096, HuggingFaceConfig.read(f).parameterCount() - tied.parameterCount());
        // the keys left out take each class's defaults: Qwen3-Next 512 experts top-10, Qwen3.5 dense without experts
        Files.writeString(f, "{\"model_type\": \"qwen3_next\", \"num_hidden_layers\": 4}", StandardCharsets.UTF_8);
        TransformerSpec next = HuggingFaceConfig.read(f);
        assertEquals(512, next.experts());
        assertEquals(10, next.topK());
        Files.writeString(f, "{\"model_type\": \"qwen3_5_text\", \"num_hidden_layers\": 4, "
                + "\"mtp_num_hidden_layers\": 1}", StandardCharsets.UTF_8);
        TransformerSpec dense = HuggingFaceConfig.read(f);
        assertEquals(1, dense.experts());
        assertEquals(4096, dense.hidden());
        assertEquals(1, dense.shape(4096).mtpLayers());
        Files.writeString(f, "{\"model_type\": \"qwen3_next\", \"num_hidden_layers\": 2, \"layer_types\": "
                + "[\"linear_attention\", \"sliding_attention\"]}", StandardCharsets.UTF_8);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("layer 1 is 'sliding_attention'") && e.getMessage().contains("config.json"),
                e.getMessage());
        Files.writeString(f, "{\"model_type\": \"qwen3_next\", \"linear_num_key_heads\": 32, "
                + "\"linear_num_value_heads\": 16}", StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("linear_num_value_heads (16) must be a multiple of linear_num_key_heads"),
                e.getMessage());
    }

    /**
     * Forward FLOPs per token of a mixture of experts: twice the parameters a token passes through (the active
     * parameters less the input embedding, which is a look-up) plus the attention scores: DeepSeek-V3's published 37B
     * active (36.6B with the head and without the input embedding, its README), Qwen3-30B-A3B's 3.3B (3.0B without the
     * input embedding), Mixtral's 12.9B (12.6B) and GPT-OSS-120B's 5.13B (its model card counts no input embedding).
     */
    @ParameterizedTest
    @CsvSource({"deepseek-v3, 36.6e9, 0.01", "qwen3-30b-a3b, 3.0e9, 0.03", "mixtral-8x7b, 12.6e9, 0.02",
        "gpt-oss-120b, 5.13e9, 0.01"})
    void moeForwardFlopsFollowTheActiveParameters(String model, double activeWithoutEmbedding, double tolerance) {
        TransformerSpec spec = HuggingFaceConfig.read(DIR.resolve(model).resolve("config.json"));
        long s = 128;
        ModelGraph g = spec.graph(s);
        double dense = 0;
        double attention = 0;
        for (LayerFeatures f : FeatureExtractor.of(g).extract(1, Phase.INFER)) {
            if (f.family() == OpFamily.DENSE) {
                boolean core = g.role(f.layer()).kind() == org.scaledl.graph.LayerRole.Kind.ATTENTION_CORE;
                if (core) {
                    attention += f.flopsFwd() * g.repeats(f.layer());
                } else {
                    dense += f.flopsFwd() * g.repeats(f.layer());
                }
            }
        }
        assertEquals(2 * activeWithoutEmbedding, dense / s, tolerance * 2 * activeWithoutEmbedding, model);
        assertTrue(attention > 0);
    }

    /**
     * A gated or squared activation is one fused kernel, as Megatron and Transformer Engine run it: the pair of layers
     * reads the projection's output once and writes the result once (SwiGLU and GeGLU: 2 widths in, 1 out; squared
     * ReLU: 1 in, 1 out), keeping its operators; a plain GELU is untouched.
     */
    @ParameterizedTest
    @CsvSource({"SWIGLU, 3, gate, Sigmoid", "GATED_GELU, 3, gate, Gelu", "RELU2, 2, square, Relu", "GELU, 2, , Gelu"})
    void gatedActivationsMoveWhatTheirFusedKernelMoves(TransformerSpec.FfnKind kind, int widths, String second,
            String first) {
        long ffn = 4096;
        long tokens = 2 * 512;
        ModelGraph g = TransformerSpec.decoder("g", 1024, 16, 2, 1000).ffnKind(kind).ffn(ffn).build().graph(512);
        double bytes = 0;
        int firsts = 0;
        for (LayerFeatures f : FeatureExtractor.of(g).extract(2, Phase.TRAIN)) {
            if (g.role(f.layer()).kind() != org.scaledl.graph.LayerRole.Kind.MLP_ACT) {
                continue;
            }
            String name = g.layer(f.layer()).name();
            if (name.endsWith("/act")) {
                assertEquals(first, g.layer(f.layer()).opType(), name);
                firsts++;
            } else {
                assertTrue(second != null && name.endsWith("/" + second), name);
                assertEquals("Mul", g.layer(f.layer()).opType(), name);
            }
            bytes += f.bytesFwd();
        }
        assertTrue(firsts > 0);
        // FP32 elements (4 bytes), per block
        assertEquals(widths * ffn * tokens * 4.0, bytes / firsts, 1e-9 * bytes, kind.toString());
    }

    /**
     * GPT-OSS's clamped SwiGLU as Megatron core runs it: the two clamps and their concatenation move 8 widths of the
     * result before the fused gated kernel's 3; its experts' down-projection bias is added outside the GEMM and the
     * experts' rows concatenated again (Megatron core's {@code skip_bias_add}: 6 widths of the hidden size); those
     * layers, and only those, are marked for Transformer Engine's fused grouped MLP (a dense model's clamps are not);
     * the parameters are those of the model either way, and {@code swiglu_limit} null turns the clamps off.
     */
    @Test
    void gptOssClampsItsActivationAndAddsTheExpertsBiasOutsideTheGemm(@TempDir Path dir) throws Exception {
        TransformerSpec oss = HuggingFaceConfig.read(DIR.resolve("gpt-oss-20b/config.json"));
        assertEquals(TransformerSpec.FfnKind.CLAMPED_SWIGLU, oss.ffnKind());
        ModelGraph g = oss.graph(256);
        long expertFfn = oss.moe().orElseThrow().expertFfn();
        java.util.Map<String, Double> bytes = new java.util.TreeMap<>();
        double rows = 0;
        double biasRows = 0;
        for (LayerFeatures f : FeatureExtractor.of(g).extract(1, Phase.TRAIN)) {
            org.scaledl.graph.Layer l = g.layer(f.layer());
            if (g.role(f.layer()).block() != 0) {
                continue;
            }
            String leaf = l.name().substring(l.name().lastIndexOf('/') + 1);
            if (g.role(f.layer()).kind() == org.scaledl.graph.LayerRole.Kind.EXPERT_ACT) {
                bytes.merge(leaf + ":" + l.opType(), f.bytesFwd(), Double::sum);
                rows = f.outputElements() / (double) expertFfn;
            }
            if (leaf.equals("down")) {
                assertEquals(2, l.inputs().size(), "the down projection's GEMM takes no bias");
            }
            if (leaf.startsWith("down_")) {
                assertEquals(org.scaledl.graph.LayerRole.Kind.EXPERT_COMBINE, g.role(f.layer()).kind(), leaf);
                bytes.merge("bias path", f.bytesFwd(), Double::sum);
                biasRows = f.outputElements() / (double) oss.hidden();
            }
            // marked for Transformer Engine's fused grouped MLP: these five layers of the experts, nothing else
            assertEquals(java.util.Set.of("clamp", "clamp_cat", "down_bias_prob", "down_bias", "down_cat")
                    .contains(leaf) && g.role(f.layer()).kind().expert(), l.fusedInGroupedMlp(), l.name());
        }
        // the bias read and times the probabilities written, added to the rows (2 read, 1 written), concatenated (1
        // and 1)
        double hiddenWidth = biasRows * oss.hidden() * 4.0;
        double bias = oss.moe().orElseThrow().experts() * oss.hidden() * 4.0;
        assertEquals(6 * hiddenWidth + bias, bytes.get("bias path"), 1e-9 * hiddenWidth, bytes.toString());
        // a dense model with the clamped activation: its clamps are layers, not the experts' fused grouped MLP's
        ModelGraph dense = TransformerSpec.decoder("d", 1024, 16, 2, 1000).ffnKind(
                TransformerSpec.FfnKind.CLAMPED_SWIGLU).ffn(4096).build().graph(128);
        int clamps = 0;
        for (int i = 0; i < dense.size(); i++) {
            org.scaledl.graph.Layer l = dense.layer(i);
            clamps += l.opType().equals("Clip") ? 1 : 0;
            assertFalse(l.fusedInGroupedMlp(), l.name());
        }
        assertTrue(clamps > 0);
        double width = rows * expertFfn * 4.0;   // FP32 elements of the activation's result
        assertEquals(4 * width, bytes.get("clamp:Clip"), 1e-9 * width, bytes.toString());
        assertEquals(4 * width, bytes.get("clamp_cat:Concat"), 1e-9 * width, bytes.toString());
        assertEquals(3 * width, bytes.get("act:Sigmoid") + bytes.get("gate:Mul"), 1e-9 * width, bytes.toString());
        assertEquals(20914757184L, oss.parameterCount(), "the biases are the model's parameters still");
        String text = Files.readString(DIR.resolve("gpt-oss-20b/config.json"));
        Path f = dir.resolve("config.json");
        Files.writeString(f, text.replaceFirst("\"swiglu_limit\": [0-9.]+", "\"swiglu_limit\": null"),
                StandardCharsets.UTF_8);
        assertEquals(TransformerSpec.FfnKind.SWIGLU, HuggingFaceConfig.read(f).ffnKind());
        for (String bad : List.of("-1", "0", "\"seven\"")) {
            Files.writeString(f, text.replaceFirst("\"swiglu_limit\": [0-9.]+", "\"swiglu_limit\": " + bad),
                    StandardCharsets.UTF_8);
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
            assertTrue(e.getMessage().contains("swiglu_limit") && e.getMessage().contains("config.json"),
                    e.getMessage());
        }
    }

    /**
     * A fused causal attention core does half the score and context work of the unfused one (FlashAttention skips the
     * masked half), a causal sliding window of {@code w} tokens {@code (w - w²/2s)/s} of the unfused core (query
     * {@code i} attends {@code min(i, w)} keys), and holds no score matrix. The windowed work grows with the window and
     * reaches the causal half at {@code w = s}: a window of {@code s - 1} counted nearly twice it, and a window
     * of half the sequence a third more, when the window alone was counted.
     */
    @Test
    void fusedAttentionDoesTheCausalHalfAndAWindowItsShare() {
        TransformerSpec.Builder b = TransformerSpec.decoder("g", 1024, 16, 2, 1000).ffnKind(
                TransformerSpec.FfnKind.SWIGLU).norm(TransformerSpec.Norm.RMS_NORM);
        double unfused = coreFlops(b.build().graph(4096));
        double fused = coreFlops(b.fusedAttention(true).build().graph(4096));
        assertEquals(0.5, fused / unfused, 1e-3);
        java.util.function.LongFunction<Double> windowed = w -> coreFlops(b.blocks(List.of(new TransformerSpec.Block(
                TransformerSpec.Block.Mixer.ATTENTION, w, false, TransformerSpec.Block.Ffn.DENSE, 4096),
                new TransformerSpec.Block(TransformerSpec.Block.Mixer.ATTENTION, w, false,
                        TransformerSpec.Block.Ffn.DENSE, 4096))).build().graph(4096));
        assertEquals((512 - 512.0 * 512 / 8192) / 4096, windowed.apply(512) / unfused, 1e-3);
        double before = 0;
        for (long w : new long[] {1, 128, 512, 2048, 3000, 4095, 4096, 8192}) {
            double x = windowed.apply(w);
            assertTrue(x >= before && x <= fused * (1 + 1e-9), w + ": " + x + " after " + before + ", causal "
                    + fused);
            before = x;
        }
        assertEquals(fused, windowed.apply(4095), 1e-3 * fused);
    }

    /**
     * A fused core keeps its score tiles on chip: its score product writes nothing and its context product reads only
     * the values; the backward pass recomputes the scores (three times their forward work, the context product's
     * two). The unfused core moves its score matrix and does twice each product's work backward.
     */
    @Test
    void fusedCoreKeepsItsTilesOnChipAndRecomputesTheScores() {
        TransformerSpec.Builder b = TransformerSpec.decoder("g", 1024, 16, 2, 1000);
        for (boolean fused : new boolean[] {false, true}) {
            ModelGraph g = b.fusedAttention(fused).build().graph(2048);
            int seen = 0;
            for (LayerFeatures f : FeatureExtractor.of(g).extract(2, Phase.TRAIN)) {
                org.scaledl.graph.Layer l = g.layer(f.layer());
                if (f.family() != OpFamily.DENSE
                        || g.role(f.layer()).kind() != org.scaledl.graph.LayerRole.Kind.ATTENTION_CORE) {
                    continue;
                }
                double out = g.tensor(l.outputs().get(0)).orElseThrow().bytes(2);
                double first = g.tensor(l.inputs().get(0)).orElseThrow().bytes(2);
                double second = g.tensor(l.inputs().get(1)).orElseThrow().bytes(2);
                boolean scores = l.name().endsWith("/scores");
                assertEquals(fused && scores ? 0 : out, f.bytesWritten(), 1e-6, l.name());
                assertEquals(fused && !scores ? second : first + second, f.bytesRead(), 1e-6, l.name());
                assertEquals(fused && scores ? 3 : 2, f.flopsBwd() / f.flopsFwd(), 1e-9, l.name());
                assertEquals(fused, l.onChip(scores ? l.outputs().get(0) : l.inputs().get(0)), l.name());
                seen++;
            }
            assertEquals(2, seen, "two products in the repeated block");
        }
    }

    /**
     * A fused core reads its operands where they are written: its context leaves in the layout the output projection
     * reads (the heads' merge a view, no bytes), and with latent attention (DeepSeek-V3) one pass, Megatron-Core's
     * fused rope, reads the two projections and writes the queries, keys and values (no separate concatenation,
     * no second copy). Unfused, the context is transposed back and the rotated projections concatenated and split.
     */
    @Test
    void aFusedCoreReadsItsOperandsWhereTheyAreWritten() {
        TransformerSpec ds = HuggingFaceConfig.read(DIR.resolve("deepseek-v3/config.json"));
        for (boolean fused : new boolean[] {false, true}) {
            ModelGraph g = ds.withFusedAttention(fused).graph(1024);
            java.util.Map<String, LayerFeatures> byName = new java.util.HashMap<>();
            for (LayerFeatures f : FeatureExtractor.of(g).extract(1, Phase.TRAIN)) {
                String name = g.layer(f.layer()).name();
                if (name.startsWith("layers/block0/attn/")) {
                    byName.put(name.substring("layers/block0/attn/".length()), f);
                }
            }
            LayerFeatures merge = byName.get("merge_heads");
            LayerFeatures split = byName.get("core/split");
            org.scaledl.graph.Layer splitLayer = g.layer(split.layer());
            double written = 0;
            for (String t : splitLayer.outputs()) {
                written += g.tensor(t).orElseThrow().bytes(1);
            }
            assertEquals(fused ? OpFamily.VIEW : OpFamily.MOVEMENT, merge.family());
            assertEquals(fused ? 0 : 2 * g.tensor(g.layer(merge.layer()).outputs().get(0)).orElseThrow().bytes(1),
                    merge.bytesRead() + merge.bytesWritten(), 1e-6);
            assertEquals(fused, !byName.containsKey("rope"), byName.keySet().toString());
            assertEquals(fused ? List.of("layers/block0/attn/q_b:0", "layers/block0/attn/kv_b:0")
                    : List.of("layers/block0/attn/rope:0"), splitLayer.inputs());
            assertEquals(written, split.bytesWritten(), 1e-6);
            // heads × (q 192 + k/v 256) read, heads × (q 192 + k 192 + v 128) written, per token
            assertEquals(fused ? 1024 * 128 * (192 + 256) * 4.0 : written, split.bytesRead(), 1e-6);
        }
    }

    /** An imported file's own attribute of the on-chip name that holds no tensor names marks nothing. */
    @Test
    void anOnChipAttributeOfAnotherKindMarksNothing() {
        org.scaledl.graph.Layer l = org.scaledl.graph.Layer.builder("m", "MatMul").inputs("a", "b").outputs("y")
                .attribute(org.scaledl.graph.Layer.ON_CHIP, org.scaledl.graph.Attribute.ofInt(1))
                .attribute(org.scaledl.graph.Layer.RECOMPUTED_IN_BACKWARD, org.scaledl.graph.Attribute.ofFloat(1))
                .build();
        assertTrue(!l.onChip("y") && !l.onChip("a") && !l.recomputedInBackward());
    }

    /**
     * DeepSeek's sparse attention: each query's core reads the indexer's top-k keys (every earlier key up to the
     * k-th query, k after), so at a sequence within k the core does dense causal attention's work and beyond it
     * {@code (k(k+1)/2 + (s-k)k)/s} keys a query; the indexer's heads score every earlier key (its product's FLOPs
     * {@code 2·s·(s/2)·heads·dim} a sequence), and the rest of the model is DeepSeek-V3's.
     */
    @Test
    void sparseAttentionReadsTheIndexersTopKKeys() {
        TransformerSpec sparse = HuggingFaceConfig.read(DIR.resolve("deepseek-v3.2-exp/config.json"));
        TransformerSpec dense = HuggingFaceConfig.read(DIR.resolve("deepseek-v3/config.json"));
        TransformerSpec.Dsa d = sparse.dsa().orElseThrow();
        assertEquals(new TransformerSpec.Dsa(2048, 64, 128), d);
        assertTrue(dense.dsa().isEmpty());
        assertEquals(dense.blocks(), sparse.blocks());
        for (long s : new long[] {1024, 2048, 8192, 32768}) {
            double keys = s <= 2048 ? (s + 1) / 2 : Math.round((2048.0 * 2049 / 2 + (s - 2048) * 2048.0) / s);
            assertEquals(keys, d.causalKeys(s), 1e-9, "s " + s);
            ModelGraph g = sparse.graph(s);
            double indexer = 0;
            double core = 0;
            for (LayerFeatures f : FeatureExtractor.of(g).extract(1, Phase.INFER)) {
                org.scaledl.graph.LayerRole.Kind kind = g.role(f.layer()).kind();
                if (f.family() == OpFamily.DENSE && kind == org.scaledl.graph.LayerRole.Kind.INDEXER) {
                    indexer += f.flopsFwd() * g.repeats(f.layer());
                } else if (f.family() == OpFamily.DENSE && kind == org.scaledl.graph.LayerRole.Kind.ATTENTION_CORE) {
                    core += f.flopsFwd() * g.repeats(f.layer());
                }
            }
            assertEquals(keys / ((s + 1) / 2), core / coreFlops(dense.graph(s)), 1e-6, "s " + s);
            assertEquals(61 * 2.0 * s * ((s + 1) / 2) * 64 * 128, indexer, 1e-6 * indexer, "s " + s);
        }
        // the top-k indices reach the attention (its split gathers the chosen keys)
        ModelGraph g = sparse.graph(4096);
        org.scaledl.graph.Layer split = g.layers().stream().filter(l -> l.name().endsWith("attn/core/split"))
                .findFirst().orElseThrow();
        assertTrue(split.inputs().stream().anyMatch(x -> x.contains("/indexer/top_k")), split.inputs().toString());
        // the indexer needs latent attention
        assertThrows(IllegalArgumentException.class, () -> TransformerSpec.decoder("x", 1024, 16, 2, 1000)
                .dsa(d).build());
    }

    /**
     * The models that reuse DeepSeek's configuration class read as it does (Kimi K2's {@code kimi_k2}, its
     * multimodal {@code kimi_k25} through {@code text_config}); GLM-4.5's {@code glm4_moe} is grouped-query attention
     * with DeepSeek's experts after its dense layers; GLM-5's per-layer {@code mlp_layer_types} set which layers have
     * experts, and an unknown one is refused naming it.
     */
    /**
     * DeepSeek's group-limited routing is checked where a configuration gives it: groups that do not divide the
     * experts, or too few picked groups to hold a token's experts, are refused naming the keys; the published
     * configuration (8 groups, 4 picked, 8 of 256 experts) builds the layers one without the keys does, its routing
     * groups kept for the ranks a token's experts lie on.
     */
    @Test
    void deepSeeksRoutingGroupsAreChecked(@TempDir Path dir) throws Exception {
        String v3 = Files.readString(DIR.resolve("deepseek-v3/config.json"), StandardCharsets.UTF_8);
        Path f = Files.createDirectories(dir.resolve("deepseek-v3")).resolve("config.json");
        TransformerSpec base = HuggingFaceConfig.read(DIR.resolve("deepseek-v3/config.json"));
        Files.writeString(f, v3.replace("\"n_group\": 8,", "").replace("\"topk_group\": 4,", ""));
        assertEquals(base.toBuilder().routingGroups(0, 0).build(), HuggingFaceConfig.read(f));
        assertEquals(8, base.shape(4096).routingGroups());
        assertEquals(0, HuggingFaceConfig.read(f).shape(4096).routingGroups());
        Files.writeString(f, v3.replace("\"n_group\": 8", "\"n_group\": 7"));
        InvalidInputException seven = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(seven.getMessage().contains("n_group 7 does not divide the 256 routed experts"),
                seven.getMessage());
        Files.writeString(f, v3.replace("\"n_group\": 8", "\"n_group\": 128").replace("\"topk_group\": 4",
                "\"topk_group\": 2"));
        InvalidInputException few = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(few.getMessage().contains("num_experts_per_tok 8 routes a token to more experts than its "
                + "topk_group 2 groups of 2 hold"), few.getMessage());
        Files.writeString(f, v3.replace("\"topk_group\": 4", "\"topk_group\": 9"));
        InvalidInputException more = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(more.getMessage().contains("topk_group"), more.getMessage());
    }

    @Test
    void deepSeeksRelativesReadTheirLayouts(@TempDir Path dir) throws Exception {
        String v3 = Files.readString(DIR.resolve("deepseek-v3/config.json"), StandardCharsets.UTF_8);
        // named by its folder, as the published one
        Path f = Files.createDirectories(dir.resolve("deepseek-v3")).resolve("config.json");
        TransformerSpec base = HuggingFaceConfig.read(DIR.resolve("deepseek-v3/config.json"));
        Files.writeString(f, v3.replace("\"deepseek_v3\"", "\"kimi_k2\""), StandardCharsets.UTF_8);
        assertEquals(base, HuggingFaceConfig.read(f));
        Files.writeString(f, "{\"model_type\": \"kimi_k25\", \"vision_config\": {}, \"text_config\": "
                + v3.replace("\"deepseek_v3\"", "\"kimi_k2\"") + "}", StandardCharsets.UTF_8);
        assertEquals(base, HuggingFaceConfig.read(f));
        TransformerSpec air = HuggingFaceConfig.read(DIR.resolve("glm-4.5-air/config.json"));
        assertEquals(8, air.kvHeads());
        assertEquals(128, air.experts());
        assertEquals(8, air.topK());
        assertEquals(1, air.mtpLayers());
        assertEquals(Block.dense(10944), air.blocks().get(0));
        assertTrue(air.blocks().subList(1, 46).stream().allMatch(b -> b.ffn() == Block.Ffn.MOE));
        assertEquals(1408, air.moe().orElseThrow().sharedFfn());
        StringBuilder types = new StringBuilder("[");
        for (int i = 0; i < 61; i++) {
            types.append(i > 0 ? ", " : "").append(i < 5 ? "\"dense\"" : "\"sparse\"");
        }
        Files.writeString(f, v3.replace("\"deepseek_v3\"", "\"glm_moe_dsa\"").replace("\"first_k_dense_replace\": 3",
                "\"mlp_layer_types\": " + types + "]"), StandardCharsets.UTF_8);
        TransformerSpec glm5 = HuggingFaceConfig.read(f);
        assertEquals(5, glm5.blocks().stream().filter(b -> b.ffn() == Block.Ffn.DENSE).count());
        assertEquals(2048, glm5.dsa().orElseThrow().topK());
        Files.writeString(f, v3.replace("\"first_k_dense_replace\": 3", "\"mlp_layer_types\": "
                + types.toString().replace("\"dense\"", "\"moe\"") + "]"), StandardCharsets.UTF_8);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("mlp_layer_types[0] 'moe'"), e.getMessage());
        // a null index_topk is no sparse attention; an indexer type other than full or shared is refused naming it
        Files.writeString(f, v3.replace("\"v_head_dim\"", "\"index_topk\": null, \"v_head_dim\""),
                StandardCharsets.UTF_8);
        assertTrue(HuggingFaceConfig.read(f).dsa().isEmpty());
        Files.writeString(f, v3.replace("\"deepseek_v3\"", "\"deepseek_v32\"").replace("\"v_head_dim\"",
                "\"indexer_types\": " + types.toString().replace("\"dense\"", "\"full\"").replace("\"sparse\"",
                "\"half\"") + "], \"v_head_dim\""), StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("indexer_types[5] 'half'"), e.getMessage());
    }

    /** Qwen3-VL's text models (in {@code text_config}) are Qwen3's: the MoE one reads as Qwen3-30B-A3B does. */
    @Test
    void qwen3VlReadsItsTextModelAsQwen3(@TempDir Path dir) throws Exception {
        String moe = Files.readString(DIR.resolve("qwen3-30b-a3b/config.json"), StandardCharsets.UTF_8);
        Path f = Files.createDirectories(dir.resolve("qwen3-30b-a3b")).resolve("config.json");
        Files.writeString(f, "{\"model_type\": \"qwen3_vl_moe\", \"vision_config\": {\"depth\": 27}, "
                + "\"text_config\": " + moe.replace("\"qwen3_moe\"", "\"qwen3_vl_moe_text\"") + "}",
                StandardCharsets.UTF_8);
        assertEquals(30_532_122_624L, HuggingFaceConfig.read(f).parameterCount());
        assertEquals(HuggingFaceConfig.read(DIR.resolve("qwen3-30b-a3b/config.json")), HuggingFaceConfig.read(f));
        Files.writeString(f, "{\"model_type\": \"qwen3_vl_moe\", \"text_config\": [1, 2]}", StandardCharsets.UTF_8);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("text_config must be an object"), e.getMessage());
    }

    private static double coreFlops(ModelGraph g) {
        double sum = 0;
        for (LayerFeatures f : FeatureExtractor.of(g).extract(1, Phase.INFER)) {
            if (g.role(f.layer()).kind() == org.scaledl.graph.LayerRole.Kind.ATTENTION_CORE
                    && f.family() == OpFamily.DENSE) {
                sum += f.flopsFwd() * g.repeats(f.layer());
            }
        }
        return sum;
    }

    /** Hybrid and interleaved models keep one graph block per kind of layer, in the order of their layers. */
    @Test
    void hybridModelsHaveABlockPerKindOfLayer() {
        ModelGraph nano = HuggingFaceConfig.read(DIR.resolve("nemotron-3-nano-30b-a3b/config.json")).graph(1024);
        org.scaledl.graph.Blocks b = nano.blocks().orElseThrow();
        assertEquals(52, b.copies());
        assertEquals(3, b.kinds(), "Mamba, experts and attention layers");
        assertEquals(23, b.count(b.pattern().get(0)), "23 Mamba layers");
        assertEquals(6, b.count(b.pattern().get(5)), "6 attention layers");
        ModelGraph ds = HuggingFaceConfig.read(DIR.resolve("deepseek-v3/config.json")).graph(1024);
        assertEquals(List.of(3, 58), List.of(ds.blocks().orElseThrow().count(0), ds.blocks().orElseThrow().count(1)),
                "three dense layers, then experts");
        ModelGraph oss = HuggingFaceConfig.read(DIR.resolve("gpt-oss-20b/config.json")).graph(1024);
        assertEquals(List.of(0, 1, 0, 1), oss.blocks().orElseThrow().pattern().subList(0, 4),
                "sliding and full attention alternate");
    }

    /** Integers are range-checked before use: a layer count of 2^32 + 32 is refused, not read as 32. */
    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {"num_hidden_layers; 4294967328", "num_hidden_layers; 2147483648",
        "head_dim; 1099511627776", "num_local_experts; 1000000", "hidden_size; 9223372036854775808",
        "num_key_value_heads; 0"})
    void outOfRangeIntegersAreRefusedNamingTheKey(String key, String value, @TempDir Path dir) throws Exception {
        Path f = dir.resolve("config.json");
        Files.writeString(f, "{\"model_type\": \"mixtral\", \"" + key + "\": " + value + "}",
                StandardCharsets.UTF_8);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains(key) && e.getMessage().contains("range"), e.getMessage());
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

    /**
     * A rotary model carries the context its configuration names, which does not enter its architecture (equal
     * specifications, the same graph) and does not bound the sequence; a model of learned positions carries none.
     */
    @Test
    void aRotaryModelCarriesItsConfiguredContext() {
        TransformerSpec llama = HuggingFaceConfig.read(DIR.resolve("llama-3-8b/config.json"));
        assertEquals(8192, llama.contextPositions());
        assertEquals(llama, llama.toBuilder().contextPositions(0).build());
        long beyond = 2 * llama.contextPositions();
        assertEquals(beyond, llama.graph(beyond).transformer().orElseThrow().seq());
        TransformerSpec gpt = TransformerSpec.decoder("gpt", 1024, 16, 2, 50257).maxPositions(2048).build();
        assertEquals(0, gpt.contextPositions());
    }

    /**
     * A mixture of experts dispatches its tokens as wide as its experts work: the hidden size, or LatentMoE's latent
     * (Nemotron-3 Super's 1,024 of 4,096), which the expert all-to-all then moves.
     */
    @Test
    void latentExpertsDispatchTheirLatentWidth(@TempDir Path dir) throws Exception {
        TransformerSpec nano = HuggingFaceConfig.read(DIR.resolve("nemotron-3-nano-30b-a3b/config.json"));
        assertEquals(nano.hidden(), nano.shape(1024).dispatchWidth());
        String json = Files.readString(DIR.resolve("nemotron-3-nano-30b-a3b/config.json"), StandardCharsets.UTF_8);
        Path f = dir.resolve("config.json");
        Files.writeString(f, json.replaceFirst("\\{", "{\"moe_latent_size\": 512, "), StandardCharsets.UTF_8);
        assertEquals(512, HuggingFaceConfig.read(f).shape(1024).dispatchWidth());
        assertThrows(IllegalArgumentException.class, () -> new org.scaledl.graph.TransformerShape(64, 4, 4, 256, 2,
                100, 16, 8, 2, 128, true, 0, 0));
    }

    /**
     * Which layers of the Llama family attend within a window: Mistral's every layer, Qwen's from
     * {@code max_window_layers} on (with {@code use_sliding_window}), or what {@code layer_types} says; a mixture of
     * experts keeps its experts in its windowed layers.
     */
    @Test
    void slidingWindowsFollowTheLayersTheConfigurationNames(@TempDir Path dir) throws Exception {
        java.util.function.Function<TransformerSpec, List<Long>> windows = t -> t.blocks().stream()
                .map(TransformerSpec.Block::window).toList();
        TransformerSpec mistral = HuggingFaceConfig.read(DIR.resolve("mistral-7b/config.json"));
        assertTrue(windows.apply(mistral).stream().allMatch(w -> w == 4096), "every Mistral layer");
        Path f = dir.resolve("config.json");
        String qwen = Files.readString(DIR.resolve("qwen3-8b/config.json"));
        Files.writeString(f, qwen.replace("\"sliding_window\": null", "\"sliding_window\": 4096")
                .replace("\"use_sliding_window\": false", "\"use_sliding_window\": true")
                .replace("\"max_window_layers\": 36", "\"max_window_layers\": 30"), StandardCharsets.UTF_8);
        List<Long> w = windows.apply(HuggingFaceConfig.read(f));
        assertEquals(36, w.size());
        assertEquals(30, w.stream().filter(x -> x == 0).count(), "layers below max_window_layers attend fully");
        assertEquals(List.of(4096L, 4096L, 4096L, 4096L, 4096L, 4096L), w.subList(30, 36));
        // layer_types names them one by one (Hugging Face's newer configurations), where use_sliding_window
        String types = layerTypes(36, i -> i % 3 == 0);
        Files.writeString(f, qwen.replace("\"sliding_window\": null", "\"sliding_window\": 1024, \"layer_types\": "
                + types).replace("\"use_sliding_window\": false", "\"use_sliding_window\": true"),
                StandardCharsets.UTF_8);
        w = windows.apply(HuggingFaceConfig.read(f));
        for (int i = 0; i < 36; i++) {
            assertEquals(i % 3 == 0 ? 1024L : 0L, w.get(i), "layer " + i);
        }
        Files.writeString(f, qwen.replace("\"sliding_window\": null", "\"sliding_window\": null, \"layer_types\": "
                + types).replace("\"use_sliding_window\": false", "\"use_sliding_window\": true"),
                StandardCharsets.UTF_8);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("layer 0 is sliding_attention") && e.getMessage().contains("sliding_window"),
                e.getMessage());
        Files.writeString(f, qwen.replace("\"sliding_window\": null", "\"sliding_window\": 1024, \"layer_types\": "
                + types.replace("full_attention", "linear_attention")), StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("layer_types: layer 1 is 'linear_attention'"), e.getMessage());
        // Qwen3-MoE with a window keeps its experts (its windowed layers were once built as dense MLPs)
        String moe = Files.readString(DIR.resolve("qwen3-30b-a3b/config.json"));
        Files.writeString(f, moe.replace("\"sliding_window\": null", "\"sliding_window\": 4096")
                .replace("\"use_sliding_window\": false", "\"use_sliding_window\": true")
                .replace("\"max_window_layers\": 48", "\"max_window_layers\": 40"), StandardCharsets.UTF_8);
        TransformerSpec windowed = HuggingFaceConfig.read(f);
        assertEquals(HuggingFaceConfig.read(DIR.resolve("qwen3-30b-a3b/config.json")).parameterCount(),
                windowed.parameterCount(), "the same weights");
        assertTrue(windowed.blocks().stream().allMatch(x -> x.ffn() == TransformerSpec.Block.Ffn.MOE));
        assertEquals(8, windowed.blocks().stream().filter(x -> x.window() == 4096).count());
    }

    /**
     * Gemma 2: a norm after each sub-layer as well as before it, every other layer (from the first) within 4,096
     * tokens, capped scores (an element-wise pass where the core is unfused, as it is read unless the configuration
     * names a fused implementation) and capped logits. Gemma 3: all but every sixth layer within its window, each
     * head's queries and keys normed, no caps; {@code layer_types} overrides the pattern.
     */
    @Test
    void gemmaReadsItsNormsWindowsAndCaps(@TempDir Path dir) throws Exception {
        java.util.function.Function<ModelGraph, List<String>> names = g -> g.layers().stream()
                .map(org.scaledl.graph.Layer::name).toList();
        TransformerSpec two = HuggingFaceConfig.read(DIR.resolve("gemma-2-9b/config.json"));
        assertEquals(TransformerSpec.FfnKind.GATED_GELU, two.ffnKind());
        for (int i = 0; i < 42; i++) {
            assertEquals(i % 2 == 0 ? 4096L : 0L, two.blocks().get(i).window(), "layer " + i);
        }
        assertFalse(two.fusedAttention(), "capped scores: unfused unless the configuration says otherwise");
        List<String> layers = names.apply(two.graph(4096));
        assertTrue(layers.contains("layers/block0/attn/core/softcap") && layers.contains("head/softcap")
                && layers.contains("layers/block0/attn/out_norm") && layers.contains("layers/block1/ffn/out_norm"),
                layers.toString());
        // the caps and the norms after each sub-layer cost time: without them the same model does less
        TransformerSpec plain = two.toBuilder().sandwichNorm(false).scoreSoftcap(false).logitSoftcap(false).build();
        assertTrue(forwardBytes(two, 4096) > forwardBytes(plain, 4096));
        assertEquals(two.parameterCount() - 2L * 42 * 3584, plain.parameterCount(), "two norms a layer");
        Path f = dir.resolve("config.json");
        String cfg = Files.readString(DIR.resolve("gemma-2-9b/config.json"));
        Files.writeString(f, cfg.replace("\"use_cache\": true", "\"use_cache\": true, \"_attn_implementation\": "
                + "\"flash_attention_2\""), StandardCharsets.UTF_8);
        TransformerSpec flash = HuggingFaceConfig.read(f);
        assertTrue(flash.fusedAttention());
        layers = names.apply(flash.graph(4096));
        assertFalse(layers.contains("layers/block0/attn/core/softcap"), "capped on chip");
        assertTrue(layers.contains("head/softcap"));
        // a null window: every layer attends fully, as for the Llama family; unless layer_types names a sliding one
        Files.writeString(f, cfg.replace("\"sliding_window\": 4096", "\"sliding_window\": null"),
                StandardCharsets.UTF_8);
        assertTrue(HuggingFaceConfig.read(f).blocks().stream().allMatch(b -> b.window() == 0));
        Files.writeString(f, cfg.replace("\"sliding_window\": 4096", "\"sliding_window\": null, \"layer_types\": "
                + layerTypes(42, i -> i % 2 == 0)), StandardCharsets.UTF_8);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("layer 0 is sliding_attention") && e.getMessage().contains("null"),
                e.getMessage());
        Files.writeString(f, cfg.replace("\"hidden_activation\": \"gelu_pytorch_tanh\"", "\"hidden_activation\": "
                + "\"relu\""), StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("hidden_activation 'relu'"), e.getMessage());

        TransformerSpec three = HuggingFaceConfig.read(DIR.resolve("gemma-3-12b/config.json"));
        assertEquals(262208, three.vocab(), "the text model's keys");
        assertTrue(three.fusedAttention());
        for (int i = 0; i < 48; i++) {
            assertEquals((i + 1) % 6 == 0 ? 0L : 1024L, three.blocks().get(i).window(), "layer " + i);
        }
        layers = names.apply(three.graph(4096));
        assertTrue(layers.contains("layers/block0/attn/qk_norm") && layers.contains("layers/block0/attn/out_norm"),
                layers.toString());
        assertFalse(layers.contains("head/softcap"));
        String g3 = Files.readString(DIR.resolve("gemma-3-12b/config.json"));
        Files.writeString(f, g3.replace("\"sliding_window_pattern\": 6", "\"layer_types\": "
                + layerTypes(48, i -> i % 2 == 0)), StandardCharsets.UTF_8);
        TransformerSpec typed = HuggingFaceConfig.read(f);
        for (int i = 0; i < 48; i++) {
            assertEquals(i % 2 == 0 ? 1024L : 0L, typed.blocks().get(i).window(), "layer " + i);
        }
        // Gemma 1: one norm a sub-layer, no windows, multi-head attention fused
        TransformerSpec one = HuggingFaceConfig.read(DIR.resolve("gemma-7b/config.json"));
        assertTrue(one.fusedAttention() && one.blocks().stream().allMatch(b -> b.window() == 0));
        assertFalse(names.apply(one.graph(4096)).contains("layers/block/attn/out_norm"));
    }

    /**
     * A model's folder reads as its {@code config.json}; a folder without one is refused as a directory; an
     * {@code owner/model} that is no file is said to be a Hugging Face repository's name, which is not downloaded.
     */
    @Test
    void aFolderReadsAsItsConfigurationAndARepositoryNameIsSaidToBeOne(@TempDir Path dir) {
        assertEquals(HuggingFaceConfig.read(DIR.resolve("gemma-7b/config.json")),
                HuggingFaceConfig.read(DIR.resolve("gemma-7b")));
        assertEquals("gemma-7b", HuggingFaceConfig.read(DIR.resolve("gemma-7b")).name());
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(dir));
        assertTrue(e.getMessage().contains("a folder without a config.json"), e.getMessage());
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(Path.of("google/gemma-4-31B")));
        assertTrue(e.getMessage().startsWith("google/gemma-4-31B: cannot read the model configuration: no such file")
                && e.getMessage().contains("a Hugging Face repository is not downloaded"), e.getMessage());
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(dir.resolve("none/config.json")));
        assertTrue(e.getMessage().endsWith("no such file"), e.getMessage());
        // a relative path to a missing configuration is a file path, not a repository's name
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(Path.of("nowhere/config.json")));
        assertTrue(e.getMessage().endsWith("no such file"), e.getMessage());
    }

    /**
     * Heads wider than fused kernels train ({@link TransformerSpec#MAX_FUSED_HEAD_SIZE}, 256) take an unfused core,
     * layer by layer: Gemma 4's 512-wide full-attention layers keep their scores in memory (a softmax over every key,
     * no row statistics, products whose tiles reach memory), its sliding layers stay fused; a model of 256-wide heads
     * fuses every layer, one of 264-wide heads none, unless its fused kernel takes any head
     * ({@link TransformerSpec#fusedHeadLimit()}, as a configuration naming {@code sdpa} or {@code flex_attention}
     * sets it). The full layers' splits name their own keys and values.
     */
    @Test
    void headsWiderThanFusedKernelsTakeAnUnfusedCore() throws Exception {
        TransformerSpec gemma = HuggingFaceConfig.read(DIR.resolve("gemma-4-31b/config.json"));
        assertTrue(gemma.fusedAttention());
        ModelGraph g = gemma.graph(4096);
        java.util.Map<String, org.scaledl.graph.Layer> byName = new java.util.HashMap<>();
        g.layers().forEach(l -> byName.put(l.name(), l));
        // the graph holds one block of each kind (its pattern repeats them): sliding, then full attention
        org.scaledl.graph.Blocks kinds = g.blocks().orElseThrow();
        assertEquals(2, kinds.kinds());
        int unfused = 0;
        for (int i = 0; i < kinds.kinds(); i++) {
            boolean wide = i == 1;
            String c = "layers/block" + i + "/attn/core";
            org.scaledl.graph.Layer scores = byName.get(c + "/scores");
            assertEquals(!wide, scores.keepsTilesOnChip(), c);
            assertEquals(!wide, scores.recomputedInBackward(), c);
            assertEquals(!wide, byName.get(c + "/context").keepsTilesOnChip(), c);
            assertEquals(!wide, byName.containsKey(c + "/row_max"), c);
            // unfused: every key's probability written, 32 heads of 4,096 by 4,096 a sequence
            String probs = byName.get(c + "/softmax").outputs().get(0);
            long elements = g.tensor(probs).orElseThrow().elements(1);
            assertEquals(wide ? 32L * 4096 * 4096 : 32L * 4096, elements, probs);
            unfused += wide ? kinds.count(i) : 0;
            // the full layers' split names their own keys and values (4 heads of 512), the sliding ones' none
            java.util.Optional<long[]> kv = byName.get(c + "/split").keyValueHeads();
            assertEquals(wide, kv.isPresent(), c);
            kv.ifPresent(h -> assertEquals(List.of(4L, 512L), List.of(h[0], h[1])));
        }
        assertEquals(10, unfused);
        // named kernels that take any head (PyTorch's sdpa, FlexAttention) fuse them; Transformer Engine's do not
        for (String impl : List.of("sdpa", "flex_attention", "te", "flash_attention_2")) {
            TransformerSpec named = HuggingFaceConfig.parse(Files.readString(DIR.resolve("gemma-4-31b/config.json"))
                    .replaceFirst("\\{", "{\"_attn_implementation\": \"" + impl + "\",")
                    .getBytes(StandardCharsets.UTF_8), impl, "gemma-4-31b");
            boolean any = impl.equals("sdpa") || impl.startsWith("flex");
            assertEquals(any ? TransformerSpec.MAX_SIZE : TransformerSpec.MAX_FUSED_HEAD_SIZE, named.fusedHeadLimit());
            assertEquals(any, named.graph(1024).layers().stream().filter(l -> l.name().endsWith("/core/scores"))
                    .allMatch(org.scaledl.graph.Layer::keepsTilesOnChip), impl);
        }
        assertThrows(IllegalArgumentException.class, () -> gemma.toBuilder().fusedHeadLimit(0));
        assertTrue(TransformerSpec.decoder("any", 8 * 264, 8, 2, 1000).fusedAttention(true)
                .fusedHeadLimit(TransformerSpec.MAX_SIZE).build().graph(512).layers().stream()
                .filter(l -> l.name().endsWith("/core/scores")).allMatch(org.scaledl.graph.Layer::keepsTilesOnChip));
        for (long head : new long[] {256, 264}) {
            ModelGraph m = TransformerSpec.decoder("h" + head, 8 * head, 8, 2, 1000).fusedAttention(true).build()
                    .graph(512);
            // the two layers are one block, repeated
            List<org.scaledl.graph.Layer> scores = m.layers().stream().filter(l -> l.name().endsWith("/core/scores"))
                    .toList();
            assertEquals(1, scores.size());
            assertEquals(head <= TransformerSpec.MAX_FUSED_HEAD_SIZE, scores.get(0).keepsTilesOnChip(), "heads of "
                    + head);
        }
    }

    /**
     * Gemma 4: its full-attention layers (every sixth, and the last) of 512-wide heads, two key/value heads and keys
     * serving as values (a projection of q + kv, not q + 2·kv); with experts every layer runs its MLP and the experts
     * side by side, each branch normed on its way in and out, the router on its own norm with a scale per expert; its
     * per-layer inputs and shared key/value layers refused.
     */
    @Test
    void gemma4ReadsItsGlobalLayersAndParallelExperts(@TempDir Path dir) throws Exception {
        TransformerSpec moe = HuggingFaceConfig.read(DIR.resolve("gemma-4-26b-a4b/config.json"));
        assertEquals(128, moe.experts());
        assertEquals(8, moe.topK());
        assertEquals(2112, moe.moe().orElseThrow().sharedFfn());
        for (int i = 0; i < 30; i++) {
            Block b = moe.blocks().get(i);
            boolean full = (i + 1) % 6 == 0;
            assertEquals(full ? 0L : 1024L, b.window(), "layer " + i);
            assertEquals(full ? 512L : 0L, b.headDim(), "layer " + i);
            assertEquals(full ? 2L : 0L, b.kvHeads(), "layer " + i);
            assertEquals(full, b.keysAsValues(), "layer " + i);
            assertEquals(Block.Ffn.MOE, b.ffn());
        }
        ModelGraph g = moe.graph(4096);
        java.util.Map<String, org.scaledl.graph.Layer> byName = new java.util.HashMap<>();
        g.layers().forEach(l -> byName.put(l.name(), l));
        for (String n : List.of("layers/block0/ffn/router_norm", "layers/block0/ffn/experts_norm",
                "layers/block0/ffn/shared_out_norm", "layers/block0/ffn/experts_out_norm",
                "layers/block0/ffn/router/expert_scale", "head/softcap")) {
            assertTrue(byName.containsKey(n), n);
        }
        // the full layers' projection: 16 heads of 512 for the queries, 2 of 512 for the keys and values together
        assertTrue(g.tensor("layers/block1/attn/qkv.weight").orElseThrow().shape().toString().contains("9216"),
                g.tensor("layers/block1/attn/qkv.weight").orElseThrow().shape().toString());
        // the same model with values of their own has the value projections' weights more
        TransformerSpec.Builder own = moe.toBuilder();
        List<Block> blocks = moe.blocks().stream().map(b -> b.keysAsValues() ? b.withAttention(512, 2, false) : b)
                .toList();
        assertEquals(moe.parameterCount() + 5L * 2816 * 1024, own.blocks(blocks).build().parameterCount());
        Path f = dir.resolve("config.json");
        String cfg = Files.readString(DIR.resolve("gemma-4-26b-a4b/config.json"));
        Files.writeString(f, cfg.replace("\"hidden_size_per_layer_input\": 0,", ""), StandardCharsets.UTF_8);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("hidden_size_per_layer_input 256 (the class default")
                && e.getMessage().contains("not supported"), e.getMessage());
        Files.writeString(f, cfg.replace("\"num_kv_shared_layers\": 0", "\"num_kv_shared_layers\": 4"),
                StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("num_kv_shared_layers"), e.getMessage());
        Files.writeString(f, cfg.replace("\"hidden_size_per_layer_input\": 0", "\"hidden_size_per_layer_input\": "
                + "null"), StandardCharsets.UTF_8);
        assertEquals(moe.parameterCount(), HuggingFaceConfig.read(f).parameterCount(), "null: no per-layer inputs");
        Files.writeString(f, cfg.replace("\"num_experts\": 128,", ""), StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("missing key 'num_experts'"), e.getMessage());
        Files.writeString(f, cfg.replace("\"num_global_key_value_heads\": 2", "\"num_global_key_value_heads\": 3"),
                StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("num_global_key_value_heads 3"), e.getMessage());
        Files.writeString(f, cfg.replace("\"global_head_dim\": 512", "\"global_head_dim\": 20000"),
                StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("global_head_dim"), e.getMessage());
        TransformerSpec dense = HuggingFaceConfig.read(DIR.resolve("gemma-4-31b/config.json"));
        assertEquals(1, dense.experts());
        assertEquals(10, dense.blocks().stream().filter(Block::keysAsValues).count());
        // the last layer attends fully whatever layer_types says, as transformers' Gemma 4 makes it
        String cfg31 = Files.readString(DIR.resolve("gemma-4-31b/config.json"));
        String listEnd = "\"full_attention\"\n    ],";
        assertTrue(cfg31.contains(listEnd), "the list's last entry");
        Files.writeString(f, cfg31.replace(listEnd, "\"sliding_attention\"\n    ],"), StandardCharsets.UTF_8);
        TransformerSpec forced = HuggingFaceConfig.read(f);
        assertTrue(forced.blocks().get(59).keysAsValues());
        assertEquals(dense.parameterCount(), forced.parameterCount());
    }

    /**
     * The other families read in the Llama layout or their own: Phi-3 within its window on every layer, Qwen2-MoE's
     * shared expert beside 60 routed ones with biased query/key/value projections, StarCoder2's plain GELU MLP with
     * LayerNorms and biases, GPT-NeoX's; OLMo 2's norms on queries and keys.
     */
    @Test
    void otherFamiliesReadTheirLayouts(@TempDir Path dir) throws Exception {
        TransformerSpec phi = HuggingFaceConfig.read(DIR.resolve("phi-3-mini-4k/config.json"));
        assertTrue(phi.blocks().stream().allMatch(b -> b.window() == 2047));
        assertEquals(TransformerSpec.FfnKind.SWIGLU, phi.ffnKind());
        TransformerSpec qwen = HuggingFaceConfig.read(DIR.resolve("qwen1.5-moe-a2.7b/config.json"));
        assertEquals(60, qwen.experts());
        assertEquals(4, qwen.topK());
        assertEquals(5632, qwen.moe().orElseThrow().sharedFfn());
        assertTrue(qwen.blocks().stream().allMatch(b -> b.window() == 0), "use_sliding_window false");
        Path g = dir.resolve("qwen2moe.json");
        String q15 = Files.readString(DIR.resolve("qwen1.5-moe-a2.7b/config.json"));
        Files.writeString(g, q15.replace("\"num_key_value_heads\": 16,", "\"qkv_bias\": false,"),
                StandardCharsets.UTF_8);
        assertEquals(qwen.parameterCount() - 24L * 3 * 2048, HuggingFaceConfig.read(g).parameterCount(),
                "no query/key/value biases; the class's 16 key/value heads");
        TransformerSpec coder = HuggingFaceConfig.read(DIR.resolve("starcoder2-15b/config.json"));
        assertEquals(TransformerSpec.FfnKind.GELU, coder.ffnKind());
        assertEquals(TransformerSpec.Norm.LAYER_NORM, coder.norm());
        assertEquals(4, coder.kvHeads());
        assertTrue(coder.blocks().stream().allMatch(b -> b.window() == 4096));
        TransformerSpec neox = HuggingFaceConfig.read(DIR.resolve("gpt-neox-20b/config.json"));
        assertEquals(TransformerSpec.FfnKind.GELU, neox.ffnKind());
        assertEquals(2048, neox.contextPositions());
        Path f = dir.resolve("config.json");
        // a wrapper of a text model read (Mistral 3's, LLaVA's): its text model, the outer keys under it
        String mistral = Files.readString(DIR.resolve("mistral-7b/config.json"));
        Files.writeString(f, "{\"model_type\": \"mistral3\", \"vision_config\": {\"hidden_size\": 1024}, "
                + "\"text_config\": " + mistral + "}", StandardCharsets.UTF_8);
        assertEquals(HuggingFaceConfig.read(DIR.resolve("mistral-7b/config.json")).parameterCount(),
                HuggingFaceConfig.read(f).parameterCount());
        Files.writeString(f, "{\"model_type\": \"mistral3\", \"text_config\": {\"model_type\": \"nope\"}}",
                StandardCharsets.UTF_8);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("model_type 'mistral3' is not supported")
                && e.getMessage().contains("reads as \"model_type\": \"llama\""), e.getMessage());
        // OLMo 3: OLMo 2's layout with windows where layer_types names them
        String llama = Files.readString(DIR.resolve("llama-3-8b/config.json"));
        Files.writeString(f, llama.replace("\"model_type\": \"llama\"", "\"model_type\": \"olmo3\", "
                + "\"sliding_window\": 4096, \"layer_types\": " + layerTypes(32, i -> (i + 1) % 4 != 0)),
                StandardCharsets.UTF_8);
        TransformerSpec olmo3 = HuggingFaceConfig.read(f);
        assertEquals(24, olmo3.blocks().stream().filter(b -> b.window() == 4096).count());
        assertTrue(olmo3.graph(8192).layers().stream().anyMatch(l -> l.name().endsWith("/attn/qk_norm")));
        // GLM-4: norms after each sub-layer too, and no bias on the output projection
        TransformerSpec glm = HuggingFaceConfig.read(DIR.resolve("glm-4-9b-0414/config.json"));
        List<String> glmLayers = glm.graph(4096).layers().stream().map(org.scaledl.graph.Layer::name).toList();
        assertTrue(glmLayers.contains("layers/block/attn/out_norm") && glmLayers.contains("layers/block/ffn/out_norm"),
                glmLayers.toString());
        for (String type : List.of("olmo2", "granite")) {
            Files.writeString(f, llama.replace("\"model_type\": \"llama\"", "\"model_type\": \"" + type + "\""),
                    StandardCharsets.UTF_8);
            TransformerSpec t = HuggingFaceConfig.read(f);
            List<String> layers = t.graph(1024).layers().stream().map(org.scaledl.graph.Layer::name).toList();
            assertEquals(type.equals("olmo2"), layers.contains("layers/block/attn/qk_norm"), type);
            // OLMo 2 norms the whole query (32 heads of 128) and key (8 of 128) projections: a scale a channel
            assertEquals(HuggingFaceConfig.read(DIR.resolve("llama-3-8b/config.json")).parameterCount()
                    + (type.equals("olmo2") ? 32L * (4096 + 1024) : 0), t.parameterCount(), type);
        }
        // OLMo 3 without layer_types: its class's three sliding layers of four, 4,096 tokens; none where null
        Files.writeString(f, llama.replace("\"model_type\": \"llama\"", "\"model_type\": \"olmo3\""),
                StandardCharsets.UTF_8);
        List<Long> w = HuggingFaceConfig.read(f).blocks().stream().map(Block::window).toList();
        for (int i = 0; i < 32; i++) {
            assertEquals((i + 1) % 4 == 0 ? 0L : 4096L, w.get(i), "layer " + i);
        }
        Files.writeString(f, llama.replace("\"model_type\": \"llama\"", "\"model_type\": \"olmo3\", "
                + "\"sliding_window\": null"), StandardCharsets.UTF_8);
        assertTrue(HuggingFaceConfig.read(f).blocks().stream().allMatch(b -> b.window() == 0));
        // GLM-4's class defaults: biased queries, keys and values, 2 key/value heads, as the published file states
        String glmCfg = Files.readString(DIR.resolve("glm-4-9b-0414/config.json"));
        Files.writeString(f, glmCfg.replace("\"attention_bias\": true,", "").replace("\"num_key_value_heads\": 2,",
                "").replace("\"head_dim\": 128,", ""), StandardCharsets.UTF_8);
        assertEquals(9_400_279_040L, HuggingFaceConfig.read(f).parameterCount());
        // a model without a gate refuses a gated activation's name; a wrapper's nested text_config must be an object
        Files.writeString(f, Files.readString(DIR.resolve("starcoder2-15b/config.json")).replace("gelu_pytorch_tanh",
                "silu"), StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("hidden_act 'silu'") && e.getMessage().contains("no gate"), e.getMessage());
        Files.writeString(f, "{\"model_type\": \"foo\", \"text_config\": {\"model_type\": \"gemma3\", "
                + "\"text_config\": \"oops\"}}", StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("text_config.text_config must be an object"), e.getMessage());
    }

    /**
     * A layer's own attention geometry is checked against the model's: key/value heads that do not divide the heads,
     * a geometry on a layer without attention, or beside latent attention are refused; so are whole-projection query
     * and key norms without the norms.
     */
    @Test
    void aLayersOwnGeometryIsChecked() {
        TransformerSpec.Builder b = TransformerSpec.decoder("m", 1024, 16, 2, 1000).fusedAttention(true);
        List<Block> odd = List.of(Block.dense(4096), Block.dense(4096).withAttention(128, 3, true));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.blocks(odd).build());
        assertTrue(e.getMessage().contains("key/value heads (3)"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new Block(Block.Mixer.MAMBA, 0, false, Block.Ffn.DENSE,
                4096, 128, 0, false));
        assertTrue(e.getMessage().contains("need attention"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TransformerSpec.decoder("m", 1024, 16, 2, 1000)
                .wholeQkNorm(true).build());
        assertTrue(e.getMessage().contains("qkNorm"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new TransformerSpec.Moe(8, 2, 512, 0, false, false,
                false, 0, true));
        assertTrue(e.getMessage().contains("shared MLP"), e.getMessage());
        // a layer of its own geometry has its own projection: 16 heads of 128 for the queries, 4 of 128 for keys
        // serving as values
        List<Block> global = List.of(Block.dense(4096), Block.dense(4096).withAttention(128, 4, true));
        TransformerSpec t = TransformerSpec.decoder("m", 1024, 16, 2, 1000).blocks(global).fusedAttention(true)
                .build();
        String shape = t.graph(512).tensor("layers/block1/attn/qkv.weight").orElseThrow().shape().toString();
        assertTrue(shape.contains("[1024,2560]"), shape);
    }

    /** A configuration's {@code layer_types} list: {@code sliding_attention} where {@code sliding}, else full. */
    private static String layerTypes(int layers, java.util.function.IntPredicate sliding) {
        return java.util.stream.IntStream.range(0, layers).mapToObj(i -> sliding.test(i) ? "\"sliding_attention\""
                : "\"full_attention\"").collect(java.util.stream.Collectors.joining(", ", "[", "]"));
    }

    /** Bytes a graph's layers move in a forward pass of one sequence. */
    private static double forwardBytes(TransformerSpec t, long seq) {
        double sum = 0;
        ModelGraph g = t.graph(seq);
        for (LayerFeatures f : FeatureExtractor.of(g).extract(1, Phase.INFER)) {
            sum += f.bytesFwd() * g.repeats(f.layer());
        }
        return sum;
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
        // a key given twice (which value was meant?) and text after the object are refused, not read leniently
        Files.writeString(f, "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"hidden_size\": 8192}",
                StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("config.json") && e.getMessage().contains("Duplicate field 'hidden_size'")
                && e.getMessage().contains("line 1"), e.getMessage());
        Files.writeString(f, "{\"model_type\": \"llama\"} garbage", StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("config.json") && e.getMessage().contains("invalid JSON"),
                e.getMessage());
        Files.writeString(f, "{\"model_type\": \"llama\"} {}", StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("more text after the JSON value"), e.getMessage());
        // a configuration file of another name is named once, not as the file and again as the model
        Path named = dir.resolve("heads.json");
        Files.writeString(named, "{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_head\": 5, \"n_layer\": 2}",
                StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(named));
        assertTrue(e.getMessage().endsWith("heads.json: hidden size 768 is not a multiple of 5 heads; give the head "
                + "size (head_dim in a Hugging Face configuration)")
                && e.getMessage().indexOf("heads.json") == e.getMessage().lastIndexOf("heads.json"), e.getMessage());
        // so is a config.json in a folder of the model's name: the folder is in the path already
        Path folder = Files.createDirectories(dir.resolve("heads30")).resolve("config.json");
        Files.writeString(folder, "{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_head\": 5, \"n_layer\": 2}",
                StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(folder));
        assertTrue(e.getMessage().endsWith("heads30" + java.io.File.separator + "config.json: hidden size 768 is not "
                + "a multiple of 5 heads; give the head size (head_dim in a Hugging Face configuration)"),
                e.getMessage());
        // more experts a token than the model has: both keys named, in every reader of experts
        for (String type : List.of("mixtral", "qwen3_moe", "deepseek_v3", "gpt_oss", "llama4")) {
            String experts = switch (type) {
                case "mixtral", "gpt_oss", "llama4" -> "num_local_experts";
                case "qwen3_moe" -> "num_experts";
                default -> "n_routed_experts";
            };
            // (Qwen's classes default to other sizes than Llama's: given)
            Files.writeString(f, "{\"model_type\": \"" + type + "\", \"" + experts + "\": 8, "
                    + (type.startsWith("qwen") ? "\"hidden_size\": 2048, \"num_hidden_layers\": 24, \"vocab_size\": "
                    + "151936, " : "") + "\"num_experts_per_tok\": 9}", StandardCharsets.UTF_8);
            e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
            assertTrue(e.getMessage().endsWith("config.json: num_experts_per_tok = 9 routes each token to more experts "
                    + "than the 8 of " + experts), type + ": " + e.getMessage());
        }
        // a Llama-family activation no model has is refused (a gated MLP costs the same with SiLU or GELU)
        Files.writeString(f, "{\"model_type\": \"llama\", \"hidden_act\": \"tanhish\"}", StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("hidden_act 'tanhish' is not supported"), e.getMessage());
        // a number beyond a double's range is said to be one, not shown as the string "Infinity"
        Files.writeString(f, "{\"model_type\": \"llama\", \"hidden_size\": 1e400}", StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().endsWith("hidden_size is out of range (1..4194304): a number beyond the range of a "
                + "double (1.8e308)"), e.getMessage());
        // a directory without a configuration where the file should be is said to be one (a model's folder reads as
        // its config.json)
        Path noConfig = Files.createDirectories(dir.resolve("no-config"));
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(noConfig));
        assertTrue(e.getMessage().startsWith(noConfig + ": a folder without a config.json"), e.getMessage());
        // a layer type GPT-OSS does not have is refused at its layer, not built as full attention
        String oss = Files.readString(DIR.resolve("gpt-oss-20b/config.json"));
        Files.writeString(f, oss.replaceFirst("\"sliding_attention\"", "\"bogus_attention\""),
                StandardCharsets.UTF_8);
        e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(f));
        assertTrue(e.getMessage().contains("layer_types: layer 0 is 'bogus_attention'"), e.getMessage());
    }

    /**
     * A number given as {@code null} is read as its default, said as a missing key is (Mixtral's feed-forward width,
     * its experts' count); where the key has no default, it is refused as null, not as missing.
     */
    @Test
    void aNullNumberIsItsDefaultSaid() {
        byte[] nulls = ("{\"model_type\": \"mixtral\", \"hidden_size\": 512, \"num_attention_heads\": 8, "
                + "\"num_key_value_heads\": 8, \"intermediate_size\": null, \"vocab_size\": 1000, "
                + "\"num_hidden_layers\": 2, \"num_local_experts\": null, \"num_experts_per_tok\": 2}")
                .getBytes(StandardCharsets.UTF_8);
        TransformerSpec said = HuggingFaceConfig.parse(nulls, "n/config.json", "n");
        assertTrue(said.readNotes().stream().anyMatch(x -> x.startsWith("n/config.json: intermediate_size is null")),
                said.readNotes().toString());
        assertTrue(said.readNotes().stream().anyMatch(x -> x.startsWith("n/config.json: num_local_experts is null")),
                said.readNotes().toString());
        // transformers reads a null num_key_value_heads as the attention heads' count: no note
        byte[] kvNull = ("{\"model_type\": \"llama\", \"hidden_size\": 512, \"num_attention_heads\": 8, "
                + "\"num_key_value_heads\": null, \"intermediate_size\": 1024, \"vocab_size\": 1000, "
                + "\"num_hidden_layers\": 2}").getBytes(StandardCharsets.UTF_8);
        TransformerSpec mha = HuggingFaceConfig.parse(kvNull, "k/config.json", "k");
        assertEquals(List.of(), mha.readNotes());
        assertEquals(8, mha.kvHeads());
        // a number without a default given as null: refused as null, not as missing
        byte[] noDefault = ("{\"model_type\": \"gpt2\", \"n_embd\": null, \"n_head\": 8, \"n_layer\": 2, "
                + "\"vocab_size\": 1000, \"n_positions\": 1024}").getBytes(StandardCharsets.UTF_8);
        org.scaledl.InvalidInputException e = assertThrows(org.scaledl.InvalidInputException.class,
                () -> HuggingFaceConfig.parse(noDefault, "g/config.json", "g"));
        assertTrue(e.getMessage().contains("n_embd is null"), e.getMessage());
    }

    @Test
    void aSequenceBeyondTheLearnedPositionsIsRefused() {
        TransformerSpec gpt2 = HuggingFaceConfig.read(DIR.resolve("gpt2/config.json"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> gpt2.graph(2048));
        assertTrue(e.getMessage().contains("1024"), e.getMessage());
        List<Integer> fine = List.of(1, 512, 1024);
        fine.forEach(s -> assertTrue(gpt2.graph(s).coverage().isComplete()));
    }

    /**
     * What reading a configuration assumed is kept on the specification as well as logged (a Java caller without an
     * SLF4J binding sees it), names its source, and does not make the specification another one.
     */
    @Test
    void whatReadingAssumedIsKeptOnTheSpecification() {
        byte[] missing = ("{\"model_type\": \"llama\", \"hidden_size\": 512, \"num_attention_heads\": 8, "
                + "\"num_key_value_heads\": 8, \"intermediate_size\": 1024, \"vocab_size\": 1000, "
                + "\"vision_config\": {}}")
                .getBytes(StandardCharsets.UTF_8);
        TransformerSpec said = HuggingFaceConfig.parse(missing, "m/config.json", "m");
        assertEquals(2, said.readNotes().size(), said.readNotes().toString());
        assertTrue(said.readNotes().get(0).startsWith("m/config.json: a multimodal configuration"),
                said.readNotes().toString());
        assertTrue(said.readNotes().get(1).startsWith("m/config.json: no num_hidden_layers; the class default 32 is "
                + "taken"), said.readNotes().toString());
        byte[] stated = ("{\"model_type\": \"llama\", \"hidden_size\": 512, \"num_attention_heads\": 8, "
                + "\"num_key_value_heads\": 8, \"intermediate_size\": 1024, \"vocab_size\": 1000, "
                + "\"num_hidden_layers\": 32}")
                .getBytes(StandardCharsets.UTF_8);
        TransformerSpec plain = HuggingFaceConfig.parse(stated, "m/config.json", "m");
        assertEquals(List.of(), plain.readNotes());
        assertEquals(plain, said, "the notes do not change the model");
        assertEquals(List.of(), TransformerSpec.decoder("gpt", 64, 2, 1, 100).build().readNotes());
        assertEquals(said.readNotes(), said.toBuilder().build().readNotes(), "a copy keeps them");
    }
}
