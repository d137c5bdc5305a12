package org.scaledl.transformer;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;

/**
 * A state-space or recurrent model's class, or its Mamba layers' keys, over a transformer's configuration is refused
 * (predicted as the transformer, its time would be another model's); a class scaledl does not know is said; the
 * hybrid models it reads (Nemotron-H, Qwen3-Next) still read.
 */
class RoundTwentyEightConfigTest {
    @TempDir
    Path dir;

    @Test
    void aStateSpaceModelOverATransformersKeysIsRefused() throws Exception {
        for (String cls : new String[] {"MambaForCausalLM", "JambaForCausalLM", "FalconH1ForCausalLM",
            "Zamba2ForCausalLM"}) {
            Path p = RoundTwentyConfigTest.edited(dir, "llama-3-8b", cls, c -> c.putArray("architectures").add(cls));
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(p));
            assertTrue(e.getMessage().contains("architectures names \"" + cls + "\", a state-space or recurrent"),
                    e.getMessage());
        }
        Path keys = RoundTwentyConfigTest.edited(dir, "llama-3-8b", "ssm", c -> c.putObject("ssm_cfg")
                .put("d_state", 16));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> HuggingFaceConfig.read(keys));
        assertTrue(e.getMessage().contains("ssm_cfg describes state-space (Mamba) layers, which model_type 'llama' "
                + "does not read"), e.getMessage());
        Path unknown = RoundTwentyConfigTest.edited(dir, "llama-3-8b", "foo", c -> c.putArray("architectures")
                .add("FooBarForCausalLM"));
        TransformerSpec read = HuggingFaceConfig.read(unknown);
        assertTrue(read.readNotes().stream().anyMatch(n -> n.contains("architectures names \"FooBarForCausalLM\", a "
                + "class scaledl does not know: the model is read as model_type 'llama' says")),
                read.readNotes().toString());
        // the hybrids scaledl reads keep reading, their own keys read
        for (String model : new String[] {"nemotron-h-8b-base-8k", "nemotron-3-nano-30b-a3b", "qwen3-next-80b-a3b",
            "llama-3-8b"}) {
            TransformerSpec s = HuggingFaceConfig.read(RoundTwentyConfigTest.edited(dir, model, model + "-as-is",
                    c -> { }));
            assertTrue(s.readNotes().stream().noneMatch(n -> n.contains("does not know")), s.readNotes().toString());
        }
    }
}
