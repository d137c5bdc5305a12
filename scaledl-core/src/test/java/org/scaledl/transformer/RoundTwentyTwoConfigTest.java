package org.scaledl.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;

/**
 * Round twenty-two of hostile configurations (a helper's walk): keys another family's class reads, sizes outside a
 * text model, a router's method and a RoPE scaling that no class takes, Qwen's missing sizes taken as Llama's.
 */
class RoundTwentyTwoConfigTest {
    private static final Path DIR = Path.of("src/test/resources/transformers");
    private static final Path PUBLISHED = Path.of("../datasets/gpu/llm-public/configs");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The notes this round adds: none of the configurations scaledl ships or tests carries one. */
    private static final List<String> NEW_NOTES = List.of("is not read for model_type", "architectures names",
            "text_config is not read", "outside text_config is not read");

    @TempDir
    Path dir;

    private Path edited(String model, String name, Consumer<ObjectNode> edit) throws Exception {
        return RoundTwentyConfigTest.edited(dir, model, name, edit);
    }

    private static List<String> notes(Path p) {
        return HuggingFaceConfig.read(p).readNotes();
    }

    private static boolean says(List<String> notes, String what) {
        return notes.stream().anyMatch(n -> n.contains(what));
    }

    /** Every configuration the repository holds reads without this round's notes (they are slips, not the norm). */
    @Test
    void noShippedConfigurationCarriesTheNewNotes() throws IOException {
        List<Path> configs = new ArrayList<>();
        for (Path root : new Path[] {DIR, PUBLISHED}) {
            try (Stream<Path> s = Files.list(root)) {
                s.map(d -> d.resolve("config.json")).filter(Files::isRegularFile).forEach(configs::add);
            }
        }
        assertTrue(configs.size() > 40, "configurations found: " + configs.size());
        for (Path p : configs) {
            for (String n : notes(p)) {
                for (String added : NEW_NOTES) {
                    assertTrue(!n.contains(added), p + ": " + n);
                }
            }
        }
    }

    /**
     * A Mixtral configuration given Qwen's {@code num_experts} or DeepSeek's {@code n_routed_experts} is still 8
     * experts, as transformers reads it, but said; a class named in {@code architectures} of another family is said.
     */
    @Test
    void anotherFamilysExpertKeysAreSaid() throws Exception {
        long params = HuggingFaceConfig.read(DIR.resolve("mixtral-8x7b/config.json")).parameterCount();
        for (String key : new String[] {"num_experts", "n_routed_experts", "moe_intermediate_size"}) {
            Path p = edited("mixtral-8x7b", key, c -> c.put(key, 64));
            assertEquals(params, HuggingFaceConfig.read(p).parameterCount(), key);
            assertTrue(says(notes(p), key + " is not read for model_type 'mixtral'"), key + ": " + notes(p));
        }
        Path qwen = edited("mixtral-8x7b", "arch", c -> c.putArray("architectures").add("Qwen3MoeForCausalLM"));
        assertTrue(says(notes(qwen), "architectures names \"Qwen3MoeForCausalLM\" (a qwen3_moe class) where "
                + "model_type is 'mixtral'"), notes(qwen).toString());
    }

    /**
     * Real configurations whose class is not their type's name are not said (a reviewer's cases): Kimi K2's
     * {@code DeepseekV3ForCausalLM}, a text model's class ({@code Gemma3ForCausalLM} for {@code gemma3_text}),
     * LLaVA's wrapper whose text model names Llama's class, a converted Mistral naming Llama's.
     */
    @Test
    void classesOfTheSameFamilyAreNotSaid() throws Exception {
        List<Path> fine = List.of(
                edited("deepseek-v3", "kimi", c -> {
                    c.put("model_type", "kimi_k2");
                    c.putArray("architectures").add("DeepseekV3ForCausalLM");
                }),
                edited("mistral-7b", "converted", c -> c.putArray("architectures").add("LlamaForCausalLM")),
                edited("qwen3-30b-a3b", "own", c -> c.putArray("architectures").add("Qwen3MoeForCausalLM")));
        for (Path p : fine) {
            assertTrue(notes(p).stream().noneMatch(n -> n.contains("architectures names")), p + ": " + notes(p));
        }
        ObjectNode text = (ObjectNode) JSON.readTree(DIR.resolve("llama-3-8b/config.json").toFile());
        text.putArray("architectures").add("LlamaForCausalLM");
        ObjectNode llava = JSON.createObjectNode().put("model_type", "llava");
        llava.putArray("architectures").add("LlavaForConditionalGeneration");
        llava.set("text_config", text);
        Path wrapped = dir.resolve("llava.json");
        Files.writeString(wrapped, JSON.writeValueAsString(llava));
        assertTrue(notes(wrapped).stream().noneMatch(n -> n.contains("architectures names")), notes(wrapped)
                .toString());
    }

    /** Llama 4's sizes outside its text_config are not read, and said where they differ; a Mixtral's text_config. */
    @Test
    void sizesATextModelDoesNotReadAreSaid() throws Exception {
        Path scout = edited("llama-4-scout-17b-16e", "scout", c -> c.put("hidden_size", 1024));
        assertTrue(says(notes(scout), "hidden_size = 1024 outside text_config is not read: the text model's, 5120"),
                notes(scout).toString());
        assertEquals(HuggingFaceConfig.read(DIR.resolve("llama-4-scout-17b-16e/config.json")).parameterCount(),
                HuggingFaceConfig.read(scout).parameterCount());
        Path mixtral = edited("mixtral-8x7b", "wrapped", c -> c.putObject("text_config").put("hidden_size", 512));
        assertTrue(says(notes(mixtral), "text_config is not read: model_type 'mixtral'"), notes(mixtral).toString());
    }

    /** A router's method, a RoPE scaling or a rotated share that no class takes is refused, naming the key. */
    @Test
    void valuesNoClassTakesAreRefused() throws Exception {
        List<Path> bad = List.of(edited("deepseek-v3", "topk", c -> c.put("topk_method", "banana")),
                edited("deepseek-v3", "scoring", c -> c.put("scoring_func", "banana")),
                edited("qwen3-30b-a3b", "factor", c -> c.putObject("rope_scaling").put("rope_type", "yarn")
                        .put("factor", -4)),
                edited("qwen3-30b-a3b", "text", c -> c.put("rope_scaling", "linear")),
                edited("qwen3-next-80b-a3b", "partial", c -> c.put("partial_rotary_factor", 2.0)),
                edited("qwen3-next-80b-a3b", "negative", c -> c.put("partial_rotary_factor", -0.5)));
        String[] keys = {"topk_method", "scoring_func", "rope_scaling.factor", "rope_scaling", "partial_rotary_factor",
            "partial_rotary_factor"};
        for (int i = 0; i < bad.size(); i++) {
            Path p = bad.get(i);
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(p),
                    keys[i]);
            assertTrue(e.getMessage().contains(keys[i]) && e.getMessage().contains(p.getFileName().toString()),
                    e.getMessage());
        }
    }

    /**
     * Qwen's classes default to other sizes than Llama's (Qwen3-MoE's hidden size 2,048 and 24 layers, a vocabulary
     * of 151,936): a missing one is refused, naming the key (it took Llama's 4,096 and 32 "as transformers takes
     * it": 178.6 GiB for 91.1).
     */
    @Test
    void qwensMissingSizesAreRefusedNotTakenAsLlamas() throws Exception {
        for (String key : new String[] {"hidden_size", "num_hidden_layers", "vocab_size"}) {
            Path p = edited("qwen3-30b-a3b", key, c -> c.remove(key));
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(p));
            assertTrue(e.getMessage().contains("missing key '" + key + "'"), e.getMessage());
            Path nulled = edited("qwen3-30b-a3b", key + "-null", c -> c.putNull(key));
            assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(nulled), key + " null");
        }
        Path llama = edited("llama-3-8b", "llama", c -> c.remove("num_hidden_layers"));
        assertEquals(32, HuggingFaceConfig.read(llama).layers(), "Llama's own class default");
    }

    /** Nemotron-H without its pattern is refused saying so (it said the pattern "has 0 layers"). */
    @Test
    void aHybridWithoutItsPatternIsRefusedSayingSo() throws Exception {
        Path p = edited("nemotron-h-8b-base-8k", "nopattern", c -> c.remove("hybrid_override_pattern"));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(p));
        assertTrue(e.getMessage().contains("no hybrid_override_pattern"), e.getMessage());
    }
}
