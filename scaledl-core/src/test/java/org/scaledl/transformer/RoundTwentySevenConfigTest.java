package org.scaledl.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Qwen3's class sets a head of 128 and 32 key/value heads where its configuration leaves them out (not the hidden size
 * over the heads, not as many key/value heads as heads, as the Llama family's classes take them), and says so;
 * Qwen3-MoE's takes the hidden size over the heads, said too.
 */
class RoundTwentySevenConfigTest {
    @TempDir
    Path dir;

    @Test
    void qwen3sClassDefaultsItsHeadAndKeyValueHeads() throws Exception {
        // Qwen3-32B's shape: hidden 5,120 over 64 heads of 128 (not 80)
        TransformerSpec absent = HuggingFaceConfig.read(RoundTwentyConfigTest.edited(dir, "qwen3-8b", "q32", c -> {
            c.put("hidden_size", 5120);
            c.put("num_attention_heads", 64);
            c.remove("head_dim");
            c.remove("num_key_value_heads");
        }));
        assertEquals(128, absent.headDim(), "Qwen3Config's default head_dim");
        assertEquals(32, absent.kvHeads(), "Qwen3Config's default num_key_value_heads");
        assertTrue(absent.readNotes().stream().anyMatch(n -> n.contains("no head_dim; 128 is taken (Qwen3's class "
                + "default")), absent.readNotes().toString());
        assertTrue(absent.readNotes().stream().anyMatch(n -> n.contains("no num_key_value_heads; 32 is taken")),
                absent.readNotes().toString());
        TransformerSpec moe = HuggingFaceConfig.read(RoundTwentyConfigTest.edited(dir, "qwen3-30b-a3b", "m",
                c -> c.remove("head_dim")));
        assertEquals(moe.hidden() / moe.heads(), moe.headDim());
        assertTrue(moe.readNotes().stream().anyMatch(n -> n.contains("no head_dim; " + moe.hidden() / moe.heads()
                + " is taken (the hidden size over the heads")), moe.readNotes().toString());
    }
}
