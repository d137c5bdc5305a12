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
    }

    /**
     * {@code runs} reads logs of a GPU beyond the catalog with {@code --devices} (its error pointed there, and it had
     * no such option); a misspelt option after {@code --from-log} is said as one (it was read as a log file, "no such
     * file").
     */
    @Test
    void runsTakesDevicesAndSaysAMisspeltOptionAfterItsLogs() throws Exception {
        String text = Files.readString(HostileCliTest.repo().resolve(
                "scaledl-core/src/test/resources/logs/megatron-llama3-8b.log"))
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
    }

    /**
     * A log without the model's sizes says to give its configuration with {@code --transformer}; one without the
     * job's settings says where they come from (it said a Megatron-LM argument block, of a NeMo log too).
     */
    @Test
    void aLogsMissingArgumentsSayWhatGivesThem() throws Exception {
        String text = Files.readString(HostileCliTest.repo().resolve(
                "scaledl-core/src/test/resources/logs/megatron-llama3-8b.log"));
        Path log = dir.resolve("cut.log");
        Files.writeString(log, text.replaceAll("(?m)^  (hidden_size|seq_length) \\.+ .*\\n", ""));
        MainTest.Run r = MainTest.run("runs", "--from-log", log.toString(), "--out", dir.resolve("r.csv").toString());
        assertEquals(Main.BAD_INPUT, r.code(), r.err());
        assertTrue(r.err().contains("hidden_size (the model's sizes: give its config.json with "
                + "--transformer)") && r.err().contains("seq_length (the job's settings"), r.err());
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
