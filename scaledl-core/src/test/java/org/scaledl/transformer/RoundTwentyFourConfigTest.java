package org.scaledl.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sliding windows as Hugging Face's classes read them: Llama's class (and OLMo 2's, Granite's, GLM-4's) reads no
 * {@code sliding_window} or {@code layer_types}, so a configuration of that type attends fully in every layer, said;
 * Mistral's class defaults its window to 4,096 where the key is absent.
 */
class RoundTwentyFourConfigTest {
    @TempDir
    Path dir;

    private static boolean windowed(TransformerSpec s) {
        return s.blocks().stream().anyMatch(b -> b.window() > 0);
    }

    @Test
    void llamasClassReadsNoWindowAndSaysSo() throws Exception {
        TransformerSpec plain = HuggingFaceConfig.read(Path.of("src/test/resources/transformers/llama-3-8b/config.json"));
        TransformerSpec edited = HuggingFaceConfig.read(RoundTwentyConfigTest.edited(dir, "llama-3-8b", "w", c -> {
            c.put("sliding_window", 512);
            com.fasterxml.jackson.databind.node.ArrayNode t = c.putArray("layer_types");
            for (int i = 0; i < c.get("num_hidden_layers").asInt(); i++) {
                t.add("sliding_attention");
            }
        }));
        assertTrue(!windowed(edited), "Llama's class attends fully");
        assertEquals(plain.graph(2048).size(), edited.graph(2048).size());
        assertTrue(edited.readNotes().stream().anyMatch(n -> n.contains("sliding_window is not read for model_type "
                + "'llama'")), edited.readNotes().toString());
        assertTrue(edited.readNotes().stream().anyMatch(n -> n.contains("layer_types is not read")),
                edited.readNotes().toString());
    }

    @Test
    void mistralsClassDefaultsItsWindow() throws Exception {
        TransformerSpec stated = HuggingFaceConfig.read(Path.of(
                "src/test/resources/transformers/mistral-7b/config.json"));
        TransformerSpec absent = HuggingFaceConfig.read(RoundTwentyConfigTest.edited(dir, "mistral-7b", "a",
                c -> c.remove("sliding_window")));
        TransformerSpec none = HuggingFaceConfig.read(RoundTwentyConfigTest.edited(dir, "mistral-7b", "n",
                c -> c.putNull("sliding_window")));
        assertTrue(stated.blocks().stream().allMatch(b -> b.window() == 4096));
        assertTrue(absent.blocks().stream().allMatch(b -> b.window() == 4096), "MistralConfig's default");
        assertTrue(absent.readNotes().stream().anyMatch(n -> n.contains("MistralConfig's default, 4096")),
                absent.readNotes().toString());
        assertTrue(!windowed(none), "null: full attention");
    }

    /** Two keys naming two attention implementations are refused (eager was taken over sdpa without a word). */
    @Test
    void twoAttentionImplementationsAreRefused() throws Exception {
        Path both = RoundTwentyConfigTest.edited(dir, "llama-3-8b", "both", c -> {
            c.put("_attn_implementation", "eager");
            c.put("attn_implementation", "sdpa");
        });
        Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> HuggingFaceConfig.read(both));
        assertTrue(e.getMessage().contains("name two implementations"), e.getMessage());
        Path same = RoundTwentyConfigTest.edited(dir, "llama-3-8b", "same", c -> {
            c.put("_attn_implementation", "eager");
            c.put("attn_implementation", "EAGER");
        });
        assertTrue(!HuggingFaceConfig.read(same).fusedAttention());
    }

    /** A message shows a character outside printable ASCII as its escape, not as a question mark. */
    @Test
    void aMessageShowsOtherCharactersEscaped() {
        String shown = org.scaledl.InvalidInputException.printable("\uff14\u0096x", 40);
        assertEquals("\\uff14\\u0096x", shown);
    }

    /** {@code rope_scaling} and {@code rope_parameters} saying two scalings are refused (one was taken unsaid). */
    @Test
    void twoRotaryScalingsAreRefused() throws Exception {
        Path both = RoundTwentyConfigTest.edited(dir, "llama-3-8b", "rope", c -> {
            c.putObject("rope_scaling").put("rope_type", "linear").put("factor", 2.0);
            c.putObject("rope_parameters").put("rope_type", "yarn").put("factor", 4.0)
                    .put("original_max_position_embeddings", 8192);
        });
        Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> HuggingFaceConfig.read(both));
        assertTrue(e.getMessage().contains("say two rotary scalings"), e.getMessage());
        // one scaling written both ways (the older type key, an integer factor, the newer keys' rope_theta) is one
        HuggingFaceConfig.read(RoundTwentyConfigTest.edited(dir, "llama-3-8b", "rope2", c -> {
            c.putObject("rope_scaling").put("type", "linear").put("factor", 8);
            c.putObject("rope_parameters").put("rope_type", "linear").put("factor", 8.0).put("rope_theta", 500000.0);
        }));
    }

    /** A null where a number is meant is said once, though its key is read in two places. */
    @Test
    void aNullSizeIsSaidOnce() throws Exception {
        TransformerSpec s = HuggingFaceConfig.read(RoundTwentyConfigTest.edited(dir, "llama-3-8b", "null",
                c -> c.putNull("intermediate_size")));
        assertEquals(1, s.readNotes().stream().filter(n -> n.contains("intermediate_size is null")).count(),
                s.readNotes().toString());
    }
}
