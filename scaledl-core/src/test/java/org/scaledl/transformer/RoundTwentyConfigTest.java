package org.scaledl.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.graph.ModelGraph;

/**
 * Round twenty of hostile configurations: keys of today's architectures read wrongly without a word (a helper edited
 * the test configurations one key at a time against Hugging Face's classes). Each case fails on the code before.
 */
class RoundTwentyConfigTest {
    private static final Path DIR = Path.of("src/test/resources/transformers");
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** The configuration of {@code model} with {@code edit} applied, written as a file of its own. */
    private Path edited(String model, String name, Consumer<ObjectNode> edit) throws Exception {
        return edited(dir, model, name, edit);
    }

    /** A test configuration of {@code model} with {@code edit} applied, written into {@code dir} as its own file. */
    static Path edited(Path dir, String model, String name, Consumer<ObjectNode> edit) throws Exception {
        ObjectNode c = (ObjectNode) JSON.readTree(DIR.resolve(model).resolve("config.json").toFile());
        edit.accept(c);
        Path p = dir.resolve(name + ".json");
        Files.writeString(p, JSON.writeValueAsString(c));
        return p;
    }

    private static double forwardGflops(TransformerSpec s, int seq) {
        ModelGraph g = s.graph(seq);
        double f = 0;
        for (org.scaledl.workload.LayerFeatures x : org.scaledl.features.FeatureExtractor.of(g).extract(1,
                org.scaledl.workload.Phase.INFER)) {
            f += x.flopsFwd() * g.repeats(x.layer());
        }
        return f / 1e9;
    }

    /**
     * Nemotron's and Nemotron-H's MLPs are up, activation, down whatever the activation: {@code silu} made them gated
     * (Nemotron-H 8B 8.10 → 10.21 B parameters). Refused, naming the key, as GPT-2's, BERT's and OPT's are.
     */
    @Test
    void anUngatedMlpWithSiluIsRefusedNotGated() throws Exception {
        Path h = edited("nemotron-h-8b-base-8k", "h", c -> c.put("mlp_hidden_act", "silu"));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(h));
        assertTrue(e.getMessage().contains("mlp_hidden_act 'silu': this model type's MLP has no gate"),
                e.getMessage());
        Path gpt2 = edited("gpt2", "g", c -> c.put("activation_function", "silu"));
        assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(gpt2));
        Path relu2 = edited("nemotron-h-8b-base-8k", "r", c -> c.put("mlp_hidden_act", "relu2"));
        assertEquals(HuggingFaceConfig.read(DIR.resolve("nemotron-h-8b-base-8k/config.json")).parameterCount(),
                HuggingFaceConfig.read(relu2).parameterCount());
    }

    /**
     * Llama 4: a configuration without {@code attention_chunk_size} takes the class's 8,192 (it attended globally in
     * every layer, +8 % FLOPs at 16k tokens), null none; {@code no_rope_layer_interval} sets the global layers (it was
     * taken as 4 whatever it said); a {@code no_rope_layers} list of another length than the layers is refused (it
     * fell back to the interval).
     */
    @Test
    void llama4ChunksAndGlobalLayersAsItsConfigurationSays() throws Exception {
        String m = "llama-4-scout-17b-16e";
        TransformerSpec given = HuggingFaceConfig.read(edited(m, "base", c -> {
            ObjectNode t = (ObjectNode) c.get("text_config");
            t.put("attention_chunk_size", 8192);
            t.remove("no_rope_layers");
        }));
        TransformerSpec absent = HuggingFaceConfig.read(edited(m, "absent", c -> {
            ObjectNode t = (ObjectNode) c.get("text_config");
            t.remove("attention_chunk_size");
            t.remove("no_rope_layers");
        }));
        TransformerSpec none = HuggingFaceConfig.read(edited(m, "none", c -> {
            ObjectNode t = (ObjectNode) c.get("text_config");
            t.putNull("attention_chunk_size");
            t.remove("no_rope_layers");
        }));
        TransformerSpec half = HuggingFaceConfig.read(edited(m, "half", c -> {
            ObjectNode t = (ObjectNode) c.get("text_config");
            t.put("attention_chunk_size", 8192);
            t.remove("no_rope_layers");
            t.put("no_rope_layer_interval", 2);
        }));
        double g = forwardGflops(given, 16384);
        assertEquals(g, forwardGflops(absent, 16384), 1e-9 * g);
        assertTrue(forwardGflops(none, 16384) > 1.05 * g, forwardGflops(none, 16384) + " vs " + g);
        double h = forwardGflops(half, 16384);
        assertTrue(h > g && h < forwardGflops(none, 16384), h + " vs " + g);
        Path shortList = edited(m, "short", c -> ((ObjectNode) c.get("text_config")).putArray("no_rope_layers")
                .add(1).add(1).add(1).add(0));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(shortList));
        assertTrue(e.getMessage().contains("no_rope_layers: 4 entries for 48 layers"), e.getMessage());
    }

    /**
     * Qwen's classes drop the sliding window unless {@code use_sliding_window}: a configuration whose
     * {@code layer_types} says sliding with the window off attended within it in every layer.
     */
    @Test
    void qwensWindowIsOffUnlessUsed() throws Exception {
        String m = "qwen3-8b";
        TransformerSpec full = HuggingFaceConfig.read(DIR.resolve(m).resolve("config.json"));
        TransformerSpec off = HuggingFaceConfig.read(edited(m, "off", c -> {
            c.put("use_sliding_window", false);
            c.put("sliding_window", 1024);
            com.fasterxml.jackson.databind.node.ArrayNode t = c.putArray("layer_types");
            for (int i = 0; i < c.get("num_hidden_layers").asInt(); i++) {
                t.add("sliding_attention");
            }
        }));
        assertEquals(forwardGflops(full, 8192), forwardGflops(off, 8192), 1e-9 * forwardGflops(full, 8192));
    }

    /**
     * A rotary scaling that states its extension ({@code factor} times {@code original_max_position_embeddings}) is
     * the configuration's context: a sequence within it was warned of as an extension the configuration did not state.
     * A quantised checkpoint's {@code quantization_config} is said not to be read; bidirectional attention refused.
     */
    @Test
    void aStatedExtensionQuantisationAndBidirectionalAttentionAreRead() throws Exception {
        TransformerSpec yarn = HuggingFaceConfig.read(edited("qwen3-8b", "yarn", c -> {
            c.put("max_position_embeddings", 40960);
            ObjectNode rs = c.putObject("rope_scaling");
            rs.put("rope_type", "yarn");
            rs.put("factor", 4.0);
            rs.put("original_max_position_embeddings", 32768);
        }));
        assertTrue(!yarn.graph(131072).transformer().orElseThrow().beyondContext(), "131,072 = 4 x 32,768");
        assertTrue(yarn.graph(262144).transformer().orElseThrow().beyondContext());
        TransformerSpec quantised = HuggingFaceConfig.read(edited("gpt-oss-20b", "q", c -> c.putObject(
                "quantization_config").put("quant_method", "mxfp4")));
        // kept, not said on reading (a pretraining job takes the architecture only): a serving or LoRA prediction says
        // it (RoundTwentyEightCliTest)
        assertEquals(java.util.Optional.of("mxfp4"), quantised.storedQuantization());
        assertEquals("mxfp4", quantised.graph(128).transformer().orElseThrow().storedQuantization());
        assertTrue(quantised.readNotes().stream().noneMatch(n -> n.contains("quantization_config")),
                quantised.readNotes().toString());
        Path bidirectional = edited("gemma-3-12b", "b", c -> ((ObjectNode) c.get("text_config"))
                .put("use_bidirectional_attention", true));
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> HuggingFaceConfig.read(bidirectional));
        assertTrue(e.getMessage().contains("use_bidirectional_attention true: bidirectional attention"),
                e.getMessage());
    }

    /**
     * The sizes a mixture of experts or a linear-attention layer rests on, left out, took the class's default without a
     * word (Qwen3-Next without its expert keys: 512 experts, 79.7 B parameters); said now, as a missing hidden size is.
     * A wrapper whose text model is another family's was read as the wrapper's family in silence.
     */
    @Test
    void defaultsASizeRestsOnAndAnotherFamilysTextModelAreSaid() throws Exception {
        TransformerSpec next = HuggingFaceConfig.read(edited("qwen3-next-80b-a3b", "n", c -> {
            c.remove("num_experts");
            c.remove("moe_intermediate_size");
            c.remove("linear_num_value_heads");
        }));
        for (String key : new String[] {"num_experts", "moe_intermediate_size", "linear_num_value_heads"}) {
            assertTrue(next.readNotes().stream().anyMatch(n -> n.contains("no " + key + "; the class default")),
                    key + ": " + next.readNotes());
        }
        TransformerSpec wrapped = HuggingFaceConfig.read(edited("llama-4-scout-17b-16e", "w", c ->
                ((ObjectNode) c.get("text_config")).put("model_type", "qwen3")));
        assertTrue(wrapped.readNotes().stream().anyMatch(n -> n.contains("its text_config's model_type 'qwen3' is not "
                + "llama4's")), wrapped.readNotes().toString());
        TransformerSpec own = HuggingFaceConfig.read(DIR.resolve("llama-4-scout-17b-16e/config.json"));
        assertTrue(own.readNotes().stream().noneMatch(n -> n.contains("text_config's model_type")),
                own.readNotes().toString());
    }

    /** A mixer whose heads do not split into its groups was accepted (12 heads in 8 groups); refused, naming both. */
    @Test
    void aMixersHeadsSplitIntoItsGroups() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new TransformerSpec.Mamba(12,
                64, 128, 8, 4, false, true, 128));
        assertTrue(e.getMessage().contains("12 heads do not split into 8 groups"), e.getMessage());
        assertEquals(new TransformerSpec.Mamba(16, 64, 128, 8, 4, false, true, 128, false),
                new TransformerSpec.Mamba(16, 64, 128, 8, 4, false, true, 128));
    }
}
