package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round twenty-eight, the keyboard and hostile input: a runs table that gives only its measured rate is scored
 * too; {@code --train-tokens} takes a suffix, gives the GPU-hours' interval and says a job that does not fit, and
 * {@code layouts} takes it for every layout; a global batch that leaves few replicas is said; a pipeline's host
 * memory says which stage it is.
 */
class RoundTwentyEightCliTest {
    private static final Path REPO = HostileCliTest.repo();
    private static final Path LLAMA = REPO.resolve("scaledl-core/src/test/resources/transformers/llama-3-8b");

    @TempDir
    Path dir;

    private void llama() throws Exception {
        Files.createDirectories(dir.resolve("llama"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("llama/config.json"));
    }

    /** The value of {@code column} in the first row of a CSV the CLI wrote. */
    private static String cell(Path csv, String column) throws Exception {
        List<String> lines = Files.readAllLines(csv);
        int i = List.of(lines.get(0).split(",")).indexOf(column);
        assertTrue(i >= 0, lines.get(0));
        return lines.get(1).split(",", -1)[i];
    }

    /** One job's row predicted by {@code predict --candidates} (written to {@code p.csv}): its {@code column}. */
    private double predicted(String header, String row, String column) throws Exception {
        Path job = dir.resolve("job.csv");
        Files.writeString(job, header + "\n" + row + "\n");
        MainTest.Run first = MainTest.run("predict", "--model", "gpu", "--candidates", job.toString(), "--out",
                dir.resolve("p.csv").toString(), "-q");
        assertEquals(0, first.code(), first.err());
        return Double.parseDouble(cell(dir.resolve("p.csv"), column));
    }

    @Test
    void aRunsTableOfMeasuredRatesOnlyIsScoredOnThem() throws Exception {
        llama();
        String header = "transformer,seq,batch,micro_batches,world_size,device,precision,zero_stage,recompute";
        String row = "llama,2048,1,4,8,H100,bf16,1,none";
        double predicted = predicted(header, row, "tokens_per_s_per_gpu");
        // a rate measured 25 % above the prediction's: the predicted time is 25 % too slow (predicted / measured
        // - 1 = measured rate / predicted rate - 1)
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, header + ",tokens_per_s_per_gpu\n" + row + "," + (1.25 * predicted) + "\n");
        MainTest.Run scored = MainTest.run("predict", "--model", "gpu", "--candidates", runs.toString(), "--out",
                dir.resolve("s.csv").toString(), "-q");
        assertEquals(0, scored.code(), scored.err());
        assertTrue(scored.err().contains("runs.csv: 1 row with a measured time (measured_ms, or "
                + "tokens_per_s_per_gpu): MRE 25.0 % (mean signed error +25.0 %"), scored.err());
        // scored again: its measured rates are now measured_tokens_per_s_per_gpu, and give the same summary
        MainTest.Run again = MainTest.run("predict", "--model", "gpu", "--candidates", dir.resolve("s.csv")
                .toString(), "--out", dir.resolve("s2.csv").toString(), "-q");
        assertEquals(0, again.code(), again.err());
        assertTrue(again.err().contains("1 row with a measured time (measured_ms, or "
                + "measured_tokens_per_s_per_gpu): MRE 25.0 % (mean signed error +25.0 %"), again.err());
        // a measured_ms beside the rate is the one scored
        Files.writeString(runs, header + ",measured_ms,tokens_per_s_per_gpu\n" + row + ",abc," + predicted + "\n");
        MainTest.Run bad = MainTest.run("predict", "--model", "gpu", "--candidates", runs.toString(), "--out",
                dir.resolve("s.csv").toString(), "-q");
        assertEquals(0, bad.code(), bad.err());
        assertTrue(bad.err().contains("1 row with a measured time that is no number of milliseconds"), bad.err());
    }

    private static final String[] JOB = {"predict", "--model", "gpu", "--transformer",
        LLAMA.resolve("config.json").toString(), "--seq", "4096", "--batch", "1", "--micro-batches", "8", "--device",
        "H100 SXM", "--precision", "bf16"};

    @Test
    void trainTokensTakeASuffixAndSayTheGpuHoursIntervalAndAJobThatDoesNotFit() throws Exception {
        MainTest.Run plain = MainTest.run(HostileCliTest.concat(JOB, "--tensor", "2", "--pipeline", "2", "--train-tokens", "15e12",
                "--json"));
        MainTest.Run suffixed = MainTest.run(HostileCliTest.concat(JOB, "--tensor", "2", "--pipeline", "2", "--train-tokens", "15T",
                "--json"));
        assertEquals(0, plain.code(), plain.err());
        assertEquals(plain.out(), suffixed.out());
        com.fasterxml.jackson.databind.JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(plain.out());
        com.fasterxml.jackson.databind.JsonNode t = root.path("train");
        assertEquals(15e12, t.path("tokens").asDouble());
        // GPU-hours at each end of the interval: the days' times the GPUs' hours a day
        assertEquals(t.path("high_days").asDouble() * 24 * 4, t.path("high_gpu_hours").asDouble(), 1e-6);
        assertEquals(t.path("low_days").asDouble() * 24 * 4, t.path("low_gpu_hours").asDouble(), 1e-6);
        assertTrue(t.path("fits").asBoolean(), t.toString());
        MainTest.Run billions = MainTest.run(HostileCliTest.concat(JOB, "--tensor", "2", "--pipeline", "2", "--train-tokens", "1.5b"));
        assertTrue(billions.out().contains("1,500,000,000 tokens: "), billions.out());
        for (String bad : new String[] {"15X", "0x10", "Infinity", "1.5", "T", "-3T"}) {
            MainTest.Run r = MainTest.run(HostileCliTest.concat(JOB, "--train-tokens", bad));
            assertEquals(2, r.code(), bad + ": " + r.err());
            assertTrue(r.err().contains("--train-tokens"), r.err());
        }
        // a job that does not fit: its days are said to be of one that cannot run
        MainTest.Run tight = MainTest.run(HostileCliTest.concat(JOB, "--train-tokens", "1e9"));
        assertEquals(0, tight.code(), tight.err());
        assertTrue(tight.out().contains("does not fit") && tight.out().contains(
                "uninterrupted (a job that does not fit its GPUs' memory)"), tight.out());
    }

    @Test
    void layoutsGiveEachLayoutsDaysAndSayAGlobalBatchThatLeavesFewReplicas() throws Exception {
        String[] search = {"layouts", "--model", "gpu", "--transformer", LLAMA.resolve("config.json").toString(),
            "--seq", "4096", "--device", "H100 SXM", "--gpus", "24", "--global-batch", "32", "--precision", "bf16",
            "--top", "3"};
        MainTest.Run json = MainTest.run(HostileCliTest.concat(search, "--train-tokens", "1T", "--json"));
        assertEquals(0, json.code(), json.err());
        // 24 GPUs and 32 sequences share 8: replicas of 3 GPUs or more, within a node: nothing to say
        assertTrue(!json.err().contains("data-parallel replicas divide both"), json.err());
        com.fasterxml.jackson.databind.JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(json.out());
        assertEquals(1e12, root.path("train_tokens").asDouble());
        for (com.fasterxml.jackson.databind.JsonNode l : root.path("ranked")) {
            // the layout's days as predict --train-tokens gives them for its command
            double iterations = Math.ceil(1e12 / (32.0 * 4096));
            assertEquals(iterations, l.path("train").path("iterations").asDouble());
            assertEquals(iterations * l.path("ms").asDouble() / 86_400e3, l.path("train").path("days").asDouble(),
                    1e-9);
        }
        MainTest.Run text = MainTest.run(HostileCliTest.concat(search, "--train-tokens", "1T"));
        assertEquals(0, text.code(), text.err());
        assertTrue(text.out().contains("days: 1,000,000,000,000 tokens' training at each layout's step")
                && text.out().contains("mem GiB    days  warnings"), text.out());
        // 72 GPUs and 64 sequences share 8: replicas of 9 GPUs or more, beyond a node, the 9 a pipeline's alone
        MainTest.Run nine = MainTest.run("layouts", "--model", "gpu", "--transformer", REPO.resolve(
                "scaledl-core/src/test/resources/transformers/llama-3-70b/config.json").toString(), "--seq", "4096",
                "--device", "H100 SXM", "--gpus", "72", "--global-batch", "64", "--precision", "bf16", "--top", "50",
                "--json");
        assertEquals(0, nine.code(), nine.err());
        assertTrue(nine.err().contains("a global batch of 64 over 72 GPUs: a layout's data-parallel replicas divide "
                + "both, so there are at most 8, each of 9 GPUs or more") && nine.err().contains("the pipeline alone "
                + "takes the factor 9 (a global batch that is a multiple of the GPUs, such as 72, lifts this)"),
                nine.err());
        com.fasterxml.jackson.databind.JsonNode limited = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(nine.out());
        assertTrue(limited.path("warnings").toString().contains("a global batch of 64 over 72 GPUs"),
                limited.toString());
        assertTrue(limited.path("ranked").size() > 0);
        for (com.fasterxml.jackson.databind.JsonNode l : limited.path("ranked")) {
            assertTrue(l.path("pipeline").asInt() % 9 == 0 && l.path("data_parallel").asInt() <= 8, l.toString());
        }
    }

    @Test
    void aPipelinesHostMemorySaysWhichStageItIs() throws Exception {
        MainTest.Run r = MainTest.run(HostileCliTest.concat(JOB, "--pipeline", "2", "--offload-layers", "2"));
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("GiB per GPU in the host's memory at the pipeline stage that offloads most"),
                r.err());
        assertTrue(r.out().contains("this stage's offloaded activations in the host's memory"), r.out());
    }

    /** Hostile input, round nine: a measured column's absurd or other-unit times; other tools' names. */
    @Test
    void aScoredTablesSummaryLeavesOutTimesNoRunsTableTakesAndSaysOtherNamesForATime() throws Exception {
        llama();
        String header = "transformer,seq,batch,gpus,tensor,global_batch,device,precision";
        String row = "llama,4096,1,16,4,64,H100 SXM,bf16";
        double ms = predicted(header, row, "predicted_ms");
        Path m = dir.resolve("m.csv");
        // one row at its prediction, one below any time a runs table takes, one a thousand times off (microseconds)
        Files.writeString(m, header + ",measured_ms\n" + row + "," + ms + "\n" + row + ",1e-300\n" + row + ","
                + (1000 * ms) + "\n" + row + ",2700ms\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", m.toString(), "--out",
                dir.resolve("s.csv").toString(), "-q");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("m.csv: 1 row with a measured time (measured_ms, or tokens_per_s_per_gpu): MRE "
                + "0.0 % (mean signed error +0.0 %"), r.err());
        assertTrue(r.err().contains("m.csv: 2 rows with a measured time that is no number of milliseconds from 0.001 "
                + "to 86400000") && r.err().contains("the first at line 3"), r.err());
        assertTrue(r.err().contains("m.csv: 1 row with a measured_ms about a thousand times off its prediction, the "
                + "first at line 4 (microseconds, not milliseconds?)"), r.err());
        // a time 10 times off, in no other unit: scored (the model's error is what the summary says), and said
        Files.writeString(m, header + ",measured_ms\n" + row + "," + ms + "\n" + row + "," + (10 * ms) + "\n");
        MainTest.Run far = MainTest.run("predict", "--model", "gpu", "--candidates", m.toString(), "--out",
                dir.resolve("s.csv").toString(), "-q");
        assertTrue(far.err().contains("2 rows with a measured time") && far.err().contains("MRE 45.0 %")
                && far.err().contains("1 of the rows scored measured 5 times or more off its prediction, the first "
                + "at line 3"), far.err());
        // a measured time under another name: said, not silently left unscored
        Files.writeString(m, header + ",Measured_ms,step_time_s\n" + row + "," + ms + ",2\n");
        MainTest.Run other = MainTest.run("predict", "--model", "gpu", "--candidates", m.toString(), "--out",
                dir.resolve("s.csv").toString(), "-q");
        assertEquals(0, other.code(), other.err());
        assertTrue(other.err().contains("column 'Measured_ms' looks like measured_ms misspelt")
                && other.err().contains("column 'step_time_s' looks like a measured time"), other.err());
        // a scored table's own columns are not taken for one
        MainTest.Run again = MainTest.run("predict", "--model", "gpu", "--candidates", dir.resolve("p.csv")
                .toString(), "--out", dir.resolve("s2.csv").toString(), "-q");
        assertEquals(0, again.code(), again.err());
        assertTrue(!again.err().contains("looks like a measured time"), again.err());
    }

    @Test
    void anotherFrameworksSettingsAreSaidInATableAndRefusedInARunsTable() throws Exception {
        llama();
        String header = "transformer,seq,batch,gpus,tensor,global_batch,device,precision";
        String row = "llama,4096,1,16,4,64,H100 SXM,bf16";
        Path t = dir.resolve("t.csv");
        Files.writeString(t, header + ",use_distributed_optimizer,overlap_grad_reduce,num_nodes\n" + row
                + ",true,false,2\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", t.toString(), "--out",
                dir.resolve("s.csv").toString(), "-q");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("t.csv: column 'use_distributed_optimizer' is another framework's setting, which "
                + "scaledl reads as zero_stage (use_distributed_optimizer true: 1)") && r.err().contains(
                "(and 'overlap_grad_reduce' as grad_reduce)"), r.err());
        // num_nodes beside the GPUs is a label: the GPUs are stated
        assertTrue(!r.err().contains("'num_nodes'"), r.err());
        // stated by the table's own column: nothing to say
        Files.writeString(t, header + ",zero_stage,use_distributed_optimizer\n" + row + ",1,true\n");
        MainTest.Run stated = MainTest.run("predict", "--model", "gpu", "--candidates", t.toString(), "--out",
                dir.resolve("s.csv").toString(), "-q");
        assertEquals(0, stated.code(), stated.err());
        assertTrue(!stated.err().contains("another framework's setting"), stated.err());
        // a runs table's rows ran: fitted at the default they would be another job
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, header + ",recompute_granularity,measured_ms\n" + row + ",full,2000\n");
        MainTest.Run fit = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                dir.resolve("m.sdl").toString(), "-q");
        assertEquals(1, fit.code(), fit.err());
        assertTrue(fit.err().contains("column 'recompute_granularity' is another framework's setting, which scaledl "
                + "reads as recompute (selective or full): a runs table's rows are jobs that ran"), fit.err());
    }

    @Test
    void aLogCutInsideItsLastIterationLineBeforeItsTimeIsSaid() throws Exception {
        String text = Files.readString(REPO.resolve("scaledl-core/src/test/resources/logs/megatron-llama3-8b.log"));
        int last = text.lastIndexOf(" iteration ");
        Path cut = dir.resolve("cut.log");
        // the last iteration line cut after its count, before its time
        Files.writeString(cut, text.substring(0, text.indexOf('/', last) + 1));
        MainTest.Run r = MainTest.run("runs", "--from-log", cut.toString(), "--out", dir.resolve("r.csv").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("cut.log:") && r.err().contains("the log ends inside its last iteration line; "
                + "that iteration is left out"), r.err());
    }

    @Test
    void aPlanSaysTheChosenJobsAtTheMemorysEdge() throws Exception {
        llama();
        String header = "transformer,seq,batch,micro_batches,world_size,device,precision,zero_stage,recompute\n";
        String room = "llama,2048,1,4,8,H100,bf16,1,none\n";
        String edge = "llama,4352,1,4,8,H100,bf16,1,none\n";
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, header + room + edge);
        MainTest.Run two = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "2",
                "--out", dir.resolve("plan.csv").toString(), "--json");
        assertEquals(0, two.code(), two.err());
        assertTrue(two.err().contains("fewer than --runs 2; 1 is predicted within it"), two.err());
        com.fasterxml.jackson.databind.JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(two.out());
        assertEquals("[1]", root.get("chosen_near_memory_limit").toString());
        MainTest.Run text = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "2",
                "--out", dir.resolve("plan.csv").toString());
        assertTrue(text.out().contains("chosen within 5 % of their GPUs' memory (a run may not fit): [1]"),
                text.out());
    }

    /** The keyboard: a risk-averse ranking of layouts, and the memory beside a sweep's points. */
    @Test
    void layoutsRankByTheIntervalsHighEndAndScalingGivesEachPointsMemory() throws Exception {
        String[] search = {"layouts", "--model", "gpu", "--transformer", LLAMA.resolve("config.json").toString(),
            "--seq", "4096", "--device", "H100 SXM", "--gpus", "32", "--global-batch", "64", "--precision", "bf16",
            "--top", "200", "--json"};
        MainTest.Run high = MainTest.run(HostileCliTest.concat(search, "--rank-by", "high"));
        assertEquals(0, high.code(), high.err());
        com.fasterxml.jackson.databind.JsonNode root = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(high.out());
        assertEquals("high", root.path("rank_by").asText());
        double last = 0;
        boolean fitting = true;
        for (com.fasterxml.jackson.databind.JsonNode l : root.path("ranked")) {
            // the layouts that fit first, each no faster at its high end than the one before
            assertTrue(fitting || !l.path("fits").asBoolean(), l.toString());
            fitting = l.path("fits").asBoolean();
            if (fitting) {
                assertTrue(l.path("high_ms").asDouble() >= last, l.toString());
                last = l.path("high_ms").asDouble();
            }
        }
        MainTest.Run ms = MainTest.run(search);
        com.fasterxml.jackson.databind.JsonNode byMs = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(ms.out());
        // the same layouts, in another order: the first by the step is no slower than the first by the high end
        assertEquals(root.path("layouts").asInt(), byMs.path("layouts").asInt());
        assertTrue(byMs.path("ranked").get(0).path("ms").asDouble() <= root.path("ranked").get(0).path("ms")
                .asDouble());
        MainTest.Run bad = MainTest.run(HostileCliTest.concat(search, "--rank-by", "low"));
        assertEquals(2, bad.code(), bad.err());
        assertTrue(bad.err().contains("--rank-by low: ms (the predicted step) or high"), bad.err());
        MainTest.Run sweep = MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA.resolve("config.json")
                .toString(), "--seq", "4096", "--batch", "1", "--device", "H100 SXM", "--precision", "bf16",
                "--tensor", "8", "--gpus", "8,16", "--out", dir.resolve("s.svg").toString());
        assertEquals(0, sweep.code(), sweep.err());
        assertTrue(sweep.out().contains("mem GiB"), sweep.out());
    }

    /** Two runs of two machines joined in one log: each run takes the GPU its own preamble names. */
    @Test
    void eachRunOfALogTakesTheGpuItsOwnPreambleNames() throws Exception {
        String text = Files.readString(REPO.resolve("scaledl-core/src/test/resources/logs/megatron-llama3-8b.log"));
        Path two = dir.resolve("two.log");
        Files.writeString(two, text + text.replace("get_device_name(0): NVIDIA H100 80GB HBM3",
                "get_device_name(0): NVIDIA A100-SXM4-80GB"));
        Path out = dir.resolve("two.csv");
        MainTest.Run r = MainTest.run("runs", "--from-log", two.toString(), "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        List<String> lines = Files.readAllLines(out);
        assertEquals(3, lines.size(), lines.toString());
        assertTrue(lines.get(1).contains("NVIDIA H100 80GB HBM3") && lines.get(2).contains("NVIDIA A100-SXM4-80GB"),
                lines.toString());
        assertTrue(!r.err().contains("a second GPU name"), r.err());
    }

    /** Hostile input, round ten: a grid's machine cores given twice kept the first without a word. */
    @Test
    void aGridsCoresAreOneNumber() throws Exception {
        Path grid = dir.resolve("g.txt");
        Files.writeString(grid, "model = resnet18\nresolution = 64\nbatch = 2\nthreads = 1, 2, 4\n"
                + "world_size = 1, 2\ncores = 2, 4\n");
        MainTest.Run r = MainTest.run("plan", "--grid", grid.toString(), "--runs", "1");
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("g.txt:6: cores takes one number (the machine's cores), got 2, 4"), r.err());
    }

    /** Hostile input, round ten: evaluate-machines of one machine on both sides, or of a folder of two. */
    @Test
    void evaluateMachinesTakesOneMachineADifferentOneOnEachSide() throws Exception {
        Path ddp = REPO.resolve("datasets/cpu-ddp");
        Path other = dir.resolve("other");
        Files.createDirectories(other.resolve("graphs"));
        List<String> lines = Files.readAllLines(ddp.resolve("runs.csv"));
        StringBuilder rows = new StringBuilder(lines.get(0)).append('\n');
        java.util.Set<String> graphs = new java.util.TreeSet<>();
        for (String l : lines.subList(1, lines.size())) {
            if (l.contains(",64,")) {
                String[] f = l.split(",", -1);
                // the same jobs, measured a tenth slower: other runs of the same machine
                f[6] = String.valueOf(Double.parseDouble(f[6]) * 1.1);
                rows.append(String.join(",", f)).append('\n');
                graphs.add(f[f.length - 1]);
            }
        }
        for (String g : graphs) {
            Files.copy(ddp.resolve(g), other.resolve(g));
        }
        Files.writeString(other.resolve("runs.csv"), rows.toString());
        Files.copy(ddp.resolve("machine.json"), other.resolve("machine.json"));
        MainTest.Run same = MainTest.run("evaluate-machines", "--a", ddp.toString(), "--b", other.toString(), "--k",
                "0", "--repeats", "1");
        assertEquals(1, same.code(), same.err());
        assertTrue(same.err().contains("its machine, AMD EPYC 2-core VM, is --a's too"), same.err());
        // a device column naming two machines in one folder
        String[] header = lines.get(0).split(",");
        StringBuilder mixed = new StringBuilder(lines.get(0)).append(",device\n");
        int i = 0;
        for (String l : rows.toString().split("\n")) {
            if (!l.startsWith(header[0] + ",")) {
                mixed.append(l).append(i++ % 2 == 0 ? ",Xeon A\n" : ",Xeon B\n");
            }
        }
        Files.writeString(other.resolve("runs.csv"), mixed.toString());
        MainTest.Run two = MainTest.run("evaluate-machines", "--a", ddp.toString(), "--b", other.toString(), "--k",
                "0", "--repeats", "1");
        assertEquals(1, two.code(), two.err());
        assertTrue(two.err().contains("its runs name 2 machines (Xeon A, Xeon B)"), two.err());
    }

    /** The keyboard: a checkpoint stored quantised is said where it matters, serving or a frozen base, not in pretraining. */
    @Test
    void aCheckpointStoredQuantisedIsSaidWhereItMatters() throws Exception {
        Path gptOss = REPO.resolve("datasets/gpu/llm-public/configs/gpt-oss-20b/config.json");
        String[] job = {"predict", "--model", "gpu", "--transformer", gptOss.toString(), "--seq", "4096", "--batch",
            "1", "--device", "H100 SXM", "--precision", "bf16"};
        String said = "checkpoint is stored quantised (quantization_config: mxfp4), which is not read";
        MainTest.Run serve = MainTest.run(HostileCliTest.concat(job, "--phase", "infer"));
        assertEquals(0, serve.code(), serve.err());
        assertTrue(serve.err().contains(said), serve.err());
        MainTest.Run lora = MainTest.run(HostileCliTest.concat(job, "--lora-rank", "16"));
        assertTrue(lora.err().contains(said) && lora.err().contains("the frozen base's weights"), lora.err());
        MainTest.Run pretrain = MainTest.run(job);
        assertEquals(0, pretrain.code(), pretrain.err());
        assertTrue(!pretrain.err().contains("quantization_config"), pretrain.err());
    }
}
