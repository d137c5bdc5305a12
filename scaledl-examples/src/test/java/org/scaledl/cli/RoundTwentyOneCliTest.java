package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Round twenty-one: a serving planner's walk through inference (prefills of today's models on today's GPUs). Each case
 * fails on the code before.
 */
class RoundTwentyOneCliTest {
    private static final Path TRANSFORMERS = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/transformers");
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode predict(String model, String... options) throws Exception {
        String[] head = {"predict", "--model", "gpu", "--transformer", TRANSFORMERS.resolve(model + "/config.json")
            .toString(), "--phase", "infer", "--json", "-q"};
        MainTest.Run r = MainTest.run(HostileCliTest.concat(head, options));
        assertEquals(0, r.code(), r.err());
        return JSON.readTree(r.out());
    }

    private static double ms(String model, String... options) throws Exception {
        return predict(model, options).path("ms").asDouble();
    }

    /**
     * Past the published runs' cores, an attention core is never dearer than its pieces: Llama 3 8B's prefill of
     * 131,072 tokens on one B200 took 10 times its time on 8 context-parallel ranks and four sequences 5.25 times
     * one; now at most 8 (within 1 %) and 4 times.
     */
    @Test
    void aLongPrefillIsNeverDearerThanItsPieces() throws Exception {
        String[] job = {"--seq", "131072", "--device", "B200", "--precision", "bf16"};
        double one = ms("llama-3-8b", HostileCliTest.concat(job, "--batch", "1"));
        double eight = ms("llama-3-8b", HostileCliTest.concat(job, "--batch", "1", "--context", "8", "--gpus", "8"));
        assertTrue(one <= 8 * eight * 1.01, one + " ms on one GPU, " + eight + " on 8 context-parallel ranks");
        double four = ms("llama-3-8b", HostileCliTest.concat(job, "--batch", "4"));
        assertTrue(four <= 4 * one * (1 + 1e-9), four + " ms for 4 sequences, " + one + " for one");
        double half = ms("llama-3-8b", "--seq", "65536", "--device", "B200", "--precision", "bf16", "--batch", "1");
        assertTrue(one <= 4 * half, one + " ms at 131,072 tokens, " + half + " at 65,536");
    }

    /**
     * A prefill's logits are its sequences' last tokens' and it computes no loss: Llama 3 8B's output projection of
     * 4,096 tokens took 6 ms on an H100 with a log-softmax and a loss after it.
     */
    @Test
    void aPrefillComputesOneTokensLogitsASequenceAndNoLoss() throws Exception {
        JsonNode p = predict("llama-3-8b", "--seq", "4096", "--batch", "1", "--device", "H100", "--precision",
                "bf16");
        double logits = -1;
        for (JsonNode b : p.path("breakdown")) {
            assertFalse(b.path("name").asText().startsWith("head/loss"), b.toString());
            if (b.path("name").asText().equals("head/logits")) {
                logits = b.path("ms").asDouble();
            }
        }
        assertTrue(logits >= 0 && logits < 2, "head/logits " + logits + " ms");
    }

    /**
     * Without expert parallelism a mixture of experts' experts are split over the tensor ranks (Megatron core's
     * default, and serving engines'): Mixtral at tensor 2 held every expert whole on both GPUs (87.5 GiB each, out
     * of memory on an H100, told to shard with tensor parallelism); with --expert, whole on their ranks as before.
     */
    @Test
    void aMixtureOfExpertsAtTensorTwoSplitsItsExperts() throws Exception {
        String[] job = {"--seq", "4096", "--batch", "8", "--device", "H100", "--precision", "bf16", "--tensor", "2"};
        JsonNode split = predict("mixtral-8x7b", job);
        assertEquals(2, split.path("workload").path("expert_tensor").asInt());
        JsonNode whole = predict("mixtral-8x7b", HostileCliTest.concat(job, "--expert-tensor", "1"));
        assertTrue(split.path("memory_gb").asDouble() < 0.6 * whole.path("memory_gb").asDouble(),
                split.path("memory_gb") + " GiB split, " + whole.path("memory_gb") + " whole");
        // experts whole on every tensor rank, asked for (or a Java caller's Parallelism.of): said
        assertTrue(whole.path("warnings").toString().contains("holds every expert whole"), whole.toString());
        assertFalse(split.path("warnings").toString().contains("holds every expert whole"), split.toString());
        JsonNode spread = predict("mixtral-8x7b", HostileCliTest.concat(job, "--expert", "2", "--gpus", "4"));
        assertEquals(1, spread.path("workload").path("expert_tensor").asInt());
    }

    /** A serving planner's first tries: --phase infer to layouts, --phase decode to predict. */
    @Test
    void layoutsAndDecodingSayWhatTheyDo() {
        MainTest.Run layouts = MainTest.run("layouts", "--transformer", TRANSFORMERS.resolve("llama-3-8b/config.json")
                .toString(), "--seq", "4096", "--gpus", "8", "--global-batch", "8", "--device", "H100", "--phase",
                "infer");
        assertNotEquals(0, layouts.code(), layouts.err());
        assertTrue(layouts.err().contains("training layouts only") && layouts.err().contains("predict --candidates"),
                layouts.err());
        MainTest.Run decode = MainTest.run("predict", "--model", "gpu", "--transformer", TRANSFORMERS.resolve(
                "llama-3-8b/config.json").toString(), "--seq", "1", "--batch", "64", "--device", "H100", "--phase",
                "decode");
        assertNotEquals(0, decode.code(), decode.err());
        assertTrue(decode.err().contains("decoding") && decode.err().contains("not predicted"), decode.err());
        // inspect lists the graph over every token, and says what predict times of a prefill
        String config = TRANSFORMERS.resolve("llama-3-8b/config.json").toString();
        MainTest.Run inspect = MainTest.run("inspect", "--transformer", config, "--seq", "512", "--phase", "infer");
        assertEquals(0, inspect.code(), inspect.err());
        assertTrue(inspect.out().contains("predict times a prefill"), inspect.out());
        MainTest.Run train = MainTest.run("inspect", "--transformer", config, "--seq", "512");
        assertFalse(train.out().contains("predict times a prefill"), train.out());
    }

    /**
     * A prefill's memory holds the residual stream beside its largest layer's input and output (Llama 3 8B's gated
     * MLP: its two products' outputs and their activation, about 84 KiB a token in 16 bits): 64 sequences of 16,384
     * tokens need about 107 GiB on an H100, where four hidden-wide tensors a token made 48 GiB and fitted; and where
     * the prefill fits but the keys and values it writes for decoding would not, the note says so.
     */
    @Test
    void aPrefillsMemoryHoldsItsWidestLayerAndSaysWhereItsCacheWouldNotFit() throws Exception {
        String[] job = {"--seq", "16384", "--device", "H100", "--precision", "bf16"};
        JsonNode big = predict("llama-3-8b", HostileCliTest.concat(job, "--batch", "64"));
        double tokens = 64.0 * 16384;
        double expected = (8_030_261_248.0 * 2 + tokens * 2 * (4096 + 3 * 14336)) / (1L << 30);
        assertEquals(expected, big.path("memory_gb").asDouble(), 0.05 * expected, big.toString());
        assertTrue(big.path("warnings").toString().contains("out_of_memory"), big.path("warnings").toString());
        JsonNode fits = predict("llama-3-8b", HostileCliTest.concat(job, "--batch", "24"));
        String notes = fits.path("warnings").toString();
        assertTrue(fits.path("memory_gb").asDouble() < 80 && notes.contains("more than the GPU's 80"), notes);
    }

    /**
     * {@code layouts} searches a mixture's experts whole on their ranks and, without expert parallelism, split over
     * the tensor ranks (predict's default there); each printed command states the expert tensor degree where it is not
     * that default, so it reproduces its layout (a Mixtral layout of tensor 2 whole experts printed a command that
     * predict read with the experts split: 4,109.7 ms for the table's 4,308.9).
     */
    @Test
    void layoutsCommandsReproduceTheirExpertTensorDegree(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path table = dir.resolve("layouts.csv");
        MainTest.Run r = MainTest.run("layouts", "--transformer", TRANSFORMERS.resolve("mixtral-8x7b/config.json")
                .toString(), "--seq", "4096", "--gpus", "16", "--global-batch", "64", "--device", "H100",
                "--precision", "bf16", "--tensor", "2", "--out", table.toString());
        assertEquals(0, r.code(), r.err());
        java.util.List<String> rows = java.nio.file.Files.readAllLines(table);
        java.util.List<String> header = java.util.Arrays.asList(rows.get(0).split(","));
        int et = header.indexOf("expert_tensor");
        int e = header.indexOf("expert");
        assertTrue(rows.stream().skip(1).anyMatch(l -> l.split(",", -1)[e].equals("1")
                && l.split(",", -1)[et].equals("2")), "a layout of experts split over the tensor ranks");
        java.util.List<String> commands = r.out().lines().map(String::strip)
                .filter(x -> x.startsWith("java -jar ") && x.contains(" predict ")).toList();
        assertEquals(3, commands.size(), r.out());
        // the option a printed command states: where the layout's degree is not predict's default for it
        org.scaledl.graph.ModelGraph mixtral = org.scaledl.transformer.HuggingFaceConfig.read(TRANSFORMERS.resolve(
                "mixtral-8x7b/config.json")).graph(4096);
        org.scaledl.workload.Parallelism tp2 = org.scaledl.workload.Parallelism.of(8, 2, 1, 1)
                .withSequenceParallel(true);
        assertEquals(" --expert-tensor 1", LayoutsCommand.expertTensorOption(tp2, mixtral));
        assertEquals("", LayoutsCommand.expertTensorOption(tp2.withExpert(1, 2), mixtral));
        assertEquals("", LayoutsCommand.expertTensorOption(tp2.withExpert(8, 1), mixtral));
        assertEquals(" --expert-tensor 2", LayoutsCommand.expertTensorOption(tp2.withExpert(8, 2), mixtral));
        for (int i = 0; i < commands.size(); i++) {
            String command = commands.get(i);
            // the command of the i-th layout, its own row's time
            String own = rows.get(i + 1).split(",", -1)[header.indexOf("layout_ms")];
            java.util.List<String> args = new java.util.ArrayList<>();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("'([^']*)'|(\\S+)").matcher(command);
            while (m.find()) {
                args.add(m.group(1) != null ? m.group(1) : m.group(2));
            }
            args.add("--json");
            MainTest.Run one = MainTest.run(args.subList(args.indexOf("predict"), args.size()).toArray(new String[0]));
            assertEquals(0, one.code(), one.err());
            String ms = String.format(java.util.Locale.ROOT, "%.4f", JSON.readTree(one.out()).path("ms").asDouble());
            assertEquals(own, ms, command);
        }
    }

    /**
     * A product's pass reads its weights from memory, however short the prompt: Llama 3 8B's MLP up-projection of one
     * token (32 layers of 4,096 x 28,672 weights) takes at least their bytes at the H100's bandwidth, half of them in
     * FP8 (shrunk toward its FLOPs' floor, it ran at 6.2 TB/s where the card has 3.35).
     */
    @Test
    void aShortPromptsProductReadsItsWeightsAtTheBandwidth() throws Exception {
        double bandwidth = org.scaledl.io.DeviceCatalog.bundled().require("NVIDIA H100 80GB HBM3").bytesPerSecond();
        for (String precision : new String[] {"bf16", "fp8"}) {
            JsonNode p = predict("llama-3-8b", "--seq", "1", "--batch", "1", "--device", "H100", "--precision",
                    precision, "--cuda-graphs", "iteration");
            double up = -1;
            for (JsonNode b : p.path("breakdown")) {
                if (b.path("name").asText().equals("layers/block/ffn/up")) {
                    up = b.path("ms").asDouble();
                }
            }
            double bytes = 32.0 * 4096 * 28672 * (precision.equals("bf16") ? 2 : 1);
            assertTrue(up >= 1e3 * bytes / bandwidth, precision + ": ffn/up " + up + " ms, its weights take "
                    + 1e3 * bytes / bandwidth);
        }
    }

    /**
     * A mixture of experts' grouped product of few rows is never faster than over fewer of them, and reads the experts
     * its rows are routed to: Mixtral's prefill of two tokens took 96.1 ms for one sequence and 95.2 for two.
     */
    @Test
    void aFewTokensMixtureIsNeverFasterWithMoreOfThem() throws Exception {
        double previous = 0;
        for (int batch : new int[] {1, 2, 4, 8}) {
            double t = ms("mixtral-8x7b", "--seq", "2", "--batch", Integer.toString(batch), "--device", "H100",
                    "--precision", "bf16");
            assertTrue(t >= previous, batch + " sequences: " + t + " ms after " + previous);
            previous = t;
        }
        // and of many rows never dearer than its rows in pieces: 4 sequences of 8,192 tokens took 2.28 times 2's
        String[] job = {"--seq", "8192", "--tensor", "2", "--gpus", "8", "--device", "B200", "--precision", "bf16"};
        double two = ms("mixtral-8x7b", HostileCliTest.concat(job, "--batch", "2"));
        double four = ms("mixtral-8x7b", HostileCliTest.concat(job, "--batch", "4"));
        assertTrue(four <= 2 * two * 1.02, four + " ms for 4 sequences, " + two + " for 2");
    }
}
