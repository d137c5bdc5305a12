package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round twenty-seven, hostile input: a candidate table's default that no row can take is said; a log's times a
 * thousand times off its job's prediction are said with the unit they were likely written in; a log that states the
 * virtual stages, or FP8 weights as the parameters, two ways is refused; a ramp-up the lines do not show is said;
 * {@code scaling --measured} refuses a point of another phase, stage or gradient schedule than the sweep's; the
 * distributed optimizer's gather after the step is searched at stage 1.
 */
class RoundTwentySevenCliTest {
    private static final Path REPO = HostileCliTest.repo();
    private static final Path LLAMA = REPO.resolve("scaledl-core/src/test/resources/transformers/llama-3-8b");
    private static final Path MEGATRON = REPO.resolve("scaledl-core/src/test/resources/logs/megatron-llama3-8b.log");

    @TempDir
    Path dir;

    /** The Megatron log with its argument lines edited: {@code key -> value} replaced, or added after micro_batch. */
    private Path log(String name, java.util.Map<String, String> args) throws Exception {
        String text = Files.readString(MEGATRON);
        for (java.util.Map.Entry<String, String> e : args.entrySet()) {
            String line = "  " + e.getKey() + " " + ".".repeat(Math.max(3, 48 - e.getKey().length())) + " "
                    + e.getValue();
            java.util.regex.Pattern p = java.util.regex.Pattern.compile("(?m)^  " + e.getKey() + " \\.+ .*$");
            text = p.matcher(text).find() ? p.matcher(text).replaceFirst(java.util.regex.Matcher.quoteReplacement(
                    line)) : text.replaceFirst("(?m)^(  micro_batch_size .*)$", "$1\n" + java.util.regex.Matcher
                    .quoteReplacement(line));
        }
        Path out = dir.resolve(name);
        Files.writeString(out, text);
        return out;
    }

    @Test
    void aTablesDefaultNoRowCanTakeIsSaid() throws Exception {
        Files.createDirectories(dir.resolve("llama"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("llama/config.json"));
        Path t = dir.resolve("t.csv");
        Files.writeString(t, "transformer,seq,batch,micro_batches,world_size,device,precision,recompute\n"
                + "llama,4096,1,8,8,H100,fp8,full\nllama,4096,1,8,8,H100,bf16,full\n");
        MainTest.Run none = MainTest.run("predict", "--model", "gpu", "--candidates", t.toString(), "--out",
                dir.resolve("o.csv").toString(), "--fp8-param-gather");
        assertEquals(0, none.code(), none.err());
        assertTrue(none.err().contains("t.csv: the default fp8_param_gather true applies to none of the 2 rows")
                && none.err().contains("zero_stage 1 or 2"), none.err());
        MainTest.Run one = MainTest.run("predict", "--model", "gpu", "--candidates", t.toString(), "--out",
                dir.resolve("o.csv").toString(), "--fp8-param-gather", "--zero-stage", "1");
        assertEquals(0, one.code(), one.err());
        assertFalse(one.err().contains("applies to none"), one.err());
        // the gather after the step where the distributed optimizer trains: every row at ZeRO 0 keeps its own
        MainTest.Run gather = MainTest.run("predict", "--model", "gpu", "--candidates", t.toString(), "--out",
                dir.resolve("o.csv").toString(), "--grad-reduce", "gather-after-step");
        assertEquals(0, gather.code(), gather.err());
        assertTrue(gather.err().contains("the default grad_reduce gather-after-step applies to none of the 2 rows"),
                gather.err());
        MainTest.Run dense = MainTest.run("predict", "--model", "gpu", "--candidates", t.toString(), "--out",
                dir.resolve("o.csv").toString(), "--moe-dispatcher", "deepep");
        assertTrue(dense.err().contains("the default moe_dispatcher deepep applies to none of the 2 rows"),
                dense.err());
    }

    @Test
    void aLogsTimesFarFromTheJobsPredictionAreSaid() throws Exception {
        // every iteration's time in seconds written under the milliseconds label: 5.05 "ms" a step of 8B on 64 GPUs
        Path slipped = dir.resolve("slipped.log");
        Files.writeString(slipped, Files.readString(MEGATRON).replaceAll(
                "elapsed time per iteration \\(ms\\): (\\d+)\\.\\d", "elapsed time per iteration (ms): $1.0")
                .replaceAll("elapsed time per iteration \\(ms\\): (\\d)(\\d{3})\\.0",
                        "elapsed time per iteration (ms): $1.$2"));
        MainTest.Run r = MainTest.run("runs", "--from-log", slipped.toString(), "--out",
                dir.resolve("r.csv").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("times shorter than the bundled gpu model predicts")
                && r.err().contains("seconds logged under a milliseconds label?"), r.err());
        MainTest.Run plain = MainTest.run("runs", "--from-log", MEGATRON.toString(), "--inter-node-gbps", "1600",
                "--out", dir.resolve("p.csv").toString());
        assertFalse(plain.err().contains("bundled gpu model predicts"), plain.err());
        java.util.List<String> table = Files.readAllLines(dir.resolve("p.csv"));
        int gbps = java.util.Arrays.asList(table.get(0).split(",")).indexOf("inter_node_gbps");
        assertTrue(gbps >= 0 && table.get(1).split(",", -1)[gbps].equals("1600"), table.toString());
        // checked on the machine the row describes: a node's network of 1 Gb/s makes the job's 5 s step far too short
        MainTest.Run slow = MainTest.run("runs", "--from-log", MEGATRON.toString(), "--inter-node-gbps", "1",
                "--out", dir.resolve("slow.csv").toString());
        assertEquals(0, slow.code(), slow.err());
        assertTrue(slow.err().contains("times shorter than the bundled gpu model predicts"), slow.err());
    }

    @Test
    void aLogSayingOneThingTwoWaysIsRefused() throws Exception {
        MainTest.Run vp = MainTest.run("runs", "--from-log", log("vp.log", java.util.Map.of(
                "num_layers_per_virtual_pipeline_stage", "4", "virtual_pipeline_model_parallel_size", "2")).toString(),
                "--out", dir.resolve("vp.csv").toString());
        assertEquals(1, vp.code(), vp.err());
        assertTrue(vp.err().contains("num_layers_per_virtual_pipeline_stage 4 makes 4 chunks a stage")
                && vp.err().contains("virtual_pipeline_model_parallel_size is 2"), vp.err());
        MainTest.Run agree = MainTest.run("runs", "--from-log", log("vp2.log", java.util.Map.of(
                "num_layers_per_virtual_pipeline_stage", "4", "virtual_pipeline_model_parallel_size", "4")).toString(),
                "--out", dir.resolve("vp2.csv").toString());
        assertEquals(0, agree.code(), agree.err());
        // Megatron counts the embedding and the loss as layers where the split accounts for them: 34 over 2 x 17
        MainTest.Run counted = MainTest.run("runs", "--from-log", log("acc.log", java.util.Map.of(
                "num_layers_per_virtual_pipeline_stage", "17", "virtual_pipeline_model_parallel_size", "1",
                "account_for_embedding_in_pipeline_split", "True", "account_for_loss_in_pipeline_split", "True"))
                .toString(), "--out", dir.resolve("acc.csv").toString());
        assertEquals(0, counted.code(), counted.err());
        // both logged and no num_layers (the model from --transformer): the logged size, no comparison
        Path noLayers = dir.resolve("nolayers.log");
        Files.writeString(noLayers, Files.readString(log("vp3.log", java.util.Map.of(
                "num_layers_per_virtual_pipeline_stage", "4", "virtual_pipeline_model_parallel_size", "4")))
                .replaceFirst("(?m)^  num_layers \\.+ .*\n", ""));
        MainTest.Run given = MainTest.run("runs", "--from-log", noLayers.toString(), "--transformer",
                LLAMA.resolve("config.json").toString(), "--out", dir.resolve("nl.csv").toString());
        assertEquals(0, given.code(), given.err());
        assertTrue(Files.readString(dir.resolve("nl.csv")).contains(",4,"), given.err());
        MainTest.Run fp8 = MainTest.run("runs", "--from-log", log("fp8.log", java.util.Map.of("fp8", "e4m3",
                "fp8_param_gather", "False", "fp8_params", "True")).toString(), "--out",
                dir.resolve("f.csv").toString());
        assertEquals(1, fp8.code(), fp8.err());
        assertTrue(fp8.err().contains("fp8_param_gather False and fp8_params True disagree"), fp8.err());
        MainTest.Run seq = MainTest.run("runs", "--from-log", log("seq.log", java.util.Map.of("sequence_length",
                "4096")).toString(), "--out", dir.resolve("s.csv").toString());
        assertEquals(0, seq.code(), seq.err());
        assertTrue(seq.err().contains("the dataset's sequence_length 4096 is the run's sequence, not the model's "
                + "seq_length 8192"), seq.err());
        MainTest.Run ramp = MainTest.run("runs", "--from-log", log("ramp.log", java.util.Map.of("rampup_batch_size",
                "['16', '16', '100000']")).toString(), "--out", dir.resolve("ramp.csv").toString());
        assertEquals(0, ramp.code(), ramp.err());
        assertFalse(ramp.err().contains("the iteration lines do not say their global batch"), "its lines say it: "
                + ramp.err());
        // lines without their batch have it from their consumed samples (round twenty-nine): nothing to say
        Path derived = dir.resolve("derived.log");
        Files.writeString(derived, Files.readString(dir.resolve("ramp.log")).replaceAll(
                " global batch size:\\s+\\d+ \\|", ""));
        MainTest.Run told = MainTest.run("runs", "--from-log", derived.toString(), "--out",
                dir.resolve("d.csv").toString());
        assertEquals(0, told.code(), told.err());
        assertFalse(told.err().contains("the iteration lines do not say their global batch"), told.err());
        // without them either, the steps of the ramp cannot be told from the job's: said
        Path unsaid = dir.resolve("unsaid.log");
        Files.writeString(unsaid, Files.readString(derived).replaceAll(" consumed samples:\\s+\\d+ \\|", ""));
        MainTest.Run hidden = MainTest.run("runs", "--from-log", unsaid.toString(), "--out",
                dir.resolve("u.csv").toString());
        assertEquals(0, hidden.code(), hidden.err());
        assertTrue(hidden.err().contains("rampup_batch_size ['16', '16', '100000'] is logged, but the iteration "
                + "lines do not say their global batch"), hidden.err());
    }

    @Test
    void measuredPointsOfAnotherPhaseStageOrScheduleAreRefused() throws Exception {
        Path m = dir.resolve("m.csv");
        java.util.function.Function<String, MainTest.Run> sweep = table -> {
            try {
                Files.writeString(m, table);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.resolve("config.json").toString(),
                    "--seq", "4096", "--batch", "1", "--device", "H100", "--precision", "bf16", "--tensor", "2",
                    "--gpus", "8,16", "--zero-stage", "1", "--measured", m.toString(), "--out",
                    dir.resolve("s.svg").toString(), "-q");
        };
        MainTest.Run phase = sweep.apply("gpus,batch,measured_ms,phase\n8,1,260,infer\n");
        assertEquals(1, phase.code(), phase.err());
        assertTrue(phase.err().contains("m.csv:2: phase infer is not the sweep's job's (phase train)"), phase.err());
        MainTest.Run zero = sweep.apply("gpus,batch,measured_ms,zero_stage\n8,1,260,0\n");
        assertTrue(zero.code() == 1 && zero.err().contains("zero_stage 0 is not the sweep's job's (zero_stage 1)"),
                zero.err());
        MainTest.Run reduce = sweep.apply("gpus,batch,measured_ms,grad_reduce\n8,1,260,after-backward\n");
        assertTrue(reduce.code() == 1 && reduce.err().contains("(grad_reduce overlapped)")
                && reduce.err().contains("give the sweep --grad-reduce after-backward where they are"), reduce.err());
        MainTest.Run same = sweep.apply("gpus,batch,measured_ms,phase,zero_stage,grad_reduce,lora_rank\n"
                + "8,1,260,training,1,overlapped,0\n");
        assertEquals(0, same.code(), same.err());
    }

    /** A keyboard walk's findings: plan leaves out jobs at the memory's edge; a measured table scored is summarised. */
    @Test
    void aPlanLeavesOutJobsAtTheMemorysEdgeAndAScoredRunsTableIsSummarised() throws Exception {
        Files.createDirectories(dir.resolve("llama"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("llama/config.json"));
        String header = "transformer,seq,batch,micro_batches,world_size,device,precision,zero_stage,recompute\n";
        // 66.6 GiB of the H100's 80, and 77 GiB: within 5 % of it
        String room = "llama,2048,1,4,8,H100,bf16,1,none\n";
        String edge = "llama,4352,1,4,8,H100,bf16,1,none\n";
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, header + room + edge);
        MainTest.Run plan = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "1",
                "--out", dir.resolve("plan.csv").toString(), "--json");
        assertEquals(0, plan.code(), plan.err());
        assertTrue(plan.err().contains("1 of 2 candidate jobs left out of the plan: predicted within 5 % of their "
                + "GPUs' memory"), plan.err());
        com.fasterxml.jackson.databind.JsonNode planned = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(plan.out());
        assertEquals("[0]", planned.get("chosen").toString());
        assertEquals(1, planned.get("near_memory_limit").asInt());
        // fewer jobs with the margin than --runs asks for: those at the edge are offered too, said
        Files.writeString(jobs, header + room + edge + edge.replace("4352", "4608"));
        MainTest.Run two = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "2",
                "--out", dir.resolve("plan.csv").toString(), "--json");
        assertEquals(0, two.code(), two.err());
        assertTrue(two.err().contains("1 of the candidate jobs that fit leave 5 % of their GPUs' memory free, fewer "
                + "than --runs 2; 2 are predicted within it"), two.err());
        com.fasterxml.jackson.databind.JsonNode both = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(two.out());
        assertEquals(2, both.get("chosen").size());
        assertTrue(both.get("chosen").toString().matches("\\[\\d,[12]\\]"), both.toString());
        assertEquals(0, both.get("near_memory_limit").asInt());
        Files.writeString(jobs, header + edge);
        MainTest.Run only = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "1",
                "--out", dir.resolve("plan.csv").toString());
        assertEquals(0, only.code(), only.err());
        assertTrue(only.err().contains("every candidate job that fits is predicted within 5 %"), only.err());
        // a table of measured runs scored: the model's error on them, said
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, header.replace("\n", ",measured_ms\n") + room.replace("\n", ",1000\n")
                + room.replace("\n", ",100000\n"));
        MainTest.Run scored = MainTest.run("predict", "--model", "gpu", "--candidates", runs.toString(), "--out",
                dir.resolve("scored.csv").toString());
        assertEquals(0, scored.code(), scored.err());
        assertTrue(scored.err().contains("runs.csv: 2 rows with a measured time (measured_ms, or tokens_per_s_per_gpu): MRE ")
                && scored.err().contains("inside the 90 % interval"), scored.err());
    }

    @Test
    void theGatherAfterTheStepIsSearchedAtTheDistributedOptimizersStage() throws Exception {
        Path out = dir.resolve("l.csv");
        MainTest.Run r = MainTest.run("layouts", "--model", "gpu", "--transformer", LLAMA.resolve("config.json")
                .toString(), "--seq", "4096", "--device", "H100", "--gpus", "16", "--global-batch", "64",
                "--precision", "bf16", "--grad-reduce", "gather-after-step", "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        java.util.List<String> lines = Files.readAllLines(out);
        java.util.List<String> header = java.util.Arrays.asList(lines.get(0).split(","));
        int zero = header.indexOf("zero_stage");
        int reduce = header.indexOf("grad_reduce");
        assertTrue(lines.size() > 1 && zero >= 0 && reduce >= 0, lines.get(0));
        for (String l : lines.subList(1, lines.size())) {
            String[] c = l.split(",", -1);
            assertEquals("1", c[zero], l);
            assertEquals("gather-after-step", c[reduce], l);
        }
    }
}
