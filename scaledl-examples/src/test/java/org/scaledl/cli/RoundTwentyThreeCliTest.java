package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round twenty-three: two walks' findings at the keyboard (a hostile one and a newcomer's). Each case fails on the
 * code before.
 */
class RoundTwentyThreeCliTest {
    private static final Path TRANSFORMERS = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/transformers");
    private static final String LLAMA = TRANSFORMERS.resolve("llama-3-8b/config.json").toString();
    private static final String CATALOG = "name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,fp32_vector_TFLOPS,"
            + "bf16_TFLOPS,fp16_TFLOPS,link_kind,link_GBps\n";

    @TempDir
    Path dir;

    /** Llama 3 8B's configuration copied beside a table, named relative to it as tables name their files. */
    private String beside() throws Exception {
        Files.createDirectories(dir.resolve("llama"));
        Files.copy(Path.of(LLAMA), dir.resolve("llama/config.json"));
        return "llama/config.json";
    }

    /** The bundled Megatron log of Llama 3 8B (tensor 4, pipeline 2, 64 H100s). */
    private static String llamaLog() throws Exception {
        return Files.readString(HostileCliTest.repo().resolve("scaledl-core/src/test/resources/logs/"
                + "megatron-llama3-8b.log"));
    }

    /** {@code runs} of one log written as {@code name} in the test's folder with {@code text}. */
    private MainTest.Run runsOf(String name, String text) throws Exception {
        Path log = dir.resolve(name + ".log");
        Files.writeString(log, text);
        return MainTest.run("runs", "--from-log", log.toString(), "--out", dir.resolve(name + ".csv").toString());
    }

    private static String[] acmeJob(Path model, String... more) {
        return HostileCliTest.concat(new String[] {"predict", "--model", model.toString(), "--transformer", LLAMA,
            "--seq", "4096", "--batch", "1", "--micro-batches", "8", "--data-parallel", "4", "--tensor", "2",
            "--device", "ACME X1", "--precision", "bf16", "-q"}, more);
    }

    /**
     * A model calibrated on a GPU of a {@code --devices} file records its figures: asked for that GPU without the
     * file, the error says which file is missing; given a row of that name with other figures (half the bandwidth),
     * the prediction says the calibration was of another description (it predicted 24 % slower without a word).
     */
    @Test
    void aCalibrationOnACustomGpuRecordsItsFigures() throws Exception {
        Path acme = dir.resolve("acme.csv");
        Files.writeString(acme, CATALOG + "ACME X1,96,4000,140,2000,60,70,1000,1000,NVLink4,450\n");
        Path half = dir.resolve("half.csv");
        Files.writeString(half, CATALOG + "ACME X1,96,2000,140,2000,60,70,1000,1000,NVLink4,450\n");
        String config = beside();
        Path runs = dir.resolve("runs.csv");
        Files.writeString(runs, "id,transformer,seq,batch,micro_batches,world_size,tensor,device,precision,measured_ms\n"
                + "r1," + config + ",4096,1,8,4,2,ACME X1,bf16,2100\n"
                + "r2," + config + ",4096,1,16,4,2,ACME X1,bf16,4050\n"
                + "r3," + config + ",4096,1,8,2,4,ACME X1,bf16,2300\n");
        Path model = dir.resolve("acme.sdl");
        MainTest.Run fit = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--devices",
                acme.toString(), "--out", model.toString(), "-q");
        assertEquals(0, fit.code(), fit.err());
        MainTest.Run without = MainTest.run(acmeJob(model));
        assertEquals(Main.USAGE, without.code(), without.err());
        assertTrue(without.err().contains("was calibrated on runs of 'ACME X1': give the --devices file"),
                without.err());
        MainTest.Run same = MainTest.run(acmeJob(model, "--devices", acme.toString()));
        assertEquals(0, same.code(), same.err());
        assertFalse(same.err().contains("other figures"), same.err());
        MainTest.Run other = MainTest.run(acmeJob(model, "--devices", half.toString()));
        assertEquals(0, other.code(), other.err());
        assertTrue(other.err().contains("calibrated on runs of ACME X1 described with other figures"), other.err());
        // the same GPU written as a catalog matches names is the one calibrated on: nothing said
        Path upper = dir.resolve("upper.csv");
        Files.writeString(upper, CATALOG + "acme-x1,96,4000,140,2000,60,70,1000,1000,NVLink4,450\n");
        MainTest.Run variant = MainTest.run(acmeJob(model, "--devices", upper.toString()));
        assertEquals(0, variant.code(), variant.err());
        assertFalse(variant.err().contains("other figures") || variant.err().contains("unseen_device")
                || variant.err().contains("calibrated_elsewhere"), variant.err());
        // calibrated again: without the file, the error names it; with a changed row, said
        MainTest.Run again = MainTest.run("fit", "--calibrate", model.toString(), "--runs", runs.toString(), "--out",
                dir.resolve("again.sdl").toString(), "-q");
        assertEquals(Main.BAD_INPUT, again.code(), again.err());
        assertTrue(again.err().contains("was calibrated on runs of 'ACME X1': give the --devices file"), again.err());
        MainTest.Run changed = MainTest.run("fit", "--calibrate", model.toString(), "--runs", runs.toString(),
                "--devices", half.toString(), "--out", dir.resolve("again.sdl").toString(), "-q");
        assertEquals(0, changed.code(), changed.err());
        assertTrue(changed.err().contains("described with other figures than these runs' --devices row"),
                changed.err());
    }

    /**
     * {@code runs} reads logs of a GPU beyond the catalog with {@code --devices} (its error pointed there, and it had
     * no such option); a misspelt option after {@code --from-log} is said as one (it was read as a log file, "no such
     * file").
     */
    @Test
    void runsTakesDevicesAndSaysAMisspeltOptionAfterItsLogs() throws Exception {
        String text = llamaLog()
                .replace("get_device_name(0): NVIDIA H100 80GB HBM3", "get_device_name(0): ACME X1");
        Path log = dir.resolve("acme.log");
        Files.writeString(log, text);
        Path acme = dir.resolve("acme.csv");
        Files.writeString(acme, CATALOG + "ACME X1,96,4000,140,2000,60,70,1000,1000,NVLink4,450\n");
        Path out = dir.resolve("runs.csv");
        MainTest.Run without = MainTest.run("runs", "--from-log", log.toString(), "--out", out.toString());
        assertEquals(Main.BAD_INPUT, without.code(), without.err());
        MainTest.Run with = MainTest.run("runs", "--from-log", log.toString(), "--devices", acme.toString(), "--out",
                out.toString());
        assertEquals(0, with.code(), with.err());
        assertTrue(Files.readString(out).contains(",ACME X1,"), Files.readString(out));
        MainTest.Run typo = MainTest.run("runs", "--from-log", log.toString(), "--warmupp", "3", "--out",
                out.toString());
        assertEquals(Main.USAGE, typo.code(), typo.err());
        assertTrue(typo.err().contains("unknown option '--warmupp' (did you mean --warmup?)"), typo.err());
        MainTest.Run dash = MainTest.run("runs", "--from-log", log.toString(), "\u2013warmup", "3", "--out",
                out.toString());
        assertEquals(Main.USAGE, dash.code(), dash.err());
        assertTrue(dash.err().contains("(its dash is not '-') (did you mean --warmup?)"), dash.err());
    }

    /** A log appended to itself gives two runs alike in everything: said (they weigh as two measurements). */
    @Test
    void aLogAppendedToItselfIsSaid() throws Exception {
        String text = llamaLog();
        MainTest.Run r = runsOf("twice", text + text);
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("are alike in every argument read") && r.err().contains("one run read twice"), r.err());
        MainTest.Run single = runsOf("once", text);
        assertEquals(0, single.code(), single.err());
        assertFalse(single.err().contains("alike"), single.err());
    }

    /**
     * A log without the model's sizes says to give its configuration with {@code --transformer}; one without the
     * job's settings says where they come from (it said a Megatron-LM argument block, of a NeMo log too).
     */
    @Test
    void aLogsMissingArgumentsSayWhatGivesThem() throws Exception {
        MainTest.Run r = runsOf("cut", llamaLog().replaceAll("(?m)^  (hidden_size|seq_length) \\.+ .*\\n", ""));
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("hidden_size (the model's sizes: give its config.json with "
                + "--transformer)") && r.err().contains("seq_length (the job's settings"), r.err());
    }

    /** A file of a bundled model's name in the working directory takes its place, and says so. */
    @Test
    void aFileShadowingABundledModelIsSaid() throws Exception {
        org.scaledl.models.BundledModels.load("gpu").save(dir.resolve("gpu"));
        java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "inspect", "--model", "gpu"));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        String err = new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), err);
        assertTrue(err.contains("--model gpu reads the file gpu of the working directory, not the bundled model"), err);
    }

    /**
     * A cluster plan writes the recomputation the prediction decided for a job that left it to the predictor (Llama 3
     * 8B on 64 H100s data-parallel with ZeRO 1 needs six layers recomputed): measured as the table said, it would not fit; read
     * back, it predicts what the plan did.
     */
    @Test
    void aPlanWritesTheRecomputationItDecided() throws Exception {
        String config = beside();
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, "id,transformer,seq,batch,micro_batches,world_size,tensor,zero_stage,device,precision\n"
                + "dp64," + config + ",8192,1,2,64,1,1,H100,bf16\n"
                + "tp8," + config + ",8192,1,128,1,8,1,H100,bf16\n"
                + "dp8," + config + ",8192,1,16,8,1,1,H100,bf16\n");
        Path plan = dir.resolve("plan.csv");
        MainTest.Run r = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "3", "--out",
                plan.toString(), "-q");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("left their recomputation to the predictor"), r.err());
        java.util.List<String> lines = Files.readAllLines(plan);
        java.util.List<String> header = java.util.List.of(lines.get(0).split(",", -1));
        String dp64 = lines.stream().filter(l -> l.startsWith("dp64,")).findFirst().orElseThrow();
        java.util.List<String> cells = java.util.List.of(dp64.split(",", -1));
        assertEquals("full", cells.get(header.indexOf("recompute")), dp64);
        assertTrue(Integer.parseInt(cells.get(header.indexOf("recompute_layers"))) > 0, dp64);
        Path scored = dir.resolve("scored.csv");
        MainTest.Run back = MainTest.run("predict", "--model", "gpu", "--candidates", plan.toString(), "--out",
                scored.toString(), "-q");
        assertEquals(0, back.code(), back.err());
        for (String line : Files.readAllLines(scored).subList(1, 4)) {
            java.util.List<String> c = java.util.List.of(line.split(",", -1));
            java.util.List<String> h = java.util.List.of(Files.readAllLines(scored).get(0).split(",", -1));
            String id = c.get(0);
            String planned = Files.readAllLines(plan).stream().filter(l -> l.startsWith(id + ",")).findFirst()
                    .orElseThrow();
            double ms = Double.parseDouble(java.util.List.of(planned.split(",", -1)).get(header.indexOf("predicted_ms")));
            assertEquals(ms, Double.parseDouble(c.get(h.indexOf("predicted_ms"))), 1e-3 * ms, line);
        }
    }

    /**
     * A short device name read as one GPU says the others it fits (A100: the SXM 80 GB part, not the 40 GB or PCIe
     * ones), once the command succeeded: an error stays one line.
     */
    @Test
    void aShortDeviceNameSaysWhatItWasReadAs() {
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA, "--seq", "4096", "--batch",
                "1", "--device", "A100", "--precision", "bf16", "-q");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("--device A100 is read as NVIDIA A100-SXM4-80GB; it fits NVIDIA A100-PCIE-40GB, "
                + "NVIDIA A100 80GB PCIe, NVIDIA A100-SXM4-40GB too"), r.err());
        MainTest.Run bad = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA, "--seq", "4096",
                "--batch", "1", "--device", "A100", "--precision", "bf16", "--pipeline", "33", "-q");
        assertEquals(1, bad.err().strip().lines().count(), bad.err());
    }

    /** {@code --recompute auto} beside the modules it would not choose is read as those modules, and says so. */
    @Test
    void autoBesideRecomputeModulesIsSaid() {
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA, "--seq", "4096", "--batch",
                "1", "--device", "H100 SXM", "--precision", "bf16", "--recompute", "auto", "--recompute-modules",
                "core_attn", "-q");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("--recompute auto beside --recompute-modules is read as selective recomputation"),
                r.err());
    }

    /** A table's device cell is said as the table's, not as an option never typed; one row is one candidate. */
    @Test
    void aTablesShortDeviceIsSaidAsTheTablesAndOneRowIsOneCandidate() throws Exception {
        String config = beside();
        Path t = dir.resolve("one.csv");
        Files.writeString(t, "transformer,seq,batch,device,precision\n" + config + ",4096,1,A100,bf16\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", t.toString(), "--out",
                dir.resolve("o.csv").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("note: the device A100 is read as NVIDIA A100-SXM4-80GB"), r.err());
        assertFalse(r.err().contains("--device A100"), r.err());
        assertTrue(r.err().contains("scored 1 candidate over 1 graph in"), r.err());
    }

    /** A {@code --devices} row named by a part of a bundled GPU's name would then be what that name means: refused. */
    @Test
    void aCustomRowNamedByAPartOfABundledNameIsRefused() throws Exception {
        Path part = dir.resolve("part.csv");
        Files.writeString(part, CATALOG + "h100 80gb hbm3,96,4000,140,2000,60,70,1000,1000,NVLink4,450\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA, "--seq", "4096", "--batch",
                "1", "--device", "H100 80GB HBM3", "--precision", "bf16", "--devices", part.toString(), "-q");
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("part.csv:2") && r.err().contains("part of the bundled"), r.err());
    }
}
