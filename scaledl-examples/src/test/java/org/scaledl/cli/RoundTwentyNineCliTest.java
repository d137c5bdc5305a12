package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round twenty-nine, hostile input round eleven and the keyboard: a GPU row's network or NVLink written in another
 * unit is said at its line; the device's rack domain kept over nodes it cannot be made of is refused as a typed one
 * is; an all-dense DeepSeek configuration is read as dense; a Megatron log's consumed samples or iterations in all
 * that contradict one run are refused, and a repeated iteration names what differs; an unknown rotary type is said;
 * one job read from several logs is one job in a calibration; a prediction says the bias the bundled model's fit
 * left on its own runs of that model on that GPU.
 */
class RoundTwentyNineCliTest {
    private static final Path REPO = HostileCliTest.repo();
    private static final Path TRANSFORMERS = REPO.resolve("scaledl-core/src/test/resources/transformers");
    private static final Path LOG = REPO.resolve("scaledl-core/src/test/resources/logs/megatron-llama3-8b.log");
    private static final String HEADER = "name,architecture,form_factor,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,"
            + "l2_MB,fp32_vector_TFLOPS,bf16_TFLOPS,fp8_TFLOPS,link_kind,link_GBps,pcie_GBps,tdp_W,"
            + "network_Gbps_per_gpu\n";

    @TempDir
    Path dir;

    private static String row(String name, double linkGBps, double network) {
        return name + ",Blackwell,SXM6,180,8000,148,1965,126,75,2250,4500,NVLink5," + linkGBps + ",63,1000," + network
                + "\n";
    }

    @Test
    void aGpuRowsNetworkOrNvlinkInAnotherUnitIsSaidAtItsLine() throws Exception {
        Path devices = dir.resolve("mine.csv");
        Files.writeString(devices, HEADER + row("Card A", 900, 400) + row("Card B", 7200, 400)
                + row("Card C", 900, 3200) + row("Card D", 900, 0.4));
        MainTest.Run r = MainTest.run("devices", "--devices", devices.toString(), "--json");
        assertEquals(0, r.code(), r.err());
        String err = r.err();
        assertFalse(err.contains("mine.csv:2:"), err);
        assertTrue(err.contains("mine.csv:3: link_GBps 7200 of 'Card B' (NVLink5) is above any NVLink's")
                && err.contains("Gb/s written as GB/s (900.0 GB/s)?"), err);
        assertTrue(err.contains("mine.csv:4: network_Gbps_per_gpu 3200 of 'Card C' is above any GPU's network")
                && err.contains("a node's figure"), err);
        assertTrue(err.contains("mine.csv:5: network_Gbps_per_gpu 0.4000 of 'Card D' is below any GPU's network"),
                err);
    }

    @Test
    void theDevicesRackKeptOverNodesItCannotBeMadeOfIsRefusedAsATypedOneIs() {
        List<String> job = List.of("predict", "--model", "gpu", "--transformer", TRANSFORMERS.resolve("llama-3-70b")
                .toString(), "--seq", "4096", "--batch", "1", "--precision", "bf16", "--gpus", "80", "--tensor", "8",
                "--global-batch", "160", "--zero-stage", "1", "--device", "GB200");
        MainTest.Run kept = MainTest.run(with(job, "--gpus-per-node", "5"));
        assertEquals(2, kept.code(), kept.err());
        assertTrue(kept.err().contains("an NVLink domain of 72 GPUs is no whole number of nodes of 5")
                && kept.err().contains("the NVLink domain kept from the topology adjusted, a device's standard "
                        + "system's unless given: give the domain of these nodes, e.g. 70, or 5 for none across nodes"),
                kept.err());
        MainTest.Run typed = MainTest.run(with(job, "--gpus-per-node", "5", "--nvlink-domain", "72"));
        assertEquals(kept.code(), typed.code(), typed.err());
        // nodes the rack is made of keep it
        MainTest.Run eight = MainTest.run(with(job, "--gpus-per-node", "8"));
        assertEquals(0, eight.code(), eight.err());
        assertTrue(eight.out().contains("NVLink domain of 72"), eight.out());
        MainTest.Run domain = MainTest.run(with(job, "--gpus-per-node", "5", "--nvlink-domain", "70"));
        assertEquals(0, domain.code(), domain.err());
    }

    @Test
    void aNodesNetworkNoFasterThanOneStandardAdapterIsSaid() {
        List<String> job = List.of("predict", "--model", "gpu", "--transformer", TRANSFORMERS.resolve("llama-3-70b")
                .toString(), "--seq", "4096", "--batch", "1", "--precision", "bf16", "--gpus", "64", "--tensor", "8",
                "--global-batch", "64", "--zero-stage", "1", "--device", "H100 SXM", "--gpus-per-node", "8");
        MainTest.Run one = MainTest.run(with(job, "--inter-node-gbps", "400"));
        assertEquals(0, one.code(), one.err());
        assertTrue(one.err().contains("the network is 400 Gb/s a node of 8 GPUs, 50 a GPU, where NVIDIA H100 80GB "
                + "HBM3's standard system has 400 a GPU") && one.err().contains("the node's is 3200"), one.err());
        // nodes of 4 given one adapter's 400 Gb/s: said too
        MainTest.Run four = MainTest.run("predict", "--model", "gpu", "--transformer", TRANSFORMERS.resolve(
                "llama-3-70b").toString(), "--seq", "4096", "--batch", "1", "--precision", "bf16", "--gpus", "64",
                "--tensor", "4", "--global-batch", "64", "--zero-stage", "1", "--device", "H100 SXM",
                "--gpus-per-node", "4", "--inter-node-gbps", "400");
        assertEquals(0, four.code(), four.err());
        assertTrue(four.err().contains("the network is 400 Gb/s a node of 4 GPUs, 100 a GPU"), four.err());
        MainTest.Run node = MainTest.run(with(job, "--inter-node-gbps", "3200"));
        assertFalse(node.err().contains("the network is"), node.err());
        // a real slow fabric above one adapter (BLOOM's 400 Gb/s a node of 8 A100s) is not said
        MainTest.Run bloom = MainTest.run("predict", "--model", "gpu", "--transformer", TRANSFORMERS.resolve(
                "llama-3-70b").toString(), "--seq", "2048", "--batch", "1", "--precision", "bf16", "--gpus", "64",
                "--tensor", "8", "--global-batch", "64", "--zero-stage", "1", "--device", "A100-SXM4-80GB",
                "--gpus-per-node", "8", "--inter-node-gbps", "400");
        assertFalse(bloom.err().contains("the network is"), bloom.err());
    }

    private static String[] with(List<String> job, String... more) {
        return java.util.stream.Stream.concat(job.stream(), java.util.Arrays.stream(more)).toArray(String[]::new);
    }

    @Test
    void anAllDenseDeepSeekIsDenseAndAnUnknownRotaryTypeIsSaid() throws Exception {
        String ds = Files.readString(TRANSFORMERS.resolve("deepseek-v3/config.json"));
        Files.createDirectories(dir.resolve("dense"));
        Files.writeString(dir.resolve("dense/config.json"), ds.replaceFirst("\"first_k_dense_replace\":\\s*3",
                "\"first_k_dense_replace\": 61"));
        MainTest.Run dense = MainTest.run("inspect", "--transformer", dir.resolve("dense").toString(), "--seq", "4096");
        assertEquals(0, dense.code(), dense.err());
        assertFalse(dense.out().contains("experts"), dense.out());
        Path llama = TRANSFORMERS.resolve("llama-3.1-405b/config.json");
        Files.createDirectories(dir.resolve("rope"));
        String text = Files.readString(llama);
        String foo = text.replaceFirst("\"rope_type\":\\s*\"llama3\"", "\"rope_type\": \"foo\"");
        assertNotEquals(text, foo);
        Files.writeString(dir.resolve("rope/config.json"), foo);
        MainTest.Run rope = MainTest.run("inspect", "--transformer", dir.resolve("rope").toString(), "--seq", "4096");
        assertEquals(0, rope.code(), rope.err());
        assertTrue(rope.err().contains("rope_scaling's type 'foo' is none transformers knows"), rope.err());
        MainTest.Run known = MainTest.run("inspect", "--transformer", llama.getParent().toString(), "--seq", "4096");
        assertFalse(known.err().contains("none transformers knows"), known.err());
    }

    /** The test log with each of its iteration lines from the {@code from}-th rewritten. */
    private Path log(String name, int from, java.util.function.UnaryOperator<String> edit) throws Exception {
        List<String> lines = Files.readAllLines(LOG);
        int seen = 0;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("elapsed time per iteration") && ++seen >= from) {
                lines.set(i, edit.apply(lines.get(i)));
            }
        }
        Path out = dir.resolve(name);
        Files.writeString(out, lines.stream().collect(Collectors.joining("\n", "", "\n")));
        return out;
    }

    @Test
    void aMegatronLogsCountsThatContradictOneRunAreRefused() throws Exception {
        MainTest.Run ok = MainTest.run("runs", "--from-log", LOG.toString(), "--out", dir.resolve("ok.csv")
                .toString());
        assertEquals(0, ok.code(), ok.err());
        // a restart's lines numbered on: the consumed samples start again
        Path back = log("back.log", 21, l -> l.replaceFirst("consumed samples:\\s+\\d+", "consumed samples: 128"));
        MainTest.Run b = MainTest.run("runs", "--from-log", back.toString(), "--out", dir.resolve("b.csv").toString());
        assertEquals(1, b.code(), b.err());
        assertTrue(b.err().contains("back.log:") && b.err().contains("consumed samples 128 after")
                && b.err().contains("Megatron's count never goes back within a run"), b.err());
        // another run's lines of another length appended
        Path total = log("total.log", 21, l -> l.replaceFirst("/\\s+40 \\|", "/      80 |"));
        MainTest.Run t = MainTest.run("runs", "--from-log", total.toString(), "--out", dir.resolve("t.csv")
                .toString());
        assertEquals(1, t.code(), t.err());
        assertTrue(t.err().contains("iteration N/80 after lines of N/40"), t.err());
        // a line repeated with its time but another batch: the batch is named
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(LOG));
        int at = 0;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("iteration       20/")) {
                at = i;
            }
        }
        lines.add(at + 1, lines.get(at).replaceFirst("global batch size:\\s+128", "global batch size:    64")
                .replaceFirst("consumed samples:\\s+\\d+", "consumed samples: " + 20 * 128));
        Path dup = dir.resolve("dup.log");
        Files.write(dup, lines);
        MainTest.Run d = MainTest.run("runs", "--from-log", dup.toString(), "--out", dir.resolve("d.csv").toString());
        assertEquals(1, d.code(), d.err());
        assertTrue(d.err().contains("iteration 20 again, global batch 64 here but 128 at line"), d.err());
        // consumed samples growing by half the batch the lines say: said, the run read
        int[] k = {0};
        Path half = log("half.log", 1, l -> l.replaceFirst("consumed samples:\\s+\\d+", "consumed samples: "
                + (64 * ++k[0])));
        MainTest.Run h = MainTest.run("runs", "--from-log", half.toString(), "--out", dir.resolve("h.csv").toString());
        assertEquals(0, h.code(), h.err());
        assertTrue(h.err().contains("grow by other than their iterations times their global batch (first: 64 over 1 "
                + "iteration of global batch 128)"), h.err());
        assertFalse(ok.err().contains("grow by other than"), ok.err());
    }

    @Test
    void aRampUpIsToldFromTheConsumedSamplesWhereTheLinesSayNoBatch() throws Exception {
        // lines without their global batch, the first 15 iterations at 64 a step (a ramp-up), then 128
        long[] consumed = {0};
        int[] k = {0};
        Path ramp = log("ramp.log", 1, l -> {
            consumed[0] += ++k[0] <= 15 ? 64 : 128;
            return l.replaceFirst("consumed samples:\\s+\\d+", "consumed samples: " + consumed[0])
                    .replaceFirst("\\| global batch size:\\s+\\d+ ", "");
        });
        assertFalse(Files.readString(ramp).contains("global batch size:"));
        MainTest.Run r = MainTest.run("runs", "--from-log", ramp.toString(), "--out", dir.resolve("r.csv").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("6 of 30 iteration lines after warm-up left out of the median")
                && r.err().contains("ran a global batch of 64 (a batch-size ramp-up)"), r.err());
        assertTrue(r.err().contains("median of 24 iterations"), r.err());
    }

    @Test
    void aNemoRampUpIsToldFromTheConsumedSamplesToo() throws Exception {
        Path nemo = REPO.resolve("scaledl-core/src/test/resources/logs/nemo-llama3-8b.log");
        java.util.regex.Pattern step = java.util.regex.Pattern.compile("global_step: (\\d+)");
        List<String> lines = Files.readAllLines(nemo).stream().map(l -> {
            java.util.regex.Matcher m = step.matcher(l);
            if (!m.find() || !l.contains("train_step_timing")) {
                return l;
            }
            long k = Long.parseLong(m.group(1));
            long consumed = k <= 6 ? 32 * (k + 1) : 32 * 7 + 64 * (k - 6);
            return l.replace("global_batch_size: 64 | ", "").replaceFirst("consumed_samples: \\d+",
                    "consumed_samples: " + consumed);
        }).toList();
        Path ramp = dir.resolve("nemo-ramp.log");
        Files.write(ramp, lines);
        assertFalse(Files.readString(ramp).contains("global_batch_size: 64 |"));
        MainTest.Run r = MainTest.run("runs", "--from-log", ramp.toString(), "--out", dir.resolve("n.csv").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("ran a global batch of 32 (a batch-size ramp-up)"), r.err());
    }

    @Test
    void aLogIntervalTheLinesContradictIsSaidAndTheLinesAreCounted() throws Exception {
        Path ten = dir.resolve("ten.log");
        Files.writeString(ten, Files.readString(LOG).replaceFirst("log_interval \\.+ 1\n",
                "log_interval .................................... 10\n"));
        assertTrue(Files.readString(ten).contains("log_interval .................................... 10"));
        MainTest.Run r = MainTest.run("runs", "--from-log", ten.toString(), "--out", dir.resolve("t.csv").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("log_interval 10 in the arguments, but the iteration lines are numbered every 1 "
                + "iteration: each line is taken as the mean of one iteration"), r.err());
        assertTrue(r.err().contains("median of 30 iterations"), r.err());
        assertEquals(1, org.scaledl.io.TrainingLogs.read(ten, 10).get(0).loggedEvery());
        MainTest.Run one = MainTest.run("runs", "--from-log", LOG.toString(), "--out", dir.resolve("o.csv")
                .toString());
        assertFalse(one.err().contains("log_interval"), one.err());
    }

    @Test
    void aMachineKeyThatLooksMisspeltIsSaidAndTheCompanionsOthersAreNot() throws Exception {
        Path ds = dir.resolve("ds");
        MainTest.smallDataset(ds);
        Files.writeString(ds.resolve("machine.json"), "{\"name\": \"m\", \"cpus\": 2, \"clock_MHz\": 2000, "
                + "\"memory_bandwith_gbps\": 40, \"l3\": \"32 MiB\", \"kernel\": \"6.1\", \"torch\": \"1.13\"}");
        MainTest.Run r = MainTest.run("fit", "--data", ds.toString(), "--out", dir.resolve("x.sdl").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("\"clock_MHz\" is not read (did you mean \"clock_mhz\"?)"), r.err());
        assertTrue(r.err().contains("\"memory_bandwith_gbps\" is not read (did you mean "
                + "\"memory_bandwidth_gbps\"?)"), r.err());
        assertFalse(r.err().contains("\"l3\"") || r.err().contains("\"kernel\"") || r.err().contains("\"torch\""),
                r.err());
        // a figure under another unit's name is named with the key and unit read, not offered as a misspelling;
        // a clock that is no MHz is said
        Files.writeString(ds.resolve("machine.json"), "{\"name\": \"m\", \"cpus\": 2, \"clock_ghz\": 3.0, "
                + "\"clock_mhz\": 3.0, \"memory_bandwidth\": 80, \"l2_kb\": 1024}");
        MainTest.Run u = MainTest.run("fit", "--data", ds.toString(), "--out", dir.resolve("y.sdl").toString());
        assertEquals(0, u.code(), u.err());
        assertTrue(u.err().contains("\"clock_ghz\" is not read: the machine's clock is read from \"clock_mhz\", "
                + "in MHz"), u.err());
        assertTrue(u.err().contains("\"memory_bandwidth\" is not read: the machine's memory bandwidth is read from "
                + "\"memory_bandwidth_gbps\", in GB/s"), u.err());
        assertTrue(u.err().contains("\"l2_kb\" is not read: the machine's l2 is read from \"l2\""), u.err());
        assertTrue(u.err().contains("\"clock_mhz\" 3.0 is below any processor's (100.0 MHz): GHz written as MHz?"),
                u.err());
        assertFalse(u.err().contains("did you mean \"clock_mhz\""), u.err());
    }

    @Test
    void oneJobReadFromSeveralLogsCalibratesAsOneJob() throws Exception {
        java.util.List<String> args = new java.util.ArrayList<>(List.of("runs"));
        for (int i = 1; i <= 8; i++) {
            Path copy = dir.resolve("node" + i + ".log");
            Files.copy(LOG, copy);
            args.add("--from-log");
            args.add(copy.toString());
        }
        args.addAll(List.of("--device", "H100 SXM", "--out", dir.resolve("runs.csv").toString()));
        MainTest.Run runs = MainTest.run(args.toArray(String[]::new));
        assertEquals(0, runs.code(), runs.err());
        MainTest.Run cal = MainTest.run("fit", "--calibrate", "gpu", "--runs", dir.resolve("runs.csv").toString(),
                "--out", dir.resolve("mine.sdl").toString());
        assertEquals(0, cal.code(), cal.err());
        assertTrue((cal.out() + cal.err()).contains("8 runs (1 job)"), cal.out() + cal.err());
    }

    @Test
    void aPredictionSaysTheBiasTheBundledFitLeftOnThatModelOnThatGpu() {
        List<String> job = List.of("predict", "--model", "gpu", "--transformer", TRANSFORMERS.resolve("deepseek-v3")
                .toString(), "--seq", "4096", "--batch", "1", "--gpus", "256", "--pipeline", "16", "--expert", "8",
                "--precision", "mxfp8", "--global-batch", "2048", "--zero-stage", "1");
        MainTest.Run b200 = MainTest.run(with(job, "--device", "B200"));
        assertEquals(0, b200.code(), b200.err());
        assertTrue(b200.err().contains("of DeepSeek-V3 on NVIDIA B200 this model was fitted on are predicted")
                && b200.err().contains("too fast on average"), b200.err());
        MainTest.Run gb200 = MainTest.run(with(job, "--device", "GB200"));
        assertEquals(0, gb200.code(), gb200.err());
        assertFalse(gb200.err().contains("this model was fitted on are predicted"), gb200.err());
    }
}
