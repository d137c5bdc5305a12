package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round nineteen of hostile input at the command line: training logs that {@code runs} read wrongly or wrote as rows
 * the next command refused, and a calibration on a point that does not fit. Each case fails on the code before.
 */
class RoundNineteenCliTest {
    private static final Path RESOURCES = HostileCliTest.repo().resolve("scaledl-core/src/test/resources");
    private static final String ARG = "  %s %s %s\n";

    /** The bundled Megatron log of Llama 3 8B (tensor 4, pipeline 2, 64 H100s) with arguments added or replaced. */
    private static String log(String... keyValues) throws Exception {
        String text = Files.readString(RESOURCES.resolve("logs/megatron-llama3-8b.log"));
        for (int i = 0; i < keyValues.length; i += 2) {
            String key = keyValues[i];
            String line = String.format(ARG, key, ".".repeat(Math.max(3, 48 - key.length())), keyValues[i + 1]);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^  " + key + " \\.+ .*\\n").matcher(text);
            text = m.find() ? text.substring(0, m.start()) + line + text.substring(m.end())
                    : text.replace("-------------------- end of arguments", line.stripTrailing()
                    + "\n-------------------- end of arguments");
        }
        return text;
    }

    private static List<String> row(Path csv) throws Exception {
        List<String> lines = Files.readAllLines(csv);
        List<String> header = List.of(lines.get(0).split(",", -1));
        List<String> cells = List.of(lines.get(1).split(",", -1));
        return java.util.stream.IntStream.range(0, header.size()).mapToObj(i -> header.get(i) + "=" + cells.get(i))
                .toList();
    }

    /**
     * Megatron's block method recomputes the first {@code recompute_num_layers} layers of each model chunk: the row
     * said full recomputation of every layer, 22 % slower than the job that ran (4 of 16 layers a stage). The uniform
     * method recomputes every layer.
     */
    @Test
    void blockRecomputationOfSomeLayersIsTheRowsRecomputeLayers(@TempDir Path dir) throws Exception {
        MainTest.Run block = RoundSeventeenCliTest.fromLog(dir, "block", log("recompute_granularity", "full",
                "recompute_method", "block", "recompute_num_layers", "4"));
        assertEquals(0, block.code(), block.err());
        assertTrue(row(dir.resolve("block.csv")).containsAll(List.of("recompute=full", "recompute_layers=4")),
                row(dir.resolve("block.csv")).toString());
        MainTest.Run uniform = RoundSeventeenCliTest.fromLog(dir, "uniform", log("recompute_granularity", "full",
                "recompute_method", "uniform", "recompute_num_layers", "4"));
        assertEquals(0, uniform.code(), uniform.err());
        assertTrue(row(dir.resolve("uniform.csv")).containsAll(List.of("recompute=full", "recompute_layers=")),
                row(dir.resolve("uniform.csv")).toString());
        MainTest.Run bad = RoundSeventeenCliTest.fromLog(dir, "bad", log("recompute_granularity", "full",
                "recompute_method", "blocks", "recompute_num_layers", "4"));
        assertEquals(1, bad.code(), bad.err());
        assertTrue(bad.err().contains("recompute_method 'blocks' is not known (uniform, block)"), bad.err());
        // the row predicts the job the log ran: fewer layers recomputed, a faster step
        double[] ms = new double[2];
        int k = 0;
        for (String name : new String[] {"block", "uniform"}) {
            MainTest.Run p = MainTest.run("predict", "--model", "gpu", "--candidates", dir.resolve(name + ".csv")
                    .toString(), "--out", dir.resolve(name + "-p.csv").toString(), "-q");
            assertEquals(0, p.code(), p.err());
            ms[k++] = Double.parseDouble(row(dir.resolve(name + "-p.csv")).stream()
                    .filter(c -> c.startsWith("predicted_ms=")).findFirst().orElseThrow().substring(13));
        }
        assertTrue(ms[0] < ms[1], ms[0] + " >= " + ms[1]);
    }

    /**
     * A log whose job no prediction can take (a tensor degree that does not divide the heads, layers that do not split
     * into the stages and chunks, a sequence the context-parallel split cannot halve) is refused at its run's line:
     * {@code runs} wrote the row, and every later {@code predict} and {@code fit} of the table failed on it.
     */
    @Test
    void aLoggedJobNoPredictionCanTakeIsRefusedWhereItIsRead(@TempDir Path dir) throws Exception {
        String[][] cases = {
            {"tensor_model_parallel_size", "3", "world_size", "48", "tensor parallelism 3 does not divide"},
            {"virtual_pipeline_model_parallel_size", "3", "do not split into 2 pipeline stages x 3 chunks"},
            {"context_parallel_size", "3", "world_size", "192", "divisible by 2 x 3"},
        };
        int i = 0;
        for (String[] c : cases) {
            String[] args = java.util.Arrays.copyOf(c, c.length - 1);
            // (the world-size summary states the degrees too: it says the arguments' own)
            String text = log(args).replace("using world size: 64", "using world size: " + (c.length == 5 ? c[3]
                    : "64")).replace("tensor-model-parallel size: 4", "tensor-model-parallel size: "
                    + (c[0].startsWith("tensor") ? c[1] : "4")).replace("context-parallel size: 1,",
                    "context-parallel size: " + (c[0].startsWith("context") ? c[1] : "1") + ",");
            MainTest.Run r = RoundSeventeenCliTest.fromLog(dir, "bad" + i++, text);
            assertEquals(1, r.code(), r.err());
            assertTrue(r.err().contains("the logged job is not one to predict") && r.err().contains(c[c.length - 1]),
                    r.err());
            assertTrue(r.err().contains(".log:1:"), "names the run's line: " + r.err());
            assertFalse(Files.exists(dir.resolve("bad" + (i - 1) + ".csv")), "nothing written");
        }
    }

    /**
     * A mixture of experts' experts a token ({@code moe_router_topk}) is compared with the configuration given, as
     * the experts are: a log of one expert a token read with Mixtral's two kept twice its experts' work.
     */
    @Test
    void aGivenConfigurationsExpertsATokenMustBeTheLogs(@TempDir Path dir) throws Exception {
        String text = log("num_experts", "8", "moe_router_topk", "1").replace("(size: 128256)", "(size: 32000)")
                .replace("new size: 128256", "new size: 32000");
        Path logFile = dir.resolve("top1.log");
        Files.writeString(logFile, text);
        MainTest.Run r = MainTest.run("runs", "--from-log", logFile.toString(), "--transformer",
                RESOURCES.resolve("transformers/mixtral-8x7b/config.json").toString(), "--out",
                dir.resolve("top1.csv").toString());
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("moe_router_topk is 1 in the log, 2 in the configuration (num_experts_per_tok)"),
                r.err());
    }

    /**
     * A message's {@code key=value} (a dataset's builder printing its sequence and batch) gives way to the argument
     * block, said; after the run's iterations it starts no second run; two statements of the sequence that differ
     * are said. The message's values were taken silently (sequence 2,048 and batch 4 where the arguments say 8,192
     * and 1), and one after the iterations failed the log as a run without arguments.
     */
    @Test
    void aMessagesKeyValueGivesWayToTheArguments(@TempDir Path dir) throws Exception {
        String base = log();
        String before = "> building GPTDataset with seq_length=2048 and micro_batch_size=4\n" + base;
        MainTest.Run r = RoundSeventeenCliTest.fromLog(dir, "before", before);
        assertEquals(0, r.code(), r.err());
        assertTrue(row(dir.resolve("before.csv")).containsAll(List.of("seq=8192", "batch=1")),
                row(dir.resolve("before.csv")).toString());
        assertTrue(r.err().contains("seq_length=2048 in a message is not read: the run's arguments at line"), r.err());
        String after = base + "saving checkpoint: tensor_model_parallel_size=4 seq_length=4096 done\n";
        MainTest.Run a = RoundSeventeenCliTest.fromLog(dir, "after", after);
        assertEquals(0, a.code(), a.err());
        assertEquals(2, Files.readAllLines(dir.resolve("after.csv")).size(), "one run");
        assertTrue(a.err().contains("seq_length=4096 in a message after the run's iterations is not read"), a.err());
    }

    /**
     * A second run's configuration printed a field a line ({@code GPTConfig(} then {@code tensor_model_parallel_size=2,}
     * ...) is a dump, not a message: it starts the second run (a reviewer's case: the two runs were merged into one
     * row of a median no iteration took).
     */
    @Test
    void aDumpPrintedAFieldALineStartsTheNextRun(@TempDir Path dir) throws Exception {
        StringBuilder text = new StringBuilder(log()).append("GPTConfig(\n");
        String[] fields = {"tensor_model_parallel_size=2", "pipeline_model_parallel_size=1", "num_layers=32",
            "hidden_size=4096", "ffn_hidden_size=14336", "num_attention_heads=32", "num_query_groups=8",
            "kv_channels=128", "seq_length=8192", "micro_batch_size=1", "global_batch_size=128", "world_size=64",
            "bf16=True", "padded_vocab_size=128256"};
        for (String f : fields) {
            text.append("    ").append(f).append(",\n");
        }
        text.append(")\n");
        for (int i = 41; i <= 80; i++) {
            text.append(String.format(java.util.Locale.ROOT, " iteration %8d/      80 | elapsed time per iteration (ms): "
                    + "%.1f | global batch size:   128 |\n", i, i == 41 ? 45000.0 : 3050.0));
        }
        MainTest.Run r = RoundSeventeenCliTest.fromLog(dir, "two", text.toString());
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(dir.resolve("two.csv"));
        assertEquals(3, lines.size(), String.join("\n", lines));
        assertTrue(lines.get(2).contains(",3050.0000,"), lines.get(2));
    }

    /**
     * An argument block without its end line (a log filtered or pasted) ends after its last argument, said, and the
     * lines after that one are read as any other (the padded vocabulary's): every line after its header was read as
     * an argument, and the log was refused as no training log. Another rank's lines inside a block are not read.
     */
    @Test
    void anArgumentBlockWithoutItsEndLineEndsAtItsLastArgument(@TempDir Path dir) throws Exception {
        String text = log().replaceAll("-+ end of arguments -+\\n", "");
        MainTest.Run r = RoundSeventeenCliTest.fromLog(dir, "noend", text);
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("the argument block opened at line 3 has no 'end of arguments' line: it is taken "
                + "to end after its last argument"), r.err());
        assertTrue(row(dir.resolve("noend.csv")).containsAll(List.of("seq=8192", "tensor=4", "pipeline=2")));
        String inside = log().replace("  tensor_model_parallel_size ......", "using world size: 128, data-parallel "
                + "size: 16\nmicro_batch_size: 4\n  tensor_model_parallel_size ......");
        // another rank's message inside a closed block that mentions "per iteration" is no iteration line
        String noise = log().replace("  tensor_model_parallel_size ......", "[rank3]: WARNING: tokens per iteration "
                + "will change when rampup ends\n  tensor_model_parallel_size ......");
        MainTest.Run n = RoundSeventeenCliTest.fromLog(dir, "noise", noise);
        assertEquals(0, n.code(), n.err());
        assertFalse(n.err().contains("has no 'end of arguments' line"), n.err());
        assertTrue(row(dir.resolve("noise.csv")).containsAll(List.of("seq=8192", "tensor=4", "pipeline=2")));
        MainTest.Run other = RoundSeventeenCliTest.fromLog(dir, "inside", inside);
        assertEquals(0, other.code(), other.err());
        assertTrue(row(dir.resolve("inside.csv")).containsAll(List.of("world_size=8", "batch=1")),
                row(dir.resolve("inside.csv")).toString());
    }

    /**
     * An FP4 recipe other than NVFP4 ({@code fp4_recipe}) is refused as an unknown FP8 recipe is: it was written as
     * NVFP4 without a word. A second GPU name (a log of two machines, or two joined) is said; the first was taken
     * silently.
     */
    @Test
    void anUnknownFp4RecipeIsRefusedAndASecondGpuIsSaid(@TempDir Path dir) throws Exception {
        MainTest.Run mx = RoundSeventeenCliTest.fromLog(dir, "mxfp4", log("fp4", "e2m1", "fp4_recipe", "mxfp4"));
        assertEquals(1, mx.code(), mx.err());
        assertTrue(mx.err().contains("fp4_recipe 'mxfp4' is not known (nvfp4)"), mx.err());
        // (on a B200: an H100 has no FP4 units, and Transformer Engine trains NVFP4 only where they are)
        MainTest.Run nv = RoundSeventeenCliTest.fromLog(dir, "nvfp4", log("fp4", "e2m1", "fp4_recipe", "nvfp4")
                .replace("get_device_name(0): NVIDIA H100 80GB HBM3", "get_device_name(0): NVIDIA B200"));
        assertEquals(0, nv.code(), nv.err());
        assertTrue(row(dir.resolve("nvfp4.csv")).contains("precision=nvfp4"));
        MainTest.Run hopper = RoundSeventeenCliTest.fromLog(dir, "hopper", log("fp4", "e2m1", "fp4_recipe", "nvfp4"));
        assertEquals(1, hopper.code(), hopper.err());
        assertTrue(hopper.err().contains("cannot train nvfp4"), hopper.err());
        MainTest.Run two = RoundSeventeenCliTest.fromLog(dir, "two", log() + "torch.cuda.get_device_name(0): NVIDIA "
                + "A100-SXM4-80GB\n");
        assertEquals(0, two.code(), two.err());
        assertTrue(two.err().contains("a second GPU name, NVIDIA A100-SXM4-80GB, where line 1 names NVIDIA H100 80GB "
                + "HBM3: the run's first is taken"), two.err());
        assertTrue(row(dir.resolve("two.csv")).contains("device=NVIDIA H100 80GB HBM3"));
    }

    /**
     * An iteration line's global batch that is no whole number of sequences (a negative, a fraction, 0) is refused at
     * its line: {@code 128.5} was read as 128, {@code -128} as no batch said.
     */
    @Test
    void anIterationLinesBatchThatIsNoWholeNumberIsRefused(@TempDir Path dir) throws Exception {
        int k = 0;
        for (String bad : new String[] {"-128", "128.5", "0"}) {
            String text = log().replaceFirst("global batch size:   128", "global batch size:   " + bad);
            MainTest.Run r = RoundSeventeenCliTest.fromLog(dir, "batch" + k++, text);
            assertEquals(1, r.code(), r.err());
            assertTrue(r.err().contains("global batch size '" + bad + "' on an iteration line is no whole number"),
                    r.err());
        }
        // what Megatron prints, with another rank's text run into it or a trailing comma, is read as before
        for (String fine : new String[] {"128.0 |", "128, lm loss", "128[rank3]: hello |"}) {
            String text = log().replaceFirst("global batch size:   128 \\|", "global batch size:   " + fine);
            MainTest.Run r = RoundSeventeenCliTest.fromLog(dir, "batch" + k++, text);
            assertEquals(0, r.code(), fine + ": " + r.err());
        }
    }

    /**
     * A layout the search recomputes selectively with the modules it chose (with the all-to-all overlap, more than the
     * attention core's) says them in its JSON, its printed {@code predict} command and its {@code --out} table, so that
     * each gives the layout's figures back: they said {@code selective} alone, which {@code predict} reads as the
     * attention core's, and DeepSeek-V3's best layout came back 4 % slower in 60 % more memory (a helper's case).
     */
    @Test
    void aLayoutsSelectiveModulesComeBackWithIt(@TempDir Path dir) throws Exception {
        Path table = dir.resolve("layouts.csv");
        MainTest.Run r = MainTest.run("layouts", "--model", "gpu", "--transformer",
                RESOURCES.resolve("transformers/mixtral-8x7b/config.json").toString(), "--seq", "4096", "--gpus", "16",
                "--global-batch", "64", "--device", "H100", "--precision", "bf16", "--moe-a2a-overlap=true", "--top",
                "400", "--json", "-q", "--out", table.toString());
        assertEquals(0, r.code(), r.err());
        com.fasterxml.jackson.databind.JsonNode ranked = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(r.out()).path("ranked");
        int selective = 0;
        for (com.fasterxml.jackson.databind.JsonNode row : ranked) {
            if (row.path("recompute").asText().equals("selective")) {
                selective++;
                assertEquals("moe_act+layernorm", row.path("recompute_modules").asText(), row.toString());
                assertTrue(row.path("predict").asText().contains("--recompute-modules moe_act+layernorm"),
                        row.path("predict").asText());
            }
        }
        assertTrue(selective > 0, "some layouts recompute selectively");
        Path scored = dir.resolve("scored.csv");
        MainTest.Run p = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString(), "--out",
                scored.toString(), "-q");
        assertEquals(0, p.code(), p.err());
        org.scaledl.io.CsvTable t = org.scaledl.io.CsvTable.read(scored);
        for (int i = 0; i < t.size(); i++) {
            double layout = Double.parseDouble(t.opt(i, "layout_ms").orElseThrow());
            double again = Double.parseDouble(t.opt(i, "predicted_ms").orElseThrow());
            assertEquals(layout, again, 1e-3 * layout, "row " + (i + 1) + ": " + t.opt(i, "recompute_modules"));
        }
    }

    /**
     * A log read from a pipe (a named one, or a shell's {@code /dev/stdin}): the JDK's stream asked the pipe for its
     * position at the first buffered read, and the log was refused with "Illegal seek". (Where {@code mkfifo} is not
     * there to make a pipe, the test is skipped.)
     */
    @Test
    void aLogIsReadFromAPipe(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("train.log");
        boolean made;
        try {
            made = new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0;
        } catch (java.io.IOException e) {
            made = false;
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(made, "no mkfifo here");
        String text = log();
        Thread writer = new Thread(() -> {
            try {
                Files.writeString(fifo, text);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        writer.start();
        MainTest.Run r = MainTest.run("runs", "--from-log", fifo.toString(), "--out", dir.resolve("piped.csv")
                .toString());
        writer.join(10_000);
        assertEquals(0, r.code(), r.err());
        assertTrue(row(dir.resolve("piped.csv")).containsAll(List.of("seq=8192", "tensor=4", "pipeline=2")));
    }

    /**
     * {@code scaling --measured} says where it calibrates on a point the model predicts does not fit in memory, as
     * {@code fit --calibrate} says of a run: a point of 64 sequences a micro-batch was calibrated on without a word.
     */
    @Test
    void scalingSaysWhereItCalibratesOnAPointThatDoesNotFit(@TempDir Path dir) throws Exception {
        Path measured = dir.resolve("m.csv");
        Files.writeString(measured, "gpus,batch,measured_ms\n8,64,400000\n8,1,4000\n");
        MainTest.Run r = MainTest.run("scaling", "--model", "gpu", "--transformer",
                RESOURCES.resolve("transformers/llama-3-8b/config.json").toString(), "--seq", "8192", "--batch", "1",
                "--micro-batches", "8", "--tensor", "4", "--gpus", "8,16", "--device", "H100", "--precision", "bf16",
                "--measured", measured.toString(), "--out", dir.resolve("s.svg").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("calibrating on measured point (world_size 2, batch 64), which the model predicts "
                + "does not fit"), r.err());
        assertFalse(r.err().contains("batch 1)"), r.err());
    }
}
