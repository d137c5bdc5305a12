package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.io.CsvTable;
import org.scaledl.model.CalibrationScreen;

/**
 * Round seven of hostile input and of the person at the keyboard: what a first-time user's walk-through and a probe
 * found, each reproduced on the release before and now right (or said).
 */
class RoundSevenCliTest {
    private static final Path LLAMA = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b");

    private static void oneLine(MainTest.Run r, int code, String... parts) {
        assertEquals(code, r.code(), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        for (String p : parts) {
            assertTrue(r.err().contains(p), "'" + p + "' in " + r.err());
        }
    }

    /**
     * {@code layouts --transformer FOLDER --out} wrote a table naming an empty copied folder, which
     * {@code predict --candidates} refused; the table now names the folder's config.json, copied, and scores back to
     * the layouts' figures; an output in a folder not yet made is written by {@code predict} too (it was refused
     * after the work, exit 4, where {@code layouts} made the folder).
     */
    @Test
    void aLayoutTableOfAModelFolderScoresBack(@TempDir Path dir) throws Exception {
        Path table = dir.resolve("sub/l.csv");
        MainTest.Run l = MainTest.run("layouts", "-q", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "2048", "--gpus", "8", "--global-batch", "16", "--device", "H100", "--precision", "bf16", "--top", "1",
                "--out", table.toString());
        assertEquals(0, l.code(), l.err());
        Path copy = dir.resolve("sub/l.configs/llama-3-8b/config.json");
        assertTrue(Files.isRegularFile(copy), l.out());
        assertArrayEquals(Files.readAllBytes(LLAMA.resolve("config.json")), Files.readAllBytes(copy));
        Path scored = dir.resolve("other/deeper/s.csv");
        MainTest.Run p = MainTest.run("predict", "-q", "--model", "gpu", "--candidates", table.toString(), "--out",
                scored.toString());
        assertEquals(0, p.code(), p.err());
        CsvTable t = CsvTable.read(scored);
        assertEquals("l.configs/llama-3-8b/config.json", t.get(0, "transformer"));
        for (int r = 0; r < t.size(); r++) {
            double layout = Double.parseDouble(t.get(r, "layout_ms"));
            assertEquals(layout, Double.parseDouble(t.get(r, "predicted_ms")), 1e-3 * layout, "row " + (r + 2));
        }
    }

    /**
     * Runs of one job measured alike are kept or left out together, by their job's median: three runs 4.8–5.2 times
     * faster than predicted left the middle one out and halved the level on the others; one job's miss does not take
     * a right run of another job with it, whatever the count of runs.
     */
    @Test
    void runsMeasuredAlikeAreLeftOutTogether() {
        List<String> one = List.of("a", "a", "a");
        assertArrayEquals(new boolean[3], CalibrationScreen.mismatched(new double[] {4.98, 5.15, 4.83}, one));
        assertArrayEquals(new boolean[] {true, true, true}, CalibrationScreen.mismatched(
                new double[] {5.2, 4.9, 5.4}, one));
        assertArrayEquals(new boolean[] {false, true}, CalibrationScreen.mismatched(new double[] {1, 26},
                List.of("a", "b")));
        assertArrayEquals(new boolean[] {false, false, true, true}, CalibrationScreen.mismatched(
                new double[] {1, 1, 30, 30}, List.of("a", "b", "c", "d")));
        assertArrayEquals(new boolean[] {false, false, false, false, false}, CalibrationScreen.mismatched(
                new double[] {1, 1, 1, 4.9, 5.1}, List.of("a", "b", "c", "d", "d")));
        assertArrayEquals(new boolean[] {false, false, true}, CalibrationScreen.mismatched(
                new double[] {1.1, 0.9, 0.15}, List.of("a", "a", "b")));
        assertArrayEquals(new boolean[] {true}, CalibrationScreen.mismatched(new double[] {6}, List.of("a")));
        assertArrayEquals(new boolean[] {false}, CalibrationScreen.mismatched(new double[] {1 / 4.9}, List.of("a")));
    }

    /**
     * A whole runs table of one job far off the model is said as one (rather other jobs than the rows say), and left
     * out: the model is written unchanged; at a factor each side of the limit, all three runs calibrate it.
     */
    @Test
    void aTableFarOffAsAWholeIsSaid(@TempDir Path dir) throws Exception {
        Files.createDirectory(dir.resolve("llama"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("llama/config.json"));
        Path runs = dir.resolve("runs.csv");
        MainTest.Run one = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "2048", "--batch", "1", "--data-parallel", "8", "--device", "H100", "--precision", "bf16", "--json");
        assertEquals(0, one.code(), one.err());
        double ms = new ObjectMapper().readTree(one.out()).get("ms").asDouble();
        StringBuilder sb = new StringBuilder("id,transformer,seq,batch,world_size,device,precision,measured_ms\n");
        double[] factors = {5.3, 5.5, 5.1};
        for (int i = 0; i < factors.length; i++) {
            sb.append((char) ('a' + i)).append(",llama/config.json,2048,1,8,H100,bf16,")
                    .append(CsvTable.plain(ms / factors[i])).append('\n');
        }
        Files.writeString(runs, sb.toString());
        Path out = dir.resolve("c.sdl");
        MainTest.Run cal = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                out.toString());
        assertEquals(Main.BAD_INPUT, cal.code(), cal.err());
        assertTrue(cal.err().contains("3 of the 3 runs are left out: the rows more likely misdescribe the jobs measured")
                && cal.err().contains("no run left to calibrate on, nothing written"), cal.err());
        assertFalse(Files.exists(out), "nothing calibrated, nothing written");
        // the same runs at a factor each side of the limit: calibrated on all three
        Files.writeString(runs, sb.toString().replace(CsvTable.plain(ms / 5.3), CsvTable.plain(ms / 4.9))
                .replace(CsvTable.plain(ms / 5.5), CsvTable.plain(ms / 4.8)));
        MainTest.Run kept = MainTest.run("fit", "--calibrate", "gpu", "--runs", runs.toString(), "--out",
                out.toString());
        assertEquals(0, kept.code(), kept.err());
        assertTrue(kept.out().contains("on 3 runs"), kept.out() + kept.err());
        assertFalse(kept.err().contains("left out of the calibration"), kept.err());
    }

    /** {@code predict --json}'s workload holds every setting that moves the prediction. */
    @Test
    void theJsonWorkloadHoldsWhatMovesThePrediction() throws Exception {
        ObjectMapper om = new ObjectMapper();
        JsonNode full = om.readTree(predictJson());
        JsonNode lora = om.readTree(predictJson("--lora-rank", "32", "--document-tokens", "512", "--gpus-per-node",
                "4", "--inter-node-gbps", "800"));
        JsonNode w = lora.get("workload");
        assertEquals(2048, w.get("seq").asInt());
        assertEquals(32, w.get("lora_rank").asInt());
        assertEquals(512, w.get("document_tokens").asInt());
        assertEquals(1.0, w.get("expert_imbalance").asDouble());
        assertFalse(w.get("uneven_pipeline").asBoolean());
        assertEquals(4, w.get("gpus_per_node").asInt());
        assertEquals(800, w.get("inter_node_gbps").asDouble());
        assertEquals(0, full.get("workload").get("lora_rank").asInt());
        assertEquals(8, full.get("workload").get("gpus_per_node").asInt(), "the H100's standard system");
        assertFalse(full.get("workload").equals(w));
        assertTrue(full.get("ms").asDouble() != lora.get("ms").asDouble());
    }

    private static String predictJson(String... more) {
        List<String> args = new java.util.ArrayList<>(List.of("predict", "--model", "gpu", "--transformer",
                LLAMA.toString(), "--seq", "2048", "--batch", "1", "--data-parallel", "8", "--device", "H100",
                "--precision", "bf16", "--json"));
        args.addAll(List.of(more));
        MainTest.Run r = MainTest.run(args.toArray(new String[0]));
        assertEquals(0, r.code(), r.err());
        return r.out();
    }

    /**
     * A catalog row whose 16-bit peak is below its FP32 peak (predicted at the FP32 peak) and a peak column of no
     * precision scaledl reads are said, naming the file, line and column.
     */
    @Test
    void aCatalogsUnusedOrRaisedPeaksAreSaid(@TempDir Path dir) throws Exception {
        Path dev = dir.resolve("dev.csv");
        Files.writeString(dev, "name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,fp32_vector_TFLOPS,bf16_TFLOPS,"
                + "fp16_tensor_TFLOPS,vendor_notes\nMyGPU,80,2000,100,1500,40,60,10,500,x\n");
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--devices", dev.toString(), "--device", "MyGPU",
                "--transformer", LLAMA.toString(), "--seq", "256", "--batch", "1", "--precision", "bf16");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("dev.csv:2: bf16_TFLOPS 10.0 is below the FP32 peak 60.0 TFLOP/s of 'MyGPU'"),
                r.err());
        assertTrue(r.err().contains("dev.csv:1: column 'fp16_tensor_TFLOPS' is the peak of no precision"), r.err());
        assertTrue(r.err().contains("dev.csv:1: column 'vendor_notes' is not one the catalog reads"), r.err());
    }

    /** Messages that now say what to type instead. */
    @Test
    void refusalsSayWhatToTypeInstead(@TempDir Path dir) throws Exception {
        Path semi = dir.resolve("semi.csv");
        Files.writeString(semi, "transformer;seq;batch\nconfig.json;128;1\n");
        oneLine(MainTest.run("predict", "--model", "gpu", "--candidates", semi.toString()), Main.BAD_INPUT,
                "semi.csv", "separated by ';'", "comma-separated");
        Path tabs = dir.resolve("tabs.csv");
        Files.writeString(tabs, "id\tmeasured_ms\na\t1\n");
        oneLine(MainTest.run("fit", "--calibrate", "gpu", "--runs", tabs.toString(), "--out",
                dir.resolve("x.sdl").toString()), Main.BAD_INPUT, "tabs.csv", "separated by tabs");
        oneLine(MainTest.run("predict", "--model", "cpu-zoo", "--graph", MainTest.graph("resnet18_r64").toString(),
                "--batch", "8", "--device", "H100"), Main.USAGE, "is a GPU: --model gpu predicts it");
        oneLine(MainTest.run("predict", "--model", LLAMA.resolve("config.json").toString(), "--transformer",
                LLAMA.toString(), "--seq", "128", "--batch", "1", "--device", "H100"), Main.BAD_INPUT,
                "not a scaledl model file", "a Hugging Face configuration: give it with --transformer");
        Files.createDirectory(dir.resolve("empty"));
        oneLine(MainTest.run("predict", "--model", "gpu", "--transformer", dir.resolve("empty").toString(), "--seq",
                "128", "--batch", "1", "--device", "H100"), Main.BAD_INPUT, "a folder without a config.json");
    }

    /**
     * {@code --world-size} of a job whose replicas span several GPUs says the job's GPUs (PyTorch's WORLD_SIZE counts
     * every GPU); {@code --data-parallel} says the same without the note, and predicts the same.
     */
    @Test
    void aWorldSizeOfReplicasIsSaid() {
        String[] job = {"predict", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq", "1024", "--batch",
            "1", "--tensor", "8", "--device", "H100", "--precision", "bf16"};
        MainTest.Run world = MainTest.run(HostileCliTest.concat(job, "--world-size", "16"));
        MainTest.Run data = MainTest.run(HostileCliTest.concat(job, "--data-parallel", "16"));
        assertEquals(0, world.code(), world.err());
        assertEquals(0, data.code(), data.err());
        assertTrue(world.err().contains("--world-size 16 counts data-parallel replicas") && world.err()
                .contains("this job uses 128 GPUs; --gpus 16 gives a job of 16 GPUs"), world.err());
        assertFalse(data.err().contains("counts data-parallel replicas"), data.err());
        assertEquals(world.out(), data.out());
        // 12 replicas of 8 GPUs: --gpus 12 would be refused (not a multiple of 8), so the note does not offer it
        MainTest.Run twelve = MainTest.run(HostileCliTest.concat(job, "--world-size", "12"));
        assertEquals(0, twelve.code(), twelve.err());
        assertTrue(twelve.err().contains("this job uses 96 GPUs; a job of every GPU counted is --gpus N, N a "
                + "multiple of the 8 GPUs of a replica"), twelve.err());
        assertFalse(MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq", "1024",
                "--batch", "1", "--tensor", "8", "--device", "H100", "--precision", "bf16", "--gpus", "12").code() == 0,
                "--gpus 12 with tensor 8 is refused");
        MainTest.Run one = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "1024", "--batch", "1", "--world-size", "8", "--device", "H100", "--precision", "bf16");
        assertEquals(0, one.code(), one.err());
        assertFalse(one.err().contains("counts data-parallel replicas"), "one GPU a replica: " + one.err());
    }

    /**
     * Layers that split evenly only with the embedding (and the loss) counted as layers are said; an even split is
     * not; a refusal names the pipeline degrees that split the layers.
     */
    @Test
    void aSplitCountingTheEmbeddingIsSaid() {
        String[] job = {"predict", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq", "512", "--batch",
            "1", "--micro-batches", "4", "--device", "H100", "--precision", "bf16", "--pipeline"};
        MainTest.Run three = MainTest.run(HostileCliTest.concat(job, "3"));
        assertEquals(0, three.code(), three.err());
        assertTrue(three.err().contains("32 layers split into 3 pipeline stages with the embedding counted as a "
                + "layer (as Megatron-Bridge's account_for_embedding does)") && three.err().contains("11 layers a "
                + "stage, the first 10, the last 11"), three.err());
        MainTest.Run two = MainTest.run(HostileCliTest.concat(job, "2"));
        assertEquals(0, two.code(), two.err());
        assertFalse(two.err().contains("counted as a layer"), two.err());
        MainTest.Run five = MainTest.run(HostileCliTest.concat(job, "5"));
        assertTrue(five.err().contains("the pipeline degrees that split them without interleaving are 1, 2,"), five.err());
    }

    /**
     * A GPU plan of one or two runs says what one planned run did on the published clusters (little for a new
     * system) and asks for three; a plan of three does not; both say their runs are the candidates' most
     * representative.
     */
    @Test
    void aPlanOfOneRunSaysWhatOneRunDid(@TempDir Path dir) throws Exception {
        Path jobs = planCandidates(dir);
        MainTest.Run one = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "1");
        assertEquals(0, one.code(), one.err());
        assertTrue(one.out().contains("one planned run moved a new system's predictions little")
                && one.out().contains("plan --runs 3 or more") && one.out().contains("(1 run for "), one.out());
        MainTest.Run three = MainTest.run("plan", "--model", "gpu", "--candidates", jobs.toString(), "--runs", "3");
        assertEquals(0, three.code(), three.err());
        assertFalse(three.out().contains("plan --runs 3 or more"), three.out());
        assertTrue(three.out().contains("the plan chose the candidates' most representative"), three.out());
    }

    /** A batch outside the training range made of micro-batches says so. */
    @Test
    void aBatchOfMicroBatchesIsSaidAsSuch() {
        MainTest.Run r = MainTest.run("predict", "--model", "cpu-zoo", "--graph", MainTest.graph("resnet18_r64")
                .toString(), "--batch", "64", "--micro-batches", "4");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("batch 256 (a replica's iteration: 64 a micro-batch x 4 micro-batches) is outside "
                + "the training range"), r.err());
    }

    /** Four candidate jobs of Llama 3 8B on 8 H100s (a table beside a copy of its config.json) for {@code plan}. */
    static Path planCandidates(Path dir) throws java.io.IOException {
        Files.createDirectory(dir.resolve("llama"));
        Files.copy(LLAMA.resolve("config.json"), dir.resolve("llama/config.json"));
        Path jobs = dir.resolve("jobs.csv");
        Files.writeString(jobs, "id,transformer,seq,batch,world_size,tensor,device,precision\n"
                + "a,llama/config.json,2048,1,8,1,H100,bf16\nb,llama/config.json,2048,2,4,2,H100,bf16\n"
                + "c,llama/config.json,4096,1,2,4,H100,bf16\nd,llama/config.json,2048,1,1,8,H100,bf16\n");
        return jobs;
    }

}
